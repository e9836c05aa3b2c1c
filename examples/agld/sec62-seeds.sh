#!/bin/sh
# sec62-seeds.sh: section 6.2's three access panels over many seeds, for
# 95% intervals.  Runs sec62-panels.sh once per seed on one data set (the
# data stay fixed: sec62-data.R and sec62-slice-data.R draw them from a
# fixed seed; only the samplers' seed changes), then sec62-seeds.R
# summarises the final test MSE (epoch EPOCHS) of every method and access
# strategy as mean and 95% t-interval over the seeds, and the paired
# differences (same seed) that the paper's claims rest on.  The engine's
# check of the given step size is skipped (STEPCHECK=0; it does not change
# the draws).  Not part of make check.
#
# Usage (from a built tree): examples/agld/sec62-seeds.sh SET [SEEDS] [ETA] [BATCH] [EPOCHS]
# SET year or slice as sec62-panels.sh; SEEDS seeds (10 by default) numbered
# FIRST, FIRST+1, ... (FIRST 1001 by default); ETA, BATCH and EPOCHS as
# sec62-panels.sh.  BUILD another build folder (default build/; seeds whose
# panels-SET-sS-mse.csv is there already are not rerun, so another ETA
# needs another BUILD); OUT the folder of the summary (default BUILD);
# KEEP_DRAWS=1 keeps each seed's draws (about 170 MB a seed at slice).
# Writes OUT/sec62-seeds-SET.csv (per method), -diff.csv (paired
# differences), -verdicts.csv (the claims per panel), -all.csv (every
# seed) and .png.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
set_=${1:?usage: sec62-seeds.sh year|slice [SEEDS] [ETA] [BATCH] [EPOCHS]}
case $set_ in
year) eta_default=5e-7 ;;
slice) eta_default=2e-6 ;;
*) echo "sec62-seeds.sh: SET must be year or slice, not '$set_'" >&2; exit 2 ;;
esac
k=${2:-10}
eta=${3:-$eta_default}
n=${4:-100}
epochs=${5:-10}
first=${FIRST:-1001}
build=${BUILD:-$here/build}
out=${OUT:-$build}
mkdir -p "$build" "$out"
i=0
while [ "$i" -lt "$k" ]; do
    s=$((first + i))
    tag=$set_-s$s
    if [ ! -s "$build/panels-$tag-mse.csv" ]; then
        t0=$(date +%s)
        env SEED=$s STEPCHECK=0 BUILD="$build" sh "$here/sec62-panels.sh" "$set_" "$eta" "$n" "$epochs" \
            > "$build/seeds-$tag.log" 2>&1
        echo "seed $s: $(($(date +%s) - t0)) s"
        if [ "${KEEP_DRAWS:-0}" != 1 ]; then
            rm -f "$build/panels-$tag-lmc.csv"
            for a in ra rr ca; do
                for m in sgld ptu ppu tmu svrg-ld+; do rm -f "$build/panels-$tag-$m-$a.csv"; done
            done
        fi
    fi
    i=$((i + 1))
done
Rscript "$here/sec62-seeds.R" "$build" "$out" "$set_" "$first" "$k" "$epochs"
