#!/bin/sh
# Runs drift on posteriordb's own Stan programs, unmodified.
#
#   sh tests/posteriordb/stan-survey.sh POSTERIORDB DRIFT OUTDIR [--judge]
#
# POSTERIORDB is a checkout's or a bare mirror's git directory of
# github.com/stan-dev/posteriordb (read with git show HEAD:PATH).  For
# every posterior it writes OUTDIR/NAME.stan and OUTDIR/NAME.json (the
# posterior's data, unzipped) and runs `DRIFT check NAME.stan --data
# NAME.json`, printing one line per posterior:
#
#   NAME rows     the program runs and its rows were found
#   NAME whole    it runs lowered whole (the warning says which statement
#                 couples the rows)
#   NAME norows   it runs and has no data indexed by a row size
#   NAME failK    drift check exited K; the first error follows
#
# then the count of each.  With --judge, every posterior that has
# reference draws in posteriordb and runs is sampled from its Stan
# program at drift's defaults and judged by run.sh (MODEL=model.stan,
# SET=OUTDIR/judge) against the means and sds of those draws
# (reference-from-draws.py; where the mirror lacks the draws' file, the
# test set's NAME/reference.csv), and the posteriors with reference
# draws that drift refuses are listed.
set -u
if [ $# -lt 3 ]; then
    echo "usage: sh $0 POSTERIORDB DRIFT OUTDIR [--judge]" >&2
    exit 2
fi
db=$1
bin=$2
out=$3
judge=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
show() { git --git-dir="$db" show "HEAD:$1"; }
list=$out/survey.txt
: > "$list"
: > "$out/refs.txt"
for p in $(git --git-dir="$db" ls-tree --name-only HEAD \
               posterior_database/posteriors/ | sed 's#.*/##; s#\.json$##'); do
    meta=$(show "posterior_database/posteriors/$p.json")
    ref=$(printf '%s' "$meta" |
          sed -n 's/.*"reference_posterior_name": *"\([^"]*\)".*/\1/p')
    [ -n "$ref" ] && echo "$p $ref" >> "$out/refs.txt"
    model=$(printf '%s' "$meta" | sed -n 's/.*"model_name": *"\([^"]*\)".*/\1/p')
    data=$(printf '%s' "$meta" | sed -n 's/.*"data_name": *"\([^"]*\)".*/\1/p')
    if ! show "posterior_database/models/stan/$model.stan" > "$out/$p.stan" 2>/dev/null; then
        echo "$p nomodel" >> "$list"
        continue
    fi
    show "posterior_database/data/data/$data.json.zip" > "$out/$p.zip" 2>/dev/null
    unzip -p "$out/$p.zip" > "$out/$p.json" 2>/dev/null
    rm -f "$out/$p.zip"
    timeout 120 "$bin" check "$out/$p.stan" --data "$out/$p.json" \
        > "$out/$p.out" 2> "$out/$p.err"
    rc=$?
    if [ $rc = 0 ]; then
        if grep -q "warning: no rows" "$out/$p.err"; then st=whole
        elif grep -q "rows: N = 0" "$out/$p.out"; then st=norows
        else st=rows; fi
    else
        st="fail$rc"
    fi
    echo "$p $st $(grep -m1 'error:' "$out/$p.err" | sed 's/^[^ ]* //' | cut -c1-110)" >> "$list"
done
cat "$list"
awk '{ n[$2]++ } END { for (k in n) printf "%s %d\n", k, n[k] }' "$list" | sort
[ "$judge" = --judge ] || exit 0
names=
echo "posteriors with reference draws: $(wc -l < "$out/refs.txt")"
while read -r n ref; do
    if ! grep -q "^$n \(rows\|whole\|norows\)" "$list"; then
        echo "refused: $(grep "^$n " "$list")"
        continue
    fi
    mkdir -p "$out/judge/$n"
    cp "$out/$n.stan" "$out/judge/$n/model.stan"
    cp "$out/$n.json" "$out/judge/$n/data.json"
    zip=posterior_database/reference_posteriors/draws/draws/$ref.json.zip
    if show "$zip" > "$out/judge/$n/draws.zip" 2>/dev/null &&
       unzip -p "$out/judge/$n/draws.zip" > "$out/judge/$n/draws.json" \
           2>/dev/null &&
       python3 "$here/reference-from-draws.py" "$out/judge/$n/draws.json" \
           > "$out/judge/$n/reference.csv"; then
        :
    elif [ -f "$here/$n/reference.csv" ]; then
        cp "$here/$n/reference.csv" "$out/judge/$n/"
    else
        echo "no reference: $n (its draws are not in this mirror)"
        rm -rf "$out/judge/$n"
        continue
    fi
    rm -f "$out/judge/$n/draws.zip" "$out/judge/$n/draws.json"
    names="$names $n"
done < "$out/refs.txt"
SET=$out/judge MODEL=model.stan exec sh "$here/run.sh" "$bin" $names
