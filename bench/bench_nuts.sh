#!/bin/sh
# bench_nuts.sh: drift's nuts against Stan's (rstan) side by side, in one
# sitting: Bayesian logistic regression, y_i ~ bernoulli_logit(x_i . w),
# w ~ N(0, 10 I), N rows of D standard normal predictors (defaults
# N = 10000, D = 20, data drawn with a fixed seed), then posteriors of
# tests/posteriordb (drift's model and data from there; Stan's program and
# data from a posteriordb clone).  Both run CmdStan's defaults (4 chains,
# 1000 warmup + 1000 draws, adapt delta 0.8, diagonal metric), one chain
# after another on one core, drift then Stan on each case.  The figure is
# the minimum over the parameters of the bulk ESS (R's posterior::ess_bulk
# on both sets of draws) per second of CPU time, warmup included; Stan's
# compilation is not counted.  bench_nuts.R does the work and prints the
# table.  Not a test (make bench runs it; skipped without rstan).
#
#   sh bench/bench_nuts.sh [N] [D] [SEED]     (from a built tree)
#
# Environment: BENCH_CASES (default: logistic and six posteriors, below),
# POSTERIORDB_GIT (the git directory of a posteriordb clone; without one
# only the logistic case runs).
set -u
N=${1:-10000}
D=${2:-20}
SEED=${3:-1}
top=$(cd "$(dirname "$0")/.." && pwd)
DRIFT=${DRIFT:-$top/drift}
export DRIFT_PLUGIN_DIR="${DRIFT_PLUGIN_DIR:-$top/plugins/samplers/.libs:$top/plugins/models/.libs}"
if ! command -v Rscript >/dev/null 2>&1 ||
    ! Rscript -e 'suppressMessages(library(rstan)); library(posterior)' >/dev/null 2>&1; then
    echo "bench_nuts: Rscript with rstan and posterior is needed; skipped"
    exit 0
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-nuts.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/boost"
ln -s /usr/include/boost "$work/boost/boost"

Rscript - "$work" "$N" "$D" "$SEED" <<'REOF'
a <- commandArgs(TRUE); work <- a[1]; N <- as.integer(a[2]); D <- as.integer(a[3])
set.seed(as.integer(a[4]))
X <- matrix(rnorm(N * D), N, D)
w <- rnorm(D, 0, 1 / sqrt(D))
y <- rbinom(N, 1, plogis(X %*% w))
d <- data.frame(y = y, X)
names(d) <- c("y", paste0("x.", 1:D))
write.csv(d, file.path(work, "lr.csv"), row.names = FALSE)
REOF

CASES=${BENCH_CASES:-"logistic arK-arK kidiq-kidscore_momhsiq earnings-logearn_interaction mesquite-logmesquite kilpisjarvi_mod-kilpisjarvi eight_schools-eight_schools_noncentered"}
PDB=${POSTERIORDB_GIT:-}
if [ -z "$PDB" ] && [ -d /work/.mirror/stan-dev+posteriordb/repo ]; then
    PDB=/work/.mirror/stan-dev+posteriordb/repo
fi
if [ -z "$PDB" ] || ! git --git-dir="$PDB" rev-parse HEAD >/dev/null 2>&1; then
    echo "bench_nuts: no posteriordb clone (POSTERIORDB_GIT): the logistic case only"
    CASES=logistic
fi
echo "bench_nuts: load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
# bench_nuts.R pins itself (and drift, its child) to one core for each
# timed pair.
Rscript "$top/bench/bench_nuts.R" "$work" "$top" "$DRIFT" "$PDB" "$SEED" $CASES
