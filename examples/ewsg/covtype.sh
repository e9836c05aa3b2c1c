#!/bin/sh
# covtype.sh: the EWSG paper's section 5.2 (Table 1): Bayesian logistic
# regression at Covertype's size, test accuracy and test log-likelihood for
# every method.  Synthetic data shaped like covtype.binary (covtype-data.R:
# 581,012 x 54, 58,101 held out), converted once to a row store; model
# drift's `logistic` plugin (prior N(0, 10 I)).  Methods: sgld, psgld, sghmc
# and ewsg (M = 1, the paper's x), all with minibatches of n = BATCH rows
# (default 5), from w = 0, PASSES data passes (default 10), the first 2
# passes' iterations as burn-in, about 200 draws kept; each on a grid of 4
# step sizes (sghmc and ewsg with gamma h = 0.5, as in section 5.1), SEEDS
# seeds (default 3).  Test metrics come from drift's --test (posterior
# predictive over the kept draws).  Reference: the Laplace approximation's
# posterior predictive (covtype-laplace.R, independent of drift).
# Writes build/covtype-runs.csv (every run), results/covtype.csv (per
# method and step size: mean and sd over seeds), results/covtype-table1.csv
# (each method at its best step size) and results/covtype.png.
# Usage (after make): sh examples/ewsg/covtype.sh   (env: PASSES, SEEDS, BATCH, GRID=full|quick,
#                     REUSE=1 to redo the tables and figure from the last runs)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${BUILD:-$here/build}
PASSES=${PASSES:-10}; SEEDS=${SEEDS:-3}; BATCH=${BATCH:-5}; GRID=${GRID:-full}
drift=${DRIFT:-$top/drift}
export DRIFT_PLUGIN_DIR="$top/plugins/samplers/.libs:$top/plugins/models/.libs"
export DRIFT_PLUGIN_PATH=
mkdir -p "$build" "$here/results"
[ -s "$build/covtype-train.csv" ] || Rscript "$here/covtype-data.R" "$build"
[ -s "$build/covtype-train.drs" ] || "$drift" data convert "$build/covtype-train.csv" "$build/covtype-train.drs"
[ -s "$build/covtype-reference.csv" ] || Rscript "$here/covtype-laplace.R" "$build"
N=$(($(wc -l < "$build/covtype-train.csv") - 1))
runs=$build/covtype-runs.csv
[ "${REUSE:-0}" = 1 ] && [ -s "$runs" ] && SEEDS=0 ||   # REUSE=1: redraw from the runs made
    echo "method,h,gamma,seed,passes,seconds,draws,lpd,accuracy" > "$runs"
one() { # method per-step-cost h gamma seed sampler-options...
    m=$1 cost=$2 h=$3 g=$4 seed=$5; shift 5
    it=$((PASSES * N / (BATCH * cost))); warm=$((2 * N / (BATCH * cost)))
    thin=$(((it - warm) / 200)); [ "$thin" -ge 1 ] || thin=1
    out=$build/covtype-$m-$h-$seed.csv
    "$drift" sample --model logistic --data "$build/covtype-train.drs" --init 0 --chains 1 \
        --batch "$BATCH" --passes "$PASSES" --warmup "$warm" --thin "$thin" --seed "$seed" \
        --test "$build/covtype-test.csv" --quiet --out "$out" "$@" 2>/dev/null || true
    met=${out%.csv}_metrics.csv
    last=$(grep -v '^#' "$met" 2>/dev/null | tail -1)
    case $last in passes*|'') last="NA,NA,NA,NA,NA,NA" ;; esac
    echo "$m,$h,$g,$seed,$(echo "$last" | cut -d, -f1,2,4,5,6)" >> "$runs"
    rm -f "$out"
}
if [ "$GRID" = quick ]; then
    HS_SGLD="1e-6"; HS_PSGLD="3e-5"; HS_HMC="5e-4"
else
    HS_SGLD="1e-7 3e-7 1e-6 3e-6"; HS_PSGLD="1e-5 3e-5 1e-4 3e-4"; HS_HMC="2.5e-4 5e-4 1e-3 2e-3"
fi
for seed in $(seq 1 "$SEEDS"); do
    echo "== seed $seed" >&2
    for h in $HS_SGLD; do one sgld 1 "$h" NA "$seed" --sampler sgld --set h="$h"; done
    for h in $HS_PSGLD; do one psgld 1 "$h" NA "$seed" --sampler psgld --set h="$h"; done
    for h in $HS_HMC; do
        g=$(awk "BEGIN{print 0.5 / $h}")
        one sghmc 1 "$h" "$g" "$seed" --sampler sghmc --set h="$h" --set gamma="$g"
        one ewsg 2 "$h" "$g" "$seed" --sampler ewsg --set M=1 --set h="$h" --set gamma="$g"
    done
done
Rscript - "$runs" "$build/covtype-reference.csv" "$here/results" <<'REOF'
suppressMessages(library(data.table))
a <- commandArgs(TRUE); r <- fread(a[1]); ref <- fread(a[2]); out <- a[3]
lref <- ref[quantity == "lpd", laplace]; aref <- ref[quantity == "accuracy", laplace]
s <- r[, .(seeds = sum(!is.na(lpd)), failed = sum(is.na(lpd)),
           lpd = mean(lpd, na.rm = TRUE), lpd_sd = sd(lpd, na.rm = TRUE),
           accuracy = mean(accuracy, na.rm = TRUE), accuracy_sd = sd(accuracy, na.rm = TRUE),
           seconds = mean(seconds, na.rm = TRUE)), by = .(method, h, gamma)]
s[, `:=`(lpd_gap = lpd - lref, accuracy_gap = accuracy - aref)]
fwrite(s, file.path(out, "covtype.csv"))
best <- s[seeds > 0][order(-lpd)][, .SD[1], by = method]
fwrite(best, file.path(out, "covtype-table1.csv"))
cat(sprintf("Laplace reference: test lpd %.5f, accuracy %.5f\n", lref, aref))
print(s, digits = 4)
cat("Table 1 (each method at its best step size by test lpd):\n")
print(best[, .(method, h, gamma, accuracy, accuracy_sd, lpd, lpd_sd, lpd_gap)], digits = 5)
png(file.path(out, "covtype.png"), width = 1100, height = 480, res = 110)
par(mfrow = c(1, 2), mar = c(4.2, 4.6, 2, 1))
cols <- c(sgld = "orange", psgld = "darkgreen", sghmc = "blue", ewsg = "red")
ok <- s[seeds > 0]
for (what in c("lpd", "accuracy")) {
  ylim <- range(c(ok[[what]] - 2 * ok[[paste0(what, "_sd")]], ok[[what]] + 2 * ok[[paste0(what, "_sd")]],
                  if (what == "lpd") lref else aref), na.rm = TRUE)
  plot(NA, xlim = c(0.5, 4.5), ylim = ylim, xaxt = "n", xlab = "step size (grid index, smallest first)",
       ylab = if (what == "lpd") "test log-likelihood per row" else "test accuracy",
       main = sprintf("Covertype-sized LR, test %s", what))
  axis(1, at = 1:4)
  abline(h = if (what == "lpd") lref else aref, lty = 2)
  for (m in names(cols)) {
    o <- ok[method == m][order(h)]; x <- seq_len(nrow(o)) + (match(m, names(cols)) - 2.5) * 0.06
    points(x, o[[what]], col = cols[m], pch = 19, type = "b")
    arrows(x, o[[what]] - o[[paste0(what, "_sd")]], x, o[[what]] + o[[paste0(what, "_sd")]],
           angle = 90, code = 3, length = 0.02, col = cols[m])
  }
  legend("bottomleft", c(names(cols), "Laplace reference"), col = c(cols, "black"),
         pch = c(rep(19, 4), NA), lty = c(rep(1, 4), 2), bty = "n", cex = 0.8)
}
invisible(dev.off())
REOF
