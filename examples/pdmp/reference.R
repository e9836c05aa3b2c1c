# reference.R: posterior expectations of the section 7.1 model (make-data.R)
# independent of drift: self-normalised importance sampling from a
# multivariate t (7 df) centred at the mode with the Laplace covariance as
# scale.  Writes results/reference.csv: E[w.1] and E[sin((w.1 - w1hat)/r)]
# for r/b = 1 and 1e-2 (b the Laplace sd of w.1, w1hat its mode), with
# Monte Carlo standard errors (delta method) and the importance ESS; also
# the first two moments of p_max and p_min, the projections of w - mode on
# the Laplace covariance's largest and smallest eigenvectors.  The weighted
# draws of w.1 go to runs/reference-is.bin (fig72.R's references).
# Usage: Rscript reference.R [draws in units of 1e5]   (default 10)
args <- commandArgs(TRUE); B <- if (length(args)) as.integer(args[1]) else 10
df <- read.csv("lr20.csv"); y <- df$y; X <- as.matrix(df[, -1]); d <- ncol(X)
lap <- read.csv("laplace.csv", row.names = 1)
mode <- as.numeric(lap["mode", ]); E <- t(as.matrix(lap[-(1:2), ]))
ev <- as.numeric(lap["eigenvalue", ])
L <- E %*% diag(sqrt(ev))
w1hat <- mode[1]; b <- sqrt(sum(E[1, ]^2 * ev))
s2 <- 10
lp0 <- sum(y * (X %*% mode) - log1p(exp(X %*% mode))) - sum(mode^2) / (2 * s2)
set.seed(3); nu <- 7; chunk <- 1e5
pmax_ <- function(W) as.vector(t(E[, 1]) %*% (W - mode))
pmin_ <- function(W) as.vector(t(E[, d]) %*% (W - mode))
f <- function(W) {
  a <- pmax_(W); z <- pmin_(W)
  rbind(w1 = W[1, ], sin1 = sin((W[1, ] - w1hat) / b),
        sin001 = sin((W[1, ] - w1hat) / (0.01 * b)),
        pmax = a, pmax2 = a^2, pmin = z, pmin2 = z^2)
}
sw <- 0; sw2 <- 0; swf <- 0; sw2f <- 0; sw2f2 <- 0
keep_w1 <- vector("list", B); keep_w <- vector("list", B)
for (i in 1:B) {
  z <- matrix(rnorm(chunk * d), d, chunk); u <- rchisq(chunk, nu)
  W <- mode + (L %*% z) * rep(sqrt(nu / u), each = d)
  eta <- X %*% W
  ll <- colSums(y * eta - log1p(exp(eta))) - colSums(W^2) / (2 * s2)
  q <- colSums(z^2) * (nu / u)
  w <- exp(ll - lp0 + (nu + d) / 2 * log1p(q / nu))
  F <- f(W)
  keep_w1[[i]] <- W[1, ]; keep_w[[i]] <- w
  sw <- sw + sum(w); sw2 <- sw2 + sum(w^2)
  swf <- swf + as.vector(F %*% w); sw2f <- sw2f + as.vector(F %*% w^2)
  sw2f2 <- sw2f2 + as.vector(F^2 %*% w^2)
}
est <- swf / sw
# Var of a ratio estimate: sum w_i^2 (f_i - est)^2 / (sum w_i)^2
se <- sqrt((sw2f2 - 2 * est * sw2f + est^2 * sw2) / sw^2)
out <- data.frame(quantity = c("E[w.1]", "E[sin((w.1-w1hat)/b)]",
                               "E[sin((w.1-w1hat)/(0.01 b))]",
                               "E[p_max]", "E[p_max^2]", "E[p_min]", "E[p_min^2]"),
                  estimate = est, se = se, ess = sw^2 / sw2,
                  w1hat = w1hat, b = b)
dir.create("results", showWarnings = FALSE)
# The weighted sample of w.1 itself, for fig72.R's expectations at any r.
dir.create("runs", showWarnings = FALSE)
con <- file("runs/reference-is.bin", "wb")
writeBin(c(length(unlist(keep_w1)), unlist(keep_w1), unlist(keep_w)), con); close(con)
write.csv(out, "results/reference.csv", row.names = FALSE, quote = FALSE)
print(out, digits = 5, row.names = FALSE)
cat(sprintf("sd of p_max %.4f, of p_min %.5f (Laplace: %.4f, %.5f)\n",
            sqrt(est[5] - est[4]^2), sqrt(est[7] - est[6]^2), sqrt(ev[1]), sqrt(ev[d])))
