# fig1.R: analysis of fig1.sh's runs (the noise of the bounce rate).
starts <- c("mode", "draw1", "draw2"); ns <- c(10, 100, 500)
N <- 1000
skew <- function(z) mean((z - mean(z))^3) / sd(z)^3
exkurt <- function(z) mean((z - mean(z))^4) / sd(z)^4 - 3
per_t <- list(); summ <- list(); Z <- list()
for (s in starts) for (n in ns) {
  d <- read.csv(sprintf("runs/fig1-%s-n%d.csv", s, n), comment.char = "#")
  g <- split(d, d$t__)
  pt <- do.call(rbind, lapply(g, function(x) data.frame(
    start = s, n = n, t = x$t__[1], full = x$full__[1], est_mean = mean(x$batch__),
    est_sd = sd(x$batch__), model_sd = x$rowsd__[1] / sqrt(n), reps = nrow(x),
    skew = skew(x$batch__), exkurt = exkurt(x$batch__))))
  per_t[[paste(s, n)]] <- pt
  z <- (d$batch__ - d$full__) / (d$rowsd__ / sqrt(n))
  Z[[paste(s, n)]] <- z
  # Linearity of G over windows one mean segment length long (b = 0.13,
  # fig72.R): the largest deviation from the chord, over the rate's range.
  b <- 0.13
  win <- sapply(seq(0, 1 - b, by = 0.02), function(t0) {
    o <- pt[pt$t >= t0 - 1e-9 & pt$t <= t0 + b + 1e-9, ]
    f <- lm(full ~ t, o); max(abs(resid(f))) / mean(o$model_sd)
  })
  summ[[paste(s, n)]] <- data.frame(
    start = s, n = n,
    bias_in_se = max(abs(pt$est_mean - pt$full) / (pt$est_sd / sqrt(pt$reps))),
    sd_over_model = mean(pt$est_sd / pt$model_sd),
    sd_variation_in_b = max(sapply(seq(0, 1 - b, by = 0.02), function(t0) {
      o <- pt[pt$t >= t0 - 1e-9 & pt$t <= t0 + b + 1e-9, ]; max(o$model_sd) / min(o$model_sd) })),
    skewness = skew(z), excess_kurtosis = exkurt(z),
    ks_distance = unname(suppressWarnings(ks.test(z, "pnorm")$statistic)),
    nonlinearity_in_b_over_noise_sd = max(win),
    G_range = diff(range(pt$full)))
}
pt <- do.call(rbind, per_t); sm <- do.call(rbind, summ); rownames(sm) <- NULL
write.csv(pt, "results/fig1.csv", row.names = FALSE, quote = FALSE)
write.csv(sm, "results/fig1-summary.csv", row.names = FALSE, quote = FALSE)
print(sm, digits = 3)
png("results/fig1.png", width = 1500, height = 480, res = 110)
par(mfrow = c(1, 3), mar = c(4.2, 4.2, 2, 1))
d <- read.csv("runs/fig1-mode-n100.csv", comment.char = "#")
o <- pt[pt$start == "mode" & pt$n == 100, ]
set.seed(1); k <- sample(nrow(d), min(3000, nrow(d)))
plot(d$t__[k] + runif(length(k), -0.004, 0.004), d$batch__[k], pch = ".", col = "grey50",
     xlab = "t along the line (from the mode)", ylab = "v . grad U",
     main = "bounce rate G(t): exact and minibatch (n = 100)")
lines(o$t, o$full, lwd = 2)
lines(o$t, o$full + 3 * o$model_sd, lty = 2, col = "red"); lines(o$t, o$full - 3 * o$model_sd, lty = 2, col = "red")
abline(h = 0, col = "grey")
legend("topleft", c("exact G(t)", "minibatch estimates", "G +- 3 sd (per-row model)"),
       col = c("black", "grey50", "red"), lty = c(1, NA, 2), pch = c(NA, 16, NA), bty = "n", cex = 0.8)
qq <- function(z, col) { q <- qqnorm(sort(z)[round(seq(1, length(z), length.out = 2000))], plot.it = FALSE)
  points(q$x, q$y, col = col, pch = 20, cex = 0.5) }
plot(NA, xlim = c(-4.5, 4.5), ylim = c(-6, 6), xlab = "N(0, 1) quantiles",
     ylab = "standardised minibatch error", main = "noise against the Gaussian (all lines)")
abline(0, 1, col = "grey")
cols <- c("10" = "orange", "100" = "blue", "500" = "darkgreen")
for (n in ns) qq(unlist(Z[paste(starts, n)]), cols[as.character(n)])
legend("topleft", paste("n =", ns), col = cols, pch = 20, bty = "n")
plot(NA, xlim = c(0, 1), ylim = c(0, max(pt$est_sd[pt$n == 100]) * 1.1), xlab = "t along the line",
     ylab = "sd of the minibatch estimate (n = 100)", main = "noise sd: measured and per-row model")
lc <- c(mode = "black", draw1 = "red", draw2 = "blue")
for (s in starts) { o <- pt[pt$start == s & pt$n == 100, ]
  points(o$t, o$est_sd, col = lc[s], pch = 20); lines(o$t, o$model_sd, col = lc[s]) }
legend("bottomright", c(paste("line from", starts), "dots: measured, lines: N s / sqrt(n)"),
       col = c(lc, NA), pch = c(20, 20, 20, NA), bty = "n", cex = 0.8)
invisible(dev.off())
