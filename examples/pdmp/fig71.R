# fig71.R: the figures of section 7.1 from the runs fig71.sh made.
# Writes results/fig71-nll.csv (passes, NLL per datum, per sampler),
# results/fig71-laplace.csv (the Laplace band), results/fig71-acf.csv
# (lag in data passes, ACF, per sampler and direction),
# results/fig71-summary.csv, results/fig71-cpu.csv (each run's CPU seconds,
# from fig71.sh's runs/fig71-NAME.time) and results/fig71.png.  The
# CPU-time panel (the paper's inset) spreads a run's CPU time evenly over
# its data passes: the time of the draw after p of P passes is p / P of the
# run's user + system seconds, which includes reading the data and writing
# the draws.
suppressMessages(library(posterior))
df <- read.csv("lr20.csv"); y <- df$y; X <- as.matrix(df[, -1])
N <- nrow(X); d <- ncol(X)
lap <- read.csv("laplace.csv", row.names = 1)
mode <- as.numeric(lap["mode", ]); ev <- as.numeric(lap["eigenvalue", ])
E <- t(as.matrix(lap[-(1:2), ]))        # columns: eigenvectors, largest first
emax <- E[, 1]; emin <- E[, d]
nll <- function(W) {                    # W: draws x d; NLL per datum of each
  out <- numeric(nrow(W))
  for (s in split(seq_len(nrow(W)), ceiling(seq_len(nrow(W)) / 2000))) {
    eta <- X %*% t(W[s, , drop = FALSE])
    out[s] <- colMeans(log1p(exp(eta)) - y * eta)
  }
  out
}
# The Laplace approximation's band: NLL per datum of 20000 of its draws.
set.seed(1)
S <- E %*% diag(ev) %*% t(E)
Z <- matrix(rnorm(20000 * d), 20000, d) %*% chol(S)
lnll <- nll(sweep(Z, 2, mode, "+"))
band <- quantile(lnll, c(0.025, 0.5, 0.975))
write.csv(data.frame(q = c("2.5%", "50%", "97.5%"), nll = as.numeric(band)),
          "results/fig71-laplace.csv", row.names = FALSE, quote = FALSE)
files <- Sys.glob("runs/fig71-*.csv")
traces <- list(); acfs <- list(); summ <- list(); cpu <- list()
for (f in files) {
  name <- sub("runs/fig71-(.*)\\.csv", "\\1", f)
  r <- read.csv(f, comment.char = "#")
  W <- as.matrix(r[, paste0("w.", 1:d)])
  passes <- r$grads__ / N
  v <- nll(W)
  keep <- unique(round(seq(1, nrow(r), length.out = min(nrow(r), 2000))))
  tf <- sub("\\.csv$", ".time", f); lf <- sub("\\.csv$", ".log", f)
  tm <- if (file.exists(tf)) scan(tf, quiet = TRUE, nlines = 1) else rep(NA, 3)
  lg <- if (file.exists(lf)) grep("draws in", readLines(lf), value = TRUE) else character(0)
  ds <- if (length(lg)) as.numeric(sub(".* draws in ([0-9.eE+-]+) s.*", "\\1", lg[1])) else NA
  cpu[[name]] <- data.frame(sampler = name, passes = max(passes), draws = nrow(r),
                            user_s = tm[1], sys_s = tm[2], cpu_s = tm[1] + tm[2],
                            wall_s = tm[3], drift_sampling_s = ds,
                            cpu_ms_per_pass = 1000 * (tm[1] + tm[2]) / max(passes))
  traces[[name]] <- data.frame(sampler = name, passes = passes[keep],
                               cpu_s = passes[keep] / max(passes) * (tm[1] + tm[2]),
                               nll = v[keep])
  burn <- passes > max(passes) / 4       # the last three quarters
  pp <- mean(diff(passes[burn]))          # data passes per draw
  lagmax <- min(floor(2000 / pp), floor(sum(burn) / 2))
  for (dir in c("largest", "smallest")) {
    e <- if (dir == "largest") emax else emin
    p <- as.vector(sweep(W[burn, ], 2, mode) %*% e)
    a <- acf(p, lag.max = lagmax, plot = FALSE)$acf[, 1, 1]
    lags <- (seq_along(a) - 1) * pp
    # The CSV keeps every lag up to 200 passes, then one per 10 passes.
    keepl <- lags <= 200 | c(TRUE, diff(floor(lags / 10)) > 0)
    acfs[[paste(name, dir)]] <- data.frame(sampler = name, direction = dir,
                                           lag_passes = lags[keepl],
                                           acf = a[keepl])
    first <- which(a < 0.1)[1]
    summ[[paste(name, dir)]] <- data.frame(
      sampler = name, direction = dir,
      sd = sd(p), laplace_sd = sqrt(if (dir == "largest") ev[1] else ev[d]),
      acf_below_0.1_after_passes = if (is.na(first)) NA else (first - 1) * pp,
      ess_per_1000_passes = 1000 * ess_basic(p) / (max(passes[burn]) - min(passes[burn])),
      ess_per_cpu_s = ess_basic(p) / ((max(passes[burn]) - min(passes[burn])) / max(passes) * (tm[1] + tm[2])))
  }
  summ[[paste(name, "nll")]] <- data.frame(
    sampler = name, direction = "nll", sd = sd(v[burn]), laplace_sd = sd(lnll),
    acf_below_0.1_after_passes = NA, ess_per_1000_passes = NA, ess_per_cpu_s = NA)
  cat(sprintf("%-10s mean NLL/datum over the last 3/4: %.4f (Laplace median %.4f, 95%% band %.4f-%.4f)\n",
              name, mean(v[burn]), band[2], band[1], band[3]))
}
tr <- do.call(rbind, traces); ac <- do.call(rbind, acfs); sm <- do.call(rbind, summ)
rownames(sm) <- NULL
write.csv(tr, "results/fig71-nll.csv", row.names = FALSE, quote = FALSE)
write.csv(ac, "results/fig71-acf.csv", row.names = FALSE, quote = FALSE)
write.csv(sm, "results/fig71-summary.csv", row.names = FALSE, quote = FALSE)
print(sm, digits = 3)
cp <- do.call(rbind, cpu); rownames(cp) <- NULL
write.csv(cp, "results/fig71-cpu.csv", row.names = FALSE, quote = FALSE)
print(cp, digits = 3)
png("results/fig71.png", width = 2000, height = 480, res = 110)
par(mfrow = c(1, 4), mar = c(4.2, 4.2, 2, 1))
cols <- setNames(c("black", "red", "blue", "darkgreen", "orange", "purple")[seq_along(files)],
                 names(traces))
plot(NA, xlim = c(1, max(tr$passes)), ylim = c(band[1] * 0.9, max(0.7, band[3] * 3)),
     log = "xy", xlab = "data passes", ylab = "NLL per datum", main = "7.1: NLL")
rect(1e-9, band[1], 1e9, band[3], col = "grey85", border = NA)
for (n in names(traces)) with(traces[[n]], lines(pmax(passes, 1), nll, col = cols[n]))
legend("topright", names(traces), col = cols, lwd = 1, bty = "n")
if (all(is.finite(tr$cpu_s))) {
  plot(NA, xlim = c(max(1e-3, min(tr$cpu_s[tr$cpu_s > 0])), max(tr$cpu_s)),
       ylim = c(band[1] * 0.9, max(0.7, band[3] * 3)), log = "xy",
       xlab = "CPU seconds (run's total spread evenly over its passes)",
       ylab = "NLL per datum", main = "7.1: NLL against CPU time")
  rect(1e-9, band[1], 1e9, band[3], col = "grey85", border = NA)
  for (n in names(traces)) with(traces[[n]][traces[[n]]$cpu_s > 0, ], lines(cpu_s, nll, col = cols[n]))
} else plot.new()
for (dir in c("largest", "smallest")) {
  plot(NA, xlim = c(0, 200), ylim = c(-1, 1), xlab = "lag (data passes)",
       ylab = "ACF", main = paste("ACF,", dir, "eigen-direction"))
  abline(h = 0, col = "grey")
  for (n in names(traces)) with(ac[ac$sampler == n & ac$direction == dir &
                                   ac$lag_passes <= 200, ],
                                lines(lag_passes, acf, col = cols[n]))
}
invisible(dev.off())
