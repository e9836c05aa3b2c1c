#!/bin/sh
# test_interop.sh: every kind of file drift writes is read, with no error
# and no warning, by the readers users of Stan CSV have: ArviZ, CmdStanPy,
# rstan, cmdstanr, posterior (the pinned copies in ../shared/interop, run
# by its read-all script) and bayesplot; and the draws each returns are
# the file's own (tests/interop/interop_check.py and .R).  The kinds: every
# sampler (the zigzag example too), 1 and 4 chains, saved warmup, scores
# (--save-gradients) and step sizes chosen by pilots, budgets
# in iterations, passes and seconds, an interrupted run, a run whose chain
# failed, a run whose sampler crashed or hung, a resumed run, a run
# continued from its checkpoint after a SIGINT (--resume), continuous
# samplers' draws and segments, fixed_param, drift generate's outputs,
# drift optimize's, laplace's and variational's files (CmdStanPy) and
# drift pathfinder's (CmdStanPy, ArviZ, cmdstanr).  The user guide's
# "Reading the output" lines are run on one of them.
#
# Skipped (status 77, with the reason) where /usr/bin/python3, Rscript,
# read-all or the readers' Debian packages are missing (.ci/run installs
# them; ../shared/interop/README.md lists them).
set -u
# A background job of a shell without job control starts with SIGINT
# ignored, which drift honours; the runs this script stops with SIGINT
# start through `env --default-signal=INT,HUP`, as from a terminal.
src=${srcdir:-.}
bin=${DRIFT_BIN:-./drift}
readall=${DRIFT_INTEROP_READ_ALL:-$src/../shared/interop/read-all}
skip() {
    echo "test_interop: SKIP: $*"
    exit 77
}
[ -x /usr/bin/python3 ] || skip "no /usr/bin/python3"
command -v Rscript >/dev/null 2>&1 || skip "no Rscript"
[ -x "$readall" ] || skip "no $readall (the readers are in shared/interop beside the repository)"
interop=$(cd "$(dirname "$readall")" && pwd)
PYTHONPATH="$interop/python${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONPATH
/usr/bin/python3 -c 'import arviz, cmdstanpy' >/dev/null 2>&1 ||
    skip "ArviZ or CmdStanPy do not import (the Debian packages of $interop/README.md are missing)"
Rscript -e 'for (p in c("rstan", "posterior", "bayesplot", "checkmate", "data.table", "jsonlite", "processx", "R6")) if (!requireNamespace(p, quietly = TRUE)) quit(status = 1)' >/dev/null 2>&1 ||
    skip "R packages missing (the Debian packages of $interop/README.md)"
lib=${DRIFT_INTEROP_RLIB:-${TMPDIR:-/tmp}/drift-interop-rlib}
export DRIFT_INTEROP_RLIB="$lib"

dir=$(mktemp -d "${TMPDIR:-/tmp}/drift-interop-XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
fail=0
# Waits on a running drift are timed for an uninstrumented build; under a
# sanitizer (DRIFT_SANITIZED=yes) drift runs 5 to 20 times slower.
slow=1
[ "${DRIFT_SANITIZED:-no}" = yes ] && slow=15
sets="$dir/sets"
: >"$sets"
model="$src/examples/gaussian/gaussian.drift"
data="$src/examples/gaussian/gaussian.csv"
zigzag="${DRIFT_EXAMPLES_BUILDDIR:-examples}/plugin-zigzag/.libs/zigzag.so"

# run LABEL CHAINS STATUS ARGS...: one drift run, its files named LABEL.csv
# (LABEL_k.csv for k = 1..CHAINS), recorded in $sets; STATUS is the exit
# status it must end with.
run() {
    label=$1 chains=$2 want=$3
    shift 3
    "$bin" sample "${run_model:-$model}" --data "${run_data:-$data}" --seed 7 --quiet \
        --chains "$chains" --out "$dir/$label.csv" "$@" >"$dir/$label.log" 2>&1
    st=$?
    if [ "$st" != "$want" ]; then
        echo "FAIL: $label: drift sample $* exited $st, not $want:"
        cat "$dir/$label.log"
        fail=1
        return
    fi
    record "$label" "$chains"
}

record() {
    if [ "$2" = 1 ]; then
        files="$dir/$1.csv"
    else
        files="$dir/$1_1.csv"
        k=2
        while [ "$k" -le "$2" ]; do
            files="$files $dir/$1_$k.csv"
            k=$((k + 1))
        done
    fi
    echo "$1 $files" >>"$sets"
}

# Every sampler, one chain, an iteration budget.  Continuous samplers on
# a fine time grid: a few widely spaced draws can look antithetic to
# posterior, which then warns that it capped their ESS.
for s in sgld psgld sghmc sgnht msgnht lmc ewsg agld svrg-ld saga-ld \
    ptu-ra ptu-rr ptu-ca ppu-ra ppu-rr ppu-ca tmu-ra tmu-rr tmu-ca svrg-ld+; do
    run "$s" 1 0 --sampler "$s" --iter 200
done
for s in bps sbps psbps; do
    run "$s" 1 0 --sampler "$s" --iter 200 --thin 0.1
done
run nuts 1 0 --warmup 200 --iter 200
# The defaults (nuts, 4 chains, 1000 + 1000), and a dense metric.
run default-4 4 0
run nuts-dense-4 4 0 --set metric=dense --warmup 200 --iter 200
run mala 1 0 --sampler mala --warmup 100 --iter 200
if [ -r "$zigzag" ]; then
    run zigzag 1 0 --sampler "$zigzag" --iter 300
    run zigzag-segments 1 0 --sampler "$zigzag" --iter 300 --emit segments
else
    echo "FAIL: no $zigzag (make check builds it)"
    fail=1
fi
# Four chains; continuous samplers' draws fall on a time grid, so their
# chains are brought to equal counts.
run sgld-4 4 0 --sampler sgld --iter 200
run mala-4 4 0 --sampler mala --warmup 100 --iter 200
run bps-4 4 0 --sampler bps --iter 200 --thin 0.1
run sbps-segments-4 4 0 --sampler sbps --iter 200 --emit segments
# The score columns of --save-gradients (grad_lp_k__), beside a step
# size chosen by pilots (the sgld runs above choose theirs too).
run sgld-gradients 2 0 --sampler sgld --iter 200 --save-gradients
run nuts-gradients 1 0 --warmup 200 --iter 200 --save-gradients --save-warmup
# Saved warmup (thinned, adapted, continuous, segments).
run sgld-warmup 2 0 --sampler sgld --warmup 60 --thin 3 --save-warmup --iter 200
# (a warmup that is not a whole number of --thin steps, as CmdStan allows)
run mala-warmup-thin 2 0 --sampler mala --warmup 50 --thin 3 --save-warmup --iter 200
run mala-warmup 2 0 --sampler mala --warmup 100 --save-warmup --iter 200
run bps-warmup 2 0 --sampler bps --warmup 50 --save-warmup --iter 200
run sbps-segments-warmup 1 0 --sampler sbps --warmup 50 --save-warmup --iter 200 --emit segments
# Generated quantities: on saved warmup draws too, and on every 3rd draw
# (--generated-every 3), which leaves the draws file without them and a
# file of every 3rd draw with them: no NaN anywhere (bayesplot refuses
# NaN, rstan warns about each column holding one).
printf 'x,y\n0.5,1.2\n-1,0.1\n2,3.3\n0.3,0.8\n' >"$dir/gq.csv"
cat >"$dir/gq.drift" <<'EOF_MODEL'
rows { x : real  y : real }
param { a : real  b : real }
derived { c = a + b }
prior { a ~ normal(0, 5)  b ~ normal(0, 5) }
datum { y ~ normal(a + b * x, 1) }
generated { log_lik = normal_lpdf(y | a + b * x, 1)
            y_rep = normal_rng(a + b * x, 1) }
EOF_MODEL
run_model="$dir/gq.drift" run_data="$dir/gq.csv"
run gq-warmup 2 0 --warmup 100 --iter 100 --save-warmup
# (enough draws every 3rd that posterior does not cap the ESS of the
# y_rep columns, independent draws that can look antithetic)
run gq-every 2 0 --warmup 100 --iter 1200 --save-warmup --generated-every 3
record gq-every_generated 2
mv "$dir/gq-every_1_generated.csv" "$dir/gq-every_generated_1.csv"
mv "$dir/gq-every_2_generated.csv" "$dir/gq-every_generated_2.csv"
run gq-every-thin 1 0 --sampler mala --warmup 100 --iter 1600 --thin 2 --save-warmup --generated-every 4
record gq-every-thin_generated 1
# fixed_param: the initial point as every draw, the generated block per
# draw (constant parameter columns).
run fixed-param 2 0 --sampler fixed_param --iter 200
# drift generate over a fit's files (saved warmup included): the input
# with the generated columns recomputed, one output per input.
if "$bin" generate "$dir/gq.drift" --data "$dir/gq.csv" --seed 3 \
    --draws "$dir/gq-warmup_1.csv" "$dir/gq-warmup_2.csv" \
    --out "$dir/generated.csv" >"$dir/generated.log" 2>&1; then
    record generated 2
else
    echo "FAIL: drift generate over gq-warmup:"
    cat "$dir/generated.log"
    fail=1
fi
# drift optimize: CmdStan's optimize CSV, which CmdStanPy reads as a
# CmdStanMLE with the file's values.
if "$bin" optimize "$dir/gq.drift" --data "$dir/gq.csv" --seed 3 \
    --out "$dir/optimize.csv" >"$dir/optimize.log" 2>&1 &&
    /usr/bin/python3 -c '
import sys, cmdstanpy
f = cmdstanpy.from_csv(sys.argv[1])
assert type(f).__name__ == "CmdStanMLE", type(f).__name__
row = [l for l in open(sys.argv[1]) if not l.startswith("#")][1].split(",")
assert abs(f.optimized_params_dict["a"] - float(row[1])) < 1e-12
' "$dir/optimize.csv" >>"$dir/optimize.log" 2>&1; then
    echo "ok optimize: cmdstanpy.from_csv reads a CmdStanMLE"
else
    echo "FAIL: drift optimize's file, read by cmdstanpy.from_csv:"
    cat "$dir/optimize.log"
    fail=1
fi
# drift laplace, the mode found here: the draws and the mode's file
# beside them, which CmdStanPy reads as a CmdStanLaplace (its mode a
# CmdStanMLE read from that file); and given the optimize file above.
if "$bin" laplace "$dir/gq.drift" --data "$dir/gq.csv" --seed 3 \
    --draws 200 --out "$dir/laplace.csv" >"$dir/laplace.log" 2>&1 &&
    "$bin" laplace "$dir/gq.drift" --data "$dir/gq.csv" --seed 3 \
        --draws 200 --mode "$dir/optimize.csv" \
        --out "$dir/laplace2.csv" >>"$dir/laplace.log" 2>&1 &&
    /usr/bin/python3 -c '
import sys, cmdstanpy
for path, mode in ((sys.argv[1], sys.argv[2]), (sys.argv[3], sys.argv[4])):
    f = cmdstanpy.from_csv(path)
    assert type(f).__name__ == "CmdStanLaplace", type(f).__name__
    d = f.draws()
    assert d.shape[0] == 200, d.shape
    m = cmdstanpy.from_csv(mode, method="optimize")
    assert abs(f.mode.optimized_params_dict["a"] -
               m.optimized_params_dict["a"]) < 1e-12
' "$dir/laplace.csv" "$dir/laplace_mode.csv" "$dir/laplace2.csv" \
        "$dir/optimize.csv" >>"$dir/laplace.log" 2>&1; then
    echo "ok laplace: cmdstanpy.from_csv reads a CmdStanLaplace and its mode"
else
    echo "FAIL: drift laplace's files, read by cmdstanpy.from_csv:"
    cat "$dir/laplace.log"
    fail=1
fi
# drift pathfinder: CmdStan's pathfinder CSV, which CmdStanPy reads as a
# CmdStanPathfinder (resampled, its draws and variables the file's, its
# inits for sample) and ArviZ as draws (lp__ among the sample stats);
# cmdstanr's reading is checked below, once read-all has installed it.
if "$bin" pathfinder "$dir/gq.drift" --data "$dir/gq.csv" --seed 3 \
    --out "$dir/pathfinder.csv" >"$dir/pathfinder.log" 2>&1 &&
    /usr/bin/python3 -c '
import sys, warnings, logging
import numpy as np
import cmdstanpy, arviz
logging.getLogger("cmdstanpy").setLevel(logging.ERROR)
path = sys.argv[1]
lines = [l for l in open(path) if not l.startswith("#")]
head = lines[0].strip().split(",")
rows = np.array([[float(v) for v in l.split(",")] for l in lines[1:]])
f = cmdstanpy.from_csv(path)
assert type(f).__name__ == "CmdStanPathfinder", type(f).__name__
assert f.is_resampled
assert f.draws().shape == (1000, len(head)), f.draws().shape
assert np.array_equal(f.stan_variable("a"), rows[:, head.index("a")])
assert f.stan_variable("y_rep").shape == (1000, 4)
assert np.array_equal(f.method_variables()["lp_approx__"], rows[:, 0])
inits = f.create_inits(seed=1, chains=2)
assert len(inits) == 2 and set(inits[0]) >= {"a", "b"}
with warnings.catch_warnings():
    warnings.simplefilter("error")
    idata = arviz.from_cmdstan(posterior=path)
assert np.array_equal(idata.posterior["a"].values[0], rows[:, head.index("a")])
assert np.array_equal(idata.sample_stats["lp"].values[0], rows[:, 1])
' "$dir/pathfinder.csv" >>"$dir/pathfinder.log" 2>&1; then
    echo "ok pathfinder: cmdstanpy.from_csv reads a CmdStanPathfinder, ArviZ its draws"
else
    echo "FAIL: drift pathfinder's file, read by cmdstanpy.from_csv and arviz:"
    cat "$dir/pathfinder.log"
    fail=1
fi
# drift variational: CmdStan's variational CSV, which CmdStanPy reads as
# a CmdStanVB: eta from the adaptation lines, the mean from the first
# row, the draws from the rest.
if "$bin" variational "$dir/gq.drift" --data "$dir/gq.csv" --seed 3 \
    --quiet --output-samples 200 --out "$dir/variational.csv" \
    >"$dir/variational.log" 2>&1 &&
    /usr/bin/python3 -c '
import sys, cmdstanpy
f = cmdstanpy.from_csv(sys.argv[1])
assert type(f).__name__ == "CmdStanVB", type(f).__name__
rows = [l.rstrip("\n").split(",") for l in open(sys.argv[1]) if not l.startswith("#")]
names, mean, draws = rows[0], rows[1], rows[2:]
assert names[:3] == ["lp__", "log_p__", "log_g__"], names
eta = [l for l in open(sys.argv[1]) if l.startswith("# eta = ")]
assert abs(f.eta - float(eta[0].split("=")[1])) < 1e-12, f.eta
a = names.index("a")
assert abs(f.variational_params_dict["a"] - float(mean[a])) < 1e-12
got = f.stan_variable("a", mean=False)
assert len(got) == len(draws) == 200, (len(got), len(draws))
assert max(abs(g - float(r[a])) for g, r in zip(got, draws)) < 1e-12
' "$dir/variational.csv" >>"$dir/variational.log" 2>&1; then
    echo "ok variational: cmdstanpy.from_csv reads a CmdStanVB"
else
    echo "FAIL: drift variational's file, read by cmdstanpy.from_csv:"
    cat "$dir/variational.log"
    fail=1
fi
unset run_model run_data
# Budgets in data passes and in seconds.
run sgld-passes 2 0 --sampler sgld --passes 30
run sbps-passes 2 0 --sampler sbps --passes 200 --thin 0.05
# (runs cut by time keep few, thinned draws: with a well mixing step
# they can look antithetic to posterior, which then warns that it capped
# their ESS; the step size of these is set, small)
run sgld-seconds 4 0 --sampler sgld --set h=1e-4 --seconds 0.5 --thin 10
run bps-seconds 2 0 --sampler bps --seconds 0.5
# A run whose chain failed: SGLD on a quartic potential, stable for some
# 50000 iterations until a kick sends it where the gradient overflows.
# Its file says so, and its counts are its rows'.
printf 'y\n0.5\n-0.3\n1.2\n0.1\n-1\n0.7\n0.2\n-0.4\n0.9\n-0.6\n' >"$dir/quartic.csv"
"$bin" sample --model "${DRIFT_TEST_PLUGIN_DIR:-tests/plugins/.libs}/quartic.so" \
    --data "$dir/quartic.csv" --sampler sgld --set h=0.02 --batch 1 \
    --iter 1000000 --thin 50 --seed 5 --chains 1 --quiet --out "$dir/failed.csv" \
    >"$dir/failed.log" 2>&1
st=$?
if [ $st != 1 ] || ! grep -q '^# drift: chain 1 failed at iteration ' "$dir/failed.csv"; then
    echo "FAIL: the failing run exited $st (not 1) or its file does not say it failed:"
    cat "$dir/failed.log"
    fail=1
else
    record failed 1
fi
# Runs whose sampler crashed or hung (a plugin that fails on purpose, at
# iteration 300): each file is completed by the watching process, marked
# incomplete, with the counts of its own rows; one chain, saved warmup.
crashy="${DRIFT_TEST_PLUGIN_DIR:-tests/plugins/.libs}/crashy.so"
for how in segv hang; do
    run "crashed-$how" 1 1 --sampler "$crashy" --set how=$how --set at=300 \
        --warmup 100 --save-warmup --iter 1000 --step-timeout 0.5
    grep -q '^# drift: incomplete: ' "$dir/crashed-$how.csv" || {
        echo "FAIL: crashed-$how.csv does not say it is incomplete"
        fail=1
    }
done
# A resumed run: initial values from the last draw of a previous file.
run resumed 1 0 --sampler sgld --iter 200 --init "$dir/sgld.csv"
# A run continued from its checkpoint (--resume) after a SIGINT: its files
# are the ones the run writes uninterrupted.
env --default-signal=INT,HUP "$bin" sample "$model" --data "$data" --seed 7 --quiet --chains 2 \
    --sampler mala --warmup 100 --iter 20000 --thin 10 \
    --checkpoint-every 200 --out "$dir/ckpt.csv" >"$dir/ckpt.log" 2>&1 &
pid=$!
n=0
while [ ! -f "$dir/ckpt.ckpt/chain_2.state" ] && [ $n -lt 600 ]; do
    sleep 0.05
    n=$((n + 1))
done
kill -INT $pid
wait $pid
if "$bin" sample --resume "$dir/ckpt.ckpt" --quiet >>"$dir/ckpt.log" 2>&1
then
    record ckpt 2
else
    echo "FAIL: --resume of an interrupted run:"
    cat "$dir/ckpt.log"
    fail=1
fi
# An interrupted run: SIGINT while the chains sample; every chain that
# started has its file completed, saying so, with as many draws as the
# others.  Chains beyond the processor count wait in a queue and a signal
# that comes before they start leaves no file of theirs.
env --default-signal=INT,HUP "$bin" sample "$model" --data "$data" --seed 7 --quiet --chains 4 \
    --sampler sgld --set h=1e-4 --iter 100000000 --thin 100 \
    --out "$dir/interrupted.csv" \
    >"$dir/interrupted.log" 2>&1 &
pid=$!
sleep $((2 * slow))
kill -INT $pid
wait $pid
st=$?
n=0
while [ -e "$dir/interrupted_$((n + 1)).csv" ]; do
    n=$((n + 1))
done
if [ $st != 130 ] || [ $n = 0 ]; then
    echo "FAIL: interrupted run exited $st (not 130) or left no file:"
    cat "$dir/interrupted.log"
    fail=1
else
    if [ $n = 1 ]; then
        mv "$dir/interrupted_1.csv" "$dir/interrupted.csv"
    fi
    record interrupted $n
    f1=$dir/interrupted_1.csv
    [ $n = 1 ] && f1=$dir/interrupted.csv
    grep -q '^# drift: interrupted by a signal after ' "$f1" ||
        { echo "FAIL: $f1 does not say it was interrupted"; fail=1; }
fi

# A run interrupted in warmup: its chains ran different warmup counts,
# yet their files agree on num_warmup, so no reader refuses the set for
# its configuration (rstan: "not all iter/warmups/thin are the same",
# CmdStanPy: "num_warmup is N, expected M").  With no draw after warmup,
# ArviZ and posterior have nothing to summarise: they may only say that.
env --default-signal=INT,HUP "$bin" sample "$model" --data "$data" --seed 7 --quiet --chains 2 \
    --warmup 1000000000 --iter 10 --out "$dir/inwarmup.csv" \
    >"$dir/inwarmup.log" 2>&1 &
pid=$!
sleep 1.5
kill -INT $pid
wait $pid
if [ "$(grep -h '^#     num_warmup = ' "$dir"/inwarmup_*.csv | sort -u | wc -l)" != 1 ]; then
    echo "FAIL: a run interrupted in warmup: its files' num_warmup differ:"
    grep -H '^#     num_warmup = ' "$dir"/inwarmup_*.csv | sed 's/^/    /'
    fail=1
else
    out=$("$readall" "$dir"/inwarmup_*.csv 2>&1 </dev/null)
    bad=$(printf '%s\n' "$out" | grep -E '^REJECTED|\(warnings:' |
        grep -vE "^REJECTED: (arviz.from_cmdstan: TypeError: InferenceData does not contain any groups|posterior::summarise_draws: Don't know how to transform an object of class 'NULL')")
    if [ -n "$bad" ]; then
        echo "FAIL: a run interrupted in warmup: read-all"
        printf '%s\n' "$out" | sed 's/^/    /'
        fail=1
    else
        echo "ok interrupted in warmup: the readers agree on its counts"
    fi
fi

# Each run's files to every reader: read-all, the first alone (it installs
# cmdstanr), the others a few at a time; meanwhile the draws each reader
# returns are compared with the files' own.
export readall dir
first=$(head -1 "$sets")
set -- $first
l=$1
shift
"$readall" "$@" >"$dir/ra-$l.out" 2>&1 </dev/null
echo $? >"$dir/ra-$l.rc"
[ -d "$lib/cmdstanr" ] || skip "read-all could not install cmdstanr into $lib (see $lib/install.log)"
# cmdstanr 0.5.3 predates CmdStan's pathfinder method: its
# read_cmdstan_csv takes the file without an error or a warning and
# returns no draws (NULL, as for any method it does not know); its
# metadata reader finds the method and the variables.
if [ -f "$dir/pathfinder.csv" ] && ! Rscript -e '
args <- commandArgs(trailingOnly = TRUE); .libPaths(c(args[1], .libPaths()))
no_warning <- function(e) withCallingHandlers(e,
    warning = function(w) stop(conditionMessage(w)))
no_warning(cmdstanr::read_cmdstan_csv(args[2]))
m <- no_warning(cmdstanr:::read_csv_metadata(args[2]))
stopifnot(m$method == "pathfinder", m$num_paths == 4,
          identical(m$variables[1:3], c("lp__", "a", "b")))
' "$lib" "$dir/pathfinder.csv" >"$dir/pathfinder-r.log" 2>&1; then
    echo "FAIL: drift pathfinder's file, read by cmdstanr::read_cmdstan_csv:"
    cat "$dir/pathfinder-r.log"
    fail=1
fi
# cmdstanr 0.5.3 reads drift optimize's file as CmdStan's (its point
# estimates the file's row) and variational's (its draws the rows after
# the mean's); it predates CmdStan's laplace method, so a laplace file
# gives no draws (NULL, no error or warning) and its metadata the method.
if [ -f "$dir/optimize.csv" ] && [ -f "$dir/laplace.csv" ] &&
    [ -f "$dir/variational.csv" ] && ! Rscript -e '
args <- commandArgs(trailingOnly = TRUE); .libPaths(c(args[1], .libPaths()))
no_warning <- function(e) withCallingHandlers(e,
    warning = function(w) stop(conditionMessage(w)))
o <- no_warning(cmdstanr::read_cmdstan_csv(args[2]))
row <- read.csv(args[2], comment.char = "#")
stopifnot(abs(as.numeric(o$point_estimates[1, "a"]) - row$a) < 1e-12)
no_warning(cmdstanr::read_cmdstan_csv(args[3]))
m <- no_warning(cmdstanr:::read_csv_metadata(args[3]))
stopifnot(m$method == "laplace", m$draws == 200)
v <- no_warning(cmdstanr::read_cmdstan_csv(args[4]))
rows <- read.csv(args[4], comment.char = "#")
stopifnot(dim(v$draws)[1] == 200,
          max(abs(as.vector(v$draws[, "a"]) - rows$a[-1])) < 1e-12)
' "$lib" "$dir/optimize.csv" "$dir/laplace.csv" "$dir/variational.csv" \
    >"$dir/methods-r.log" 2>&1; then
    echo "FAIL: drift optimize's, laplace's and variational's files, read by cmdstanr:"
    cat "$dir/methods-r.log"
    fail=1
fi
# ArviZ reads the optimize and laplace files as one chain's draws, their
# method columns as sample stats, without a warning.
if ! /usr/bin/python3 -c '
import sys, warnings
import numpy as np
import arviz
for path, n, stats in ((sys.argv[1], 1, ["lp"]),
                       (sys.argv[2], 200, ["log_p", "log_g"])):
    lines = [l for l in open(path) if not l.startswith("#")]
    head = lines[0].strip().split(",")
    rows = np.array([[float(v) for v in l.split(",")] for l in lines[1:]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        idata = arviz.from_cmdstan(posterior=path)
    assert idata.posterior["a"].shape == (1, n), idata.posterior["a"].shape
    assert np.array_equal(idata.posterior["a"].values[0],
                          rows[:, head.index("a")])
    assert sorted(idata.sample_stats.data_vars) == sorted(stats)
' "$dir/optimize.csv" "$dir/laplace.csv" >"$dir/methods-py.log" 2>&1; then
    echo "FAIL: drift optimize's and laplace's files, read by arviz:"
    cat "$dir/methods-py.log"
    fail=1
fi
/usr/bin/python3 "$src/tests/interop/interop_check.py" "$sets" >"$dir/check-py.out" 2>&1 &
py=$!
Rscript "$src/tests/interop/interop_check.R" "$lib" "$sets" >"$dir/check-r.out" 2>&1 &
rs=$!
jobs=$(nproc 2>/dev/null || echo 2)
[ "$jobs" -gt 4 ] && jobs=4
tail -n +2 "$sets" | xargs -P "$jobs" -L 1 sh -c \
    'l=$1; shift; "$readall" "$@" >"$dir/ra-$l.out" 2>&1 </dev/null; echo $? >"$dir/ra-$l.rc"' sh
while read -r label files; do
    out=$(cat "$dir/ra-$label.out")
    st=$(cat "$dir/ra-$label.rc")
    # shellcheck disable=SC2086
    set -- $files
    nfiles=$#
    bad=$(printf '%s\n' "$out" | grep -E '^(REJECTED|skipped)|\(warnings:|WARNING|Warning|rror' |
        { if [ "$nfiles" = 1 ]; then grep -v 'Shape validation failed: input_shape: (1, '; else cat; fi; })
    if [ "$st" != 0 ] || [ -n "$bad" ]; then
        echo "FAIL: $label: read-all $files"
        printf '%s\n' "$out" | sed 's/^/    /'
        fail=1
    else
        echo "ok $label: $(printf '%s\n' "$out" | grep -c '^ok: ') readers"
    fi
    # drift's own reader counts the draws the readers count.
    post=$(awk 'f && !/^#/ && NF {n++} /^# Adaptation terminated$/ {f = 1} END {print n + 0}' "$1")
    if ! "$bin" summary "$@" 2>&1 </dev/null | head -1 | grep -qE "^$nfiles chains?, $post (draws|segments) each"; then
        echo "FAIL: $label: drift summary does not count $nfiles chains of $post draws:"
        "$bin" summary "$@" 2>&1 </dev/null | head -3 | sed 's/^/    /'
        fail=1
    fi
done <"$sets"
wait $py || fail=1
cat "$dir/check-py.out"
wait $rs || fail=1
cat "$dir/check-r.out"

# The user guide's "Reading the output" lines, on the 4-chain mala run.
readme="$src/doc/user-guide.md"
for lang in r python; do
    awk -v lang="$lang" '
        /^## Reading the output/ {sec = 1; next}
        sec && /^## / {exit}
        sec && $0 == "```" lang {f = 1; next}
        f && /^```/ {f = 0; next}
        f {print}' "$readme" >"$dir/readme.$lang"
    if [ ! -s "$dir/readme.$lang" ]; then
        echo "FAIL: $readme has no \`\`\`$lang block under '## Reading the output'"
        fail=1
        continue
    fi
    (
        cd "$dir" && for k in 1 2 3 4; do cp "mala-4_$k.csv" "fit_$k.csv"; done
        if [ $lang = r ]; then
            R_LIBS="$lib" Rscript readme.r
        else
            /usr/bin/python3 readme.python
        fi
    ) >"$dir/readme.$lang.out" 2>&1
    st=$?
    if [ $st != 0 ] || grep -qiE 'warning|error' "$dir/readme.$lang.out"; then
        echo "FAIL: the user guide's $lang lines (exit $st):"
        sed 's/^/    /' "$dir/readme.$lang.out"
        fail=1
    else
        echo "ok the user guide's $lang lines"
    fi
done
[ $fail = 0 ] && echo "test_interop: every file kind is read by every reader, with the files' own draws"
exit $fail
