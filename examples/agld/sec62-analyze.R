# sec62-analyze.R: test MSE against epochs from each sampler's draws.
# For epoch e (e x Ntrain per-datum gradients, from grads__), two
# predictors on the held-out rows:
#   avg:  x . mean(w) over the draws of epoch e (the posterior-mean
#         prediction from that epoch's samples, as samplers are used); an
#         epoch spent inside one full-gradient refresh step has no draw of
#         its own and uses the last draw before its end;
#   last: x . w of the last draw at or before the end of epoch e.
# The exact posterior mean's test MSE is given for reference, and excess_*
# is each MSE minus it.
suppressMessages({
    library(data.table)
})
args <- commandArgs(TRUE)
build <- args[1]
Ntr <- as.numeric(args[2])
eta <- args[3]
nb <- args[4]
te <- fread(file.path(build, "sec62-test.csv"))
Xte <- as.matrix(te[, -1]); yte <- te$y
d <- ncol(Xte)
tr <- fread(file.path(build, "sec62-train.csv"))
Xtr <- as.matrix(tr[, -1])
A <- crossprod(Xtr) + diag(d)          # sigma = 1, tau = 1
m <- solve(A, crossprod(Xtr, tr$y))
rm(tr, Xtr)
mse <- function(w) mean((yte - Xte %*% w)^2)
best <- mse(m)
cat(sprintf("posterior mean: test MSE %.5f\n", best))
labels <- c(lmc = "LMC", sgld = "SGLD", `ptu-ra` = "PTU-RA (SVRG-LD)",
            `ppu-ra` = "PPU-RA (SAGA-LD)", `tmu-ra` = "TMU-RA",
            `tmu-rr` = "TMU-RR", `tmu-ca` = "TMU-CA", `svrg-ld+` = "SVRG-LD+")
out <- list()
for (s in names(labels)) {
    f <- file.path(build, paste0("sec62-", s, ".csv"))
    x <- fread(cmd = paste("grep -v '^#'", shQuote(f)))
    W <- as.matrix(x[, paste0("w.", 1:d), with = FALSE])
    ep <- ceiling(x$grads__ / Ntr - 1e-9)
    for (e in 1:10) {
        k <- which(ep == e)
        last <- max(which(ep <= e))
        out[[length(out) + 1]] <- data.table(sampler = labels[[s]], epoch = e,
            draws = length(k),
            mse_avg = if (length(k)) mse(colMeans(W[k, , drop = FALSE]))
                      else mse(W[last, ]),
            mse_last = mse(W[last, ]))
    }
}
tab <- rbindlist(out)
tab[, `:=`(eta = eta, batch = nb, mse_posterior_mean = best,
           excess_avg = mse_avg - best, excess_last = mse_last - best)]
fwrite(tab, file.path(build, "sec62-mse.csv"))
cat("test MSE, epoch's draws averaged:\n")
print(dcast(tab, sampler ~ epoch, value.var = "mse_avg"), digits = 5)
cat("test MSE, last draw of the epoch:\n")
print(dcast(tab, sampler ~ epoch, value.var = "mse_last"), digits = 5)
long <- melt(tab, id.vars = c("sampler", "epoch"),
             measure.vars = c("excess_avg", "excess_last"),
             variable.name = "predictor", value.name = "excess")
long[, predictor := ifelse(predictor == "excess_avg", "epoch's draws averaged",
                           "last draw of the epoch")]
png(file.path(build, "sec62-mse.png"), width = 1210, height = 550, res = 110)
par(mfrow = c(1, 2), mar = c(4.2, 4.6, 2.2, 1), oma = c(0, 0, 1.5, 0))
ss <- unique(long$sampler); cols <- setNames(seq_along(ss), ss)
for (pr in c("epoch's draws averaged", "last draw of the epoch")) {
    o <- long[predictor == pr]
    plot(NA, xlim = c(1, 10), ylim = range(pmax(long$excess, 1e-6)), log = "y", xaxt = "n",
         xlab = "epoch", ylab = "test MSE minus the exact posterior mean's", main = pr)
    axis(1, at = 1:10)
    for (sm in ss) with(o[sampler == sm], lines(epoch, pmax(excess, 1e-6), type = "b", pch = 20, col = cols[sm]))
    legend("topright", ss, col = cols, lty = 1, pch = 20, bty = "n", cex = 0.8)
}
mtext(sprintf("Section 6.2: Bayesian ridge regression, N = %d, d = %d, eta = %s, n = %s", Ntr, d, eta, nb),
      outer = TRUE, cex = 0.95)
invisible(dev.off())
