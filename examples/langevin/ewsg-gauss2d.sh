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
# ewsg_rnext0); ewsg-gauss2d-ci.R adds 95% intervals of the KL
# (ewsg-gauss2d-ci.csv).  SVRG-LD (drift's svrg-ld, eta = 5e-4, the paper's h; a
# total refresh of the 20 snapshots every data pass) runs for 30 passes
# with every step kept; the state kept for each 5 passes is the last one
# within that budget (its refreshes make the cost per step uneven).
# Usage: sh ewsg-gauss2d.sh   (env: CHAINS=1000, SEED=1, OUT=./langevin-out;
#                              the paper's figure has CHAINS=10000)
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
    # drift runs at most 1024 chains at once: batches of 1000, each with
    # its own seed (SEED, SEED + 1000, ...).
    b=0
    while [ $((b * 1000)) -lt "$CHAINS" ]; do
        k=$((CHAINS - b * 1000)); [ "$k" -le 1000 ] || k=1000
        mkdir -p "$work/$label/b$b"
        # shellcheck disable=SC2086
        "$DRIFT" sample --init 0 --model "$models/corrgauss.so" --data "$data" \
            --model-set rho=0 --model-set s1=1 --model-set s2=1 --model-set tau=0 \
            --sampler "$name" $sets --batch 1 --passes 30 \
            --warmup $((steps5 - 1)) --thin "$steps5" \
            --chains "$k" --seed $((SEED + 1000 * b)) --quiet \
            --out "$work/$label/b$b/draws.csv"
        b=$((b + 1))
    done
    pool "$work/$label"
}
# One file of all chains' kept rows (drift writes a file per chain).
pool() { # dir
    awk 'FNR == 1 { seen = 0 } /^#/ { next } !seen { seen = 1; next } { print }' \
        "$1"/b*/draws_*.csv > "$1/pooled.csv"
    grep -v '^#' "$1/b0/draws_1.csv" | sed -n 1p > "$1/header.csv"
    rm -rf "$1"/b*
}
run sghmc sghmc "--set h=5e-2 --set gamma=10" 1
run ewsg ewsg "--set h=5e-2 --set gamma=10 --set M=1" 2
run sgld sgld "--set h=5e-3" 1
run psgld psgld "--set h=5e-3" 1
# The other choices of x in EWSG's index weights, for study.
run ewsg_x0 ewsg "--set h=5e-2 --set gamma=10 --set M=1 --set x=0" 2
run ewsg_x1 ewsg "--set h=5e-2 --set gamma=10 --set M=1 --set x=1" 2
run ewsg_rnext0 ewsg "--set h=5e-2 --set gamma=10 --set M=1 --set x=r_next_0" 2
# SVRG-LD: every step kept; per chain, the last state within each 5 passes
# (100 gradients) of the budget.
b=0
while [ $((b * 1000)) -lt "$CHAINS" ]; do
    k=$((CHAINS - b * 1000)); [ "$k" -le 1000 ] || k=1000
    mkdir -p "$work/svrgld/b$b"
    "$DRIFT" sample --init 0 --model "$models/corrgauss.so" --data "$data" \
        --model-set rho=0 --model-set s1=1 --model-set s2=1 --model-set tau=0 \
        --sampler svrg-ld --set eta=5e-4 --batch 1 --passes 30 --warmup 0 \
        --thin 1 --chains "$k" --seed $((SEED + 1000 * b)) --quiet \
        --out "$work/svrgld/b$b/draws.csv"
    b=$((b + 1))
done
awk -F, 'function flush() { while (mark <= 6) { print prev; mark++ } }
    FNR == 1 { if (NR > 1) flush(); seen = 0; mark = 1 } /^#/ { next }
    !seen { seen = 1; for (i = 1; i <= NF; i++) if ($i == "grads__") g = i; next }
    { while (mark <= 6 && $g > 100 * mark) { print prev; mark++ } prev = $0 }
    END { flush() }' \
    "$work/svrgld"/b*/draws_*.csv > "$work/svrgld/pooled.csv"
grep -v '^#' "$work/svrgld/b0/draws_1.csv" | sed -n 1p > "$work/svrgld/header.csv"
rm -rf "$work/svrgld"/b*

Rscript - "$work" "$data" "$OUT" <<'REOF'
args <- commandArgs(TRUE); work <- args[1]; cen <- read.csv(args[2]); out <- args[3]
m0 <- colMeans(cen); S0 <- diag(2) / nrow(cen); P0 <- solve(S0)
kl <- function(m, S) 0.5 * (sum(diag(P0 %*% S)) + drop(t(m0 - m) %*% P0 %*% (m0 - m)) -
                            2 + log(det(S0) / det(S)))
res <- NULL
for (s in c("sghmc", "ewsg", "sgld", "psgld", "svrgld", "ewsg_x0", "ewsg_x1", "ewsg_rnext0")) {
  h <- scan(file.path(work, s, "header.csv"), what = "", sep = ",", quiet = TRUE)
  d <- read.csv(file.path(work, s, "pooled.csv"), header = FALSE, col.names = h)
  d$passes <- 5 * rep(1:6, length.out = nrow(d))   # each chain's 6 rows in order
  for (p in sort(unique(d$passes))) {
    th <- as.matrix(d[d$passes == p, c("theta.1", "theta.2")])
    res <- rbind(res, data.frame(sampler = s, passes = p, chains = nrow(th),
      kl = kl(colMeans(th), cov(th)), mean1 = mean(th[, 1]), mean2 = mean(th[, 2]),
      var1 = var(th[, 1]), var2 = var(th[, 2]), cov12 = cov(th[, 1], th[, 2]), grads_per_chain = mean(d$grads__[d$passes == p])))
  }
}
write.csv(res, file.path(out, "ewsg-gauss2d.csv"), row.names = FALSE)
print(res[res$passes == 30, ], digits = 4)
cat(sprintf("exact posterior: mean (%.4f, %.4f), variance %.4f\n", m0[1], m0[2], S0[1, 1]))
png(file.path(out, "ewsg-gauss2d.png"), width = 640, height = 480)
cols <- c(sghmc = "blue", ewsg = "red", sgld = "darkgreen", psgld = "orange", svrgld = "purple")
plot(NULL, xlim = c(5, 30), ylim = range(res$kl), log = "y", xlab = "data passes",
     ylab = "KL(fitted Gaussian || posterior)", main = "EWSG paper 5.1: 2-D Gaussian, batch 1")
for (s in names(cols)) with(res[res$sampler == s, ], lines(passes, kl, col = cols[s], type = "b"))
legend("topright", legend = names(cols), col = cols, lty = 1)
invisible(dev.off())
REOF
Rscript "$here/ewsg-gauss2d-ci.R" "$OUT"
