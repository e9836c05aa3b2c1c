#!/bin/sh
# fig72.sh: section 7.2 of Pakman et al. (ICML 2017) with drift: the
# expectation E[sin((w1 - w1hat) / r)] under the section 7.1 posterior
# (make-data.R), estimated by sbps either from discrete draws or from the
# exact integral along the piecewise-linear trajectory, for r/b from 1e-2
# to 10 (w1hat the Laplace mode of w1).  b is the mean length of a
# trajectory piece as the authors' code stores it, one piece per minibatch:
# trajectory length / minibatches, about 0.02 as in the paper, at the
# paper's settings (n = 100, k = 3, refresh 0); the distance between
# bounces is about 7 times that (fig72.R prints both).  K runs
# with different seeds give the root-mean-square error of each estimator
# against the number of data passes after a burn-in of 1500 passes.  The
# references come from reference.R (importance sampling in R, independent
# of drift); a long full-gradient bps run (exact: no bound violations on
# this log-concave target) is a cross-check.
# Not part of make check.  Run from anywhere, after make:
#   sh examples/pdmp/fig72.sh [runs] [passes] [bps segments] [IS draws/1e5]
#   (defaults 20, 6000, 50000, 100: 1e7 importance draws, about 10 min,
#   whose standard error, 4e-4, is well below the RMSEs compared)
set -e
cd "$(dirname "$0")"
TOP=$(cd ../.. && pwd)
DRIFT=${DRIFT:-$TOP/drift}
export DRIFT_PLUGIN_DIR="${DRIFT_PLUGIN_DIR:-$TOP/plugins/samplers/.libs:$TOP/plugins/models/.libs}"
K=${1:-20}; PASSES=${2:-6000}; REF=${3:-50000}; ISX=${4:-100}
mkdir -p runs results
[ -f lr20.csv ] && [ -f laplace.csv ] || Rscript make-data.R
[ -f results/reference.csv ] && [ -f runs/reference-is.bin ] || Rscript reference.R "$ISX"
if [ ! -f runs/fig72-bps.csv ]; then
    echo "== bps reference, $REF segments"
    "$DRIFT" sample --chains 1 --init 0 --model logistic --data lr20.csv --sampler bps \
        --iter "$REF" --warmup 2000 --emit segments --seed 720 --quiet \
        --out runs/fig72-bps.csv
fi
for k in $(seq 1 "$K"); do
    "$DRIFT" sample --chains 1 --init 0 --model logistic --data lr20.csv --sampler sbps \
        --batch 100 --set k=3 --passes "$PASSES" --emit segments --seed "$k" --quiet \
        --out "runs/fig72-sbps-$k.csv"
done
# One run again as draws, to check the draws drift writes are the
# skeleton's points (fig72.R compares them).
"$DRIFT" sample --chains 1 --init 0 --model logistic --data lr20.csv --sampler sbps --batch 100 \
    --set k=3 --passes "$PASSES" --thin 0.1 --seed 1 --quiet --out runs/fig72-draws-1.csv
Rscript fig72.R "$K" "$PASSES"
