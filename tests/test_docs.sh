#!/bin/sh
# test_docs.sh: docs/writing-a-sampler.md shows the minimal sampler it
# walks through verbatim (the code block after the marker
# "<!-- listing: FILE -->" equals FILE, which make check builds and tests),
# and states the loader's refusal of a previous ABI version with the exact
# text make installcheck gets from the installed drift; and the figures of
# README.md and doc/ are those doc/measure.sh measures.
set -u
src="${srcdir:-.}"
doc="$src/docs/writing-a-sampler.md"
fail=0
tmp=$(mktemp) || exit 1
trap 'rm -f "$tmp"' EXIT
for f in $(sed -n 's/^<!-- listing: \(.*\) -->$/\1/p' "$doc"); do
    awk -v f="$f" '
        $0 == "<!-- listing: " f " -->" {want = 1; next}
        want && /^```/ {if (inside) exit; inside = 1; next}
        inside {print}' "$doc" >"$tmp"
    if ! diff -u "$src/$f" "$tmp"; then
        echo "FAIL: the listing of $f in $doc differs from the file (diff above)"
        fail=1
    fi
done
grep -q '^<!-- listing: examples/minimal-sampler/rwm.c -->$' "$doc" ||
    { echo "FAIL: $doc has no listing of examples/minimal-sampler/rwm.c"; fail=1; }
msg="refused: built for drift sampler ABI version 1, but this drift loads version 2; rebuild it against this drift's headers (pkg-config --cflags drift)"
grep -qF -- "$msg" "$doc" ||
    { echo "FAIL: $doc does not state the previous-version refusal: $msg"; fail=1; }
# The figures the README and doc/ quote are measured by doc/measure.sh,
# between its markers, and are not stale: the README's first run among
# them, and every block what a fresh measurement gives (times within a
# factor of 5).
readme="$src/README.md"
grep -q '^<!-- measured: pima-run -->$' "$readme" ||
    { echo "FAIL: $readme quotes no measured figures of its first run (<!-- measured: pima-run -->)"; fail=1; }
if grep -qE 'draws in [0-9.]+ s' "$readme" && ! awk '/^<!-- measured: /{f=1} /^<!-- \/measured -->/{f=0} !f && /draws in [0-9.]+ s/ {bad=1} END {exit bad}' "$readme"; then
    echo "FAIL: $readme quotes a run's time outside a measured block"
    fail=1
fi
sh "$src/doc/measure.sh" --check || fail=1
[ $fail = 0 ] && echo "test_docs: $doc shows rwm.c verbatim and the refusal message; the measured figures are current"
exit $fail
