#!/bin/sh
# run.sh DRIFT [NSEEDS [DSEED]]: the two kinds of posterior where a nuts
# chain's warmup used to be lost (see README.md), NSEEDS drift runs each
# (default 20) at drift's defaults, judged per chain against rstan's
# reference on the same data.  Needs python3, and Rscript with rstan for
# the reference (without it, ref_KIND_DSEED.csv must already be in WORK).
# WORK (default a temporary directory) keeps the data, draws and logs;
# DRIFT_FLAGS (e.g. "--set metric=grad") go to every drift run.
set -eu
drift=$1; nseeds=${2:-20}; dseed=${3:-1}
here=$(cd "$(dirname "$0")" && pwd)
work=${WORK:-$(mktemp -d)}
cd "$work"
cp "$here"/*.drift "$here"/*.stan .
mkdir -p boost-link runs
ln -sf /usr/include/boost boost-link/boost
for kind in offset dose roach; do
    python3 "$here/gen.py" $kind "$dseed"
    if [ ! -f "ref_${kind}_$dseed.csv" ]; then
        Rscript "$here/stan_ref.R" $kind "$dseed" "$nseeds" "$work/boost-link/boost" \
            > "stan_$kind.log" 2>&1 || { cat "stan_$kind.log"; exit 1; }
        tail -n 1 "stan_$kind.log"
    fi
    extra=""
    [ $kind = dose ] && extra="--data-set P=18"
    s=1
    while [ $s -le "$nseeds" ]; do
        "$drift" sample $kind.drift --data "${kind}_$dseed.csv" $extra --seed $s ${DRIFT_FLAGS:-} \
            --out "runs/drift_${kind}_s$s.csv" --quiet > "runs/drift_${kind}_s$s.log" 2>&1
        s=$((s + 1))
    done
    python3 "$here/judge.py" . runs/drift $kind "$dseed" "$nseeds" | tail -n 1
done
echo "draws and logs in $work"
