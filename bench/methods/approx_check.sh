#!/bin/sh
# approx_check.sh: the checks of an approximation's draws (Pareto k and
# the importance-weighted shift of the means; drift_method_approx) against
# posteriordb's references.  For every posterior in
# tests/posteriordb/posteriors.txt with a rows.csv (diamonds and mcycle_gp
# left out: slow here), drift variational (meanfield, fullrank) and drift
# laplace at seeds 1 and 2, each at its defaults; per fit: exit status,
# the warning given, the largest error of a mean in reference sds, the
# draws' sd ratios, k and the shift; then the counts of fits off (> 0.5
# reference sds) and right, warned and silent.  Not a test.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
DRIFT=${DRIFT:-$top/drift}
export DRIFT_PLUGIN_PATH="${DRIFT_PLUGIN_PATH:-$top/plugins/samplers/.libs:$top/plugins/models/.libs}"
export DRIFT_PLUGIN_DIR="${DRIFT_PLUGIN_DIR:-$DRIFT_PLUGIN_PATH}"
w=$(mktemp -d "${TMPDIR:-/tmp}/drift-approx.XXXXXX") || exit 1
trap 'rm -rf "$w"' EXIT
J="/usr/bin/python3 $top/bench/methods/approx_judge.py"
for p in $(grep -v '^#' "$top/tests/posteriordb/posteriors.txt" | awk '{print $1}' | grep -v 'diamonds\|mcycle'); do
    P=$top/tests/posteriordb/$p
    [ -f "$P/rows.csv" ] || continue
    dj=""
    [ -f "$P/data.json" ] && dj="--data $P/data.json"
    for meth in meanfield fullrank laplace; do
        for s in 1 2; do
            o=$w/fit.csv
            rm -f "$o"
            if [ $meth = laplace ]; then
                # shellcheck disable=SC2086
                timeout 300 "$DRIFT" laplace "$P/model.drift" --data "$P/rows.csv" $dj --seed $s --out "$o" >"$w/err" 2>&1
            else
                # shellcheck disable=SC2086
                timeout 300 "$DRIFT" variational "$P/model.drift" --data "$P/rows.csv" $dj --algorithm $meth --seed $s --quiet --out "$o" >"$w/err" 2>&1
            fi
            rc=$?
            w_n=$(grep -c "warning" "$w/err")
            wt=$(grep -o "warning: [a-zP][a-z ]*" "$w/err" | head -1 | cut -c10-30)
            printf '%s %s %s rc=%d warn=%d [%s] %s\n' "$p" $meth $s $rc "$w_n" "$wt" \
                "$($J fit "$P/reference.csv" "$o" 2>/dev/null)"
        done
    done
done | tee "$w/all"
$J table "$w/all"
