# fig1-paper-data.R: the 2-D posterior of fig1-paper.sh and its reference,
# computed on a grid in R (independent of drift).
# Logistic regression, d = 2, N = 1000, no intercept: true w = (1, -1),
# x ~ N(0, C) with C = [[1, 0.6], [0.6, 1]] (correlated covariates, so that
# the posterior's axes are not the coordinate axes), y ~
# Bernoulli(logistic(x . w)); prior w ~ N(0, 10 I) (drift's logistic model
# default).  Writes
#   lr2.csv                          the data (y, x.1, x.2), what drift reads
#   results/fig1-paper-reference.csv per coordinate: mean, sd, the 1%..99%
#                                    quantiles of the marginal posterior;
#                                    the correlation; and the bounce rate of
#                                    exact BPS at stationarity without
#                                    refreshment, E[(v . grad U)+] over the
#                                    posterior and v uniform on the circle,
#                                    = E|grad U| / pi in 2-D
#   runs/fig1-paper-grid.rds         the grid and its normalised density
#                                    (contours, marginal CDFs for fig1-paper.R)
# The grid: 801 x 801 points over the mode +- 9 Laplace sds in each
# coordinate; the density is the exact unnormalised posterior, normalised on
# the grid (trapezoid weights).  Its error is checked by halving the grid
# (the moments of the coarse grid are printed beside the fine one's).
# Run from examples/pdmp:  Rscript fig1-paper-data.R
set.seed(2017)
N <- 1000
C <- matrix(c(1, 0.6, 0.6, 1), 2)
X <- matrix(rnorm(N * 2), N, 2) %*% chol(C)
w_true <- c(1, -1)
y <- rbinom(N, 1, plogis(X %*% w_true))
df <- data.frame(y = y, x.1 = X[, 1], x.2 = X[, 2])
write.csv(df, "lr2.csv", row.names = FALSE, quote = FALSE)
df <- read.csv("lr2.csv"); y <- df$y; X <- as.matrix(df[, -1])
s2 <- 10
lpost <- function(W) {                  # W: 2 x m; log posterior of each column
  eta <- X %*% W
  colSums(y * eta - log1p(exp(eta))) - colSums(W^2) / (2 * s2)
}
nlp <- function(w) -lpost(matrix(w, 2))
ngr <- function(w) -(as.vector(t(X) %*% (y - plogis(X %*% w))) - w / s2)
mode <- optim(c(0, 0), nlp, ngr, method = "BFGS",
              control = list(reltol = 1e-15, maxit = 1000))$par
p <- as.vector(plogis(X %*% mode))
H <- t(X) %*% (X * (p * (1 - p))) + diag(2) / s2
lsd <- sqrt(diag(solve(H)))
grid_ref <- function(m) {
  g1 <- seq(mode[1] - 9 * lsd[1], mode[1] + 9 * lsd[1], length.out = m)
  g2 <- seq(mode[2] - 9 * lsd[2], mode[2] + 9 * lsd[2], length.out = m)
  lp <- matrix(0, m, m)                 # lp[i, j]: at (g1[i], g2[j])
  gn <- matrix(0, m, m)                 # |grad U| there
  for (j in 1:m) {
    W <- rbind(g1, g2[j]); eta <- X %*% W
    lp[, j] <- colSums(y * eta - log1p(exp(eta))) - colSums(W^2) / (2 * s2)
    G <- -(t(X) %*% (y - plogis(eta))) + W / s2
    gn[, j] <- sqrt(colSums(G^2))
  }
  dens <- exp(lp - max(lp))
  tw <- function(g) { w <- rep(diff(g)[1], length(g)); w[c(1, length(g))] <- w[1] / 2; w }
  a1 <- tw(g1); a2 <- tw(g2)
  Z <- sum(dens * outer(a1, a2))
  dens <- dens / Z
  m1 <- as.vector(dens %*% a2)          # marginal density of w.1 on g1
  m2 <- as.vector(t(dens) %*% a1)
  mom <- function(g, md, a) {
    mu <- sum(g * md * a); c(mean = mu, sd = sqrt(sum((g - mu)^2 * md * a)))
  }
  list(g1 = g1, g2 = g2, dens = dens, m1 = m1, m2 = m2,
       egrad = sum(gn * dens * outer(a1, a2)),
       mom1 = mom(g1, m1, a1), mom2 = mom(g2, m2, a2),
       rho = sum(outer(g1 - mom(g1, m1, a1)[1], g2 - mom(g2, m2, a2)[1]) *
                 dens * outer(a1, a2)))
}
fine <- grid_ref(801); coarse <- grid_ref(401)
# Marginal CDFs by the trapezoid rule, and their quantiles.
cdf <- function(g, md) { c(0, cumsum((md[-1] + md[-length(md)]) / 2 * diff(g))) }
probs <- c(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.975, 0.99)
q1 <- approx(cdf(fine$g1, fine$m1), fine$g1, probs, ties = "ordered")$y
q2 <- approx(cdf(fine$g2, fine$m2), fine$g2, probs, ties = "ordered")$y
out <- data.frame(row.names = NULL, coordinate = c("w.1", "w.2"),
                  mean = c(fine$mom1[1], fine$mom2[1]),
                  sd = c(fine$mom1[2], fine$mom2[2]),
                  mean_coarse = c(coarse$mom1[1], coarse$mom2[1]),
                  sd_coarse = c(coarse$mom1[2], coarse$mom2[2]),
                  correlation = fine$rho / (fine$mom1[2] * fine$mom2[2]),
                  bounce_rate = fine$egrad / pi,
                  bounce_rate_coarse = coarse$egrad / pi,
                  mode = mode, laplace_sd = lsd)
qq <- rbind(q1, q2); colnames(qq) <- paste0("q", probs)
out <- cbind(out, qq)
dir.create("results", showWarnings = FALSE); dir.create("runs", showWarnings = FALSE)
write.csv(out, "results/fig1-paper-reference.csv", row.names = FALSE, quote = FALSE)
saveRDS(fine[c("g1", "g2", "dens", "m1", "m2")], "runs/fig1-paper-grid.rds")
cat("y = 1 in", sum(y), "of", N, "rows\n")
print(out[, 1:10], digits = 6, row.names = FALSE)
