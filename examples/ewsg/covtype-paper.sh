#!/bin/sh
# covtype-paper.sh: the EWSG paper's section 5.2 at the paper's stated
# setting: minibatches of 50, one data pass, gamma = 50 for the
# underdamped methods, an 80/20 train/test split, and the paper's step
# sizes {1, 3, 0.02, 5, 5} x 10^-3, read as SGLD, pSGLD, SGHMC, CP-SGHMC,
# EWSG in that order (drift has no CP-SGHMC, and no FlyMC).  The data are
# covtype-data.R's stand-in of Covertype's size and shape, split 80/20
# (116,202 rows held out), converted once to a row store; model drift's
# `logistic` plugin (prior N(0, 10 I)), from w = 0; the second half of the
# pass kept (about 200 draws), test metrics from drift's --test.
# Two arms, SEEDS seeds each (default 10):
#   paper  each method at the paper's step size;
#   grid   each method on a grid of step sizes at the same setting
#          (the paper's steps diverge in drift's parameterisation, where
#          the potential is the sum over rows), best by test lpd.
# Reference: the Laplace approximation's posterior predictive
# (covtype-laplace.R, independent of drift) on the same split.
# Writes build/paper/covtype-paper-runs.csv (every run),
# results/covtype-paper.csv (per method and step: mean and 95% t-interval
# over seeds) and results/covtype-paper.png.
# Usage (after make): sh examples/ewsg/covtype-paper.sh   (env: SEEDS;
#   the grids HS_SGLD, HS_PSGLD, HS_HMC; ARMS=grid for the grid alone;
#   APPEND=1 adds to the runs already in build/paper; RESULTS another
#   folder for the tables and figure)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${BUILD:-$here/build/paper}
SEEDS=${SEEDS:-10}
BATCH=50
drift=${DRIFT:-$top/drift}
export DRIFT_PLUGIN_DIR="$top/plugins/samplers/.libs:$top/plugins/models/.libs"
export DRIFT_PLUGIN_PATH=
results=${RESULTS:-$here/results}
mkdir -p "$build" "$results"
[ -s "$build/covtype-train.csv" ] || Rscript "$here/covtype-data.R" "$build" 116202
[ -s "$build/covtype-train.drs" ] || "$drift" data convert "$build/covtype-train.csv" "$build/covtype-train.drs"
[ -s "$build/covtype-reference.csv" ] || Rscript "$here/covtype-laplace.R" "$build"
N=$(($(wc -l < "$build/covtype-train.csv") - 1))
runs=$build/covtype-paper-runs.csv
[ "${APPEND:-0}" = 1 ] && [ -s "$runs" ] ||
    echo "arm,method,h,gamma,seed,passes,seconds,draws,lpd,accuracy" > "$runs"
one() { # arm method per-step-cost h gamma seed sampler-options...
    arm=$1 m=$2 cost=$3 h=$4 g=$5 seed=$6; shift 6
    it=$((N / (BATCH * cost))); warm=$((it / 2))
    thin=$(((it - warm) / 200)); [ "$thin" -ge 1 ] || thin=1
    out=$build/covtype-$arm-$m-$h-$seed.csv
    "$drift" sample --model logistic --data "$build/covtype-train.drs" --init 0 --chains 1 \
        --batch "$BATCH" --passes 1 --warmup "$warm" --thin "$thin" --seed "$seed" \
        --gradient plain --test "$build/covtype-test.csv" --quiet --out "$out" "$@" \
        2>/dev/null || true
    met=${out%.csv}_metrics.csv
    last=$(grep -v '^#' "$met" 2>/dev/null | tail -1)
    case $last in passes*|'') last="NA,NA,NA,NA,NA,NA" ;; esac
    echo "$arm,$m,$h,$g,$seed,$(echo "$last" | cut -d, -f1,2,4,5,6)" >> "$runs"
    rm -f "$out" "$met"
}
HS_SGLD=${HS_SGLD-"1e-7 3e-7 1e-6 3e-6 1e-5"}
HS_PSGLD=${HS_PSGLD-"1e-5 3e-5 1e-4 3e-4"}
HS_HMC=${HS_HMC-"5e-6 1e-5 2e-5 4e-5 8e-5 1.6e-4"}
for seed in $(seq 1 "$SEEDS"); do
    echo "== seed $seed" >&2
    if [ "${ARMS:-paper grid}" != grid ]; then
        one paper sgld 1 1e-3 NA "$seed" --sampler sgld --set h=1e-3 --set precond=unit
        one paper psgld 1 3e-3 NA "$seed" --sampler psgld --set h=3e-3
        one paper sghmc 1 2e-5 50 "$seed" --sampler sghmc --set h=2e-5 --set gamma=50 --set precond=unit
        one paper ewsg 2 5e-3 50 "$seed" --sampler ewsg --set M=1 --set h=5e-3 --set gamma=50
    fi
    for h in $HS_SGLD; do
        one grid sgld 1 "$h" NA "$seed" --sampler sgld --set h="$h" --set precond=unit
    done
    for h in $HS_PSGLD; do
        one grid psgld 1 "$h" NA "$seed" --sampler psgld --set h="$h"
    done
    for h in $HS_HMC; do
        one grid sghmc 1 "$h" 50 "$seed" --sampler sghmc --set h="$h" --set gamma=50 --set precond=unit
        one grid ewsg 2 "$h" 50 "$seed" --sampler ewsg --set M=1 --set h="$h" --set gamma=50
    done
done
Rscript - "$runs" "$build/covtype-reference.csv" "$results" <<'REOF'
suppressMessages(library(data.table))
a <- commandArgs(TRUE); r <- fread(a[1]); ref <- fread(a[2]); out <- a[3]
lref <- ref[quantity == "lpd", laplace]; aref <- ref[quantity == "accuracy", laplace]
hw <- function(v) { v <- v[!is.na(v)]; if (length(v) < 2) NA_real_ else qt(0.975, length(v) - 1) * sd(v) / sqrt(length(v)) }
s <- r[, .(seeds = sum(!is.na(lpd)), failed = sum(is.na(lpd)),
           lpd = mean(lpd, na.rm = TRUE), lpd_ci = hw(lpd),
           accuracy = mean(accuracy, na.rm = TRUE), accuracy_ci = hw(accuracy),
           seconds = mean(seconds, na.rm = TRUE)), by = .(arm, method, h, gamma)]
s[, `:=`(lpd_gap = lpd - lref, accuracy_gap = accuracy - aref)]
fwrite(s, file.path(out, "covtype-paper.csv"))
cat(sprintf("Laplace reference (80/20 split): test lpd %.5f, accuracy %.5f\n", lref, aref))
print(s, digits = 5)
best <- s[arm == "grid" & seeds > 0][order(-lpd)][, .SD[1], by = method]
cat("grid arm, each method at its best step by test lpd:\n")
print(best, digits = 5)
png(file.path(out, "covtype-paper.png"), width = 1100, height = 480, res = 110)
par(mfrow = c(1, 2), mar = c(4.2, 4.6, 2, 1))
cols <- c(sgld = "orange", psgld = "darkgreen", sghmc = "blue", ewsg = "red")
ok <- s[arm == "grid" & seeds > 0]
for (what in c("lpd", "accuracy")) {
  ci <- paste0(what, "_ci")
  ylim <- range(c(ok[[what]] - ok[[ci]], ok[[what]] + ok[[ci]], if (what == "lpd") lref else aref), na.rm = TRUE)
  plot(NA, xlim = c(0.5, 6.5), ylim = ylim, xaxt = "n", xlab = "step size (grid index, smallest first)",
       ylab = if (what == "lpd") "test log-likelihood per row" else "test accuracy",
       main = sprintf("batch 50, one pass, gamma 50, 80/20: test %s", what))
  axis(1, at = 1:6)
  abline(h = if (what == "lpd") lref else aref, lty = 2)
  for (m in names(cols)) {
    o <- ok[method == m][order(h)]; x <- match(o$h, sort(unique(o$h))) + (match(m, names(cols)) - 2.5) * 0.06
    points(x, o[[what]], col = cols[m], pch = 19, type = "b")
    arrows(x, o[[what]] - o[[ci]], x, o[[what]] + o[[ci]], angle = 90, code = 3, length = 0.02, col = cols[m])
  }
  legend("bottomleft", c(names(cols), "Laplace reference"), col = c(cols, "black"),
         pch = c(rep(19, 4), NA), lty = c(rep(1, 4), 2), bty = "n", cex = 0.8)
}
invisible(dev.off())
REOF
