# fig1-paper.R: the numbers and the figure of fig1-paper.sh from its runs
# (runs/fig1-paper-SAMPLER-SEED.csv, trajectory segments) against the grid
# reference of fig1-paper-data.R.  Per run, after a burn-in of the first
# 10% of trajectory time:
#   mean and sd of each coordinate from the exact integrals along the
#     segments, as (mean - reference mean) / reference sd and sd / reference
#     sd;
#   draws read off the trajectory every DT time units: their KS distance to
#     the reference marginal, ESS (posterior's ess_basic) per 1000 data
#     passes, ACF against the lag in data passes; the KS distance of
#     correlated draws shrinks as 1/sqrt(ESS), so a sampler that mixes
#     worse has a larger one even when its target is right: KS * sqrt(ESS)
#     (about 0.87 on average for independent draws from the right
#     distribution) compares the samplers' targets apart from their mixing;
#   bounces: the rate per unit time, and the times between bounces.
# Intervals: mean over seeds +- t(0.975, seeds - 1) sd / sqrt(seeds).
# Writes results/fig1-paper-runs.csv (one row per run and coordinate),
# results/fig1-paper-summary.csv (per sampler and coordinate, with the
# intervals), results/fig1-paper-diff.csv (each sampler against exact bps
# with refresh 1, Welch intervals), results/fig1-paper-acf.csv and
# results/fig1-paper.png.
# Usage (from examples/pdmp): Rscript fig1-paper.R [seeds]
suppressMessages(library(posterior))
args <- commandArgs(TRUE); SEEDS <- if (length(args)) as.integer(args[1]) else 10
N <- nrow(read.csv("lr2.csv"))
DT <- 0.05; BURN <- 0.1
ref <- read.csv("results/fig1-paper-reference.csv")
grid <- readRDS("runs/fig1-paper-grid.rds")
cdfs <- list(approxfun(grid$g1, c(0, cumsum((grid$m1[-1] + grid$m1[-length(grid$m1)]) / 2 * diff(grid$g1))),
                       rule = 2),
             approxfun(grid$g2, c(0, cumsum((grid$m2[-1] + grid$m2[-length(grid$m2)]) / 2 * diff(grid$g2))),
                       rule = 2))
qfun <- function(k, p) {  # reference quantiles of coordinate k
  g <- if (k == 1) grid$g1 else grid$g2
  approx(cdfs[[k]](g), g, p, ties = "ordered")$y
}
samplers <- c("bps", "bps-r1", "sbps", "sbps-k10")
labels <- c(bps = "bps (exact, refresh 0)", "bps-r1" = "bps (exact, refresh 1)",
            sbps = "sbps k=3 (n=100)", "sbps-k10" = "sbps k=10 (n=100)")
cols <- c(bps = "black", "bps-r1" = "grey50", sbps = "red", "sbps-k10" = "blue")
ks <- function(x, F) {
  x <- sort(x); n <- length(x); u <- F(x)
  max(pmax(seq_len(n) / n - u, u - (seq_len(n) - 1) / n))
}
runs <- list(); acfs <- list(); draws1 <- list(); pooled <- list(); gaps <- list()
for (s in samplers) for (seed in seq_len(SEEDS)) {
  f <- sprintf("runs/fig1-paper-%s-%d.csv", s, seed)
  r <- read.csv(f, comment.char = "#")
  tend <- r$time__ + r$duration__; Ttot <- max(tend); t0 <- BURN * Ttot
  # Segments after the burn-in, the one that straddles it cut at t0.
  i0 <- findInterval(t0, r$time__)
  x0 <- cbind(r$x0_1__, r$x0_2__); v <- cbind(r$v_1__, r$v_2__)
  x0[i0, ] <- x0[i0, ] + v[i0, ] * (t0 - r$time__[i0])
  st <- r$time__; st[i0] <- t0
  keep <- i0:nrow(r); dur <- tend[keep] - st[keep]
  passes <- (r$grads__[nrow(r)] - r$grads__[i0]) / N
  bounce_end <- tend[which(diff(c(0, r$bounces__)) > 0)]
  bt <- bounce_end[bounce_end > t0]
  gaps[[paste(s, seed)]] <- data.frame(sampler = s, gap = diff(bt))
  # Draws every DT along the trajectory.
  tt <- seq(t0, Ttot, by = DT)
  j <- findInterval(tt, r$time__)
  D <- x0[j, ] + v[j, ] * (tt - st[j])
  if (seed == 1) draws1[[s]] <- D
  pooled[[s]] <- rbind(pooled[[s]], D)
  pp <- passes / (Ttot - t0) * DT      # data passes per draw
  for (k in 1:2) {
    a <- x0[keep, k]; b <- v[keep, k]
    S1 <- sum(a * dur + b * dur^2 / 2)
    S2 <- sum(a^2 * dur + a * b * dur^2 + b^2 * dur^3 / 3)
    m <- S1 / sum(dur); sdv <- sqrt(S2 / sum(dur) - m^2)
    ac <- acf(D[, k], lag.max = floor(200 / pp), plot = FALSE)$acf[, 1, 1]
    acfs[[paste(s, seed, k)]] <- data.frame(sampler = s, seed = seed,
      coordinate = paste0("w.", k), lag = seq_along(ac) - 1, pp = pp, acf = ac)
    runs[[paste(s, seed, k)]] <- data.frame(
      sampler = s, seed = seed, coordinate = paste0("w.", k),
      mean = m, sd = sdv,
      mean_err_refsd = (m - ref$mean[k]) / ref$sd[k],
      sd_ratio = sdv / ref$sd[k],
      ks = ks(D[, k], cdfs[[k]]),
      ks_sqrt_ess = ks(D[, k], cdfs[[k]]) * sqrt(ess_basic(D[, k])),
      ess_per_1000_passes = 1000 * ess_basic(D[, k]) / passes,
      ess_per_unit_time = ess_basic(D[, k]) / (Ttot - t0),
      time_per_pass = (Ttot - t0) / passes,
      bounce_rate = length(bt) / (Ttot - t0),
      mean_gap = mean(diff(bt)),
      violation_frac = r$bound_violations__[nrow(r)] / max(1, r$proposals__[nrow(r)]),
      passes = passes, draws = nrow(D))
  }
}
R <- do.call(rbind, runs); rownames(R) <- NULL
ci <- function(x) { n <- length(x); h <- qt(0.975, n - 1) * sd(x) / sqrt(n)
  c(mean(x), mean(x) - h, mean(x) + h) }
vars <- c("mean_err_refsd", "sd_ratio", "ks", "ks_sqrt_ess", "ess_per_1000_passes", "ess_per_unit_time",
          "bounce_rate", "mean_gap", "time_per_pass", "violation_frac")
S <- list()
for (s in samplers) for (k in c("w.1", "w.2")) {
  x <- R[R$sampler == s & R$coordinate == k, ]
  row <- data.frame(sampler = s, coordinate = k, seeds = nrow(x))
  for (v in vars) { c3 <- ci(x[[v]]); row[[v]] <- c3[1]
    row[[paste0(v, "_lo")]] <- c3[2]; row[[paste0(v, "_hi")]] <- c3[3] }
  S[[paste(s, k)]] <- row
}
S <- do.call(rbind, S); rownames(S) <- NULL
# Differences against exact bps with refresh 1 (the exact sampler that
# mixes; without refreshment bps strays on some seeds); the runs are
# independent, so the interval is Welch's.
diffs <- list()
for (s in c("sbps", "sbps-k10", "bps")) for (k in c("w.1", "w.2"))
  for (v in c("mean_err_refsd", "sd_ratio", "ks", "ks_sqrt_ess", "ess_per_1000_passes",
              "ess_per_unit_time")) {
    a <- R[R$sampler == s & R$coordinate == k, v]
    b <- R[R$sampler == "bps-r1" & R$coordinate == k, v]
    tt <- t.test(a, b)
    diffs[[paste(s, k, v)]] <- data.frame(sampler = s, against = "bps-r1", coordinate = k,
      quantity = v, difference = mean(a) - mean(b), lo = tt$conf.int[1], hi = tt$conf.int[2],
      ratio = mean(a) / mean(b))
  }
Dd <- do.call(rbind, diffs); rownames(Dd) <- NULL
A <- do.call(rbind, acfs); rownames(A) <- NULL
# Mean ACF over seeds at each lag in draws; its lag in data passes is the
# lag in draws times the sampler's mean passes per draw over seeds.
Am <- aggregate(cbind(acf, pp) ~ sampler + coordinate + lag, data = A, FUN = mean)
Am$lag_passes <- Am$lag * Am$pp
Am <- Am[order(Am$sampler, Am$coordinate, Am$lag), c("sampler", "coordinate", "lag_passes", "acf")]
write.csv(R, "results/fig1-paper-runs.csv", row.names = FALSE, quote = FALSE)
write.csv(rbind(cbind(S, stringsAsFactors = FALSE)), "results/fig1-paper-summary.csv",
          row.names = FALSE, quote = FALSE)
write.csv(Dd, "results/fig1-paper-diff.csv", row.names = FALSE, quote = FALSE)
write.csv(Am[Am$lag_passes <= 200, ], "results/fig1-paper-acf.csv", row.names = FALSE, quote = FALSE)
options(width = 200)
print(S[, c("sampler", "coordinate", "mean_err_refsd", "mean_err_refsd_lo", "mean_err_refsd_hi",
            "sd_ratio", "sd_ratio_lo", "sd_ratio_hi", "ks", "ks_lo", "ks_hi",
            "ks_sqrt_ess", "ks_sqrt_ess_lo", "ks_sqrt_ess_hi")], digits = 3)
print(S[, c("sampler", "coordinate", "ess_per_1000_passes", "ess_per_1000_passes_lo",
            "ess_per_1000_passes_hi", "ess_per_unit_time", "bounce_rate", "mean_gap", "time_per_pass",
            "violation_frac")], digits = 3)
print(Dd, digits = 3)
cat(sprintf("reference bounce rate of exact BPS without refreshment: %.3f per unit time\n",
            ref$bounce_rate[1]))

png("results/fig1-paper.png", width = 1500, height = 960, res = 110)
par(mfrow = c(2, 3), mar = c(4.2, 4.2, 2.2, 1))
# 1: draws (seed 1, 1500 of each) over the reference contours.
# Levels exp(-a^2/2) of the maximum: a = 1, 2, 3 sd for a Gaussian.
contour(grid$g1, grid$g2, grid$dens, levels = max(grid$dens) * exp(-c(9, 4, 1) / 2),
        drawlabels = FALSE, col = "darkgreen", lwd = 2,
        xlim = ref$mean[1] + c(-4, 4) * ref$sd[1], ylim = ref$mean[2] + c(-4, 4) * ref$sd[2],
        xlab = "w.1", ylab = "w.2", main = "draws (seed 1) over the reference")
for (s in c("bps", "sbps")) {
  Dd1 <- draws1[[s]]; i <- round(seq(1, nrow(Dd1), length.out = 1500))
  points(Dd1[i, ], pch = 16, cex = 0.3, col = adjustcolor(cols[s], 0.5))
}
contour(grid$g1, grid$g2, grid$dens, levels = max(grid$dens) * exp(-c(9, 4, 1) / 2),
        drawlabels = FALSE, col = "darkgreen", lwd = 2, add = TRUE)
legend("topright", c("reference (1, 2, 3 sd)", labels[c("bps", "sbps")]),
       col = c("darkgreen", cols[c("bps", "sbps")]), pch = c(NA, 16, 16), lty = c(1, NA, NA),
       bty = "n", cex = 0.85)
# 2, 3: QQ-plots of the pooled draws against the reference.
p <- c(0.001, 0.005, seq(0.01, 0.99, by = 0.01), 0.995, 0.999)
for (k in 1:2) {
  rq <- qfun(k, p); z <- (rq - ref$mean[k]) / ref$sd[k]
  plot(NA, xlim = range(z), ylim = range(z) * 1.1,
       xlab = paste0("reference quantile of w.", k, " (in reference sds)"),
       ylab = "sampler's quantile (same units)",
       main = sprintf("QQ-plot, w.%d (%d seeds pooled)", k, SEEDS))
  abline(0, 1, col = "darkgreen", lwd = 2)
  for (s in samplers) {
    sq <- (quantile(pooled[[s]][, k], p) - ref$mean[k]) / ref$sd[k]
    points(z, sq, col = cols[s], pch = 1, cex = 0.6)
  }
  legend("topleft", labels, col = cols, pch = 1, bty = "n", cex = 0.85)
}
# 4: times between bounces.
G <- do.call(rbind, gaps)
br <- seq(0, max(G$gap) + 0.02, by = 0.01)
plot(NA, xlim = c(0, 0.8), ylim = c(0.01, 60), log = "y", xlab = "time between bounces",
     ylab = "density", main = sprintf("times between bounces (%d seeds)", SEEDS))
for (s in samplers) {
  h <- hist(G$gap[G$sampler == s], breaks = br, plot = FALSE)
  ok <- h$density > 0
  lines(h$mids[ok], h$density[ok], col = cols[s], type = "s")
}
legend("topright", c(sprintf("%s: %.2f bounces per unit time", labels,
                             S$bounce_rate[match(samplers, S$sampler)]),
                     sprintf("reference, exact BPS: %.2f", ref$bounce_rate[1])),
       col = c(cols, NA), lwd = 1, bty = "n", cex = 0.8)
# 5, 6: ACFs against data passes.
for (k in c("w.1", "w.2")) {
  plot(NA, xlim = c(0, 100), ylim = c(-0.4, 1), xlab = "lag (data passes)", ylab = "ACF",
       main = paste("ACF of", k, "(mean over seeds)"))
  abline(h = 0, col = "grey")
  for (s in samplers) with(Am[Am$sampler == s & Am$coordinate == k, ],
                           lines(lag_passes, acf, col = cols[s]))
  legend("topright", labels, col = cols, lwd = 1, bty = "n", cex = 0.85)
}
invisible(dev.off())
