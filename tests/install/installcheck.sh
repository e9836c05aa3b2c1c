#!/bin/sh
# installcheck.sh: make installcheck.  Proves the third-party kit the way
# a sampler author meets it: drift installed into a temporary root (make
# install DESTDIR=...), the out-of-tree Zig-Zag sampler built from a copy
# of examples/plugin-zigzag with nothing but pkg-config pointed at that
# install, installed into a user plugin directory, found by name through
# DRIFT_PLUGIN_PATH, and run on the 2-D Gaussian with per-datum centres,
# its draws checked against the closed-form posterior.  Also the loader's
# behaviour a third party meets, through the installed command: the
# refusal of a plugin built for the previous ABI version, a malformed
# hyperparameter table and a file dlopen cannot load, each with its
# documented message, and precedence when two plugins share a name.
#
# Called by Makefile.am's installcheck-local with: MAKE, srcdir (absolute),
# builddir (absolute), CC, MOMENTS (the kit-moments program) and the
# configured directories bindir, libdir, includedir, pkgconfigdir, plugindir,
# mandir, docdir, datadir.
set -u

fail() { echo "installcheck: FAIL: $*" >&2; exit 1; }
step() { echo "installcheck: $*"; }

T=$(mktemp -d "${TMPDIR:-/tmp}/drift-installcheck.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
unset DRIFT_PLUGIN_DIR DRIFT_PLUGIN_PATH
export LC_ALL=C

# ---- drift installed into a temporary root ----
step "make install DESTDIR=$T"
(cd "$builddir" && $MAKE install DESTDIR="$T" >"$T/install.log" 2>&1) ||
    { cat "$T/install.log"; fail "make install DESTDIR=$T failed"; }
drift="$T$bindir/drift"
for f in "$drift" "$T$includedir/drift/common.h" "$T$includedir/drift/model.h" \
    "$T$includedir/drift/sampler.h" "$T$includedir/drift/drift.h" "$T$pkgconfigdir/drift.pc" \
    "$T$mandir/man1/drift.1" "$T$docdir/writing-a-sampler.md" \
    "$T$plugindir/sgld.so" "$T$plugindir/bps.so" "$T$plugindir/gaussian.so" \
    "$T$plugindir/logistic.so" "$T$docdir/README.md" "$T$docdir/LICENSE" \
    "$T$docdir/user-guide.md" "$T$docdir/from-stan.md" "$T$docdir/reference.md" \
    "$T$docdir/language.md" "$T$docdir/scaling.md" "$T$docdir/stan-csv.md" \
    "$T$docdir/library.md" \
    "$T$datadir/bash-completion/completions/drift"; do
    [ -e "$f" ] || fail "make install did not install $f"
done
# The licence, stated by what is installed: the command, the headers, the
# pkg-config file, the manual page, the completion.
"$drift" --version | grep -q 'Licence: MIT' || fail "drift --version states no licence"
for f in "$T$includedir/drift/common.h" "$T$includedir/drift/model.h" \
    "$T$includedir/drift/sampler.h" "$T$includedir/drift/drift.h" "$T$pkgconfigdir/drift.pc" \
    "$T$datadir/bash-completion/completions/drift"; do
    grep -q 'SPDX-License-Identifier: MIT' "$f" || fail "$f states no licence"
done
grep -q '^\.SH LICENCE' "$T$mandir/man1/drift.1" || fail "the manual page states no licence"
ls "$T$plugindir"/*.la >/dev/null 2>&1 && fail "libtool .la files left in $T$plugindir"

# The staged drift finds its own plugin directory (it is relocatable).
real_plugindir=$(cd "$T$plugindir" && pwd -P)
"$drift" samplers >"$T/samplers.txt" 2>&1 || fail "drift samplers failed"
grep -q "^plugin search path: $real_plugindir\$" "$T/samplers.txt" ||
    fail "the staged drift does not search $real_plugindir: $(head -1 "$T/samplers.txt")"
grep -q "file: $real_plugindir/bps.so" "$T/samplers.txt" ||
    fail "the staged drift did not load its own bps.so"
# every installed plugin states its licence (DRIFT_PLUGIN_LICENSE)
grep -q "licence: not stated" "$T/samplers.txt" &&
    fail "an installed sampler plugin states no licence"
"$drift" models >"$T/models.txt" 2>&1 || fail "drift models failed"
grep -q "licence: not stated" "$T/models.txt" &&
    fail "an installed model plugin states no licence"
grep -q "licence: MIT" "$T/models.txt" || fail "drift models shows no licence"
step "the staged drift searches $real_plugindir"

# Help for every command, and the installed manual page covers it all.
for c in $("$drift" --help | awk '/^commands:/ {f = 1; next} f && /^  [a-z]/ {print $1}'); do
    "$drift" $c --help >/dev/null || fail "drift $c --help failed"
done
DRIFT_BIN="$drift" MANPAGE="$T$mandir/man1/drift.1" sh "$srcdir/tests/docs/test_manpage.sh" ||
    fail "the installed manual page misses commands or options"

# ---- pkg-config, pointed at the temporary install ----
PKG_CONFIG_PATH="$T$pkgconfigdir"
export PKG_CONFIG_PATH
cflags=$(pkg-config --cflags drift) || fail "pkg-config cannot find drift in $T$pkgconfigdir"
pdir=$(pkg-config --variable=plugindir drift)
[ "$(cd "$pdir" 2>/dev/null && pwd -P)" = "$real_plugindir" ] ||
    fail "pkg-config --variable=plugindir drift gives $pdir, not $T$plugindir"
step "pkg-config --cflags drift: $cflags; plugindir: $pdir"

# ---- libdrift: a program built with pkg-config --libs, rows in memory ----
# examples/library/columns.c (doc/library.md shows it): the example's 2-D
# Gaussian with per-datum centres over 400 rows given as strided columns
# of one array; its posterior is N(mean of the c_i, I/400), so each
# chain's mean lies within 5 sd (0.25) of the centres' mean.
libs=$(pkg-config --libs drift) || fail "pkg-config --libs drift failed"
$CC $cflags -o "$T/columns" "$srcdir/examples/library/columns.c" $libs -Wl,-rpath,"$T$libdir" -lm >"$T/columns.log" 2>&1 ||
    { cat "$T/columns.log"; fail "examples/library/columns.c did not build against the installed libdrift"; }
DRIFT_PLUGIN_PATH="$T$plugindir" "$T/columns" "$srcdir/examples/gaussian/gaussian.drift" >"$T/columns.out" 2>&1 ||
    { cat "$T/columns.out"; fail "examples/library/columns.c's run through libdrift failed"; }
step "libdrift: $(tr '\n' ' ' <"$T/columns.out")"

# ---- the out-of-tree Zig-Zag sampler: built, installed, found by name ----
mkdir "$T/src" "$T/user-plugins"
for f in Makefile zigzag.c README.md; do
    cp "$srcdir/examples/plugin-zigzag/$f" "$T/src/" || fail "cannot copy examples/plugin-zigzag/$f"
done
(cd "$T/src" && $MAKE CC="$CC" >"$T/zz-build.log" 2>&1 &&
    $MAKE install plugindir="$T/user-plugins" >>"$T/zz-build.log" 2>&1) ||
    { cat "$T/zz-build.log"; fail "examples/plugin-zigzag did not build against the install"; }
grep -q -- "$cflags" "$T/zz-build.log" || fail "the example was not compiled with pkg-config's flags"
[ -f "$T/user-plugins/zigzag.so" ] || fail "make install did not put zigzag.so in the user plugin directory"
step "examples/plugin-zigzag built with pkg-config and installed into $T/user-plugins"

DRIFT_PLUGIN_PATH="$T/user-plugins"
export DRIFT_PLUGIN_PATH
"$drift" samplers >"$T/samplers.txt" 2>"$T/samplers.err" || fail "drift samplers failed"
grep -q "^zigzag " "$T/samplers.txt" || fail "drift samplers does not list zigzag"
grep -q "file: $T/user-plugins/zigzag.so" "$T/samplers.txt" || fail "zigzag is not the user's copy"
[ -s "$T/samplers.err" ] && { cat "$T/samplers.err"; fail "warnings while scanning a clean install"; }

data="$srcdir/tests/data/centres2.csv"
run() {
    out=$1; shift
    "$drift" sample --chains 1 --init 0 --model gaussian --data "$data" --sampler zigzag \
        --warmup 1000 --iter 20000 --thin 0.02 --quiet --out "$out" "$@" ||
        fail "drift sample --sampler zigzag $* failed"
}
step "exact bound (lipschitz=1): sampling N(mean c, I/1000)"
run "$T/zz-exact.csv" --seed 1 --set lipschitz=1
"$MOMENTS" "$T/zz-exact.csv" "$data" --no-violations || fail "zigzag (exact bound) draws do not match the posterior"
step "statistical bound (default): sampling N(mean c, I/1000)"
run "$T/zz-stat.csv" --seed 2
"$MOMENTS" "$T/zz-stat.csv" "$data" || fail "zigzag (statistical bound) draws do not match the posterior"
"$drift" sample --chains 1 --init 0 --model gaussian --data "$data" --sampler zigzag --set lipschitz=1 \
    --iter 50 --emit segments --seed 3 --quiet --out "$T/zz-seg.csv" ||
    fail "--emit segments with zigzag failed"
grep -q '^lp__,grads__,switches__,proposals__,bound_violations__,lipschitz__,treedepth__,divergent__,time__,duration__,theta.1,theta.2,x0_1__,x0_2__,v_1__,v_2__$' "$T/zz-seg.csv" ||
    fail "zigzag --emit segments columns: $(grep '^lp__' "$T/zz-seg.csv")"

# ---- precedence: the install directory wins over DRIFT_PLUGIN_PATH ----
(cd "$T/src" && $MAKE install plugindir="$T$plugindir" >/dev/null 2>&1) ||
    fail "cannot install zigzag into the staged plugin directory"
"$drift" samplers >"$T/samplers.txt" 2>"$T/samplers.err"
grep -q "file: $real_plugindir/zigzag.so" "$T/samplers.txt" ||
    fail "with zigzag in both, the install directory's copy is not the one used"
grep -q "warning: sampler 'zigzag' in $T/user-plugins/zigzag.so is shadowed by the one in $real_plugindir/zigzag.so" "$T/samplers.err" ||
    { cat "$T/samplers.err"; fail "no warning naming both zigzag.so files"; }
# An explicit path still means that file.
"$drift" sample --chains 1 --init 0 --model gaussian --data "$data" --sampler "$T/user-plugins/zigzag.so" \
    --set lipschitz=1 --iter 20 --seed 4 --quiet --out "$T/zz-path.csv" 2>/dev/null ||
    fail "--sampler PATH refused a file whose sampler name is taken"
grep -q "^# sampler_file = $T/user-plugins/zigzag.so\$" "$T/zz-path.csv" ||
    fail "--sampler PATH ran another file: $(grep sampler_file "$T/zz-path.csv")"
rm -f "$T$plugindir/zigzag.so"
step "precedence: install directory first, with a warning naming both files"

# ---- refusals a third party meets, with their documented messages ----
mkdir "$T/bad"
build_bad() {
    $CC -shared -fPIC $cflags -I"$srcdir/tests/plugins" "$srcdir/tests/plugins/$1.c" \
        -o "$T/bad/$1.so" 2>"$T/bad/$1.log" || { cat "$T/bad/$1.log"; fail "cannot build $1.c"; }
}
expect_refusal() {  # spec, text the message must contain
    "$drift" sample --chains 1 --init 0 --model gaussian --data "$data" --sampler "$1" --iter 5 \
        --quiet --out "$T/bad/out.csv" 2>"$T/bad/err" && fail "$1 was not refused"
    st=$?
    [ $st = 2 ] || fail "$1: exit status $st, expected 2"
    grep -qF -- "$2" "$T/bad/err" || { cat "$T/bad/err"; fail "$1: the message lacks: $2"; }
    sed 's/^/    /' "$T/bad/err" | head -3
}
build_bad prevabi
expect_refusal "$T/bad/prevabi.so" \
    "$T/bad/prevabi.so: refused: built for drift sampler ABI version 1, but this drift loads version 2; rebuild it against this drift's headers (pkg-config --cflags drift)"
build_bad newsvc
# newsvc.c asks for one services version more than the headers' own
svc=$(sed -n 's/^#define DRIFT_SERVICES_VERSION \([0-9]*\)u.*/\1/p' \
    "$srcdir/include/drift/sampler.h")
expect_refusal "$T/bad/newsvc.so" \
    "$T/bad/newsvc.so: refused: it needs drift's services version $((svc + 1)), but this drift offers version $svc; upgrade drift, or rebuild the plugin against this drift's headers (pkg-config --cflags drift)"
build_bad dupparam
expect_refusal "$T/bad/dupparam.so" \
    "$T/bad/dupparam.so: refused: sampler 'dupparam': hyperparameter 'h' is declared twice (entries 1 and 2)"
build_bad baddefault
expect_refusal "$T/bad/baddefault.so" \
    "$T/bad/baddefault.so: refused: sampler 'baddefault': hyperparameter 'h' has default 5 outside its bounds [0, 1]"
echo "not a shared object" >"$T/bad/junk.so"
expect_refusal "$T/bad/junk.so" "$T/bad/junk.so: cannot load plugin: $T/bad/junk.so:"
# Scanning a directory of such files warns about each and keeps going.
DRIFT_PLUGIN_PATH="$T/bad:$T/user-plugins" "$drift" samplers >"$T/samplers.txt" 2>"$T/samplers.err" ||
    fail "drift samplers failed with bad plugins on the path"
[ "$(grep -c 'warning: .*refused\|warning: .*cannot load plugin' "$T/samplers.err")" -ge 4 ] ||
    { cat "$T/samplers.err"; fail "bad plugins on the path were not all reported"; }
grep -q "^zigzag " "$T/samplers.txt" || fail "a bad plugin on the path hid zigzag"
step "refusals: previous ABI version, newer services, malformed tables, dlopen failure"

step "all passed"
