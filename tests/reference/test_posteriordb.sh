#!/bin/sh
# test_posteriordb.sh: the fast subset of the posteriordb test set
# (tests/posteriordb, seven small posteriors marked `fast`) at drift's
# defaults: nuts, 4 chains, 1000 warmup iterations and 1000 draws.  Every
# parameter's mean must lie within 0.2 reference sd of Stan's and its sd
# within [0.8, 1.25] of Stan's.  Skipped (77) when the set or the drift
# binary is missing.  The whole set: make check-posteriordb.
set -u
src="${srcdir:-.}"
bin="${DRIFT_BIN:-./drift}"
runner="$src/tests/posteriordb/run.sh"
[ -f "$runner" ] || { echo "test_posteriordb: no $runner; skipped"; exit 77; }
[ -x "$bin" ] || { echo "test_posteriordb: no drift binary $bin; skipped"; exit 77; }
exec sh "$runner" "$bin" --fast
