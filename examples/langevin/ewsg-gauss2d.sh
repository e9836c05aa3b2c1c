#!/bin/sh
# ewsg-gauss2d.sh: the EWSG paper's section 5.1 experiment.  Target
#     V(theta) = sum_{i=1..20} 1/2 |theta - c_i|^2,  c_i ~ N(0, I_2),
# (corrgauss with rho = 0, s1 = s2 = 1 and a flat prior), exact posterior
# N(mean c, I/20).  Each sampler runs CHAINS independent chains from 0 with
# batch 1 for 30 data passes: sghmc and ewsg with h = 5e-2, gamma = 10,
# sgld and psgld with h = 5e-3.  At every 5 passes the chains' states are
# pooled, a Gaussian is fitted to them, and its KL divergence to the exact
# posterior, KL(N(mu^, S^) || N(mean c, I/20)), is written to
# $OUT/ewsg-gauss2d.csv (plot: ewsg-gauss2d.png).  ewsg also runs with the
# other choices of x (0, 1 and r_{k+1} = 0: rows ewsg_x0, ewsg_x1,
# ewsg_rnext0).
# Usage: sh ewsg-gauss2d.sh   (env: CHAINS=1000, SEED=1, OUT=./langevin-out)
. "$(dirname "$0")/common.sh"
CHAINS=${CHAINS:-1000}
SEED=${SEED:-1}
data=$work/centres.csv
Rscript -e "set.seed(20200220); c <- matrix(rnorm(40), 20, 2);
  colnames(c) <- c('y.1', 'y.2'); write.csv(c, '$data', row.names = FALSE)"

# label, sampler, its --set options, gradients per step (ewsg M=1: 2)
run() {
    label=$1; name=$2; sets=$3; per=$4
    steps5=$((5 * 20 / per))            # steps per 5 data passes
    mkdir -p "$work/$label"
    # Warmup steps-1 and thin steps: the rows kept are the states after
    # 5, 10, ..., 30 passes.
    # shellcheck disable=SC2086
    "$DRIFT" sample --init 0 --model "$models/corrgauss.so" --data "$data" \
        --model-set rho=0 --model-set s1=1 --model-set s2=1 --model-set tau=0 \
        --sampler "$name" $sets --batch 1 --passes 30 \
        --warmup $((steps5 - 1)) --thin "$steps5" \
        --chains "$CHAINS" --seed "$SEED" --quiet \
        --out "$work/$label/draws.csv"
}
run sghmc sghmc "--set h=5e-2 --set gamma=10" 1
run ewsg ewsg "--set h=5e-2 --set gamma=10 --set M=1" 2
run sgld sgld "--set h=5e-3" 1
run psgld psgld "--set h=5e-3" 1
# The other choices of x in EWSG's index weights, for study.
run ewsg_x0 ewsg "--set h=5e-2 --set gamma=10 --set M=1 --set x=0" 2
run ewsg_x1 ewsg "--set h=5e-2 --set gamma=10 --set M=1 --set x=1" 2
run ewsg_rnext0 ewsg "--set h=5e-2 --set gamma=10 --set M=1 --set x=r_next_0" 2

Rscript - "$work" "$data" "$OUT" <<'REOF'
args <- commandArgs(TRUE); work <- args[1]; cen <- read.csv(args[2]); out <- args[3]
m0 <- colMeans(cen); S0 <- diag(2) / nrow(cen); P0 <- solve(S0)
kl <- function(m, S) 0.5 * (sum(diag(P0 %*% S)) + drop(t(m0 - m) %*% P0 %*% (m0 - m)) -
                            2 + log(det(S0) / det(S)))
res <- NULL
for (s in c("sghmc", "ewsg", "sgld", "psgld", "ewsg_x0", "ewsg_x1", "ewsg_rnext0")) {
  files <- list.files(file.path(work, s), pattern = "\\.csv$", full.names = TRUE)
  d <- do.call(rbind, lapply(files, function(f) {
    x <- read.csv(f, comment.char = "#"); x$passes <- 5 * seq_len(nrow(x)); x }))
  for (p in sort(unique(d$passes))) {
    th <- as.matrix(d[d$passes == p, c("theta.1", "theta.2")])
    res <- rbind(res, data.frame(sampler = s, passes = p, chains = nrow(th),
      kl = kl(colMeans(th), cov(th)), mean1 = mean(th[, 1]), mean2 = mean(th[, 2]),
      var1 = var(th[, 1]), var2 = var(th[, 2]), grads_per_chain = mean(d$grads__[d$passes == p])))
  }
}
write.csv(res, file.path(out, "ewsg-gauss2d.csv"), row.names = FALSE)
print(res[res$passes == 30, ], digits = 4)
cat(sprintf("exact posterior: mean (%.4f, %.4f), variance %.4f\n", m0[1], m0[2], S0[1, 1]))
png(file.path(out, "ewsg-gauss2d.png"), width = 640, height = 480)
cols <- c(sghmc = "blue", ewsg = "red", sgld = "darkgreen", psgld = "orange")
plot(NULL, xlim = c(5, 30), ylim = range(res$kl), log = "y", xlab = "data passes",
     ylab = "KL(fitted Gaussian || posterior)", main = "EWSG paper 5.1: 2-D Gaussian, batch 1")
for (s in names(cols)) with(res[res$sampler == s, ], lines(passes, kl, col = cols[s], type = "b"))
legend("topright", legend = names(cols), col = cols, lty = 1)
invisible(dev.off())
REOF
