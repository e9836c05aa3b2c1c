# ewsg-gauss2d-ci.R: 95% intervals for the KL column of ewsg-gauss2d.csv by
# a parametric bootstrap: 200 times, as many draws as chains from the
# Gaussian fitted at that pass count (its means, variances and, where the
# CSV has it, covariance), refitted and compared with the exact posterior;
# the basic bootstrap interval 2 KL - (97.5%, 2.5% quantiles).  The
# chains are independent, so the fitted Gaussian is all the bootstrap
# needs when the draws are close to Gaussian (they are on this linear
# target).  Writes ewsg-gauss2d-ci.csv beside the input.
# Usage: Rscript ewsg-gauss2d-ci.R OUT
out <- commandArgs(TRUE)[1]
d <- read.csv(file.path(out, "ewsg-gauss2d.csv"))
set.seed(20200220); cen <- matrix(rnorm(40), 20, 2)   # ewsg-gauss2d.sh's centres
m0 <- colMeans(cen); S0 <- diag(2) / 20; P0 <- solve(S0)
kl <- function(m, S) 0.5 * (sum(diag(P0 %*% S)) + drop(t(m0 - m) %*% P0 %*% (m0 - m)) -
                            2 + log(det(S0) / det(S)))
set.seed(3)
d$kl_lo <- d$kl_hi <- NA
for (i in seq_len(nrow(d))) {
  m <- c(d$mean1[i], d$mean2[i])
  c12 <- if ("cov12" %in% names(d)) d$cov12[i] else 0
  L <- chol(matrix(c(d$var1[i], c12, c12, d$var2[i]), 2))
  b <- replicate(200, {
    x <- matrix(rnorm(2 * d$chains[i]), ncol = 2) %*% L + rep(m, each = d$chains[i])
    kl(colMeans(x), cov(x)) })
  d$kl_lo[i] <- 2 * d$kl[i] - quantile(b, 0.975)
  d$kl_hi[i] <- 2 * d$kl[i] - quantile(b, 0.025)
}
write.csv(d, file.path(out, "ewsg-gauss2d-ci.csv"), row.names = FALSE)
w <- reshape(data.frame(sampler = d$sampler, passes = d$passes,
                        kl = sprintf("%.4f (%.4f-%.4f)", d$kl, d$kl_lo, d$kl_hi)),
             idvar = "sampler", timevar = "passes", direction = "wide")
print(w, row.names = FALSE)
