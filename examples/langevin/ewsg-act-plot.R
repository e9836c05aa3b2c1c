# ewsg-act-plot.R: the numbers and figure of ewsg-act.sh.  For each
# (sampler, h): KL of the Gaussian fitted to all kept rows against the exact
# posterior, and the integrated autocorrelation time, each with a 95%
# percentile interval from B bootstrap resamples of the chains.
# Usage: Rscript ewsg-act-plot.R POINTS CENTRES OUT B
#   POINTS: lines "sampler h thin grads_per_step chains theta_file"
args <- commandArgs(TRUE)
pts <- read.table(args[1], col.names = c("sampler", "h", "thin", "per", "chains", "file"),
                  stringsAsFactors = FALSE)
cen <- read.csv(args[2]); out <- args[3]; B <- as.integer(args[4])
m0 <- colMeans(cen); S0 <- diag(2) / nrow(cen); P0 <- solve(S0)
kl <- function(m, S) 0.5 * (sum(diag(P0 %*% S)) + drop(t(m0 - m) %*% P0 %*% (m0 - m)) -
                            2 + log(det(S0) / det(S)))
# Geyer's initial positive sequence on an autocorrelation vector rho[1] = 1.
geyer <- function(rho) {
  n <- length(rho) %/% 2 * 2
  G <- rho[seq(1, n, 2)] + rho[seq(2, n, 2)]
  k <- which(G <= 0)[1]; if (is.na(k)) k <- length(G) + 1
  G <- G[seq_len(k - 1)]
  if (length(G) > 1) G <- cummin(G)          # initial monotone sequence
  max(1, -1 + 2 * sum(G))
}
set.seed(20200220)
res <- NULL
for (p in seq_len(nrow(pts))) {
  x <- matrix(scan(pts$file[p], quiet = TRUE), ncol = 2, byrow = TRUE)
  C <- pts$chains[p]; n <- nrow(x) / C
  stopifnot(n == round(n))
  ch <- rep(seq_len(C), each = n)
  # per chain: sums for the fitted Gaussian
  s1 <- rowsum(x, ch); s2 <- rowsum(cbind(x[, 1]^2, x[, 2]^2, x[, 1] * x[, 2]), ch)
  fitkl <- function(w) {   # w: chain multiplicities
    N <- sum(w) * n; m <- colSums(s1 * w) / N; q <- colSums(s2 * w) / N
    v1 <- q[1] - m[1]^2; v2 <- q[2] - m[2]^2; c12 <- q[3] - m[1] * m[2]
    S <- matrix(c(v1, c12, c12, v2), 2) * N / (N - 1)
    c(kl(m, S), m, v1, v2)
  }
  # per chain: autocovariances about the pooled mean up to lag L (FFT)
  L <- min(n - 1, 200); mu <- colMeans(x)
  acv <- lapply(1:2, function(j) {
    y <- matrix(x[, j] - mu[j], n)            # n x C
    f <- mvfft(rbind(y, matrix(0, n, C)))
    a <- Re(mvfft(Mod(f)^2, inverse = TRUE))[1:(L + 1), , drop = FALSE] / (2 * n) / n
    t(a)                                      # C x (L + 1)
  })
  act <- function(w) mean(sapply(acv, function(a) {
    g <- colSums(a * w) / sum(w); geyer(g / g[1]) })) * pts$thin[p]
  w1 <- rep(1, C)
  est <- fitkl(w1); a0 <- act(w1)
  bt <- replicate(B, { w <- tabulate(sample.int(C, C, TRUE), C); c(fitkl(w)[1], act(w)) })
  q <- apply(bt, 1, quantile, c(0.025, 0.975))
  res <- rbind(res, data.frame(sampler = pts$sampler[p], h = pts$h[p], chains = C,
    rows_per_chain = n, thin = pts$thin[p], kl = est[1], kl_lo = q[1, 1], kl_hi = q[2, 1],
    act = a0, act_lo = q[1, 2], act_hi = q[2, 2], grads_per_step = pts$per[p],
    act_grads = a0 * pts$per[p], mean1 = est[2], mean2 = est[3], var1 = est[4], var2 = est[5]))
}
write.csv(res, file.path(out, "ewsg-act.csv"), row.names = FALSE)
print(res[, c("sampler", "h", "thin", "kl", "kl_lo", "kl_hi", "act", "act_lo", "act_hi", "var1", "var2")],
      digits = 3, row.names = FALSE)
cat(sprintf("exact posterior: mean (%.4f, %.4f), variance %.4f\n", m0[1], m0[2], S0[1, 1]))

png(file.path(out, "ewsg-act.png"), width = 1100, height = 480)
par(mfrow = c(1, 2))
cols <- c(sghmc = "blue", ewsg = "red", sgld = "darkgreen", psgld = "orange")
ss <- intersect(names(cols), unique(res$sampler))
for (unit in c("steps", "gradients")) {
  ax <- if (unit == "steps") 1 else res$grads_per_step
  xa <- res$act * ax; xl <- res$act_lo * ax; xh <- res$act_hi * ax
  plot(NULL, xlim = range(xl, xh) * c(1, 1.6), ylim = range(res$kl_lo, res$kl_hi), log = "xy",
       xlab = paste0("integrated autocorrelation time (", unit, ")"),
       ylab = "KL(fitted Gaussian || posterior)",
       main = paste("EWSG 5.1 (Fig. 1b design): error against act, in", unit))
  for (s in ss) {
    i <- which(res$sampler == s); i <- i[order(res$h[i])]
    lines(xa[i], res$kl[i], col = cols[s], type = "b", pch = 19)
    arrows(xa[i], res$kl_lo[i], xa[i], res$kl_hi[i], col = cols[s], angle = 90, code = 3, length = 0.03)
    arrows(xl[i], res$kl[i], xh[i], res$kl[i], col = cols[s], angle = 90, code = 3, length = 0.03)
    text(xa[i], res$kl[i], labels = paste0("h=", res$h[i]), pos = 4, cex = 0.7, col = cols[s])
  }
  legend("topright", legend = ss, col = cols[ss], lty = 1, pch = 19)
}
invisible(dev.off())
