# make-data.R: writes ridge.csv (200 rows, 5 predictors, x.1 = 1) and
# ridge.json (lambda = 0.5).  Run: Rscript make-data.R
set.seed(2)
n <- 200; D <- 5; lambda <- 0.5
X <- cbind(1, matrix(rnorm(n * (D - 1)), n))
w <- c(0.5, -1, 2, 0, 0.3)
y <- as.vector(X %*% w + rnorm(n, 0, sqrt(lambda)))
d <- data.frame(X, y)
names(d) <- c(paste0("x.", 1:D), "y")
write.csv(d, "ridge.csv", row.names = FALSE, quote = FALSE)
writeLines(sprintf('{"lambda": %g}', lambda), "ridge.json")
