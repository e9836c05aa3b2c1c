# logit5.R: the data and the reference posterior of tests/samplers/test_sbps.c.
# Bayesian logistic regression, d = 5, N = 500: x ~ N(0, I), true w ~
# U[-1.5, 1.5], y ~ Bernoulli(logistic(x . w)); prior w ~ N(0, 10 I) (the
# logistic plugin's default s = sqrt(10)).  Writes logit5.csv and prints
# the posterior mean and sd of w by self-normalised importance sampling
# from a multivariate t (5 df) centred at the mode with the inverse
# Hessian as scale, with the Monte Carlo error of each mean.
# Run from tests/data:  Rscript logit5.R
set.seed(20170806)
N <- 500; d <- 5
X <- matrix(rnorm(N * d), N, d)
w_true <- runif(d, -1.5, 1.5)
y <- rbinom(N, 1, plogis(X %*% w_true))
df <- data.frame(y = y, X)
names(df) <- c("y", paste0("x.", 1:d))
write.csv(df, "logit5.csv", row.names = FALSE, quote = FALSE)
df <- read.csv("logit5.csv")  # exactly the values the tests read
y <- df$y; X <- as.matrix(df[, -1])

s2 <- 10
logpost <- function(w) sum(y * (X %*% w) - log1p(exp(X %*% w))) - sum(w^2) / (2 * s2)
grad <- function(w) as.vector(t(X) %*% (y - plogis(X %*% w))) - w / s2
opt <- optim(rep(0, d), function(w) -logpost(w), function(w) -grad(w),
             method = "BFGS", control = list(reltol = 1e-14, maxit = 1000))
mode <- opt$par
p <- as.vector(plogis(X %*% mode))
H <- t(X) %*% (X * (p * (1 - p))) + diag(d) / s2
S <- solve(H)
L <- t(chol(S))

nu <- 5; M <- 4e6; chunk <- 2e5
sw <- 0; swx <- rep(0, d); swx2 <- rep(0, d); sw2 <- 0; sw2x <- rep(0, d); sw2x2 <- rep(0, d)
# Weights are normalised by the log weight at the mode to stay finite.
lw0 <- logpost(mode)
for (b in 1:(M / chunk)) {
  z <- matrix(rnorm(chunk * d), d, chunk)
  u <- rchisq(chunk, nu)
  W <- mode + (L %*% z) * rep(sqrt(nu / u), each = d)
  eta <- X %*% W
  ll <- colSums(y * eta - log1p(exp(eta))) - colSums(W^2) / (2 * s2)
  # log density of the t proposal, up to a constant
  q <- colSums(z^2) * (nu / u)          # (w - mode)' S^-1 (w - mode)
  lq <- -(nu + d) / 2 * log1p(q / nu)
  lw <- ll - lw0 - lq
  wt <- exp(lw)
  sw <- sw + sum(wt); sw2 <- sw2 + sum(wt^2)
  swx <- swx + as.vector(W %*% wt); swx2 <- swx2 + as.vector((W^2) %*% wt)
}
mean_w <- swx / sw
sd_w <- sqrt(swx2 / sw - mean_w^2)
ess <- sw^2 / sw2
cat("mode:", sprintf("%.6f", mode), "\n")
cat("importance ESS:", ess, "of", M, "\n")
cat("posterior mean:", sprintf("%.6f", mean_w), "\n")
cat("posterior sd:  ", sprintf("%.6f", sd_w), "\n")
cat("MC error of the mean (sd/sqrt(ESS)):", sprintf("%.2g", sd_w / sqrt(ess)), "\n")
