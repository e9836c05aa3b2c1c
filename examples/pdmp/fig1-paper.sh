#!/bin/sh
# fig1-paper.sh: Figure 1 of Pakman et al. (ICML 2017) with drift: exact
# BPS (full gradients, bps) against BPS driven by minibatch gradients
# (sbps) on a 2-D posterior.  The claim: noisy gradients leave the target
# invariant (the draws match the exact posterior); the figure shows the
# draws, a QQ-plot against the reference, the bounce times and the
# autocorrelations.  Not the measurement of fig1.sh (the noise of the
# bounce rate along lines on section 7.1's data).
#
# Data (fig1-paper-data.R): logistic regression, d = 2, N = 1000, x
# correlated (0.6), true w = (1, -1), prior N(0, 10 I); the reference is
# the posterior on an 801 x 801 grid in R, independent of drift.
# Samplers, every run from w = 0 for PASSES data passes, seeds 1..SEEDS:
#   bps          full gradients, refresh 0 (as sbps)
#   bps-r1       full gradients, refresh 1 (bps's default)
#   sbps         minibatches of n = 100, k = 3, refresh 0 (the paper's SBPS
#                settings), plain minibatch gradients (no control variates)
#   sbps-k10     the same with k = 10: a band wide enough that no proposal
#                fell below the noisy rate, the nearest drift has to the
#                paper's unbiased noisy-gradient BPS
# Each run writes the trajectory's segments; fig1-paper.R reads draws off
# them every 0.05 time units and makes results/fig1-paper*.
# Not part of make check.  Run from anywhere, after make:
#   sh examples/pdmp/fig1-paper.sh [passes] [seeds]   (defaults 50000, 10:
#   about 2 min; the committed results/fig1-paper* are from 30 seeds,
#   about 7 min, plus 1 min for the grid reference the first time)
set -e
cd "$(dirname "$0")"
TOP=$(cd ../.. && pwd)
DRIFT=${DRIFT:-$TOP/drift}
export DRIFT_PLUGIN_DIR="${DRIFT_PLUGIN_DIR:-$TOP/plugins/samplers/.libs:$TOP/plugins/models/.libs}"
PASSES=${1:-50000}; SEEDS=${2:-10}
mkdir -p runs results
[ -f lr2.csv ] && [ -f results/fig1-paper-reference.csv ] && [ -f runs/fig1-paper-grid.rds ] ||
    Rscript fig1-paper-data.R
run() { # name seed sampler [options...]
    name=$1; seed=$2; shift 2
    "$DRIFT" sample --chains 1 --init 0 --model logistic --data lr2.csv \
        --passes "$PASSES" --emit segments --seed "$seed" --quiet \
        --out "runs/fig1-paper-$name-$seed.csv" "$@" 2>/dev/null
}
for seed in $(seq 1 "$SEEDS"); do
    echo "== seed $seed"
    run bps "$seed" --sampler bps --set refresh=0
    run bps-r1 "$seed" --sampler bps --set refresh=1
    run sbps "$seed" --sampler sbps --gradient plain --batch 100 --set k=3 --set refresh=0
    run sbps-k10 "$seed" --sampler sbps --gradient plain --batch 100 --set k=10 --set refresh=0
done
Rscript fig1-paper.R "$SEEDS"
