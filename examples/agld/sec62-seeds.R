# sec62-seeds.R: sec62-seeds.sh's summary.  For every seed's
# panels-SET-sS-mse.csv (sec62-panels.R: test MSE of each epoch's averaged
# draws, minus the exact posterior mean's), the final value (epoch EPOCHS)
# per access strategy and method; over the seeds its mean and 95%
# t-interval, and the paired differences (same seed: the methods of one
# seed share its seed number) that the paper's claims rest on:
#   TMU against every other method at the same access strategy;
#   SVRG-LD+ and PPU against LMC, SGLD and PTU at the same access strategy.
# A difference is stated (a < b or a > b) only where its 95% interval
# excludes 0; otherwise "no difference found".  Differences of excess MSE
# are differences of test MSE (the reference is the same).
# Usage: Rscript sec62-seeds.R BUILD OUT SET FIRST SEEDS EPOCHS
suppressMessages(library(data.table))
options(width = 200)
args <- commandArgs(TRUE)
build <- args[1]; out <- args[2]; set_ <- args[3]
first <- as.integer(args[4]); k <- as.integer(args[5]); epochs <- as.integer(args[6])
seeds <- first + seq_len(k) - 1L
r <- rbindlist(lapply(seeds, function(s) {
  f <- file.path(build, sprintf("panels-%s-s%d-mse.csv", set_, s))
  if (!file.exists(f)) stop("no ", f, ": run sec62-seeds.sh first")
  fread(f)[, seed := s]
}))
late_from <- max(1L, epochs - 4L)
all <- r[, .(final = excess[epoch == epochs], late = mean(excess[epoch >= late_from]),
             mse_final = mse[epoch == epochs]), by = .(access, method, seed)]
all[, `:=`(set = set_, eta = r$eta[1], batch = r$batch[1], epochs = epochs)]
fwrite(all, file.path(out, sprintf("sec62-seeds-%s-all.csv", set_)))
ci <- function(x) {
  n <- length(x); m <- mean(x); h <- if (n > 1) qt(0.975, n - 1) * sd(x) / sqrt(n) else NA_real_
  list(mean = m, half = h, lo = m - h, hi = m + h, seeds = n)
}
labels <- c(lmc = "LMC", sgld = "SGLD", ptu = "PTU (SVRG-LD)", ppu = "PPU (SAGA-LD)",
            tmu = "TMU", `svrg-ld+` = "SVRG-LD+")
methods <- names(labels)
tab <- all[, c(ci(final), setNames(ci(late)[1:4], paste0("late_", c("mean", "half", "lo", "hi")))),
           by = .(access, method)]
tab[, access := factor(access, c("ra", "rr", "ca"))][, method := factor(method, methods)]
setorder(tab, access, method)
tab[, `:=`(set = set_, eta = all$eta[1], batch = all$batch[1], epochs = epochs,
           mse_posterior_mean = r$mse_posterior_mean[1])]
fwrite(tab, file.path(out, sprintf("sec62-seeds-%s.csv", set_)))
pairs <- rbind(
  data.table(claim = "TMU best at equal access", a = "tmu", b = c("lmc", "sgld", "ptu", "ppu", "svrg-ld+")),
  data.table(claim = "SVRG-LD+ better than LMC, SGLD, PTU", a = "svrg-ld+", b = c("lmc", "sgld", "ptu")),
  data.table(claim = "PPU better than LMC, SGLD, PTU", a = "ppu", b = c("lmc", "sgld", "ptu")))
# metric "final": epoch EPOCHS, the panels' last point (the verdicts');
# "late": the mean over the last five epochs, as sec62-panels-summary.R.
diffs_of <- function(metric) {
  w <- dcast(all, access + seed ~ method, value.var = metric)
  rbindlist(lapply(c("ra", "rr", "ca"), function(acc) {
    x <- w[access == acc]
    rbindlist(lapply(seq_len(nrow(pairs)), function(i) {
      p <- pairs[i]; d <- x[[p$a]] - x[[p$b]]
      c(list(metric = metric, access = acc, claim = p$claim, a = p$a, b = p$b), ci(d))
    }))
  }))
}
diffs <- rbind(diffs_of("final"), diffs_of("late"))
diffs[, result := ifelse(hi < 0, sprintf("%s below %s", labels[a], labels[b]),
                  ifelse(lo > 0, sprintf("%s above %s", labels[a], labels[b]), "no difference found"))]
diffs[, `:=`(set = set_, epochs = epochs)]
fwrite(diffs, file.path(out, sprintf("sec62-seeds-%s-diff.csv", set_)))
cat(sprintf("%s: %d seeds (%d-%d), test MSE minus the exact posterior mean's (%.5f) at epoch %d, mean and 95%% t-interval\n",
            set_, k, min(seeds), max(seeds), r$mse_posterior_mean[1], epochs))
for (acc in c("ra", "rr", "ca")) {
  cat(sprintf("\naccess %s (epoch %d; then the mean of the last five epochs)\n", toupper(acc), epochs))
  for (i in which(tab$access == acc))
    cat(sprintf("  %-14s %10.3g +- %9.2g   %10.3g +- %9.2g\n", labels[as.character(tab$method[i])],
                tab$mean[i], tab$half[i], tab$late_mean[i], tab$late_half[i]))
  for (i in which(diffs$access == acc & diffs$metric == "final"))
    cat(sprintf("  %-8s - %-8s %10.3g +- %9.2g  %s\n", diffs$a[i], diffs$b[i], diffs$mean[i], diffs$half[i], diffs$result[i]))
}
# The verdicts per panel, as examples/PAPERS.md defines them: a claim
# that A is better than B holds where A - B's interval is below 0, is not
# reproduced where it is above 0, and otherwise no difference is found;
# "TMU best" holds where TMU is below every other method, is not
# reproduced where any method is below TMU.
verdict <- function(d) {
  if (all(d$hi < 0)) "holds" else if (any(d$lo > 0)) "not reproduced" else "no difference found"
}
panels <- CJ(met = c("final", "late"), acc = c("ra", "rr", "ca"), sorted = FALSE)
claims <- rbindlist(lapply(seq_len(nrow(panels)), function(i) {
  met <- panels$met[i]; acc <- panels$acc[i]
  x <- diffs[access == acc & metric == met]
  rbind(data.table(metric = met, access = acc, claim = "TMU best at equal access", against = "all",
                   verdict = verdict(x[a == "tmu"])),
        x[a != "tmu", .(metric, access, claim = sprintf("%s better than %s", labels[a], labels[b]), against = b,
                        verdict = ifelse(hi < 0, "holds", ifelse(lo > 0, "not reproduced", "no difference found")))])
}))
claims[, set := set_]
fwrite(claims, file.path(out, sprintf("sec62-seeds-%s-verdicts.csv", set_)))
cat("\nverdicts\n")
print(dcast(claims, metric + claim ~ access, value.var = "verdict")[, .(metric, claim, ra, rr, ca)])
# The figure: each method's mean with its 95% interval, one panel per
# access strategy, log scale (interval ends below the floor drawn at it).
png(file.path(out, sprintf("sec62-seeds-%s.png", set_)), width = 1500, height = 520, res = 110)
par(mfrow = c(1, 3), mar = c(7.5, 4.6, 3, 1))
floor_ <- 1e-6
cols <- c(lmc = "black", sgld = "orange", ptu = "blue", ppu = "darkgreen", tmu = "red", `svrg-ld+` = "purple")
yl <- range(pmax(c(tab$lo, tab$hi, all$final), floor_))
for (acc in c("ra", "rr", "ca")) {
  x <- tab[access == acc]; m <- as.character(x$method)
  plot(seq_along(m), pmax(x$mean, floor_), log = "y", ylim = yl, xlim = c(0.5, length(m) + 0.5),
       pch = 19, col = cols[m], xaxt = "n", xlab = "", ylab = sprintf("test MSE - posterior mean's, epoch %d", epochs),
       main = sprintf("%s, access %s: %d seeds, mean and 95%% interval", set_, toupper(acc), k))
  axis(1, seq_along(m), labels[m], las = 2, cex.axis = 0.9)
  for (j in seq_along(m)) {
    s <- all[access == acc & method == m[j]]$final
    points(rep(j + 0.2, length(s)), pmax(s, floor_), pch = 1, cex = 0.5, col = "grey50")
  }
  arrows(seq_along(m), pmax(x$lo, floor_), seq_along(m), pmax(x$hi, floor_), angle = 90, code = 3,
         length = 0.05, col = cols[m], lwd = 2)
  mtext(sprintf("grey: single seeds; values below %g drawn at it", floor_), 1, 6.3, cex = 0.6)
}
invisible(dev.off())
