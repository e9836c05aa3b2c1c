# sec62-analyze.R: test MSE against epochs from each sampler's draws.
# For epoch e (e x Ntrain per-datum gradients, from grads__), two
# predictors on the held-out rows:
#   avg:  x . mean(w) over the draws of epoch e (the posterior-mean
#         prediction from that epoch's samples, as samplers are used);
#   last: x . w of the last draw of epoch e.
# The exact posterior mean's test MSE is given for reference.
suppressMessages({
    library(data.table)
    library(ggplot2)
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
        if (!length(k)) {
            out[[length(out) + 1]] <- data.table(sampler = labels[[s]], epoch = e,
                draws = 0L, mse_avg = NA_real_, mse_last = NA_real_)
            next
        }
        out[[length(out) + 1]] <- data.table(sampler = labels[[s]], epoch = e,
            draws = length(k), mse_avg = mse(colMeans(W[k, , drop = FALSE])),
            mse_last = mse(W[max(k), ]))
    }
}
tab <- rbindlist(out)
tab[, `:=`(eta = eta, batch = nb, mse_posterior_mean = best)]
fwrite(tab, file.path(build, "sec62-mse.csv"))
print(dcast(tab, sampler ~ epoch, value.var = "mse_avg"), digits = 5)
print(dcast(tab, sampler ~ epoch, value.var = "mse_last"), digits = 5)
p <- ggplot(tab[!is.na(mse_avg)], aes(epoch, mse_avg, colour = sampler)) +
    geom_line() + geom_point() +
    geom_hline(yintercept = best, linetype = "dashed") +
    scale_y_log10() + scale_x_continuous(breaks = 1:10) +
    labs(title = sprintf("Section 6.2: ridge regression, N = %d, d = %d, eta = %s, n = %s",
                         Ntr, d, eta, nb),
         y = "test MSE (epoch's posterior-mean prediction)",
         caption = "dashed: exact posterior mean") +
    theme_bw(base_size = 10)
ggsave(file.path(build, "sec62-mse.png"), p, width = 8, height = 5, dpi = 110)
