# covtype-laplace.R: the reference for covtype.sh, independent of drift: the
# posterior of the logistic regression (prior N(0, 10 I), drift's logistic
# default) by Newton's method and its Laplace approximation, whose
# posterior predictive on the held-out rows (test lpd: mean over rows of
# log mean_s p(y_i | w_s), and the accuracy of the mean predicted
# probability) is computed from 4000 draws.  At N = 522,911 and d = 54 the
# posterior is very close to Gaussian.  Usage: Rscript covtype-laplace.R BUILD
suppressMessages(library(data.table))
build <- commandArgs(TRUE)[1]
tr <- fread(file.path(build, "covtype-train.csv")); X <- as.matrix(tr[, -1]); y <- tr$y; rm(tr)
te <- fread(file.path(build, "covtype-test.csv")); Xt <- as.matrix(te[, -1]); yt <- te$y; rm(te)
d <- ncol(X); s2 <- 10
w <- rep(0, d)
for (it in 1:50) {
  p <- plogis(as.vector(X %*% w))
  g <- as.vector(crossprod(X, y - p)) - w / s2
  H <- crossprod(X, X * (p * (1 - p))) + diag(d) / s2
  step <- solve(H, g); w <- w + step
  if (max(abs(step)) < 1e-12) break
}
p <- plogis(as.vector(X %*% w)); H <- crossprod(X, X * (p * (1 - p))) + diag(d) / s2
S <- solve(H)
set.seed(54); nd <- 4000; L <- t(chol(S))
py <- numeric(length(yt)); pbar <- numeric(length(yt))    # sums over draws
for (k in 1:(nd / 500)) {
  eta <- Xt %*% (w + L %*% matrix(rnorm(d * 500), d, 500))
  p1 <- plogis(eta)
  pbar <- pbar + rowSums(p1); py <- py + ifelse(yt == 1, rowSums(p1), 500 - rowSums(p1))
}
lpd <- mean(log(py / nd)); acc <- mean((pbar / nd > 0.5) == (yt == 1))
ev <- eigen(S, symmetric = TRUE, only.values = TRUE)$values
cat(sprintf("Newton: %d iterations; Laplace posterior sd %.4f-%.4f (condition number %.0f)\n",
            it, sqrt(min(ev)), sqrt(max(ev)), max(ev) / min(ev)))
cat(sprintf("Laplace posterior predictive: test lpd %.6f, accuracy %.6f; at the mode: lpd %.6f\n",
            lpd, acc, mean(ifelse(yt == 1, plogis(Xt %*% w, log.p = TRUE), plogis(-Xt %*% w, log.p = TRUE)))))
fwrite(data.table(quantity = c("lpd", "accuracy"), laplace = c(lpd, acc)),
       file.path(build, "covtype-reference.csv"))
writeLines(sprintf('{"w": [%s]}', paste(sprintf("%.12g", w), collapse = ", ")),
           file.path(build, "covtype-mode.json"))
