#!/bin/sh
# check-layers.sh: fails when an #include crosses drift's layers the wrong
# way or when files include each other in a circle.  The layers (Makefile.am
# and doc/architecture.md): cli -> engine/run -> engine/{stats,lang} ->
# engine/data -> parser -> base; plugins and examples see only
# include/drift/.  Run by make check; needs only sh, awk, sed and tsort.
set -u
top=${srcdir:-.}
cd "$top" || exit 99
status=0

# May a file in folder $1 (below src/) include a header of folder $2?
allowed() {
    [ "$1" = "$2" ] && return 0
    case "$1:$2" in
    parser:base) return 0 ;;
    engine/data:base | engine/stats:base) return 0 ;;
    engine/lang:base | engine/lang:parser | engine/lang:engine/data) return 0 ;;
    engine/run:base | engine/run:parser | engine/run:engine/data | \
        engine/run:engine/lang | engine/run:engine/stats) return 0 ;;
    cli:*) return 0 ;;
    esac
    return 1
}

edges=$(mktemp) || exit 99
trap 'rm -f "$edges"' EXIT INT TERM

for f in $(find src -type f \( -name '*.c' -o -name '*.h' -o -name '*.y' \
        -o -name '*.l' \) | sort); do
    case "$f" in
    src/parser/grammar.[ch] | src/parser/lexer.[ch]) continue ;;  # generated
    esac
    dir=$(dirname "$f")
    from=${dir#src/}
    node=${f%.*}
    for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
        [ "$inc" = config.h ] && continue
        case "$inc" in
        */*) to=$(dirname "$inc"); target="src/$inc" ;;
        *) to=$from; target="$dir/$inc" ;;
        esac
        case "$target" in
        src/parser/grammar.h | src/parser/lexer.h) ;;               # generated
        *)
            if [ ! -f "$target" ]; then
                echo "$f: includes \"$inc\", which is not $target" >&2
                status=1
                continue
            fi ;;
        esac
        if ! allowed "$from" "$to"; then
            echo "$f: includes \"$inc\": src/$from may not use src/$to" \
                "(layers: cli > engine/run > engine/stats, engine/lang >" \
                "engine/data > parser > base)" >&2
            status=1
        fi
        # The grammar and the scanner call back into their driver (parse.c)
        # by bison's and flex's protocol; their edges are not counted.
        case "$f" in *.y | *.l) continue ;; esac
        [ "${target%.*}" != "$node" ] && echo "$node ${target%.*}" >>"$edges"
    done
done

# Circles between .c/.h pairs (a pair is one node: chain.c and chain.h).
if ! tsort "$edges" >/dev/null 2>"$edges.err"; then
    echo "include circle:" >&2
    sed 's/^tsort: [^:]*: /  /' "$edges.err" >&2
    status=1
fi
rm -f "$edges.err"

# Plugins and examples link nothing of drift's: quoted includes only of
# files beside them, never of src/.
for f in $(find plugins examples -type f \( -name '*.c' -o -name '*.h' \) | sort); do
    for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
        if [ ! -f "$(dirname "$f")/$inc" ]; then
            echo "$f: includes \"$inc\": plugins see only <drift/...>" >&2
            status=1
        fi
    done
done

if [ $status -eq 0 ]; then
    echo "check-layers: includes point down the layers; no circles"
fi
exit $status
