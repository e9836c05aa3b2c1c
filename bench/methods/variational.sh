#!/bin/sh
# variational.sh: part 3 of compare.sh.  ADVI (meanfield, fullrank) beside
# drift's nuts and minibatch samplers, all at their defaults (--seed only),
# one after another: (a) logistic regression, N = 10^5 rows, D = 8 (numpy,
# seed 1), judged against rstan NUTS's pooled draws (stan_logistic.R nuts; drift nuts's
# when NO_STAN is set or R is absent); (b) posteriordb's
# eight_schools_noncentered, judged against reference.csv (Stan NUTS).
# Stan's ADVI (rstan vb, stan_logistic.R vb) runs beside them on (a) unless NO_STAN is set.
# Prints each exact command, its wall seconds and exit status, and one
# judge.py line.  Not a test.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
DRIFT=${DRIFT:-$top/drift}
SEED=${SEED:-1}
export DRIFT_PLUGIN_PATH="${DRIFT_PLUGIN_PATH:-$top/plugins/samplers/.libs:$top/plugins/models/.libs}"
export DRIFT_PLUGIN_DIR="${DRIFT_PLUGIN_DIR:-$DRIFT_PLUGIN_PATH}"
SAMPLERS=${SAMPLERS:-"sgld sghmc sgnht"}
J="/usr/bin/python3 $top/bench/methods/judge.py"
w=$(mktemp -d "${TMPDIR:-/tmp}/drift-methods.XXXXXX") || exit 1
trap 'rm -rf "$w"' EXIT

/usr/bin/python3 - "$w/lr.csv" <<'PYEOF'
import sys, numpy as np
rng = np.random.default_rng(1)
N, D = 100000, 8
X = rng.standard_normal((N, D))
w = rng.normal(0, 1 / np.sqrt(D), D)
y = (rng.random(N) < 1 / (1 + np.exp(-X @ w))).astype(int)
with open(sys.argv[1], "w") as f:
    f.write("y," + ",".join("x.%d" % (j + 1) for j in range(D)) + "\n")
    for i in range(N):
        f.write("%d," % y[i] + ",".join("%.17g" % v for v in X[i]) + "\n")
PYEOF

# run LABEL STEM CMD...: time one command; its draws are STEM.csv or STEM_K.csv.
run() {
    label=$1; stem=$2; shift 2
    echo "\$ $*"
    t0=$(date +%s.%N)
    "$@" > "$w/log" 2>&1
    st=$?
    t1=$(date +%s.%N)
    grep -i -E 'pareto|warn|error|eta' "$w/log" | head -3 | sed 's/^/    /'
    printf '    %s: exit %d, wall %.1f s (load %s)\n' "$label" $st "$(echo "$t1 - $t0" | bc)" "$(cut -d' ' -f1 /proc/loadavg)"
}
judge() {
    ref=$1; label=$2; stem=$3
    if [ -f "$stem.csv" ]; then set -- "$stem.csv"; else set -- "$stem"_[0-9]*.csv; fi
    $J "$ref" "$label" "$@"
}

for case in logistic eight_schools; do
    if [ $case = logistic ]; then
        M="$top/examples/logistic/logistic.drift --data $w/lr.csv"
    else
        d=$top/tests/posteriordb/eight_schools-eight_schools_noncentered
        M="$d/model.drift --data $d/rows.csv --data $d/data.json"
    fi
    echo "== $case"
    c=$w/$case; mkdir -p "$c"
    run nuts "$c/nuts" $DRIFT sample $M --seed $SEED --out "$c/nuts.csv" --quiet
    if [ $case = logistic ] && [ -z "${NO_STAN:-}" ] && command -v Rscript >/dev/null 2>&1; then
        # the reference: Stan's NUTS (rstan, 4 x 1000 draws)
        mkdir -p "$w/boost" && ln -sf /usr/include/boost "$w/boost/boost"
        echo "\$ Rscript bench/methods/stan_logistic.R $w $w/lr.csv $c $SEED nuts"
        Rscript "$top/bench/methods/stan_logistic.R" "$w" "$w/lr.csv" "$c" $SEED nuts 2>&1 | grep -v '^Chain\|^$' | tail -3
        $J --ref "$w/ref.csv" "$c/stan_nuts.csv"; ref=$w/ref.csv
    elif [ $case = logistic ]; then
        $J --ref "$w/ref.csv" "$c"/nuts_[0-9]*.csv; ref=$w/ref.csv
    else
        ref=$d/reference.csv
    fi
    run meanfield "$c/mf" $DRIFT variational $M --seed $SEED --out "$c/mf.csv" --quiet
    run fullrank "$c/fr" $DRIFT variational $M --algorithm fullrank --seed $SEED --out "$c/fr.csv" --quiet
    for s in $SAMPLERS; do
        run $s "$c/$s" $DRIFT sample $M --sampler $s --seed $SEED --out "$c/$s.csv" --quiet
    done
    stan=
    if [ $case = logistic ] && [ -z "${NO_STAN:-}" ] && command -v Rscript >/dev/null 2>&1; then
        mkdir -p "$w/boost" && ln -sf /usr/include/boost "$w/boost/boost"
        echo "\$ Rscript bench/methods/stan_logistic.R $w $w/lr.csv $c $SEED vb"
        Rscript "$top/bench/methods/stan_logistic.R" "$w" "$w/lr.csv" "$c" $SEED vb 2>&1 | grep -v '^Chain\|^$' | tail -8
        stan="stan_mf stan_fr"
    fi
    echo "-- against $( [ $case = logistic ] && [ -f "$c/stan_nuts.csv" ] && echo 'rstan NUTS (pooled 4 chains)' || { [ $case = logistic ] && echo 'drift nuts (pooled 4 chains)'; } || echo 'reference.csv (Stan NUTS)')"
    judge "$ref" nuts "$c/nuts"
    judge "$ref" meanfield "$c/mf"
    judge "$ref" fullrank "$c/fr"
    for s in $SAMPLERS $stan; do [ -f "$c/$s.csv" ] || [ -f "$c/${s}_1.csv" ] && judge "$ref" $s "$c/$s"; done
done
