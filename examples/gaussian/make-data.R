# make-data.R: writes gaussian.csv, 100 centres c_i ~ N((1, -2), I).
# Run: Rscript make-data.R
set.seed(1)
n <- 100
d <- data.frame(c.1 = rnorm(n, 1, 1), c.2 = rnorm(n, -2, 1))
write.csv(d, "gaussian.csv", row.names = FALSE, quote = FALSE)
