# sec62-panels.R: test MSE against epochs for sec62-panels.sh's runs, one
# panel per access strategy, base graphics.  The predictor of epoch e is
# x . mean(w) over the draws of that epoch (as sec62-analyze.R's "avg").
# An epoch spent mostly inside a full-gradient refresh step has fewer than
# half the draws its sampler usually makes in an epoch (often one or none):
# it is pooled with the epochs before it until it has that many, since one
# draw alone measures the chain's spread, not its mean (single draws of
# these chains sit 10-500 times further from the posterior mean than exact
# draws do).  The exact posterior mean's test MSE is the reference; excess is
# each MSE minus it.
suppressMessages(library(data.table))
args <- commandArgs(TRUE)
build <- args[1]; set_ <- args[2]; stem <- args[3]; Ntr <- as.numeric(args[4])
eta <- args[5]; nb <- args[6]; epochs <- as.integer(args[7])
te <- fread(file.path(build, paste0(stem, "-test.csv")))
Xte <- as.matrix(te[, -1]); yte <- te$y; d <- ncol(Xte)
tr <- fread(file.path(build, paste0(stem, "-train.csv")))
Xtr <- as.matrix(tr[, -1])
A <- crossprod(Xtr) + diag(d)          # sigma = 1, tau = 1
m <- solve(A, crossprod(Xtr, tr$y))
rm(tr, Xtr)
mse <- function(w) mean((yte - Xte %*% w)^2)
best <- mse(m)
# The excess a single exact posterior draw has on average, tr(S_test A^-1):
# the scale of a sampler's spread; an average of S draws has 1/S of it.
draw1 <- sum(diag(solve(A, crossprod(Xte) / nrow(Xte))))
cat(sprintf("%s: N = %d, d = %d; the exact posterior mean's test MSE %.5f; one exact draw's excess %.2g\n",
            set_, Ntr, d, best, draw1))
methods <- c("sgld", "ptu", "ppu", "tmu", "svrg-ld+")
labels <- c(sgld = "SGLD", ptu = "PTU (SVRG-LD)", ppu = "PPU (SAGA-LD)", tmu = "TMU",
            `svrg-ld+` = "SVRG-LD+", lmc = "LMC")
read_draws <- function(name) {
  x <- fread(cmd = paste("grep -v '^#'", shQuote(file.path(build, sprintf("panels-%s-%s.csv", set_, name)))))
  list(W = as.matrix(x[, paste0("w.", 1:d), with = FALSE]), ep = ceiling(x$grads__ / Ntr - 1e-9))
}
curve <- function(r) {
  cnt <- tabulate(r$ep, epochs)
  need <- max(1, floor(median(cnt[cnt > 0]) / 2))
  sapply(1:epochs, function(e) {
    f <- e
    while (f > 1 && sum(cnt[f:e]) < need) f <- f - 1
    k <- which(r$ep >= f & r$ep <= e)
    mse(colMeans(r$W[k, , drop = FALSE]))
  })
}
out <- list()
lmc <- curve(read_draws("lmc"))
for (a in c("ra", "rr", "ca")) {
  out[[length(out) + 1]] <- data.table(access = a, method = "lmc", epoch = 1:epochs, mse = lmc)
  for (s in methods)
    out[[length(out) + 1]] <- data.table(access = a, method = s, epoch = 1:epochs,
                                         mse = curve(read_draws(paste0(s, "-", a))))
}
tab <- rbindlist(out)
tab[, `:=`(set = set_, eta = eta, batch = nb, mse_posterior_mean = best, excess = mse - best,
           one_exact_draw_excess = draw1)]
fwrite(tab, file.path(build, sprintf("panels-%s-mse.csv", set_)))
for (a in c("ra", "rr", "ca")) {
  cat(sprintf("\naccess %s: test MSE minus the posterior mean's, by epoch\n", toupper(a)))
  w <- dcast(tab[access == a], method ~ epoch, value.var = "excess")
  print(w, digits = 3)
  last <- tab[access == a & epoch == epochs][order(excess)]
  cat(sprintf("ranking at epoch %d: %s\n", epochs, paste(labels[last$method], collapse = " < ")))
}
png(file.path(build, sprintf("panels-%s-mse.png", set_)), width = 1500, height = 500, res = 110)
par(mfrow = c(1, 3), mar = c(4.2, 4.4, 2.5, 1))
cols <- c(lmc = "black", sgld = "orange", ptu = "blue", ppu = "darkgreen", tmu = "red", `svrg-ld+` = "purple")
yl <- range(pmax(tab$excess, 1e-5))
for (a in c("ra", "rr", "ca")) {
  plot(NA, xlim = c(1, epochs), ylim = yl, log = "y", xlab = "epoch (data passes)",
       ylab = "test MSE - posterior mean's",
       main = sprintf("%s (%s), access %s", set_, if (grepl("^year", set_)) "412,276 x 90" else "42,800 x 384", toupper(a)))
  abline(h = draw1, lty = 2, col = "grey40")
  for (s in c("lmc", methods)) with(tab[access == a & method == s], lines(epoch, pmax(excess, 1e-5), type = "b", col = cols[s], pch = 20))
  legend("topright", c(labels[c("lmc", methods)], "one exact posterior draw"), col = c(cols[c("lmc", methods)], "grey40"),
         lwd = 1, lty = c(rep(1, 6), 2), bty = "n", cex = 0.8)
  mtext("values below 1e-5 (or negative) drawn at 1e-5", 1, -1.2, adj = 0.02, cex = 0.6)
}
invisible(dev.off())
