# sec62-slice-data.R: synthetic data of SliceLocation's size (the AGLD
# paper's second section 6.2 set): 53,500 rows, 384 features (AR(1)
# correlation 0.5, unit variance), a linear signal of variance 0.30 plus
# N(0, 1) noise, as sec62-data.R does at YearPredictionMSD's size.  The
# first 4/5 (42,800 rows) train, the rest (10,700) are held out.
suppressMessages(library(data.table))
args <- commandArgs(TRUE)
set.seed(20200208)
Nall <- 53500; d <- 384; rho <- 0.5
Z <- matrix(rnorm(Nall * d), Nall, d)
X <- Z
for (j in 2:d) X[, j] <- rho * X[, j - 1] + sqrt(1 - rho^2) * Z[, j]
rm(Z)
wstar <- rnorm(d) * sqrt(0.30 / d)
y <- as.vector(X %*% wstar) + rnorm(Nall)
cat(sprintf("signal variance %.3f, noise variance 1\n", var(as.vector(X %*% wstar))))
colnames(X) <- paste0("x.", 1:d)
ntr <- floor(Nall * 4 / 5)
fwrite(data.table(y = y[1:ntr], X[1:ntr, ]), file.path(args[1], "slice-train.csv"))
fwrite(data.table(y = y[-(1:ntr)], X[-(1:ntr), ]), file.path(args[1], "slice-test.csv"))
fwrite(data.table(w = wstar), file.path(args[1], "slice-wstar.csv"))
