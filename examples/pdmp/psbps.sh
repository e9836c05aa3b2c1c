#!/bin/sh
# psbps.sh: sbps against psbps (the diagonal preconditioner of Pakman et
# al. 2017, section 5) in two regimes:
#   aniso  the design of the authors' notebook (pSBPS_fig.ipynb in
#          github.com/dargilboa/SBPS-public): d = 20, N = 1000, w ~ U[-5,5],
#          x ~ N(0, diag(1/500, 1, ..., 1)), no intercept, (nearly) flat
#          prior (drift's logistic with s = 100), minibatch 100, k = 3,
#          started at the mode.  The posterior is badly scaled along the
#          axis w.1 (sd about 20 times the others'), which a diagonal
#          preconditioner can fix.
#   rot    section 7.1's data (lr20.csv, x.1 variance 6), prior s^2 = 10:
#          the ill-conditioning is not along the axes.
# Each sampler runs RUNS seeds of PASSES data passes; psbps.R writes
# results/psbps.csv (ESS per 1000 data passes of w.1, of the slowest
# coordinate, and along the Laplace covariance's largest and smallest
# eigen-directions, over the last 4/5 of each run; the sd of w.1 against a
# long nuts run) and results/psbps.png.
# Not part of make check.  Run after make:
#   sh examples/pdmp/psbps.sh [passes] [runs]     (default 5000, 4)
set -e
cd "$(dirname "$0")"
TOP=$(cd ../.. && pwd)
DRIFT=${DRIFT:-$TOP/drift}
export DRIFT_PLUGIN_DIR="${DRIFT_PLUGIN_DIR:-$TOP/plugins/samplers/.libs:$TOP/plugins/models/.libs}"
PASSES=${1:-5000}; RUNS=${2:-4}
mkdir -p runs results
[ -f lr20.csv ] && [ -f laplace.csv ] || Rscript make-data.R
Rscript psbps-data.R                     # runs/psbps-{aniso,rot}-{mode.json,laplace.csv}
for regime in aniso rot; do
    if [ $regime = aniso ]; then data=runs/lr20aniso.csv; s=100; else data=lr20.csv; s=3.16227766; fi
    echo "== $regime nuts reference (4 chains x 5000 draws)"
    "$DRIFT" sample --chains 4 --model logistic --model-set s=$s --data "$data" --sampler nuts \
        --iter 5000 --seed 9 --quiet --out runs/psbps-$regime-nuts.csv
    for sampler in sbps psbps; do
        # the paper's psbps: its preconditioner adapts throughout, no
        # refreshment (drift's defaults fix P after warmup and refresh)
        paper=""; [ $sampler = psbps ] && paper="--set adapt=always --set refresh=0"
        for k in $(seq 1 "$RUNS"); do
            echo "== $regime $sampler run $k"
            "$DRIFT" sample --chains 1 --model logistic --model-set s=$s --data "$data" \
                --init runs/psbps-$regime-mode.json --sampler $sampler --set k=3 $paper \
                --batch 100 --passes "$PASSES" --thin 0.02 --seed $((500 + k)) --quiet \
                --out runs/psbps-$regime-$sampler-$k.csv
        done
    done
done
Rscript psbps.R "$RUNS"
