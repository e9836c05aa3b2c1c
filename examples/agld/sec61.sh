#!/bin/sh
# sec61.sh: Zhang et al. (AAAI 2020), section 6.1, on drift: the
# Gaussian-mixture potential (N = 500, d = 10, a_i ~ N(2*1, I)), 2e4 data
# passes per sampler with the last 1e4 kept, for LMC, SGLD, SVRG-LD, SAGA-LD
# and TMU-RA at one step size (TMU-RA also with Theorem 3's D = N); 2-D projections of the sample densities are
# compared with the exact target.  Writes build/sec61-distances-etaE-nB.csv
# and build/sec61-projections-etaE-nB.png.  Not part of make check.
#
# Usage (from a built tree): examples/agld/sec61.sh [ETA] [BATCH]
# Environment: PASSES (data passes per sampler, 2e4), SEED (the samplers'
# seed, 61), BUILD (output folder, examples/agld/build).
# LMC is agld with snapshot=ptu and D=1: a total refresh at every step, so
# each step uses the exact full gradient (N evaluations): that is LMC.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${BUILD:-$here/build}
eta=${1:-0.1}
n=${2:-5}
passes=${PASSES:-20000}
seed=${SEED:-61}
mkdir -p "$build"
drift=${DRIFT:-$top/drift}
export DRIFT_PLUGIN_DIR="$top/plugins/samplers/.libs:$top/plugins/models/.libs"
export DRIFT_PLUGIN_PATH=
cc -O2 -shared -fPIC -fvisibility=hidden -I"$top/include" \
    "$here/mixture.c" -o "$build/mixture.so" -lm
Rscript "$here/sec61-data.R" "$build"

run() { # name sampler thin settings...
    name=$1 sampler=$2 thin=$3
    shift 3
    echo "== $name"
    "$drift" sample --chains 1 --init 0 --model "$build/mixture.so" --data "$build/sec61-a.csv" \
        --sampler "$sampler" --batch "$n" --passes "$passes" --thin "$thin" \
        --seed "$seed" --out "$build/sec61-$name.csv" "$@"
}
# Thinning keeps about 1e4 draws of the second half of each run.
run lmc agld 1 --set snapshot=ptu --set D=1 --set eta="$eta"
run sgld sgld $((500 / n)) --set h="$eta"
run svrg-ld svrg-ld $((500 / n / 3)) --set eta="$eta"
run saga-ld saga-ld $((500 / n)) --set eta="$eta"
run tmu-ra tmu-ra $((500 / n / 2)) --set eta="$eta"
# Theorem 3's refresh period D = N iterations (the default is one data pass).
run tmu-ra-dn tmu-ra $((500 / n / 2)) --set eta="$eta" --set D=0
Rscript "$here/sec61-analyze.R" "$build" "$passes" "$eta" "$n"
