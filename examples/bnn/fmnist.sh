#!/bin/sh
# fmnist.sh: Bayesian neural networks on Fashion-MNIST (in place of the
# papers' MNIST: same sizes, 60,000 training and 10,000 test images of
# 28 x 28, 10 classes; Debian package dataset-fashion-mnist), one run per
# sampler, shared by three papers' experiments:
#   SGNHT section 5.2 (sgnht against sghmc and sgld),
#   EWSG section 5.3 (ewsg against sghmc, sgld and psgld),
#   SBPS section 7.3 (sbps and psbps against sgld and msgnht).
# Model bnn.drift: one hidden layer of H = 100 tanh units (Ding et al.'s
# 784-100-10), weights and biases N(0, 1); d = 79,510.  Every sampler:
# minibatches of 100, PASSES data passes (default 20) from U(-0.1, 0.1)
# weights (seed 1), the first 2 passes as burn-in, about 4 draws kept per
# pass; test accuracy and lpd of the posterior predictive over the draws
# kept so far, every pass (--test, --eval-every 1).  Step sizes are set
# explicitly (drift's SG samplers take h on the summed potential: h N is
# the learning rate on the mean loss):
#   sgld h = 5e-6;  psgld h = 1e-7 (lambda 1e-5, the pSGLD paper's; larger
#     h diverge, see README.md);
#   sghmc, ewsg (M = 1): h = 5e-4, gamma = 100 (momentum 1 - h gamma = 0.95);
#   sgnht, msgnht: h = 1e-3, A = 100;  sbps, psbps: k = 3, no refreshment
#     (the paper's), draws every 2 time units.
# The step sizes are the best of a 3-pass pilot over 2-4 values each
# (README.md), not the papers' values (other parameterisations and data).
# Writes results/fmnist-metrics.csv, results/fmnist.png (and the draws in
# build/).  Usage (after make): sh examples/bnn/fmnist.sh  (env: PASSES,
# SAMPLERS, HIDDEN)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${BUILD:-$here/build}
PASSES=${PASSES:-20}; HIDDEN=${HIDDEN:-100}
SAMPLERS=${SAMPLERS:-"sgld psgld sghmc ewsg sgnht msgnht sbps psbps"}
drift=${DRIFT:-$top/drift}
export DRIFT_PLUGIN_DIR="$top/plugins/samplers/.libs:$top/plugins/models/.libs"
export DRIFT_PLUGIN_PATH=
mkdir -p "$here/results"
. "$here/fmnist-data.sh"
per=$((N / 100)); warm=$((2 * per))
for s in $SAMPLERS; do
    thin=$((per / 4))
    case $s in
    sgld) sets="--set h=${H_SGLD:-5e-6}" ;;
    psgld) sets="--set h=${H_PSGLD:-1e-7}" ;;
    sghmc) sets="--set h=${H_HMC:-5e-4} --set gamma=${G_HMC:-100}" ;;
    ewsg) sets="--set h=${H_HMC:-5e-4} --set gamma=${G_HMC:-100} --set M=1"; thin=$((per / 8)); w=$((warm / 2)) ;;
    sgnht|msgnht) sets="--set h=${H_NHT:-1e-3} --set A=${A_NHT:-100}" ;;
    sbps) sets="--set k=3" ;;
    psbps) sets="--set k=3 --set adapt=always --set refresh=0" ;;   # the paper's psbps
    *) echo "fmnist.sh: unknown sampler $s" >&2; exit 2 ;;
    esac
    case $s in
    sbps|psbps) budget="--warmup ${WARM_PDMP:-150} --thin ${THIN_PDMP:-2}" ;;   # 150 segments: about 2 passes; thin in time units
    ewsg) budget="--warmup $w --thin $thin" ;;                      # a step costs two minibatches
    *) budget="--warmup $warm --thin $thin" ;;
    esac
    echo "== $s $sets" >&2
    # shellcheck disable=SC2086
    /usr/bin/time -f "   %e s wall, %M KB" "$drift" sample "$here/bnn.drift" --data "$build/fmnist-train.drs" \
        --data-set H="$HIDDEN" --data-set K=10 --init 0.1 --sampler "$s" $sets --batch 100 \
        --passes "$PASSES" $budget --test "$build/fmnist-test.csv" --eval-every 1 \
        --chains 1 --seed 1 --quiet --out "$build/fmnist-$s.csv" 2>&1 | grep -v "warning" >&2 || true
done
Rscript - "$build" "$here/results" "$SAMPLERS" <<'REOF'
a <- commandArgs(TRUE); build <- a[1]; out <- a[2]; ss <- strsplit(a[3], " ")[[1]]
res <- do.call(rbind, lapply(ss, function(s) {
  f <- file.path(build, sprintf("fmnist-%s_metrics.csv", s))
  if (!file.exists(f)) return(NULL)
  m <- read.csv(f, comment.char = "#")
  data.frame(sampler = s, passes = m$passes, seconds = m$seconds, draws = m$draws,
             accuracy = m$accuracy, test_error = 1 - m$accuracy, lpd = m$lpd)
}))
write.csv(res, file.path(out, "fmnist-metrics.csv"), row.names = FALSE, quote = FALSE)
for (s in unique(res$sampler)) { o <- res[res$sampler == s & res$draws > 0, ]
  if (!nrow(o)) { cat(sprintf("%-7s no draws evaluated\n", s)); next }
  cat(sprintf("%-7s after %5.1f passes (%6.0f s): test error %.4f, lpd %.4f; best error %.4f\n", s,
              tail(o$passes, 1), tail(o$seconds, 1), tail(o$test_error, 1), tail(o$lpd, 1), min(o$test_error))) }
png(file.path(out, "fmnist.png"), width = 1100, height = 480, res = 110)
par(mfrow = c(1, 2), mar = c(4.2, 4.4, 2, 1))
cols <- c(sgld = "orange", psgld = "darkgreen", sghmc = "blue", ewsg = "red", sgnht = "brown",
          msgnht = "purple", sbps = "black", psbps = "grey50")
ok <- res[res$draws > 0, ]
plot(NA, xlim = range(ok$passes), ylim = range(ok$test_error), log = "y", xlab = "data passes",
     ylab = "test error (posterior predictive)", main = sprintf("Fashion-MNIST, 784-%s-10 BNN", Sys.getenv("HIDDEN", "100")))
for (s in unique(ok$sampler)) with(ok[ok$sampler == s, ], lines(passes, test_error, col = cols[s], lwd = 2))
legend("topright", unique(ok$sampler), col = cols[unique(ok$sampler)], lwd = 2, bty = "n", cex = 0.8)
plot(NA, xlim = range(ok$passes), ylim = range(ok$lpd), xlab = "data passes",
     ylab = "test log-likelihood per image", main = "posterior predictive lpd")
for (s in unique(ok$sampler)) with(ok[ok$sampler == s, ], lines(passes, lpd, col = cols[s], lwd = 2))
invisible(dev.off())
REOF
