#!/bin/sh
# test_docs.sh: docs/writing-a-sampler.md shows the minimal sampler it
# walks through verbatim, and doc/library.md the libdrift program (the
# code block after the marker "<!-- listing: FILE -->" equals FILE, which
# make check or make installcheck builds and runs),
# and states the loader's refusal of a previous ABI version with the exact
# text make installcheck gets from the installed drift; the figures of
# README.md and doc/ are those doc/measure.sh measures; and the heavier
# figures of doc/scaling.md and doc/minibatch-defaults.md carry the line
# that says what measured them, when and where.
set -u
src="${srcdir:-.}"
doc="$src/docs/writing-a-sampler.md"
fail=0
tmp=$(mktemp) || exit 1
trap 'rm -f "$tmp"' EXIT
for d in "$doc" "$src/doc/library.md"; do
    for f in $(sed -n 's/^<!-- listing: \(.*\) -->$/\1/p' "$d"); do
        awk -v f="$f" '
            $0 == "<!-- listing: " f " -->" {want = 1; next}
            want && /^```/ {if (inside) exit; inside = 1; next}
            inside {print}' "$d" >"$tmp"
        if ! diff -u "$src/$f" "$tmp"; then
            echo "FAIL: the listing of $f in $d differs from the file (diff above)"
            fail=1
        fi
    done
done
grep -q '^<!-- listing: examples/minimal-sampler/rwm.c -->$' "$doc" ||
    { echo "FAIL: $doc has no listing of examples/minimal-sampler/rwm.c"; fail=1; }
grep -q '^<!-- listing: examples/library/columns.c -->$' "$src/doc/library.md" ||
    { echo "FAIL: doc/library.md has no listing of examples/library/columns.c"; fail=1; }
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
# The figures too heavy to measure at every check (doc/scaling.md's,
# written by bench/measure-scaling.sh into blocks named scaling-*;
# doc/minibatch-defaults.md's, by bench/measure-defaults.sh into blocks
# named defaults-*) are in such blocks, none outside them, and every such
# block says what produced it, when and where: a line "Measured by
# `make measure-KIND` (bench/measure-KIND.sh ARGS) on DATE at TIME UTC,
# host NAME: N cores, ...".  A figure typed by hand has no such line.
for f in "$src/README.md" "$src"/doc/*.md; do
    for name in $(sed -n -e 's/^<!-- measured: \(scaling-[a-z0-9-]*\) -->$/\1/p' \
                         -e 's/^<!-- measured: \(defaults-[a-z0-9-]*\) -->$/\1/p' "$f"); do
        kind=${name%%-*}
        awk -v n="$name" '$0 == "<!-- measured: " n " -->" {f = 1; next}
            f && $0 == "<!-- /measured -->" {exit} f {print}' "$f" >"$tmp"
        if ! grep -qE '^Measured by `make measure-'"$kind"'` \(bench/measure-'"$kind"'\.sh.*\) on [0-9]{4}-[0-9]{2}-[0-9]{2} at [0-9]{2}:[0-9]{2} UTC, host [^ :]+: [0-9]+ cores' "$tmp"; then
            echo "FAIL: $f: the block $name does not say what measured it, when and where (a line \"Measured by \`make measure-$kind\` (bench/measure-$kind.sh ...) on YYYY-MM-DD at HH:MM UTC, host NAME: N cores, ...\"): run make measure-$kind"
            fail=1
        fi
    done
done
outside() { # FILE: the lines of FILE outside its measured blocks
    awk '/^<!-- measured: /{f = 1; next} /^<!-- \/measured -->$/{f = 0; next} !f' "$1"
}
scaling="$src/doc/scaling.md"
for name in scaling-stream scaling-mpi; do
    grep -qx "<!-- measured: $name -->" "$scaling" ||
        { echo "FAIL: $scaling has no block $name (bench/measure-scaling.sh writes it)"; fail=1; }
done
if outside "$scaling" | grep -nE '[0-9] ?(MB/s|GB/s|us|ms)([ ,.;:)]|$)|[0-9]x([ ,.;)]|$)'; then
    echo "FAIL: $scaling quotes the measured figures above outside a block of bench/measure-scaling.sh"
    fail=1
fi
defaults="$src/doc/minibatch-defaults.md"
for name in defaults-small defaults-large; do
    grep -qx "<!-- measured: $name -->" "$defaults" ||
        { echo "FAIL: $defaults has no block $name (bench/measure-defaults.sh writes it)"; fail=1; }
done
if outside "$defaults" | grep -n '^|'; then
    echo "FAIL: $defaults has a table outside a block of bench/measure-defaults.sh (above)"
    fail=1
fi
sh "$src/doc/measure.sh" --check || fail=1
[ $fail = 0 ] && echo "test_docs: $doc shows rwm.c verbatim and the refusal message; the measured figures are current, the heavier ones say what measured them"
exit $fail
