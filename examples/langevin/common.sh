# common.sh: sourced by the reproduction scripts in this folder.  Finds the
# drift binary and the test models of the build tree (corrgauss, doublewell:
# C models in tests/plugins until the model language lands), building them
# when missing, and prepares the output folder.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=${DRIFT_TOP:-$(cd "$here/../.." && pwd)}
DRIFT=${DRIFT:-$top/drift}
models=$top/tests/plugins/.libs
if [ ! -x "$DRIFT" ] || [ ! -f "$models/corrgauss.so" ] || [ ! -f "$models/doublewell.so" ]; then
    echo "building drift and the test models in $top" >&2
    make -C "$top" -s drift tests/plugins/corrgauss.la tests/plugins/doublewell.la >&2
fi
# The build tree's samplers, not an installed drift's.
export DRIFT_PLUGIN_DIR=${DRIFT_PLUGIN_DIR:-$top/plugins/samplers/.libs}
export DRIFT_PLUGIN_PATH=
OUT=${OUT:-$PWD/langevin-out}
mkdir -p "$OUT"
work=$(mktemp -d "${TMPDIR:-/tmp}/drift-langevin-XXXXXX")
trap 'rm -rf "$work"' EXIT
