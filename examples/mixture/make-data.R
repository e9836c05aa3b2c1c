# make-data.R: writes mixture.csv, 100 points a_i ~ N((2, 1), 0.3^2 I).
# Run: Rscript make-data.R
set.seed(3)
n <- 100
d <- data.frame(a.1 = rnorm(n, 2, 0.3), a.2 = rnorm(n, 1, 0.3))
write.csv(d, "mixture.csv", row.names = FALSE, quote = FALSE)
