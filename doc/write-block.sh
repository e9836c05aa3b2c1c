#!/bin/sh
# write-block.sh FILE NAME TEXT: replaces the lines between
# "<!-- measured: NAME -->" and "<!-- /measured -->" of FILE (the marker
# convention of doc/measure.sh) with the contents of the file TEXT, and
# prints what changed (a diff of the block, or that it is unchanged).
# Exit status 1, FILE untouched, when FILE has no such block.  The
# measuring scripts of the heavy figures (bench/measure-scaling.sh,
# bench/measure-defaults.sh) write their blocks with it.
set -u
[ $# = 3 ] || { echo "usage: write-block.sh FILE NAME TEXT" >&2; exit 2; }
f=$1; name=$2; text=$3
grep -qx "<!-- measured: $name -->" "$f" || {
    echo "write-block.sh: $f has no block <!-- measured: $name -->" >&2
    exit 1
}
old=$(mktemp "${TMPDIR:-/tmp}/drift-block-XXXXXX") || exit 1
new=$old.md
trap 'rm -f "$old" "$new"' EXIT
awk -v n="$name" '$0 == "<!-- measured: " n " -->" {f = 1; next}
    f && $0 == "<!-- /measured -->" {exit} f {print}' "$f" >"$old"
if cmp -s "$old" "$text"; then
    echo "$f: block $name unchanged"
    exit 0
fi
awk -v n="$name" -v t="$text" '
    $0 == "<!-- measured: " n " -->" {print; while ((getline l < t) > 0) print l; skip = 1; next}
    skip && $0 == "<!-- /measured -->" {skip = 0}
    !skip {print}' "$f" >"$new" || exit 1
cat "$new" >"$f"
echo "$f: block $name rewritten:"
diff "$old" "$text" | sed 's/^/    /'
exit 0
