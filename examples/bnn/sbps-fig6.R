# sbps-fig6.R: tables and figure of sbps-fig6.sh.  Reads BUILD/fig6-S-SEED_metrics.csv
# (drift's --test metrics) and BUILD/fig6-mala-SEED_metrics.csv; writes
# OUT/sbps-fig6-metrics.csv (every evaluation), OUT/sbps-fig6-summary.csv
# (per sampler at 10 %, 25 %, 50 % and 100 % of the epochs: mean, min and max
# over seeds of the test error and lpd, and the MALA reference) and
# OUT/sbps-fig6.png.
# Usage: Rscript sbps-fig6.R BUILD OUT "SAMPLERS" "SEEDS" "MALA_SEEDS" EPOCHS
a <- commandArgs(TRUE); build <- a[1]; out <- a[2]
ss <- strsplit(a[3], " ")[[1]]; seeds <- strsplit(a[4], " ")[[1]]
mseeds <- strsplit(a[5], " ")[[1]]; epochs <- as.numeric(a[6])
rd <- function(s, seed) {
  f <- file.path(build, sprintf("fig6-%s-%s_metrics.csv", s, seed))
  if (!file.exists(f)) return(NULL)
  m <- read.csv(f, comment.char = "#")
  data.frame(sampler = s, seed = seed, passes = m$passes, draws = m$draws,
             test_error = 1 - m$accuracy, lpd = m$lpd, seconds = m$seconds)
}
res <- do.call(rbind, c(lapply(ss, function(s) do.call(rbind, lapply(seeds, function(k) rd(s, k)))),
                        lapply(mseeds, function(k) rd("mala", k))))
write.csv(res, file.path(out, "sbps-fig6-metrics.csv"), row.names = FALSE, quote = FALSE)
ref <- do.call(rbind, lapply(mseeds, function(k) { r <- res[res$sampler == "mala" & res$seed == k, ]; r[nrow(r), ] }))
cat(sprintf("MALA reference (%d chains, full data): test error %s, lpd %s\n", nrow(ref),
            paste(sprintf("%.4f", ref$test_error), collapse = " "), paste(sprintf("%.4f", ref$lpd), collapse = " ")))
ok <- res[res$sampler != "mala" & res$draws > 0, ]
# the evaluation nearest each fraction of the run, per seed
at <- function(o, frac) { i <- which.min(abs(o$passes - frac * epochs)); o[i, ] }
summ <- do.call(rbind, lapply(ss, function(s) do.call(rbind, lapply(c(0.1, 0.25, 0.5, 1), function(fr) {
  r <- do.call(rbind, lapply(seeds, function(k) { o <- ok[ok$sampler == s & ok$seed == k, ]; if (nrow(o)) at(o, fr) }))
  if (is.null(r)) return(NULL)
  data.frame(sampler = s, fraction = fr, passes = round(mean(r$passes)), seeds = nrow(r),
             error_mean = mean(r$test_error), error_min = min(r$test_error), error_max = max(r$test_error),
             lpd_mean = mean(r$lpd), lpd_min = min(r$lpd), lpd_max = max(r$lpd),
             cpu_s_mean = mean(r$seconds))
}))))
summ <- rbind(summ, data.frame(sampler = "mala", fraction = 1, passes = round(mean(ref$passes)), seeds = nrow(ref),
  error_mean = mean(ref$test_error), error_min = min(ref$test_error), error_max = max(ref$test_error),
  lpd_mean = mean(ref$lpd), lpd_min = min(ref$lpd), lpd_max = max(ref$lpd), cpu_s_mean = mean(ref$seconds)))
write.csv(format(summ, digits = 4), file.path(out, "sbps-fig6-summary.csv"), row.names = FALSE, quote = FALSE)
print(summ, digits = 4, row.names = FALSE)
cols <- c(sbps = "black", psbps = "grey50", sgld = "orange", msgnht = "purple")
png(file.path(out, "sbps-fig6.png"), width = 1150, height = 480, res = 110)
par(mfrow = c(1, 2), mar = c(4.2, 4.4, 2.2, 1))
band <- function(what, ylab, main, log) {
  yl <- range(c(ok[[what]], ref[[what]]), na.rm = TRUE)
  plot(NA, xlim = range(ok$passes), ylim = yl, log = log, xlab = "epochs (data passes)", ylab = ylab, main = main)
  rect(par("usr")[1], min(ref[[what]]), par("usr")[2], max(ref[[what]]), col = "#00800030", border = NA)
  abline(h = mean(ref[[what]]), col = "darkgreen", lwd = 2, lty = 2)
  for (s in ss) {
    o <- ok[ok$sampler == s, ]; if (!nrow(o)) next
    w <- reshape(o[, c("seed", "passes", what)], idvar = "passes", timevar = "seed", direction = "wide")
    w <- w[order(w$passes), ]; v <- as.matrix(w[, -1, drop = FALSE])
    lo <- apply(v, 1, min, na.rm = TRUE); hi <- apply(v, 1, max, na.rm = TRUE)
    polygon(c(w$passes, rev(w$passes)), c(lo, rev(hi)), col = adjustcolor(cols[s], 0.25), border = NA)
    lines(w$passes, rowMeans(v, na.rm = TRUE), col = cols[s], lwd = 2)
  }
  legend(if (what == "lpd") "bottomright" else "topright", c(ss, "MALA (MH) reference"),
         col = c(cols[ss], "darkgreen"), lwd = 2, lty = c(rep(1, length(ss)), 2), bty = "n", cex = 0.8)
}
band("test_error", "test error (posterior predictive)", "Fig. 6 stand-in: 7x7 Fashion-MNIST, 4 classes", "")
band("lpd", "test log predictive density per image", sprintf("mean and range over %d seeds", length(seeds)), "")
invisible(dev.off())
