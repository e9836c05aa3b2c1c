# sec62-data.R: synthetic data of YearPredictionMSD's size: 515,345 rows,
# 90 correlated features (AR(1) correlation 0.5, unit variance), a linear
# signal explaining about a quarter of the variance of y plus N(0, 1) noise
# (the real data set's linear fit explains about as much).  The first 4/5
# (412,276 rows) train, the rest (103,069 rows) are held out.
suppressMessages(library(data.table))
args <- commandArgs(TRUE)
set.seed(20200207)
Nall <- 515345; d <- 90; rho <- 0.5
Z <- matrix(rnorm(Nall * d), Nall, d)
X <- Z
for (j in 2:d) X[, j] <- rho * X[, j - 1] + sqrt(1 - rho^2) * Z[, j]
rm(Z)
wstar <- rnorm(d) * sqrt(0.33 / d)  # E Var(x.w) = 0.33
y <- as.vector(X %*% wstar) + rnorm(Nall)
cat(sprintf("signal variance %.3f, noise variance 1\n", var(as.vector(X %*% wstar))))
colnames(X) <- paste0("x.", 1:d)
ntr <- floor(Nall * 4 / 5)
fwrite(data.table(y = y[1:ntr], X[1:ntr, ]), file.path(args[1], "sec62-train.csv"))
fwrite(data.table(y = y[-(1:ntr)], X[-(1:ntr), ]), file.path(args[1], "sec62-test.csv"))
fwrite(data.table(w = wstar), file.path(args[1], "sec62-wstar.csv"))
