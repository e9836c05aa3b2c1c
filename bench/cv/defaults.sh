#!/bin/sh
# defaults.sh DATA REF SAMPLER...: each sampler at its defaults, as a new
# user runs it (`drift sample examples/logistic/logistic.drift --data DATA
# --sampler NAME --seed 1`, nothing else), judged against REF
# (`name,mean,sd`, e.g. laplace.R's) by judge.py; one line a sampler:
# exit status, warnings, wall seconds, the judge's verdict, chain 1's
# iterations and data passes.  The figures of doc/minibatch-defaults.md.
# DRIFT names the drift to run (default: the build's, beside this tree).
top=$(cd "$(dirname "$0")/../.." && pwd)
DRIFT=${DRIFT:-$top/drift}
data=$1; ref=$2; shift 2
work=$(mktemp -d "${TMPDIR:-/tmp}/drift-defaults-XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
for s in "$@"; do
    /usr/bin/time -f "%e" -o "$work/t" "$DRIFT" sample \
        "$top/examples/logistic/logistic.drift" --data "$data" \
        --sampler "$s" --seed 1 --out "$work/$s.csv" >"$work/$s.log" 2>&1
    rc=$?
    w=$(grep -c "warning:" "$work/$s.log")
    j=$(python3 "$top/bench/cv/judge.py" "$ref" "$work/${s}"_[1-4].csv 2>&1 | tail -1)
    p=$(grep -o "chain 1: [0-9]* iterations, [0-9.e+]* data passes" "$work/$s.log")
    echo "$s rc=$rc warnings=$w wall $(cat "$work/t") s | $j | $p"
    grep "warning:" "$work/$s.log" | sed 's/^/    /' | cut -c1-200
done
