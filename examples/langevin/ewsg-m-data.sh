#!/bin/sh
# ewsg-m-data.sh: the design of the EWSG paper's Fig. 1d-i: the index
# chain's length M at minibatch size b = 1, with the number of data (of
# minibatches) raised to 50 and 100, on section 5.1's target
#     V(theta) = sum_{i=1..n} 1/2 |theta - c_i|^2,  c_i ~ N(0, I_2),
# exact posterior N(mean c, I/n).  Section 5.1's other settings: h = 0.05,
# gamma = 10, the paper's x, CHAINS chains from 0, data passes on the
# x-axis (5, 10, ..., 30 passes, as Fig. 1a).  M in {0, 1, 2, 5, 10, 20}
# (M = 0 is uniform subsampling: sghmc's step with the same integrator);
# a step costs M + 1 gradients, so at equal data passes a larger M makes
# fewer steps.  Per (n, M) and pass count: KL(fitted Gaussian || exact)
# with a 95% bootstrap interval over chains, the mean's error, the
# variances.  The full-gradient chain of the same integrator (sghmc,
# --batch n --access ca, 1000 chains, 300 steps) is the law EWSG mimics.
# Writes $OUT/ewsg-m-data.csv and $OUT/ewsg-m-data.png.
# Usage: sh ewsg-m-data.sh   (env: CHAINS=10000 (in runs of 1000), NDATA="50 100",
#                             MS="0 1 2 5 10 20", SEED=1, OUT=./langevin-out)
. "$(dirname "$0")/common.sh"
CHAINS=${CHAINS:-10000}
NDATA=${NDATA:-"50 100"}
MS=${MS:-"0 1 2 5 10 20"}
SEED=${SEED:-1}

# One file of all chains' kept rows (drift writes a file per chain).
pool() { # dir
    awk 'FNR == 1 { seen = 0 } /^#/ { next } !seen { seen = 1; next } { print }' \
        "$1"/b*/draws_*.csv > "$1/pooled.csv"
    grep -v '^#' "$1/b0/draws_1.csv" | sed -n 1p > "$1/header.csv"
    rm -rf "$1"/b*
}
for n in $NDATA; do
    data=$work/centres$n.csv
    Rscript -e "set.seed(20200220); c <- matrix(rnorm(2 * $n), $n, 2);
      colnames(c) <- c('y.1', 'y.2'); write.csv(c, '$data', row.names = FALSE)"
    for M in $MS; do
        echo "== n = $n, M = $M" >&2
        steps5=$((5 * n / (M + 1)))     # steps per 5 data passes
        d=$work/n${n}_M$M
        mkdir -p "$d"
        # Warmup steps5 - 1 and thin steps5: the rows kept are the states
        # after (about) 5, 10, ..., 30 passes; grads__ says exactly.
        # drift runs at most 1024 chains at once: batches of 1000, each
        # with its own seed (SEED, SEED + 1000, ...).
        b=0
        while [ $((b * 1000)) -lt "$CHAINS" ]; do
            k=$((CHAINS - b * 1000)); [ "$k" -le 1000 ] || k=1000
            mkdir -p "$d/b$b"
            "$DRIFT" sample --init 0 --model "$models/corrgauss.so" --data "$data" \
                --model-set rho=0 --model-set s1=1 --model-set s2=1 --model-set tau=0 \
                --sampler ewsg --set h=5e-2 --set gamma=10 --set M="$M" \
                --batch 1 --access ra --warmup $((steps5 - 1)) \
                --iter $((6 * steps5)) --thin "$steps5" \
                --chains "$k" --seed $((SEED + 1000 * b)) --quiet --out "$d/b$b/draws.csv"
            b=$((b + 1))
        done
        pool "$d"
    done
    echo "== n = $n, full gradient" >&2
    d=$work/n${n}_full
    mkdir -p "$d/b0"
    "$DRIFT" sample --init 0 --model "$models/corrgauss.so" --data "$data" \
        --model-set rho=0 --model-set s1=1 --model-set s2=1 --model-set tau=0 \
        --sampler sghmc --set h=5e-2 --set gamma=10 --batch "$n" --access ca \
        --warmup 299 --iter 1 --chains 1000 --seed "$SEED" --quiet \
        --out "$d/b0/draws.csv"
    pool "$d"
done

Rscript - "$work" "$OUT" "$MS" "$NDATA" "$CHAINS" <<'REOF'
args <- commandArgs(TRUE); work <- args[1]; out <- args[2]
Ms <- as.integer(strsplit(args[3], " ")[[1]]); ns <- as.integer(strsplit(args[4], " ")[[1]])
chains <- as.integer(args[5])
set.seed(5)
readp <- function(d) {
  h <- scan(file.path(d, "header.csv"), what = "", sep = ",", quiet = TRUE)
  x <- read.csv(file.path(d, "pooled.csv"), header = FALSE, col.names = h)
  x
}
res <- NULL
for (n in ns) {
  cen <- read.csv(file.path(work, sprintf("centres%d.csv", n)))
  m0 <- colMeans(cen); S0 <- diag(2) / n; P0 <- solve(S0)
  kl <- function(th) { m <- colMeans(th); S <- cov(th)
    0.5 * (sum(diag(P0 %*% S)) + drop(t(m0 - m) %*% P0 %*% (m0 - m)) - 2 + log(det(S0) / det(S))) }
  one <- function(th) {
    b <- replicate(200, kl(th[sample.int(nrow(th), replace = TRUE), ]))
    k <- kl(th); bias <- colMeans(th) - m0
    se <- apply(th, 2, sd) / sqrt(nrow(th))
    data.frame(chains = nrow(th), kl = k, kl_lo = quantile(b, 0.025) - (mean(b) - k),
               kl_hi = quantile(b, 0.975) - (mean(b) - k),
               abs_bias = sqrt(sum(bias^2)), bias_se = sqrt(sum(se^2)),
               var1 = var(th[, 1]), var2 = var(th[, 2]))
  }
  for (M in Ms) {
    x <- readp(file.path(work, sprintf("n%d_M%d", n, M)))
    steps5 <- 5 * n %/% (M + 1)
    x$mark <- rep(1:6, length.out = nrow(x))   # each chain's rows in order
    for (k in 1:6) {
      s <- x[x$mark == k, ]
      r <- one(as.matrix(s[, c("theta.1", "theta.2")]))
      res <- rbind(res, cbind(data.frame(n = n, M = M, passes = mean(s$grads__) / n,
                                         steps = k * steps5,
                                         index_accept = if (M > 0) mean(s$index_accept__) else NA), r))
    }
  }
  x <- readp(file.path(work, sprintf("n%d_full", n)))
  r <- one(as.matrix(x[, c("theta.1", "theta.2")]))
  res <- rbind(res, cbind(data.frame(n = n, M = -1, passes = mean(x$grads__) / n, steps = 300,
                                     index_accept = NA), r))
}
rownames(res) <- NULL
write.csv(res, file.path(out, "ewsg-m-data.csv"), row.names = FALSE)
print(res, digits = 3)
REOF
Rscript "$here/ewsg-m-data-plot.R" "$OUT"
