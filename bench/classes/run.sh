#!/bin/sh
# run.sh [SAMPLER...]: every minibatch sampler at its defaults on the four
# data sets of bench/classes (`drift sample MODEL --data ROWS --sampler
# NAME --seed 1`, nothing else), judged by bench/cv/judge.py against
# ref.R's references (right: every mean within 0.1 reference sd, every sd
# within 10 %).  Run gen.py and ref.R first (here, in bench/classes).
# DRIFT names the drift to run (default: the build's).
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
DRIFT=${DRIFT:-$top/drift}
[ $# -gt 0 ] || set -- sgld psgld sghmc sgnht msgnht svrg-ld saga-ld tmu-ra ewsg sbps psbps
work=$(mktemp -d "${TMPDIR:-/tmp}/drift-classes-XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cd "$here" || exit 1
for m in pois lin badlr rob; do
    [ -f "$m.drs" ] || "$DRIFT" data convert "$m.csv" "$m.drs" >/dev/null || exit 1
    echo "== $m"
    for s in "$@"; do
        /usr/bin/time -f "%e" -o "$work/t" "$DRIFT" sample "$m.drift" \
            --data "$m.drs" --sampler "$s" --seed 1 --out "$work/o.csv" \
            >"$work/log" 2>&1
        rc=$?
        w=$(grep -c "warning:" "$work/log")
        j=$(python3 "$top/bench/cv/judge.py" "ref-$m.csv" "$work"/o_[1-4].csv 2>&1 | tail -1)
        echo "$s rc=$rc warnings=$w wall $(cat "$work/t") s | $j"
        grep "warning:" "$work/log" | sed 's/^/    /' | cut -c1-200
        rm -f "$work"/o_*.csv
    done
done
