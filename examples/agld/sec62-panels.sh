#!/bin/sh
# sec62-panels.sh: Zhang et al. (AAAI 2020), section 6.2, all three access
# panels: Bayesian ridge regression, test MSE against epochs, for each
# access strategy (RA, RR, CA) SGLD, PTU (SVRG-LD), PPU (SAGA-LD), TMU and
# SVRG-LD+ with that access, and LMC (the same in every panel), all at one
# step size and minibatch size.
#
# Usage (from a built tree): examples/agld/sec62-panels.sh SET [ETA] [BATCH] [EPOCHS]
#   SET = year   synthetic data at YearPredictionMSD's size (412,276 x 90
#                training rows; sec62-data.R), default ETA 5e-7
#         slice  synthetic data at SliceLocation's size (42,800 x 384
#                training rows of 53,500; sec62-slice-data.R), default ETA 2e-6
# BATCH defaults to 100, EPOCHS to 10; SEED (environment, default 62) the
# runs' seed (outputs of other seeds are tagged SET-sSEED); STEPCHECK=0
# (environment) skips the engine's check of the given step size in every
# run (sec62-seeds.sh sets it).  The training rows are converted
# once to a row store (drift data convert).  Writes build/panels-SET-*.csv
# (the draws) and, through sec62-panels.R, build/panels-SET-mse.csv and
# build/panels-SET-mse.png.  Not part of make check.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${BUILD:-$here/build}
set_=${1:?usage: sec62-panels.sh year|slice [ETA] [BATCH] [EPOCHS]}
case $set_ in
year) stem=sec62; gen=sec62-data.R; eta_default=5e-7 ;;
slice) stem=slice; gen=sec62-slice-data.R; eta_default=2e-6 ;;
*) echo "sec62-panels.sh: SET must be year or slice, not '$set_'" >&2; exit 2 ;;
esac
eta=${2:-$eta_default}
n=${3:-100}
epochs=${4:-10}
seed=${SEED:-62}
tag=$set_; [ "$seed" = 62 ] || tag=$set_-s$seed
mkdir -p "$build"
drift=${DRIFT:-$top/drift}
export DRIFT_PLUGIN_DIR="$top/plugins/samplers/.libs:$top/plugins/models/.libs"
export DRIFT_PLUGIN_PATH=
cc -O2 -shared -fPIC -fvisibility=hidden -I"$top/include" \
    "$top/tests/plugins/ridge.c" -o "$build/ridge.so" -lm
[ -s "$build/$stem-train.csv" ] || Rscript "$here/$gen" "$build"
[ -s "$build/$stem-train.drs" ] || "$drift" data convert "$build/$stem-train.csv" "$build/$stem-train.drs"
Ntrain=$(($(wc -l < "$build/$stem-train.csv") - 1))
per=$((Ntrain / n)) # minibatch iterations in one data pass

# The engine checks a given step size with pilots of up to 500 steps
# before a run; they do not change the run's draws (the same draws with and
# without), but LMC's steps are full-data ones (D = 1), so its check costs
# 500 data passes, 50 times the run (290 s of LMC's 291 s at slice's size).
# A --seconds budget far beyond the run turns the check off; --passes still
# ends the run.
nocheck="--seconds 1000000"
run() { # name sampler access thin settings...
    name=$1 sampler=$2 access=$3 thin=$4
    shift 4
    [ "$thin" -ge 1 ] || thin=1
    echo "== $name"
    /usr/bin/time -f "   %e s, %M KB" "$drift" sample --chains 1 --init 0 --model "$build/ridge.so" \
        --model-set tau=1 --data "$build/$stem-train.drs" --access "$access" \
        --sampler "$sampler" --batch "$n" --passes "$epochs" --thin "$thin" \
        --seed "$seed" --out "$build/panels-$tag-$name.csv" --quiet $check "$@"
}
# Thinning keeps about 200 draws an epoch.
check=$nocheck
run lmc agld ra 1 --set snapshot=ptu --set D=1 --set eta="$eta"
check=
[ "${STEPCHECK:-1}" = 0 ] && check=$nocheck
for a in ra rr ca; do
    run "sgld-$a" sgld $a $((per / 200)) --set h="$eta"
    run "ptu-$a" ptu-$a $a $((per / 3 / 200)) --set eta="$eta"
    run "ppu-$a" ppu-$a $a $((per / 200)) --set eta="$eta"
    run "tmu-$a" tmu-$a $a $((per / 2 / 200)) --set eta="$eta"
    run "svrg-ld+-$a" svrg-ld+ $a $((per / 2 / 200)) --set eta="$eta"
done
Rscript "$here/sec62-panels.R" "$build" "$tag" "$stem" "$Ntrain" "$eta" "$n" "$epochs"
