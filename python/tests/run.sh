#!/bin/sh
# run.sh: the Python package's tests (pytest, python/tests) against a
# build tree: make check-python runs it with DRIFT_BIN and the plugin
# directories of the build, srcdir the source tree.  Skips, with a line
# saying what is missing, when the interpreter lacks pytest or numpy.
# ArviZ is taken from ../shared/interop/python beside the source tree
# (or DRIFT_INTEROP_PYTHON) when it is there; its tests skip without it.
# Extra arguments go to pytest (e.g. -k sgld).
set -u
src=${srcdir:-.}
py=${PYTHON3:-}
if [ -z "$py" ]; then
    if [ -x /usr/bin/python3 ]; then py=/usr/bin/python3; else py=python3; fi
fi
if ! "$py" -c 'import pytest, numpy' >/dev/null 2>&1; then
    echo "check-python: SKIP: $py cannot import pytest and numpy (Debian: apt-get install python3-pytest python3-numpy; or make check-python PYTHON3=an interpreter that has them)"
    exit 0
fi
interop=${DRIFT_INTEROP_PYTHON:-$src/../shared/interop/python}
PYTHONPATH="$src/python${PYTHONPATH:+:$PYTHONPATH}"
[ -d "$interop" ] && PYTHONPATH="$PYTHONPATH:$interop"
export PYTHONPATH
exec "$py" -m pytest -p no:cacheprovider -q "$src/python/tests" "$@"
