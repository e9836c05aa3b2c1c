# covtype-data.R: synthetic binary classification data of Covertype's size
# (581,012 rows, 54 features, as in the LIBSVM covtype.binary the SG-MCMC
# papers use), shaped like it: 10 quantitative features (standardised,
# AR(1) correlation 0.3), a 4-level "wilderness area" and a 40-level "soil
# type" as one-hot columns (skewed level frequencies, so some columns are
# rare), labels y ~ Bernoulli(logistic(x . w*)) with w* chosen so that the
# Bayes classifier's accuracy is about the real data's logistic-regression
# accuracy (~0.76) and the classes are near balance.  The last 10%
# (58,101 rows) are held out, or as many as the second argument says
# (116,202 for the EWSG paper's 80/20 split).  Writes covtype-train.csv,
# covtype-test.csv and covtype-wstar.csv into the directory given.
# Usage: Rscript covtype-data.R DIR [TEST_ROWS]
suppressMessages(library(data.table))
args <- commandArgs(TRUE); out <- if (length(args)) args[1] else "."
ntest <- if (length(args) > 1) as.integer(args[2]) else 58101L
set.seed(5812)
N <- 581012; nq <- 10
Z <- matrix(rnorm(N * nq), N, nq); Q <- Z
for (j in 2:nq) Q[, j] <- 0.3 * Q[, j - 1] + sqrt(1 - 0.09) * Z[, j]
rm(Z)
onehot <- function(k, p) { l <- sample.int(k, N, TRUE, p); M <- matrix(0, N, k); M[cbind(1:N, l)] <- 1; M }
W <- onehot(4, c(0.45, 0.05, 0.44, 0.06))
S <- onehot(40, { p <- rexp(40)^2; p / sum(p) })
X <- cbind(Q, W, S)
wstar <- c(rnorm(nq, 0, 0.6), rnorm(4, 0, 0.6), rnorm(40, 0, 1.1))
# The wilderness columns of a row sum to 1: shifting their weights centres x . w*.
wstar[11:14] <- wstar[11:14] - mean(as.vector(X %*% wstar))
eta <- as.vector(X %*% wstar)
y <- rbinom(N, 1, plogis(eta))
cat(sprintf("P(y = 1) %.3f; Bayes accuracy %.3f; columns never 1: %d\n", mean(y),
            mean((eta > 0) == y), sum(colSums(X) == 0)))
colnames(X) <- paste0("x.", seq_len(ncol(X)))
ntr <- N - ntest
fwrite(data.table(y = y[1:ntr], X[1:ntr, ]), file.path(out, "covtype-train.csv"))
fwrite(data.table(y = y[-(1:ntr)], X[-(1:ntr), ]), file.path(out, "covtype-test.csv"))
fwrite(data.table(w = wstar), file.path(out, "covtype-wstar.csv"))
