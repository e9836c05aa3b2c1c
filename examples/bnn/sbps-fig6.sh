#!/bin/sh
# sbps-fig6.sh: the SBPS paper's Fig. 6 / section 7.3 (Pakman, Gilboa,
# Carlson and Paninski, ICML 2017) at its sizes, on a Fashion-MNIST
# stand-in for its four-digit MNIST (sbps-fig6-data.R: four classes, 7 x 7
# block sums, N = 8340): sbps, psbps, sgld and msgnht with minibatches of
# n = 500, started at 0, EPOCHS data passes (the paper's 10^4 by default),
# SEEDS seeds each; and a Metropolis-Hastings reference: drift's mala (MALA,
# a Metropolis-Hastings chain on the full data) from 0, MALA_ITER
# iterations (MALA_WARM of them warmup, step size adapted there), one chain
# per seed in MALA_SEEDS (set empty: none; the figure needs their files).
# Model: bnn.drift with H = 3 tanh units and K = 4 classes, weights and
# biases N(0, 1): d = 49*3 + 3 + 3*4 + 4 = 166 (the paper's d = 192 has no
# one-hidden-layer decomposition over 49 inputs and 4 classes; README.md).
# Every run keeps its draws from the start (about one a pass: sgld and
# msgnht every 17th step, sbps every 0.05 and psbps every 0.25 units of
# trajectory time); sbps-fig6.R computes each draw's test error and test
# negative log-likelihood (the quantity the authors' code records: the
# error of the current weights) against data passes (drift's grads__
# column / N).  drift's --test also records the posterior predictive over
# all draws so far, every EPOCHS/100 passes.
# Step sizes (drift's h is on the summed potential): sgld h = 1e-5 and
# msgnht h = 1e-3 (A = 1), from a 200-pass pilot over 3e-6..3e-4 and
# 1e-4..1e-2 (msgnht diverged at 1e-2); sbps and psbps k = 3, no
# refreshment (the paper's), psbps's preconditioner adapted throughout.
# Writes results/sbps-fig6-metrics.csv, results/sbps-fig6-summary.csv,
# results/sbps-fig6.png (sbps-fig6.R).
# Usage (after make): sh examples/bnn/sbps-fig6.sh
#   (env: EPOCHS, SEEDS, SAMPLERS, MALA_ITER, MALA_WARM, MALA_SEEDS)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${BUILD:-$here/build}
EPOCHS=${EPOCHS:-10000}; SEEDS=${SEEDS:-"1 2 3"}
SAMPLERS=${SAMPLERS:-"sbps psbps sgld msgnht"}
MALA_ITER=${MALA_ITER:-60000}; MALA_WARM=${MALA_WARM:-20000}; MALA_SEEDS=${MALA_SEEDS-"1 2"}
drift=${DRIFT:-$top/drift}
export DRIFT_PLUGIN_DIR="$top/plugins/samplers/.libs:$top/plugins/models/.libs"
export DRIFT_PLUGIN_PATH=
mkdir -p "$build" "$here/results"
[ -s "$build/fig6-train.csv" ] || Rscript "$here/sbps-fig6-data.R" "$build"
[ -s "$build/fig6-train.drs" ] || "$drift" data convert "$build/fig6-train.csv" \
    "$build/fig6-train.drs" --rows-schema "$here/bnn.drift"
N=8340; n=500
per=$(( (N + n - 1) / n ))                # minibatches a pass: 17
ev=$(( EPOCHS / 100 )); [ "$ev" -ge 1 ] || ev=1
common="--data $build/fig6-train.drs --data-set H=3 --data-set K=4 --init 0 --test $build/fig6-test.csv --chains 1 --quiet"
for s in $SAMPLERS; do
    case $s in
    sgld) sets="--set h=${H_SGLD:-1e-5}" ;;
    msgnht) sets="--set h=${H_NHT:-1e-3} --set A=1" ;;
    sbps) sets="--set k=3 --set refresh=0" ;;
    psbps) sets="--set k=3 --set refresh=0 --set adapt=always" ;;
    *) echo "sbps-fig6.sh: unknown sampler $s" >&2; exit 2 ;;
    esac
    case $s in   # every draw from the start kept: about one a pass
    sbps) budget="--warmup 0 --thin ${THIN_SBPS:-0.05}" ;;   # thin in trajectory time
    psbps) budget="--warmup 0 --thin ${THIN_PSBPS:-0.25}" ;;  # psbps travels about 5 times further a pass
    *) budget="--warmup 0 --thin $per" ;;
    esac
    for seed in $SEEDS; do
        echo "== $s seed $seed ($EPOCHS passes) $sets" >&2
        # shellcheck disable=SC2086
        /usr/bin/time -f "   %e s wall, %U s user" "$drift" sample "$here/bnn.drift" $common \
            --sampler "$s" $sets --batch $n --passes "$EPOCHS" $budget --eval-every "$ev" \
            --seed "$seed" --out "$build/fig6-$s-$seed.csv" 2>&1 | grep -v warning >&2 || true
    done
done
for seed in $MALA_SEEDS; do
    echo "== mala seed $seed ($MALA_ITER iterations on the full data)" >&2
    # shellcheck disable=SC2086
    /usr/bin/time -f "   %e s wall, %U s user" "$drift" sample "$here/bnn.drift" $common \
        --sampler mala --iter "$MALA_ITER" --warmup "$MALA_WARM" --thin 10 \
        --eval-every $(( MALA_ITER / 10 )) --seed "$seed" --out "$build/fig6-mala-$seed.csv" 2>&1 | grep -v warning >&2 || true
done
Rscript "$here/sbps-fig6.R" "$build" "$here/results" "$SAMPLERS" "$SEEDS" "$MALA_SEEDS" "$EPOCHS"
