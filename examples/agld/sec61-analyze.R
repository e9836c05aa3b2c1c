# sec61-analyze.R: distances between each sampler's draws and the exact
# target of section 6.1, on 2-D projections (coordinates 1 and 2).
#
# The exact target: with abar the mean of the a_i,
#   p(x) ~ exp(-|x - abar|^2 / 2) c(x),  c(x) = prod_i (1 + e^{-2 x.a_i})^{1/N},
# symmetric under x -> -x (two modes, at +-abar).  Langevin samplers never
# cross between the modes (the barrier is ~|abar|^2/2 = 20 nats), so draws
# and target are both folded into the half-space x.abar > 0, which the
# symmetry makes exact.  There the target is N(abar, I) reweighted by c(x);
# the weights are checked below by importance sampling (they are 1 to
# within rounding), so the exact folded 2-D projection is N(abar[1:2], I).
suppressMessages({
    library(data.table)
    library(posterior)
})
args <- commandArgs(TRUE)
build <- args[1]
passes <- as.numeric(args[2])
eta <- args[3]
nb <- args[4]
a <- as.matrix(fread(file.path(build, "sec61-a.csv")))
N <- nrow(a)
d <- ncol(a)
abar <- colMeans(a)

# Importance weights of the folded target against N(abar, I).
set.seed(7)
M <- 20000
Z <- matrix(rnorm(M * d), M, d) + rep(abar, each = M)
XA <- Z %*% t(a)
l1pe <- function(z) pmax(-2 * z, 0) + log1p(exp(-abs(2 * z)))
logc <- rowMeans(l1pe(XA))
w <- exp(logc) * (Z %*% abar > 0)
w <- w / mean(w)
cat(sprintf("exact target check: importance weights of N(abar, I) deviate by at most %.3g (mean %.3g); the folded target is N(abar, I) to that precision\n",
            max(abs(w - 1)), mean(abs(w - 1))))

read_draws <- function(f) {
    x <- fread(cmd = paste("grep -v '^#'", shQuote(f)))
    x[grads__ > passes / 2 * N]
}

w2_to_identity <- function(m, S, mu) {
    # W2 between N(m, S) and N(mu, I): |m - mu|^2 + sum (sqrt(l_j) - 1)^2
    ev <- eigen(S, symmetric = TRUE, only.values = TRUE)$values
    sqrt(sum((m - mu)^2) + sum((sqrt(pmax(ev, 0)) - 1)^2))
}

breaks <- function(mu) seq(mu - 4, mu + 4, by = 0.25)
hist_tv <- function(P, mu) {
    b1 <- breaks(mu[1]); b2 <- breaks(mu[2])
    i1 <- findInterval(P[, 1], b1, rightmost.closed = TRUE)
    i2 <- findInterval(P[, 2], b2, rightmost.closed = TRUE)
    inside <- i1 >= 1 & i1 < length(b1) & i2 >= 1 & i2 < length(b2)
    k <- length(b1) - 1
    cnt <- matrix(0, k, k)
    t <- table(factor(i1[inside], 1:k), factor(i2[inside], 1:k))
    cnt[] <- t / nrow(P)
    p1 <- diff(pnorm(b1 - mu[1])); p2 <- diff(pnorm(b2 - mu[2]))
    ex <- outer(p1, p2)
    0.5 * (sum(abs(cnt - ex)) + abs((1 - sum(cnt)) - (1 - sum(ex))))
}

names <- c(lmc = "LMC", sgld = "SGLD", `svrg-ld` = "SVRG-LD",
           `saga-ld` = "SAGA-LD", `tmu-ra` = "TMU-RA", `tmu-ra-dn` = "TMU-RA, D = N")
rows <- list()
proj <- list()
set.seed(11)
for (s in names(names)) {
    x <- read_draws(file.path(build, paste0("sec61-", s, ".csv")))
    X <- as.matrix(x[, paste0("x.", 1:d), with = FALSE])
    sgn <- sign(X %*% abar)
    Xf <- X * as.vector(sgn)
    P <- Xf[, 1:2]
    ess <- min(apply(P, 2, ess_bulk))
    m2 <- colMeans(P); S2 <- cov(P)
    # The noise floor of the histogram distance: as many iid exact draws.
    nd <- nrow(P)
    floor_tv <- mean(replicate(20, hist_tv(
        matrix(rnorm(2 * nd), ncol = 2) + rep(abar[1:2], each = nd),
        abar[1:2])))
    rows[[s]] <- data.table(
        sampler = names[[s]], draws = nrow(P), ess_bulk_min = round(ess),
        mode_flips = sum(diff(sgn) != 0),
        mean_err_2d = sqrt(sum((m2 - abar[1:2])^2)),
        var_2d = paste(sprintf("%.4f", diag(S2)), collapse = "/"),
        W2_2d = w2_to_identity(m2, S2, abar[1:2]),
        W2_10d = w2_to_identity(colMeans(Xf), cov(Xf), abar),
        TV_2d = hist_tv(P, abar[1:2]), TV_iid_floor = floor_tv)
    proj[[s]] <- data.table(sampler = names[[s]], x1 = P[, 1], x2 = P[, 2])
}
tab <- rbindlist(rows)
tab[, `:=`(eta = eta, batch = nb)]
tag <- sprintf("eta%s-n%s", eta, nb)
fwrite(tab, file.path(build, paste0("sec61-distances-", tag, ".csv")))
print(tab, digits = 4)

png(file.path(build, paste0("sec61-projections-", tag, ".png")), width = 1320, height = 360, res = 110)
par(mfrow = c(1, length(proj)), mar = c(3.8, 3.8, 2, 0.5), oma = c(0, 0, 2.2, 0))
lim1 <- abar[1] + c(-3.5, 3.5); lim2 <- abar[2] + c(-3.5, 3.5)
g1 <- seq(lim1[1], lim1[2], length = 100); g2 <- seq(lim2[1], lim2[2], length = 100)
ex <- outer(dnorm(g1, abar[1]), dnorm(g2, abar[2]))
for (s in names(proj)) {
    k <- MASS::kde2d(proj[[s]]$x1, proj[[s]]$x2, n = 100, lims = c(lim1, lim2))
    contour(g1, g2, ex, nlevels = 6, lty = 2, drawlabels = FALSE, asp = 1, xlab = "x1", ylab = "x2",
            main = names[[s]], cex.main = 0.9)
    contour(k$x, k$y, k$z, nlevels = 6, col = "steelblue", drawlabels = FALSE, add = TRUE)
}
mtext(sprintf("Section 6.1: folded 2-D projections (x1, x2), eta = %s, n = %s, last 1e4 of 2e4 passes; blue: sample density, dashed: exact target",
              eta, nb), outer = TRUE, cex = 0.8)
invisible(dev.off())
