# sbps-fig6.R: tables and figure of sbps-fig6.sh.
# Reads BUILD/fig6-S-SEED.csv (the draws, every one kept from the start) and
# BUILD/fig6-S-SEED_metrics.csv (drift's --test metrics), S = the samplers
# and the references mala and (where run) nuts.  For each draw it computes the test error and the test negative
# log-likelihood per image of that draw alone (the authors' code records the
# error of the current weights), placed at data passes = grads__ / N; draws
# are grouped in 60 log-spaced bins of passes (up to 10 draws a bin, evenly
# spread) and averaged within a bin.  The MALA reference is the mean of the
# same per-draw quantities over its post-warmup draws, one value per chain.
# Writes OUT/sbps-fig6-draws.csv (per bin and seed), OUT/sbps-fig6-metrics.csv
# (drift's posterior predictive over all draws so far), OUT/sbps-fig6-summary.csv
# and OUT/sbps-fig6.png.
# Usage: Rscript sbps-fig6.R BUILD OUT "SAMPLERS" "SEEDS" "MALA_SEEDS" EPOCHS ["NUTS_SEEDS"]
suppressMessages(library(data.table))
a <- commandArgs(TRUE); build <- a[1]; out <- a[2]
ss <- strsplit(a[3], " ")[[1]]; seeds <- strsplit(a[4], " ")[[1]]
mseeds <- strsplit(a[5], " ")[[1]]; epochs <- as.numeric(a[6])
nseeds <- if (length(a) > 6) strsplit(a[7], " ")[[1]] else character(0)
N <- 8340; H <- 3; K <- 4; D <- 49
te <- fread(file.path(build, "fig6-test.csv"))
X <- as.matrix(te[, paste0("x.", 1:D), with = FALSE]); y <- te$y
# test error and NLL per image of each row of the draws table d
score <- function(d) {
  W1n <- as.vector(outer(1:H, 1:D, function(h, j) sprintf("W1.%d.%d", h, j)))
  W2n <- as.vector(outer(1:K, 1:H, function(k, h) sprintf("W2.%d.%d", k, h)))
  t(sapply(seq_len(nrow(d)), function(i) {
    r <- d[i]
    W1 <- matrix(unlist(r[, W1n, with = FALSE]), H, D); b1 <- unlist(r[, paste0("b1.", 1:H), with = FALSE])
    W2 <- matrix(unlist(r[, W2n, with = FALSE]), K, H); b2 <- unlist(r[, paste0("b2.", 1:K), with = FALSE])
    A <- tanh(sweep(X %*% t(W1), 2, b1, "+"))
    L <- sweep(A %*% t(W2), 2, b2, "+")
    m <- apply(L, 1, max); lse <- m + log(rowSums(exp(L - m)))
    c(error = mean(max.col(L, ties.method = "first") != y), nll = mean(lse - L[cbind(seq_along(y), y)]))
  }))
}
rdraws <- function(s, seed) {
  f <- file.path(build, sprintf("fig6-%s-%s.csv", s, seed))
  if (!file.exists(f)) return(NULL)
  fread(cmd = sprintf("grep -v '^#' '%s'", f))
}
edges <- exp(seq(log(0.5), log(epochs * 1.001), length.out = 61))
binned <- do.call(rbind, lapply(ss, function(s) do.call(rbind, lapply(seeds, function(k) {
  d <- rdraws(s, k); if (is.null(d)) return(NULL)
  p <- d$grads__ / N; b <- findInterval(p, edges)
  do.call(rbind, lapply(sort(unique(b[b >= 1 & b <= 60])), function(j) {
    i <- which(b == j); i <- i[unique(round(seq(1, length(i), length.out = min(10, length(i)))))]
    sc <- score(d[i])
    data.frame(sampler = s, seed = k, bin = j, passes = mean(p[i]), draws = length(i),
               error = mean(sc[, "error"]), nll = mean(sc[, "nll"]))
  }))
}))))
fwrite(binned, file.path(out, "sbps-fig6-draws.csv"))
# the references: up to 300 post-warmup draws evenly spread (the files hold
# only post-warmup draws)
refstats <- function(name, sd) do.call(rbind, lapply(sd, function(k) {
  d <- rdraws(name, k); if (is.null(d)) return(NULL)
  i <- seq(1, nrow(d), by = max(1, nrow(d) %/% 300)); sc <- score(d[i])
  m <- read.csv(file.path(build, sprintf("fig6-%s-%s_metrics.csv", name, k)), comment.char = "#")
  h <- nrow(d) %/% 2
  data.frame(method = name, seed = k, draws = length(i), passes = max(d$grads__) / N,
             error = mean(sc[, "error"]), nll = mean(sc[, "nll"]),
             pp_error = 1 - tail(m$accuracy, 1), pp_lpd = tail(m$lpd, 1),
             lp_first_half = mean(d$lp__[1:h]), lp_second_half = mean(d$lp__[(h + 1):nrow(d)]),
             accept = mean(d$accept_stat__), stepsize = tail(d$stepsize__, 1))
}))
ref <- refstats("mala", mseeds)
nuts <- refstats("nuts", nseeds)
if (!is.null(nuts)) print(nuts, digits = 5, row.names = FALSE)
print(ref, digits = 5, row.names = FALSE)
# drift's posterior predictive over all draws so far
pp <- do.call(rbind, lapply(ss, function(s) do.call(rbind, lapply(seeds, function(k) {
  f <- file.path(build, sprintf("fig6-%s-%s_metrics.csv", s, k)); if (!file.exists(f)) return(NULL)
  m <- read.csv(f, comment.char = "#")
  data.frame(sampler = s, seed = k, passes = m$passes, seconds = m$seconds, draws = m$draws,
             pp_error = 1 - m$accuracy, pp_lpd = m$lpd)
}))))
write.csv(pp, file.path(out, "sbps-fig6-metrics.csv"), row.names = FALSE, quote = FALSE)
# summary: per sampler, the bins holding 1 %, 10 % and 100 % of the epochs
# (per-draw error and NLL: mean, min, max over seeds); the first pass at
# which the seed-mean per-draw error is within 0.01 of MALA's; the final
# posterior predictive error and lpd; CPU seconds of the run
refe <- mean(ref$error); refn <- mean(ref$nll)
summ <- do.call(rbind, lapply(ss, function(s) {
  o <- binned[binned$sampler == s, ]; if (!nrow(o)) return(NULL)
  mb <- aggregate(cbind(error, passes) ~ bin, o, mean)
  hit <- mb$passes[mb$error <= refe + 0.01]
  f <- pp[pp$sampler == s, ]; fin <- do.call(rbind, lapply(split(f, f$seed), function(z) z[nrow(z), ]))
  do.call(rbind, lapply(c(0.01, 0.1, 1), function(fr) {
    j <- findInterval(fr * epochs, edges); j <- min(max(j, 1), 60)
    r <- o[o$bin == j, ]
    data.frame(sampler = s, epochs_fraction = fr, passes = round(mean(r$passes), 1), seeds = nrow(r),
               error_mean = mean(r$error), error_min = min(r$error), error_max = max(r$error),
               nll_mean = mean(r$nll), nll_min = min(r$nll), nll_max = max(r$nll),
               first_pass_within_0.01_of_mala = if (length(hit)) round(min(hit), 1) else NA,
               final_pp_error_mean = mean(fin$pp_error), final_pp_error_min = min(fin$pp_error),
               final_pp_error_max = max(fin$pp_error), final_pp_lpd_mean = mean(fin$pp_lpd),
               final_pp_lpd_min = min(fin$pp_lpd), final_pp_lpd_max = max(fin$pp_lpd),
               cpu_s_mean = mean(fin$seconds))
  }))
}))
refrow <- function(r) if (!is.null(r)) data.frame(sampler = r$method[1], epochs_fraction = 1,
  passes = round(mean(r$passes), 1), seeds = nrow(r), error_mean = mean(r$error), error_min = min(r$error),
  error_max = max(r$error), nll_mean = mean(r$nll), nll_min = min(r$nll), nll_max = max(r$nll),
  first_pass_within_0.01_of_mala = NA, final_pp_error_mean = mean(r$pp_error),
  final_pp_error_min = min(r$pp_error), final_pp_error_max = max(r$pp_error),
  final_pp_lpd_mean = mean(r$pp_lpd), final_pp_lpd_min = min(r$pp_lpd), final_pp_lpd_max = max(r$pp_lpd),
  cpu_s_mean = NA)
summ <- rbind(summ, refrow(ref), refrow(nuts))
fwrite(summ, file.path(out, "sbps-fig6-summary.csv"))
print(summ[, 1:11], digits = 4, row.names = FALSE)
cols <- c(sbps = "black", psbps = "grey50", sgld = "orange", msgnht = "purple")
png(file.path(out, "sbps-fig6.png"), width = 1200, height = 500, res = 110)
par(mfrow = c(1, 2), mar = c(4.2, 4.4, 2.4, 1))
panel <- function(what, ylab, main) {
  yl <- range(c(binned[[what]], ref[[what]]), na.rm = TRUE)
  plot(NA, xlim = c(1, epochs), ylim = yl, log = "xy", xlab = "epochs (data passes)", ylab = ylab, main = main)
  rect(1e-3, min(ref[[what]]), 1e9, max(ref[[what]]), col = "#00800030", border = NA)
  abline(h = mean(ref[[what]]), col = "darkgreen", lwd = 2, lty = 2)
  if (!is.null(nuts)) abline(h = nuts[[what]], col = "blue", lwd = 2, lty = 3)
  for (s in ss) {
    o <- binned[binned$sampler == s, ]; if (!nrow(o)) next
    g <- aggregate(cbind(v = o[[what]], passes = o$passes), list(bin = o$bin), mean)
    lo <- aggregate(list(v = o[[what]]), list(bin = o$bin), min)$v
    hi <- aggregate(list(v = o[[what]]), list(bin = o$bin), max)$v
    polygon(c(g$passes, rev(g$passes)), c(lo, rev(hi)), col = adjustcolor(cols[s], 0.25), border = NA)
    lines(g$passes, g$v, col = cols[s], lwd = 2)
  }
  lab <- c(ss, sprintf("MALA (Metropolis-Hastings), %d chains: mean, range", nrow(ref)))
  if (!is.null(nuts)) lab <- c(lab, "NUTS, full data")
  if (what == "nll") legend("right", lab, col = c(cols[ss], "darkgreen", "blue")[seq_along(lab)],
         lwd = 2, lty = c(rep(1, length(ss)), 2, 3)[seq_along(lab)], bg = "white", cex = 0.75)
}
panel("error", "test error of the current draw",
      sprintf("7x7 Fashion-MNIST, 4 classes, d = 166; %d seeds", length(seeds)))
panel("nll", "test NLL per image of the current draw", "N = 8340, n = 500, from 0 (line: mean, band: range)")
invisible(dev.off())
