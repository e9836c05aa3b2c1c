#!/bin/sh
# sec61-seeds.sh: section 6.1 over many seeds, for 95% confidence intervals
# of each sampler's distances to the exact target.  Runs sec61.sh once per
# seed (the a_i stay fixed; only the samplers' seed changes), then
# sec61-seeds.R summarises: mean and 95% t-interval of W2 (2-D and 10-D)
# and TV per sampler, and the paired differences with TMU-RA.  Writes
# build/sec61-seeds-etaE-nB/ (one folder per seed) and its summary csv.
# Not part of make check.
#
# Usage (from a built tree): examples/agld/sec61-seeds.sh [ETA] [BATCH] [SEEDS]
# SEEDS seeds (20 by default) numbered 1001, 1002, ...; PASSES as sec61.sh;
# OUT another output folder.  Seeds already measured there are not rerun.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
eta=${1:-0.1}
n=${2:-5}
k=${3:-20}
out=${OUT:-$here/build/sec61-seeds-eta$eta-n$n}
mkdir -p "$out"
i=1
while [ "$i" -le "$k" ]; do
    s=$((1000 + i))
    if [ ! -f "$out/s$s/sec61-distances-eta$eta-n$n.csv" ]; then
        env SEED=$s BUILD="$out/s$s" sh "$here/sec61.sh" "$eta" "$n" \
            > "$out/s$s.log" 2>&1
        # The draws (20 MB a seed) are not needed once measured.
        for f in lmc sgld svrg-ld saga-ld tmu-ra tmu-ra-dn; do
            rm -f "$out/s$s/sec61-$f.csv"
        done
    fi
    i=$((i + 1))
done
Rscript "$here/sec61-seeds.R" "$out" "$eta" "$n"
