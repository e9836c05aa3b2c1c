#!/bin/sh
# compare.sh: evidence that drift's optimize, laplace, pathfinder and
# variational agree with Stan.  Parts 1-2 (modes.R, needs rstan and a
# posteriordb git directory): optimize vs rstan optimizing, laplace and
# pathfinder vs posteriordb's NUTS references.  Part 3 (variational.sh):
# ADVI meanfield/fullrank vs drift nuts and minibatch samplers.  Not a test.
#
#   sh bench/methods/compare.sh [modes|variational|all]   (from a built tree)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
DRIFT=${DRIFT:-$top/drift}
SEED=${SEED:-1}
export DRIFT_PLUGIN_PATH="${DRIFT_PLUGIN_PATH:-$top/plugins/samplers/.libs:$top/plugins/models/.libs}"
export DRIFT_PLUGIN_DIR="${DRIFT_PLUGIN_DIR:-$DRIFT_PLUGIN_PATH}"
PDB=${POSTERIORDB_GIT:-/work/.mirror/stan-dev+posteriordb/repo}
CASES=${CASES:-"earnings-logearn_interaction arK-arK kilpisjarvi_mod-kilpisjarvi gp_pois_regr-gp_regr eight_schools-eight_schools_noncentered"}
what=${1:-all}
echo "compare.sh: $(date -u) load $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores, drift $(git -C "$top" rev-parse --short HEAD)"
if [ "$what" = modes ] || [ "$what" = all ]; then
    work=$(mktemp -d "${TMPDIR:-/tmp}/drift-methods.XXXXXX") || exit 1
    mkdir -p "$work/boost" && ln -s /usr/include/boost "$work/boost/boost"
    Rscript "$top/bench/methods/modes.R" "$work" "$top" "$DRIFT" "$PDB" "$SEED" $CASES
    rm -rf "$work"
fi
if [ "$what" = variational ] || [ "$what" = all ]; then
    sh "$top/bench/methods/variational.sh"
fi
