# ewsg-weights.R: an independent R simulation (not using drift) of EWSG's
# index weights on the EWSG paper's section 5.1 target.  drift's ewsg
# follows the paper's eq. (5) acceptance
# min(1, exp(|x + n a_j|^2/2 - |x + n a_i|^2/2)) (i current, j proposed),
# i.e. index weights p_i ~ exp(+|x + n a_i|^2/2); the opposite sign,
# p_i ~ exp(-|x + n a_i|^2/2), is run for contrast (see README.md for why
# eq. (5)'s weights raise the conditional gradient variance).  For both,
# with x = sqrt(h) gamma r / sigma:
#  - KL(fitted Gaussian || posterior) of K chains after 30 data passes
#    (batch 1, h = 0.05, gamma = 10, M = 1), as ewsg-gauss2d.sh;
#  - the variance of the selected gradient n grad V_I given (theta, r),
#    averaged over (theta, r) from the posterior and N(0, I), against
#    uniform subsampling, and how often it is smaller.
# Usage: Rscript ewsg-weights.R   (prints a table)
set.seed(1)
n <- 20; C <- matrix(rnorm(2 * n), n, 2); cbar <- colMeans(C); Sig <- diag(2) / n
K <- 4000; h <- 0.05; g <- 10; s <- sqrt(2 * g)
kl <- function(th) { m <- colMeans(th); S <- cov(th); P <- solve(Sig)
  0.5 * (sum(diag(P %*% S)) + drop(t(cbar - m) %*% P %*% (cbar - m)) - 2 + log(det(Sig) / det(S))) }
run <- function(sign, ewsg = TRUE) {
  th <- matrix(0, K, 2); r <- matrix(rnorm(2 * K), K, 2)
  for (k in seq_len(if (ewsg) 300 else 600)) {
    gi <- n * (th - C[sample.int(n, K, TRUE), ])
    if (ewsg) {
      gj <- n * (th - C[sample.int(n, K, TRUE), ]); x <- sqrt(h) * g * r / s
      fi <- rowSums((x + sqrt(h) * gi / s)^2) / 2; fj <- rowSums((x + sqrt(h) * gj / s)^2) / 2
      acc <- log(runif(K)) < sign * (fj - fi); gi[acc, ] <- gj[acc, ]
    }
    th_new <- th + h * r
    r <- r - h * g * r - h * gi + s * sqrt(h) * matrix(rnorm(2 * K), K, 2)
    th <- th_new
  }
  kl(th)
}
cond_var <- function(sign, states = 2000) {
  out <- replicate(states, {
    th <- cbar + rnorm(2) / sqrt(n); r <- rnorm(2)
    G <- n * sweep(-C, 2, th, "+"); f <- rowSums(sweep(sqrt(h) * G / s, 2, sqrt(h) * g * r / s, "+")^2) / 2
    P <- outer(f, f, function(fi, fj) pmin(1, exp(sign * (fj - fi)))) / n  # M = 1 from a uniform start
    diag(P) <- diag(P) + 1 - rowSums(P); q <- colSums(P) / n
    m <- colSums(q * G); mu <- colMeans(G)
    c(sum(q * rowSums(sweep(G, 2, m)^2)), sum(rowSums(sweep(G, 2, mu)^2)) / n)
  })
  c(mean(out[1, ]), mean(out[2, ]), mean(out[1, ] < out[2, ]))
}
res <- data.frame(weights = c("exp(+|x+na|^2/2) (eq. 5, drift)", "exp(-|x+na|^2/2)", "uniform (sghmc)"),
                  kl_30_passes = c(run(1), run(-1), run(0, FALSE)))
v1 <- cond_var(1); v2 <- cond_var(-1)
res$grad_var <- c(v1[1], v2[1], v1[2]); res$frac_below_uniform <- c(v1[3], v2[3], NA)
print(res, digits = 3)
