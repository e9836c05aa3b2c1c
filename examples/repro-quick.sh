#!/bin/sh
# repro-quick.sh: a reduced run of every paper reproduction in examples/
# (make repro-quick; not part of make check).  It checks that each script
# still runs end to end from this build and writes its tables and figure;
# the numbers of a reduced run are not the README's (fewer chains, passes
# and seeds), and the committed results/ are left alone: the examples are
# copied into a scratch tree whose drift, plugins, include and tests are
# links to this build tree, and every script runs there.
# (Built in the source tree: the scripts also compile test models from
# tests/plugins/*.c through the link to the build tree's tests.)
# Usage: sh examples/repro-quick.sh [BUILD_TREE]   (env: KEEP=1 keeps the
#        scratch tree; ONLY="name ..." runs only those steps)
set -eu
top=$(cd "${1:-$(dirname "$0")/..}" && pwd)
src=$(cd "$(dirname "$0")" && pwd)
[ -x "$top/drift" ] || { echo "repro-quick: no drift in $top: run make first" >&2; exit 2; }
scratch=$(mktemp -d "${TMPDIR:-/tmp}/drift-repro-XXXXXX")
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$scratch"' EXIT
for d in drift plugins tests; do ln -s "$top/$d" "$scratch/$d"; done
ln -s "$(cd "$src/.." && pwd)/include" "$scratch/include"   # the source tree's headers
mkdir "$scratch/examples"
for d in langevin pdmp plugin-zigzag agld ewsg bnn mf normal_gamma; do
    # the sources only: not the data sets and runs of earlier full runs
    mkdir -p "$scratch/examples/$d"
    (cd "$src/$d" && find . -path ./build -prune -o -path ./runs -prune -o -type f -print |
        while read -r f; do mkdir -p "$scratch/examples/$d/$(dirname "$f")"; cp "$f" "$scratch/examples/$d/$f"; done)
done
export DRIFT="$top/drift" DRIFT_TOP="$scratch"
export DRIFT_PLUGIN_DIR="$top/plugins/samplers/.libs:$top/plugins/models/.libs" DRIFT_PLUGIN_PATH=
ex=$scratch/examples
log=$scratch/log; mkdir -p "$log"
summary=""; failed=0; t_all=$(date +%s)
step() { # name command...
    name=$1; shift
    if [ -n "${ONLY:-}" ] && ! echo " $ONLY " | grep -q " $name "; then return 0; fi
    t0=$(date +%s)
    printf '%-22s ' "$name"
    if nice -n 19 "$@" > "$log/$name.log" 2>&1; then r=ok; else r=FAILED; failed=$((failed + 1)); fi
    t=$(($(date +%s) - t0))
    printf '%-6s %4d s\n' "$r" "$t"
    [ "$r" = ok ] || { echo "---- last lines of $name's log:"; tail -15 "$log/$name.log"; echo "----"; }
    summary="$summary$name $r $t\n"
}
L=$ex/langevin; P=$ex/pdmp; A=$ex/agld
step ewsg-gauss2d       env CHAINS=100 OUT="$scratch/out" sh "$L/ewsg-gauss2d.sh"
step ewsg-m-data        env CHAINS=100 NDATA=50 MS="0 1" OUT="$scratch/out" sh "$L/ewsg-m-data.sh"
step ewsg-act          env CHAINS=20 B=20 LEN=30 HS_HMC="0.02 0.1" HS_LD="0.002 0.01" OUT="$scratch/out" sh "$L/ewsg-act.sh"
step ewsg-scaling      env CHAINS=40 B=20 HS="0.05 0.1" TS="1 5 10" TK=5 OUT="$scratch/out" sh "$L/ewsg-scaling.sh"
step ewsg-m-sweep       env CHAINS=100 ITER=300 KEEP=200 MS="0 1 5" NS="1 5" OUT="$scratch/out" sh "$L/ewsg-m-sweep.sh"
step sgnht-gauss-mean   env ITER=20000 OUT="$scratch/out" sh "$L/sgnht-gauss-mean.sh"
step sgnht-double-well  env ITER=100000 OUT="$scratch/out" sh "$L/sgnht-double-well.sh"
step sgnht-normal-gamma env HS="0.005 0.02" AS=1 RUNS=2 ITER=5000 OUT="$scratch/out" sh "$L/sgnht-normal-gamma.sh"
step pdmp-fig71         sh "$P/fig71.sh" 300
step pdmp-psbps         sh "$P/psbps.sh" 400 1
step pdmp-fig72         sh "$P/fig72.sh" 3 1000 2000 1
step pdmp-fig1-paper    sh "$P/fig1-paper.sh" 2000 2
step pdmp-fig1          sh "$P/fig1.sh" 30
step agld-sec61         env PASSES=400 sh "$A/sec61.sh" 0.1 5
step agld-sec61-seeds   env PASSES=400 OUT="$scratch/agld-seeds" sh "$A/sec61-seeds.sh" 0.1 5 2
step agld-sec62-panels  sh "$A/sec62-panels.sh" slice 2e-6 100 2
step agld-sec62-seeds   env OUT="$scratch/out" sh "$A/sec62-seeds.sh" slice 2 2e-6 100 2
step agld-sec63         env NTRAIN=400000 NTEST=5000 D=4096 BATCH=256 LIMIT_MB=128 MAXMEM=64M RUN_SECONDS=10 EVAL=0.2 sh "$A/sec63.sh"
step ewsg-covtype       env GRID=quick SEEDS=1 PASSES=2 sh "$ex/ewsg/covtype.sh"
step ewsg-covtype-paper env SEEDS=1 HS_SGLD=1e-6 HS_PSGLD=1e-5 HS_HMC=2e-5 RESULTS="$scratch/out" sh "$ex/ewsg/covtype-paper.sh"
step bnn-fmnist         env PASSES=1 HIDDEN=20 THIN_PDMP=0.5 WARM_PDMP=10 sh "$ex/bnn/fmnist.sh"
step bnn-sbps-fig6      env EPOCHS=30 SEEDS="1 2" MALA_ITER=300 MALA_WARM=100 sh "$ex/bnn/sbps-fig6.sh"
step mf-ml1m            env PASSES=3 sh "$ex/mf/ml1m.sh"
echo "repro-quick: $(($(date +%s) - t_all)) s in all, $failed failed; logs in $log$([ "${KEEP:-0}" = 1 ] || echo ' (removed: KEEP=1 keeps them)')"
[ "$failed" = 0 ]
