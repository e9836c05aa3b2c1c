# fig72.R: the figure of section 7.2 from the runs fig72.sh made.
# f(w) = sin((w.1 - w1hat)/r), w1hat the Laplace mode of w.1, and r a
# multiple of b, the mean length of a trajectory piece as the authors'
# code stores the trajectory: one piece per minibatch (per iteration of
# their sampler), so b = trajectory length / minibatches, measured here
# from the runs after burn-in (|v| = 1, refresh 0).  That is about 0.02,
# the paper's value; the distance between bounces is about 7 times
# longer (printed too; it was this script's b before).  Estimators of
# E[f]: the discrete one averages f at points of the path b apart (one per
# minibatch, as the authors' code places its discrete samples, every
# total time / iterations); the trajectory one integrates f exactly along
# each segment.  References: importance sampling (reference.R,
# independent of drift).  Writes results/fig72-rmse.csv (RMSE against
# passes for r/b = 1 and 1e-2), results/fig72-sweep.csv (RMSE of both
# estimators and their ratio for every r/b, with bootstrap intervals),
# results/fig72-b.csv (b and the other lengths) and results/fig72.png.
args <- commandArgs(TRUE)
K <- if (length(args) > 0) as.integer(args[1]) else 20
PASSES <- if (length(args) > 1) as.numeric(args[2]) else 6000
lap <- read.csv("laplace.csv", row.names = 1)
what <- 1                                       # w.1
w1hat <- as.numeric(lap["mode", what])
N <- nrow(read.csv("lr20.csv"))
burn <- min(1500, PASSES / 4)                   # data passes discarded
ratios <- c(1e-2, 3e-2, 0.1, 0.3, 1, 3, 10)     # r/b

read_seg <- function(f) {
  s <- read.csv(f, comment.char = "#")
  data.frame(t = s$time__, T = s$duration__, x = s[[sprintf("x0_%d__", what)]],
             v = s[[sprintf("v_%d__", what)]], passes = s$grads__ / N,
             bounces = s$bounces__, proposals = s$proposals__, speed = sqrt(rowSums(as.matrix(s[, grep("^v_", names(s))])^2)))
}
# Exact integral of sin((x + v s - w1hat)/r) over s in [0, T], per segment.
seg_int <- function(s, r) {
  a <- (s$x - w1hat) / r; u <- s$v / r
  ifelse(abs(u * s$T) < 1e-8, sin(a) * s$T, (cos(a) - cos(a + u * s$T)) / u)
}
path_at <- function(s, t) {
  j <- findInterval(t, s$t)
  s$x[j] + s$v[j] * (t - s$t[j])
}

header_value <- function(f, key) {               # "# key = value" in a run's header
  h <- grep(sprintf("^# %s = ", key), readLines(f, n = 200), value = TRUE)
  if (length(h)) sub(".* = *", "", h[1]) else NA
}
f1 <- "runs/fig72-sbps-1.csv"
batch <- as.numeric(header_value(f1, "batch"))
stopifnot(is.finite(batch), is.na(header_value(f1, "gradient")) ||
          header_value(f1, "gradient") == "plain")   # n rows per minibatch
runs <- lapply(1:K, function(k) read_seg(sprintf("runs/fig72-sbps-%d.csv", k)))
stopifnot(all(abs(unlist(lapply(runs, `[[`, "speed")) - 1) < 1e-9))
post <- lapply(runs, function(s) s[s$passes > burn, ])
len <- sapply(post, function(s) sum(s$T))
nb <- sapply(post, function(s) diff(range(s$bounces)))
nmb <- sapply(post, function(s) diff(range(s$passes)) * N / batch)   # minibatches
nprop <- sapply(post, function(s) diff(range(s$proposals)))
b <- sum(len) / sum(nmb)                        # trajectory length per minibatch
b_bounce <- sum(len) / sum(nb)                  # mean distance between bounces
seg_mean <- mean(sapply(post, function(s) mean(s$T)))
b_runs <- len / nmb
cat(sprintf("b (trajectory length per minibatch after burn-in, the authors' piece) = %.4f (runs: %.4f-%.4f)\n",
            b, min(b_runs), max(b_runs)))
b_prop <- sum(len) / sum(nprop)                # between proposals (observations that may bounce)
cat(sprintf("  between proposals %.4f; between bounces %.4f (%.1f b); drift's output pieces, which also end at window ends, average %.4f\n",
            b_prop, b_bounce, b_bounce / b, seg_mean))
write.csv(data.frame(quantity = c("b: trajectory length per minibatch", "length per proposal",
                                  "length per bounce", "mean output piece", "b, smallest run",
                                  "b, largest run", "minibatch size", "runs"),
                     value = c(b, b_prop, b_bounce, seg_mean, min(b_runs), max(b_runs), batch, K)),
          "results/fig72-b.csv", row.names = FALSE, quote = FALSE)

# References at every r by importance sampling (reference.R's weighted draws).
if (!file.exists("runs/reference-is.bin")) system("Rscript reference.R")
con <- file("runs/reference-is.bin", "rb"); n_is <- readBin(con, "double", 1)
is <- list(w1 = readBin(con, "double", n_is), w = readBin(con, "double", n_is)); close(con)
wn <- is$w / sum(is$w)
ref <- sapply(ratios, function(q) sum(wn * sin((is$w1 - w1hat) / (q * b))))
ref_se <- sapply(seq_along(ratios), function(i)
  sqrt(sum(wn^2 * (sin((is$w1 - w1hat) / (ratios[i] * b)) - ref[i])^2)))
cat("references (importance sampling, ESS", round(1 / sum(wn^2)), "):\n")
print(data.frame(r_over_b = ratios, r = ratios * b, reference = ref, se = ref_se), digits = 4)
if (file.exists("runs/fig72-bps.csv")) {
  bs <- read_seg("runs/fig72-bps.csv")
  g <- cut(cumsum(bs$T), 25)
  for (i in which(ratios %in% c(1e-2, 1))) {
    I <- seg_int(bs, ratios[i] * b)
    bm <- tapply(I, g, sum) / tapply(bs$T, g, sum)
    cat(sprintf("bps cross-check, r/b = %g: %.4f +- %.4f (reference %.4f)\n",
                ratios[i], sum(I) / sum(bs$T), sd(bm) / 5, ref[i]))
  }
}

# The draws drift writes are the skeleton's points at multiples of --thin.
dr <- read.csv("runs/fig72-draws-1.csv", comment.char = "#")
tt <- 0.1 * (seq_len(nrow(dr)) - 1)
ok <- tt < max(runs[[1]]$t + runs[[1]]$T)
gap <- max(abs(dr[[paste0("w.", what)]][ok] - path_at(runs[[1]], tt[ok])))
cat(sprintf("draws vs skeleton: largest difference %.2g over %d draws\n", gap, sum(ok)))
stopifnot(gap < 1e-6)

checkpoints <- burn + c(100, 200, 500, 1000, 2000, PASSES - burn)
checkpoints <- sort(unique(checkpoints[checkpoints <= PASSES]))
est <- array(NA, c(K, length(checkpoints), length(ratios), 2))
for (k in 1:K) {
  s <- post[[k]]
  tg <- seq(s$t[1], max(s$t + s$T), by = b)     # one point per mean segment length
  xg <- path_at(s, tg); pg <- s$passes[findInterval(tg, s$t)]
  Tc <- cumsum(s$T)
  for (ri in seq_along(ratios)) {
    r <- ratios[ri] * b
    I <- cumsum(seg_int(s, r))
    fd <- cumsum(sin((xg - w1hat) / r)) / seq_along(xg)
    for (ci in seq_along(checkpoints)) {
      js <- which(s$passes <= checkpoints[ci]); jg <- which(pg <= checkpoints[ci])
      if (!length(js) || !length(jg)) next
      est[k, ci, ri, 1] <- fd[max(jg)]
      est[k, ci, ri, 2] <- I[max(js)] / Tc[max(js)]
    }
  }
}
rmse <- function(e, r0) sqrt(mean((e - r0)^2, na.rm = TRUE))
rows <- list()
for (ri in seq_along(ratios)) for (ei in 1:2) for (ci in seq_along(checkpoints)) {
  e <- est[, ci, ri, ei]
  rows[[length(rows) + 1]] <- data.frame(
    passes_after_burnin = checkpoints[ci] - burn, r_over_b = ratios[ri],
    estimator = c("discrete", "trajectory")[ei], rmse = rmse(e, ref[ri]),
    mean = mean(e, na.rm = TRUE), runs = sum(!is.na(e)))
}
out <- do.call(rbind, rows)
write.csv(out[out$r_over_b %in% c(1, 1e-2), ], "results/fig72-rmse.csv",
          row.names = FALSE, quote = FALSE)
# The sweep at 500 passes after burn-in and at the full budget, with a
# 95% percentile bootstrap interval (over runs, 2000 resamples) of the ratio.
set.seed(72)
last <- length(checkpoints)
at <- unique(c(which(checkpoints - burn == 500), last))
sweep <- do.call(rbind, lapply(at, function(ci) do.call(rbind, lapply(seq_along(ratios), function(ri) {
  ed <- est[, ci, ri, 1]; et <- est[, ci, ri, 2]
  bt <- replicate(2000, { i <- sample(K, K, TRUE); rmse(ed[i], ref[ri]) / rmse(et[i], ref[ri]) })
  data.frame(passes_after_burnin = checkpoints[ci] - burn, r_over_b = ratios[ri],
             r = ratios[ri] * b, reference = ref[ri], reference_se = ref_se[ri],
             rmse_discrete = rmse(ed, ref[ri]), rmse_trajectory = rmse(et, ref[ri]),
             ratio = rmse(ed, ref[ri]) / rmse(et, ref[ri]),
             ratio_lo = unname(quantile(bt, 0.025)), ratio_hi = unname(quantile(bt, 0.975)))
}))))
write.csv(sweep, "results/fig72-sweep.csv", row.names = FALSE, quote = FALSE)
print(out[out$r_over_b %in% c(1, 1e-2), ], digits = 3, row.names = FALSE)
print(sweep, digits = 3, row.names = FALSE)

png("results/fig72.png", width = 1500, height = 480, res = 110)
par(mfrow = c(1, 3), mar = c(4.2, 4.2, 2, 1))
for (q in c(1, 1e-2)) {
  o <- out[out$r_over_b == q, ]
  plot(NA, xlim = range(checkpoints - burn), ylim = range(o$rmse, na.rm = TRUE),
       log = "xy", xlab = "data passes after burn-in", ylab = "RMSE over runs",
       main = sprintf("7.2: E[sin((w1 - w1hat)/r)], r/b = %g", q))
  with(o[o$estimator == "discrete", ], lines(passes_after_burnin, rmse, type = "b", col = "blue"))
  with(o[o$estimator == "trajectory", ], lines(passes_after_burnin, rmse, type = "b", col = "red"))
  legend("topright", c("discrete (one point per minibatch, b apart)", "trajectory"),
         col = c("blue", "red"), lwd = 1, bty = "n")
}
plot(NA, xlim = range(ratios), ylim = range(c(0.8, sweep$ratio_lo, sweep$ratio_hi)), log = "xy",
     xlab = sprintf("r / b (b = %.4f, trajectory length per minibatch)", b), ylab = "RMSE discrete / RMSE trajectory",
     main = "r/b sweep (95% bootstrap intervals over runs)")
abline(h = 1, col = "grey")
sc <- c("darkgreen", "black")
for (i in seq_along(at)) {
  o <- sweep[sweep$passes_after_burnin == checkpoints[at[i]] - burn, ]
  x <- o$r_over_b * (1 + 0.06 * (i - 1.5))
  lines(x, o$ratio, type = "b", col = sc[i], pch = 19)
  arrows(x, o$ratio_lo, x, o$ratio_hi, angle = 90, code = 3, length = 0.03, col = sc[i])
}
legend("topright", sprintf("%g passes after burn-in", checkpoints[at] - burn), col = sc[seq_along(at)],
       lwd = 1, pch = 19, bty = "n")
invisible(dev.off())
