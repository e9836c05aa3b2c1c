#!/bin/sh
# pathfinder_w1.sh: the Pathfinder paper's claim (Zhang, Carpenter, Gelman
# & Vehtari, JMLR 2022: on posteriordb, Pathfinder's draws are better than
# ADVI's, meanfield and fullrank, and comparable to short runs of dynamic
# HMC, by 1-Wasserstein distance to reference draws) on drift's own
# methods: for every posterior in tests/posteriordb/posteriors.txt with
# a rows.csv and posteriordb reference draws (diamonds left out: slow),
# seeds 1-3 of
#   pathfinder   drift pathfinder (defaults: 4 paths, PSIS to 1000 draws)
#   single       drift pathfinder --num-paths 1
#   meanfield    drift variational
#   fullrank     drift variational --algorithm fullrank
#   nuts_short   drift sample --warmup 75 --iter 25 (4 chains: 100 draws)
# each at its defaults otherwise, judged by w1.py (W1 of 100 draws against
# 100 reference draws, standardised by the reference sds; the mean of 20
# resamplings; "floor" is 100 reference draws against 100 others: W1
# of two samples of 100 is far from 0 even from one distribution).  Needs the
# posteriordb git directory (POSTERIORDB_GIT) for the draws.  Not a test.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
DRIFT=${DRIFT:-$top/drift}
GIT=${POSTERIORDB_GIT:-/work/.mirror/stan-dev+posteriordb/repo}
SEEDS=${SEEDS:-"1 2 3"}
export DRIFT_PLUGIN_PATH="${DRIFT_PLUGIN_PATH:-$top/plugins/samplers/.libs:$top/plugins/models/.libs}"
export DRIFT_PLUGIN_DIR="${DRIFT_PLUGIN_DIR:-$DRIFT_PLUGIN_PATH}"
w=$(mktemp -d "${TMPDIR:-/tmp}/drift-w1.XXXXXX") || exit 1
trap 'rm -rf "$w"' EXIT
for p in $(grep -v '^#' "$top/tests/posteriordb/posteriors.txt" | awk '{print $1}' | grep -v diamonds); do
    P=$top/tests/posteriordb/$p
    [ -f "$P/rows.csv" ] || continue
    git --git-dir="$GIT" show "HEAD:posterior_database/reference_posteriors/draws/draws/$p.json.zip" >"$w/ref.zip" 2>/dev/null || continue
    dj=""
    [ -f "$P/data.json" ] && dj="--data $P/data.json"
    M="$P/model.drift --data $P/rows.csv $dj"
    for s in $SEEDS; do
        # shellcheck disable=SC2086
        {
            "$DRIFT" pathfinder $M --seed $s --out "$w/pathfinder_$s.csv"
            "$DRIFT" pathfinder $M --num-paths 1 --seed $s --out "$w/single_$s.csv"
            "$DRIFT" variational $M --seed $s --quiet --out "$w/meanfield_$s.csv"
            "$DRIFT" variational $M --algorithm fullrank --seed $s --quiet --out "$w/fullrank_$s.csv"
            "$DRIFT" sample $M --warmup 75 --iter 25 --seed $s --quiet --out "$w/short$s.csv"
        } >/dev/null 2>&1
        # the four chains' draws in one file
        awk 'FNR == 1 {seen = 0} /^#/ {next} !seen++ {if (hdr++) next} {print}' "$w/short${s}"_[0-9]*.csv >"$w/nuts_short_$s.csv" 2>/dev/null
        rm -f "$w/short${s}"_[0-9]*.csv
    done
    /usr/bin/python3 "$top/bench/methods/w1.py" "$p" "$w/ref.zip" "$w"
    rm -f "$w"/*.csv
done | tee "$w/all"
/usr/bin/python3 "$top/bench/methods/w1.py" --table "$w/all"
