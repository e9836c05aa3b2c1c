# fig72.R: the figure of section 7.2 from the runs fig72.sh made.  Writes
# results/fig72-rmse.csv (passes, r/b, estimator, RMSE over runs) and
# results/fig72.png, and prints the reference values and a summary.
args <- commandArgs(TRUE)
K <- if (length(args) > 0) as.integer(args[1]) else 20
PASSES <- if (length(args) > 1) as.numeric(args[2]) else 6000
lap <- read.csv("laplace.csv", row.names = 1)
d <- ncol(lap)
what <- 1                                       # w.1
w1hat <- as.numeric(lap["mode", what])
E <- t(as.matrix(lap[-(1:2), ])); ev <- as.numeric(lap["eigenvalue", ])
b <- sqrt(sum(E[what, ]^2 * ev))                # Laplace sd of w.1
N <- nrow(read.csv("lr20.csv"))
burn <- 1500                                    # data passes discarded

read_seg <- function(f) {
  s <- read.csv(f, comment.char = "#")
  data.frame(t = s$time__, T = s$duration__, x = s[[paste0("x0.", what, "__")]],
             v = s[[paste0("v.", what, "__")]], passes = s$grads__ / N)
}
# Exact integral of sin((x + v s - w1hat)/r) over s in [0, T], per segment.
seg_int <- function(s, r) {
  a <- (s$x - w1hat) / r; u <- s$v / r
  ifelse(abs(u * s$T) < 1e-8, sin(a) * s$T, (cos(a) - cos(a + u * s$T)) / u)
}
# Points of the path at times t (t within the skeleton's span).
path_at <- function(s, t) {
  j <- findInterval(t, s$t)
  s$x[j] + s$v[j] * (t - s$t[j])
}

refs <- read.csv("results/reference.csv")
rs <- c(1, 1e-2)
ref <- refs$estimate[2:3]
cat(sprintf("w1hat = %.4f, b = %.4f\n", w1hat, b))
cat(sprintf("reference (importance sampling), r/b = 1: %.4f +- %.4f; r/b = 1e-2: %.4f +- %.4f\n",
            ref[1], refs$se[2], ref[2], refs$se[3]))
if (file.exists("runs/fig72-bps.csv")) {
  bs <- read_seg("runs/fig72-bps.csv")
  g <- cut(cumsum(bs$T), 25)
  for (ri in 1:2) {
    I <- seg_int(bs, rs[ri] * b)
    bm <- tapply(I, g, sum) / tapply(bs$T, g, sum)
    cat(sprintf("bps cross-check, r/b = %g: %.4f +- %.4f (trajectory time %.0f, 25 batch means)\n",
                rs[ri], sum(I) / sum(bs$T), sd(bm) / 5, sum(bs$T)))
  }
}

# The draws drift wrote are the skeleton's points at multiples of --thin.
s1 <- read_seg("runs/fig72-sbps-1.csv")
dr <- read.csv("runs/fig72-draws-1.csv", comment.char = "#")
tt <- 0.1 * (seq_len(nrow(dr)) - 1)
ok <- tt < max(s1$t + s1$T)
gap <- max(abs(dr[[paste0("w.", what)]][ok] - path_at(s1, tt[ok])))
cat(sprintf("draws vs skeleton: largest difference %.2g over %d draws\n", gap, sum(ok)))
stopifnot(gap < 1e-6)

checkpoints <- burn + c(100, 200, 500, 1000, 2000, PASSES - burn)
rows <- list()
est <- array(NA, c(K, length(checkpoints), 2, 2))   # run, checkpoint, r, estimator
dts <- numeric(K)
for (k in 1:K) {
  s <- read_seg(sprintf("runs/fig72-sbps-%d.csv", k))
  s <- s[s$passes > burn, ]
  t0 <- s$t[1]
  dt <- mean(s$T); dts[k] <- dt                      # one draw per segment, on average
  tg <- seq(t0, max(s$t + s$T), by = dt)
  xg <- path_at(s, tg)
  # data passes reached at each grid time: those of the segment holding it
  pg <- s$passes[findInterval(tg, s$t)]
  for (ri in 1:2) {
    r <- rs[ri] * b
    I <- cumsum(seg_int(s, r)); Tc <- cumsum(s$T)
    fd <- cumsum(sin((xg - w1hat) / r)) / seq_along(xg)
    for (ci in seq_along(checkpoints)) {
      c <- checkpoints[ci]
      js <- which(s$passes <= c); jg <- which(pg <= c)
      if (!length(js) || !length(jg)) next
      est[k, ci, ri, 1] <- fd[max(jg)]
      est[k, ci, ri, 2] <- I[max(js)] / Tc[max(js)]
    }
  }
}
for (ri in 1:2) for (ei in 1:2) for (ci in seq_along(checkpoints)) {
  e <- est[, ci, ri, ei]
  rows[[length(rows) + 1]] <- data.frame(
    passes_after_burnin = checkpoints[ci] - burn, r_over_b = rs[ri],
    estimator = c("discrete", "trajectory")[ei],
    rmse = sqrt(mean((e - ref[ri])^2, na.rm = TRUE)),
    mean = mean(e, na.rm = TRUE), runs = sum(!is.na(e)))
}
out <- do.call(rbind, rows)
write.csv(out, "results/fig72-rmse.csv", row.names = FALSE, quote = FALSE)
cat(sprintf("draw spacing (mean segment duration): %.4f time units\n", mean(dts)))
print(out, digits = 3, row.names = FALSE)
png("results/fig72.png", width = 1100, height = 480, res = 110)
par(mfrow = c(1, 2), mar = c(4.2, 4.2, 2, 1))
for (ri in 1:2) {
  o <- out[out$r_over_b == rs[ri], ]
  plot(NA, xlim = range(checkpoints - burn), ylim = range(o$rmse, na.rm = TRUE),
       log = "xy", xlab = "data passes after burn-in", ylab = "RMSE over runs",
       main = sprintf("7.2: E[sin((w1 - w1hat)/r)], r/b = %g", rs[ri]))
  with(o[o$estimator == "discrete", ], lines(passes_after_burnin, rmse, type = "b", col = "blue"))
  with(o[o$estimator == "trajectory", ], lines(passes_after_burnin, rmse, type = "b", col = "red"))
  legend("topright", c("discrete draws", "trajectory"), col = c("blue", "red"),
         lwd = 1, bty = "n")
}
invisible(dev.off())
