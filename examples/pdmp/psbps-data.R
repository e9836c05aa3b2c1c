# psbps-data.R: the data of the authors' pSBPS notebook design (see
# psbps.sh) and, for both regimes, the posterior mode (drift's --init
# file) and the Laplace covariance (for eigen-directions and scales).
set.seed(500)
N <- 1000; d <- 20
w_true <- runif(d, -5, 5)
X <- matrix(rnorm(N * d), N, d); X[, 1] <- X[, 1] / sqrt(500)
y <- rbinom(N, 1, plogis(X %*% w_true))
df <- data.frame(y = y, X); names(df) <- c("y", paste0("x.", 1:d))
dir.create("runs", showWarnings = FALSE)
write.csv(df, "runs/lr20aniso.csv", row.names = FALSE, quote = FALSE)
fit <- function(file, s2, tag) {
  df <- read.csv(file); y <- df$y; X <- as.matrix(df[, -1]); d <- ncol(X)
  nlp <- function(w) -(sum(y * (X %*% w) - log1p(exp(X %*% w))) - sum(w^2) / (2 * s2))
  ngr <- function(w) -(as.vector(t(X) %*% (y - plogis(X %*% w))) - w / s2)
  m <- optim(rep(0, d), nlp, ngr, method = "BFGS",
             control = list(reltol = 1e-15, maxit = 10000))$par
  p <- as.vector(plogis(X %*% m))
  S <- solve(t(X) %*% (X * (p * (1 - p))) + diag(d) / s2)
  e <- eigen(S, symmetric = TRUE)
  writeLines(sprintf('{"w": [%s]}', paste(sprintf("%.12g", m), collapse = ", ")),
             sprintf("runs/psbps-%s-mode.json", tag))
  V <- t(e$vectors); rownames(V) <- paste0("vector", 1:d)
  out <- rbind(mode = m, sd = sqrt(diag(S)), eigenvalue = e$values, V)
  write.csv(out, sprintf("runs/psbps-%s-laplace.csv", tag), quote = FALSE)
  cat(sprintf("%s: Laplace sd of w.1 %.3f, of the others %.3f-%.3f; condition number %.0f\n",
              tag, sqrt(S[1, 1]), min(sqrt(diag(S))[-1]), max(sqrt(diag(S))[-1]),
              e$values[1] / e$values[d]))
}
fit("runs/lr20aniso.csv", 100^2, "aniso")
fit("lr20.csv", 10, "rot")
