#!/bin/sh
# ewsg-m-sweep.sh: the EWSG paper's hyperparameter panels (Fig 1 d/e/g/h:
# the index chain's length M against the minibatch size n) on section 5.1's
# target
#     V(theta) = sum_{i=1..20} 1/2 |theta - c_i|^2,  c_i ~ N(0, I_2)
# (the centres of ewsg-gauss2d.sh), exact posterior N(mean c, I/20).
# ewsg with M in {0, 1, 2, 5, 10, 20} (M = 0 is uniform subsampling, i.e.
# sghmc with the same integrator) and n in {1, 2, 5, 10}, h = 0.05,
# gamma = 10, the paper's x; plus the full-gradient chain of the same
# integrator (sghmc, --batch 20 --access ca: every row every step), the
# law EWSG tries to mimic.  CHAINS chains from 0 per setting, ITER steps
# each; the last KEEP steps of every chain, every 10th, are pooled (the
# chains relax in about 10 steps; standard errors come from chain means).  Per setting: KL(fitted Gaussian ||
# exact), the mean's error and its Monte Carlo standard error, the
# variances, and the cost (gradients per step, (M + 1) n).
# Writes $OUT/ewsg-msweep.csv and $OUT/ewsg-msweep.png.
# Usage: sh ewsg-m-sweep.sh   (env: CHAINS=1000 (at most 1024), ITER=1400, KEEP=1000, MS, NS, SEED=1,
#                               OUT=./langevin-out)
. "$(dirname "$0")/common.sh"
CHAINS=${CHAINS:-1000}
ITER=${ITER:-1400}
KEEP=${KEEP:-1000}
MS=${MS:-"0 1 2 5 10 20"}
NS=${NS:-"1 2 5 10"}
SEED=${SEED:-1}
data=$work/centres.csv
Rscript -e "set.seed(20200220); c <- matrix(rnorm(40), 20, 2);
  colnames(c) <- c('y.1', 'y.2'); write.csv(c, '$data', row.names = FALSE)"

run() { # label sampler batch access [--set ...]
    label=$1; name=$2; batch=$3; access=$4; shift 4
    mkdir -p "$work/$label"
    "$DRIFT" sample --init 0 --model "$models/corrgauss.so" --data "$data" \
        --model-set rho=0 --model-set s1=1 --model-set s2=1 --model-set tau=0 \
        --sampler "$name" --set h=5e-2 --set gamma=10 "$@" \
        --batch "$batch" --access "$access" --warmup $((ITER - KEEP)) --iter "$KEEP" --thin 10 \
        --chains "$CHAINS" --seed "$SEED" --quiet --out "$work/$label/draws.csv"
}
for n in $NS; do
    for M in $MS; do
        echo "== n = $n, M = $M" >&2
        run "ewsg_n${n}_M${M}" ewsg "$n" ra --set M="$M"
    done
done
echo "== full gradient" >&2
run full sghmc 20 ca

Rscript - "$work" "$data" "$OUT" "$MS" "$NS" <<'REOF'
args <- commandArgs(TRUE); work <- args[1]; cen <- read.csv(args[2]); out <- args[3]
Ms <- as.integer(strsplit(args[4], " ")[[1]]); ns <- as.integer(strsplit(args[5], " ")[[1]])
m0 <- colMeans(cen); S0 <- diag(2) / nrow(cen); P0 <- solve(S0)
kl <- function(m, S) 0.5 * (sum(diag(P0 %*% S)) + drop(t(m0 - m) %*% P0 %*% (m0 - m)) -
                            2 + log(det(S0) / det(S)))
one <- function(label, M, n) {
  files <- list.files(file.path(work, label), pattern = "\\.csv$", full.names = TRUE)
  d <- do.call(rbind, lapply(files, read.csv, comment.char = "#"))
  th <- as.matrix(d[, c("theta.1", "theta.2")])
  # Standard errors from chain means (draws within a chain are correlated).
  cm <- do.call(rbind, lapply(files, function(f) colMeans(read.csv(f, comment.char = "#")[, c("theta.1", "theta.2")])))
  se <- apply(cm, 2, sd) / sqrt(nrow(cm))
  bias <- colMeans(th) - m0
  data.frame(M = M, n = n, sampler = label, draws = nrow(th), kl = kl(colMeans(th), cov(th)),
             bias1 = bias[1], bias2 = bias[2], abs_bias = sqrt(sum(bias^2)),
             se1 = se[1], se2 = se[2], var1 = var(th[, 1]), var2 = var(th[, 2]),
             grads_per_step = if (M < 0) 20 else (M + 1) * n,
             index_accept = if ("index_accept__" %in% names(d)) mean(d$index_accept__) else NA)
}
res <- NULL
for (n in ns) for (M in Ms) res <- rbind(res, one(sprintf("ewsg_n%d_M%d", n, M), M, n))
full <- one("full", -1, 20)
res <- rbind(res, full); rownames(res) <- NULL
write.csv(res, file.path(out, "ewsg-msweep.csv"), row.names = FALSE)
print(res[, c("M", "n", "kl", "bias1", "bias2", "abs_bias", "se1", "var1", "var2", "grads_per_step", "index_accept")], digits = 3)
cat(sprintf("exact posterior: mean (%.4f, %.4f), variance %.4f\n", m0[1], m0[2], S0[1, 1]))
r <- res[res$M >= 0, ]
png(file.path(out, "ewsg-msweep.png"), width = 1500, height = 480, res = 110)
par(mfrow = c(1, 3), mar = c(4.2, 4.2, 2, 1))
cols <- setNames(c("black", "blue", "darkgreen", "red", "orange")[seq_along(ns)], ns)
xM <- function(M) M + 0.5                       # M = 0 on a log axis
panel <- function(y, ylab, main, ylim = range(y)) {
  plot(NA, xlim = range(xM(r$M)), ylim = ylim, log = "xy", xaxt = "n",
       xlab = "index chain length M (0 = uniform subsampling)", ylab = ylab, main = main)
  axis(1, at = xM(Ms), labels = Ms)
  for (n in ns) { o <- r[r$n == n, ]; lines(xM(o$M), y[r$n == n], type = "b", col = cols[as.character(n)]) }
  legend("topleft", paste("n =", ns), col = cols, lwd = 1, bty = "n")
}
panel(r$kl, "KL(fitted Gaussian || posterior)", "KL against M, per minibatch size n",
      range(c(r$kl, full$kl)))
abline(h = full$kl, lty = 2); mtext("dashed: full gradient", 3, -1.2, adj = 0.98, cex = 0.7)
panel(r$abs_bias, "|mean - exact mean|", "mean error against M",
      range(c(r$abs_bias, 2 * sqrt(r$se1^2 + r$se2^2), full$abs_bias)))
for (n in ns) { o <- r[r$n == n, ]; lines(xM(o$M), 2 * sqrt(o$se1^2 + o$se2^2), lty = 3, col = cols[as.character(n)]) }
mtext("dotted: 2 Monte Carlo s.e.", 3, -1.2, adj = 0.98, cex = 0.7)
panel((r$var1 + r$var2) / 2, "mean variance of the draws", "variance against M (exact 0.05)",
      range(c(0.05, (r$var1 + r$var2) / 2, (full$var1 + full$var2) / 2)))
abline(h = 0.05, col = "grey"); abline(h = (full$var1 + full$var2) / 2, lty = 2)
invisible(dev.off())
REOF
