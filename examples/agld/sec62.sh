#!/bin/sh
# sec62.sh: Zhang et al. (AAAI 2020), section 6.2, on drift: Bayesian
# ridge regression on synthetic data of YearPredictionMSD's size
# (515,345 rows, 90 features; the first 4/5 for training, the rest held
# out), test MSE against epochs 1..10 for LMC, SGLD, PTU/PPU/TMU with random
# access, TMU with RA/RR/CA and SVRG-LD+, all at one step size.  Writes
# build/sec62-mse.csv and build/sec62-mse.png.  Not part of make check.
#
# Usage (from a built tree): examples/agld/sec62.sh [ETA] [BATCH]
# The model is tests/plugins/ridge.c (sigma = 1, tau = 1), built here.  LMC
# is agld with snapshot=ptu and D=1 (the exact full gradient at every step).
# Test MSE is computed by sec62-analyze.R from the draws.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=$here/build
eta=${1:-5e-7}
n=${2:-100}
epochs=10
mkdir -p "$build"
drift=${DRIFT:-$top/drift}
export DRIFT_PLUGIN_DIR="$top/plugins/samplers/.libs:$top/plugins/models/.libs"
export DRIFT_PLUGIN_PATH=
cc -O2 -shared -fPIC -fvisibility=hidden -I"$top/include" \
    "$top/tests/plugins/ridge.c" -o "$build/ridge.so" -lm
[ -s "$build/sec62-train.csv" ] || Rscript "$here/sec62-data.R" "$build"
Ntrain=$(($(wc -l < "$build/sec62-train.csv") - 1))
per=$((Ntrain / n)) # minibatch iterations in one data pass

run() { # name sampler thin settings...
    name=$1 sampler=$2 thin=$3
    shift 3
    [ "$thin" -ge 1 ] || thin=1
    echo "== $name"
    /usr/bin/time -f "   %e s, %M KB" "$drift" sample --chains 1 --init 0 --model "$build/ridge.so" \
        --model-set tau=1 --data "$build/sec62-train.csv" \
        --sampler "$sampler" --batch "$n" --passes "$epochs" --thin "$thin" \
        --seed 62 --out "$build/sec62-$name.csv" --quiet "$@"
}
# Thinning keeps about 400 draws an epoch.
run lmc agld 1 --set snapshot=ptu --set D=1 --set eta="$eta"
run sgld sgld $((per / 400)) --set h="$eta"
run ptu-ra ptu-ra $((per / 3 / 400)) --set eta="$eta"
run ppu-ra ppu-ra $((per / 400)) --set eta="$eta"
run tmu-ra tmu-ra $((per / 2 / 400)) --set eta="$eta"
run tmu-rr tmu-rr $((per / 2 / 400)) --set eta="$eta"
run tmu-ca tmu-ca $((per / 2 / 400)) --set eta="$eta"
run svrg-ld+ svrg-ld+ $((per / 2 / 400)) --set eta="$eta"
Rscript "$here/sec62-analyze.R" "$build" "$Ntrain" "$eta" "$n"
