# make-data.R: the data of section 7.1 of Pakman et al. (ICML 2017) and its
# Laplace approximation.  Logistic regression, d = 20, N = 1000: true w ~
# U[-5, 5]^20, x ~ N(0, diag(6, 1, ..., 1)) (covariance), y ~
# Bernoulli(logistic(x . w)); prior w ~ N(0, 10 I) (drift's logistic model
# default).  Writes
#   lr20.csv       the data (y, x.1 ... x.20), what drift reads
#   laplace.csv    rows: mode (w.1..w.20), the Laplace covariance's
#                  eigenvalues, then its eigenvectors vector1 ... vector20
#                  (largest eigenvalue first)
# Run from examples/pdmp:  Rscript make-data.R
set.seed(7117)
N <- 1000; d <- 20
w_true <- runif(d, -5, 5)
X <- matrix(rnorm(N * d), N, d)
X[, 1] <- X[, 1] * sqrt(6)
y <- rbinom(N, 1, plogis(X %*% w_true))
df <- data.frame(y = y, X)
names(df) <- c("y", paste0("x.", 1:d))
write.csv(df, "lr20.csv", row.names = FALSE, quote = FALSE)
df <- read.csv("lr20.csv")
y <- df$y; X <- as.matrix(df[, -1])
s2 <- 10
nlp <- function(w) -(sum(y * (X %*% w) - log1p(exp(X %*% w))) - sum(w^2) / (2 * s2))
ngr <- function(w) -(as.vector(t(X) %*% (y - plogis(X %*% w))) - w / s2)
opt <- optim(rep(0, d), nlp, ngr, method = "BFGS",
             control = list(reltol = 1e-15, maxit = 5000))
mode <- opt$par
p <- as.vector(plogis(X %*% mode))
H <- t(X) %*% (X * (p * (1 - p))) + diag(d) / s2
S <- solve(H)
e <- eigen(S, symmetric = TRUE)
V <- t(e$vectors)                       # row k: the k-th eigenvector
rownames(V) <- paste0("vector", 1:d)
out <- rbind(mode = mode, eigenvalue = e$values, V)
write.csv(out, "laplace.csv", quote = FALSE)
cat("true w: ", sprintf("%.2f", w_true), "\n")
cat("mode:   ", sprintf("%.2f", mode), "\n")
cat("Laplace sd: ", sprintf("%.3f", sqrt(diag(S))), "\n")
cat("covariance eigenvalues: largest", e$values[1], "smallest", e$values[d],
    "ratio", e$values[1] / e$values[d], "\n")
cat("y = 1 in", sum(y), "of", N, "rows\n")
