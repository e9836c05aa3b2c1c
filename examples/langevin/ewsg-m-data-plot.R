# ewsg-m-data-plot.R: the figure of ewsg-m-data.sh from its CSV: per data
# size n, KL against data passes for each M, KL at the last pass mark
# (about 30 passes) against M, and the draws' variance and mean error
# against M.  Usage: Rscript ewsg-m-data-plot.R OUT (reads and writes there)
out <- commandArgs(TRUE)[1]
res <- read.csv(file.path(out, "ewsg-m-data.csv"))
Ms <- sort(unique(res$M[res$M >= 0])); ns <- sort(unique(res$n))
png(file.path(out, "ewsg-m-data.png"), width = 1400, height = 900, res = 110)
par(mfrow = c(2, 3), mar = c(4.2, 4.2, 2.2, 1))
cols <- setNames(c("black", "red", "orange", "darkgreen", "blue", "purple")[seq_along(Ms)], Ms)
for (n in ns) {
  r <- res[res$n == n & res$M >= 0, ]; full <- res[res$n == n & res$M < 0, ]
  plot(NA, xlim = c(5, 30), ylim = range(c(r$kl_lo, r$kl_hi, full$kl)), log = "y",
       xlab = "data passes", ylab = "KL(fitted Gaussian || posterior)",
       main = sprintf("n = %d, b = 1: KL against data passes", n))
  for (M in Ms) { o <- r[r$M == M, ]; lines(o$passes, o$kl, type = "b", col = cols[as.character(M)])
    arrows(o$passes, o$kl_lo, o$passes, o$kl_hi, angle = 90, code = 3, length = 0.02,
           col = cols[as.character(M)]) }
  abline(h = full$kl, lty = 2)
  legend("right", c(paste("M =", Ms), "full gradient"), col = c(cols, "black"),
         lty = c(rep(1, length(Ms)), 2), bty = "n", cex = 0.8)
  e <- r[r$passes == ave(r$passes, r$M, FUN = max), ]   # each M's last mark (about 30 passes)
  plot(e$M + 0.5, e$kl, log = "xy", type = "b", xaxt = "n", ylim = range(c(e$kl_lo, e$kl_hi, full$kl)),
       xlab = "M (0 = uniform subsampling)", ylab = "KL at about 30 passes (95% bootstrap)",
       main = sprintf("n = %d: KL at about 30 passes against M", n))
  axis(1, at = Ms + 0.5, labels = Ms)
  arrows(e$M + 0.5, e$kl_lo, e$M + 0.5, e$kl_hi, angle = 90, code = 3, length = 0.03)
  abline(h = full$kl, lty = 2)
  plot(e$M + 0.5, (e$var1 + e$var2) / 2, log = "x", type = "b", xaxt = "n",
       ylim = range(c(1 / n, (e$var1 + e$var2) / 2, (full$var1 + full$var2) / 2, e$abs_bias^2 + 1 / n)),
       xlab = "M", ylab = "variance of the draws; |mean error|^2 + 1/n (dotted)",
       main = sprintf("n = %d: variance (exact %.3f) and mean error", n, 1 / n))
  axis(1, at = Ms + 0.5, labels = Ms)
  lines(e$M + 0.5, e$abs_bias^2 + 1 / n, type = "b", lty = 3)
  abline(h = 1 / n, col = "grey"); abline(h = (full$var1 + full$var2) / 2, lty = 2)
}
invisible(dev.off())
