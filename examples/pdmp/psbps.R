# psbps.R: ESS per 1000 data passes of sbps and psbps in the two regimes of
# psbps.sh.  Writes results/psbps.csv and results/psbps.png.
suppressMessages(library(posterior))
args <- commandArgs(TRUE); RUNS <- if (length(args)) as.integer(args[1]) else 4
N <- 1000; d <- 20
rows <- list(); acfs <- list()
for (regime in c("aniso", "rot")) {
  lap <- read.csv(sprintf("runs/psbps-%s-laplace.csv", regime), row.names = 1)
  mode <- as.numeric(lap["mode", ]); E <- t(as.matrix(lap[-(1:3), ]))
  nu <- do.call(rbind, lapply(Sys.glob(sprintf("runs/psbps-%s-nuts_*.csv", regime)),
                              read.csv, comment.char = "#"))
  nuts_sd_w1 <- sd(nu$w.1)
  for (sampler in c("sbps", "psbps")) for (k in 1:RUNS) {
    r <- read.csv(sprintf("runs/psbps-%s-%s-%d.csv", regime, sampler, k), comment.char = "#")
    W <- as.matrix(r[, paste0("w.", 1:d)]); passes <- r$grads__ / N
    keep <- passes > max(passes) / 5
    W <- W[keep, ]; span <- diff(range(passes[keep])) / 1000
    ess <- apply(W, 2, ess_bulk) / span
    pr <- sweep(W, 2, mode) %*% E[, c(1, d)]
    rows[[length(rows) + 1]] <- data.frame(
      regime = regime, sampler = sampler, run = k,
      ess_w1 = ess[1], ess_min_coord = min(ess), ess_median_coord = median(ess),
      ess_largest_dir = ess_bulk(pr[, 1]) / span, ess_smallest_dir = ess_bulk(pr[, 2]) / span,
      sd_w1 = sd(W[, 1]), nuts_sd_w1 = nuts_sd_w1, laplace_sd_w1 = as.numeric(lap["sd", 1]),
      bounces_per_pass = max(r$bounces__) / max(passes))
    if (k == 1) {
      pp <- mean(diff(passes[keep]))
      a <- acf(W[, 1], lag.max = min(nrow(W) - 1, ceiling(400 / pp)), plot = FALSE)$acf[, 1, 1]
      acfs[[paste(regime, sampler)]] <- data.frame(
        regime = regime, sampler = sampler,
        lag_passes = (seq_along(a) - 1) * pp, acf = a)
    }
  }
}
res <- do.call(rbind, rows); rownames(res) <- NULL
write.csv(res, "results/psbps.csv", row.names = FALSE, quote = FALSE)
agg <- aggregate(cbind(ess_w1, ess_min_coord, ess_median_coord, ess_largest_dir,
                       ess_smallest_dir, sd_w1, nuts_sd_w1, laplace_sd_w1) ~ regime + sampler, res, mean)
print(agg, digits = 3)
for (regime in c("aniso", "rot")) {
  a <- agg[agg$regime == regime, ]
  cat(sprintf("%s: psbps/sbps ESS per pass, w.1 %.2f, slowest coordinate %.2f, largest direction %.2f\n",
              regime, a$ess_w1[a$sampler == "psbps"] / a$ess_w1[a$sampler == "sbps"],
              a$ess_min_coord[a$sampler == "psbps"] / a$ess_min_coord[a$sampler == "sbps"],
              a$ess_largest_dir[a$sampler == "psbps"] / a$ess_largest_dir[a$sampler == "sbps"]))
}
ac <- do.call(rbind, acfs)
png("results/psbps.png", width = 1100, height = 480, res = 110)
par(mfrow = c(1, 2), mar = c(4.2, 4.2, 2, 1))
for (regime in c("aniso", "rot")) {
  o <- ac[ac$regime == regime, ]
  plot(NA, xlim = c(0, min(400, max(o$lag_passes))), ylim = c(-1, 1), xlab = "lag (data passes)",
       ylab = "ACF of w.1",
       main = if (regime == "aniso") "authors' design: var x.1 = 1/500" else "section 7.1 data (rotated)")
  abline(h = 0, col = "grey")
  with(o[o$sampler == "sbps", ], lines(lag_passes, acf, col = "blue"))
  with(o[o$sampler == "psbps", ], lines(lag_passes, acf, col = "red"))
  a <- agg[agg$regime == regime, ]
  legend("topright", sprintf("%s: ESS(w.1)/1000 passes %.1f", a$sampler, a$ess_w1),
         col = c(psbps = "red", sbps = "blue")[a$sampler], lwd = 1, bty = "n")
}
invisible(dev.off())
