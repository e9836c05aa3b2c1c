# MAP and Laplace covariance of y ~ bernoulli_logit(X w), w ~ N(0, 10 I)
# Rscript laplace.R [CSV [OUT]]: reads CSV (y,x.1,...; default cov.csv),
# writes OUT (name,mean,sd; default ref_laplace.csv).
args <- commandArgs(trailingOnly = TRUE)
csv <- if (length(args) >= 1) args[1] else "cov.csv"
out <- if (length(args) >= 2) args[2] else "ref_laplace.csv"
d <- read.csv(csv, colClasses = "numeric")
y <- d[[1]]; X <- as.matrix(d[, -1]); rm(d)
D <- ncol(X); w <- rep(0, D)
for (it in 1:30) {
  eta <- drop(X %*% w); p <- 1 / (1 + exp(-eta))
  g <- drop(crossprod(X, y - p)) - w / 10
  H <- crossprod(X, X * (p * (1 - p))) + diag(1 / 10, D)
  step <- solve(H, g); w <- w + step
  dec <- sum(g * step)
  cat(sprintf("newton %d: decrement %.3g\n", it, dec))
  if (dec < 1e-12) break
}
eta <- drop(X %*% w); p <- 1 / (1 + exp(-eta))
H <- crossprod(X, X * (p * (1 - p))) + diag(1 / 10, D)
S <- solve(H)
lp <- sum(y * eta - log1p(exp(eta))) - sum(w^2) / 20 - D * (log(sqrt(10)) + 0.5 * log(2 * pi))
cat(sprintf("log density at the mode %.6f\n", lp))
write.csv(data.frame(name = paste0("w.", 1:D), mean = w, sd = sqrt(diag(S))), out, row.names = FALSE, quote = FALSE)
