# centres2.R: the data of the Zig-Zag tests (tests/examples/test_zigzag.c
# and the installcheck): N = 1000 two-dimensional centres c_i ~ N((1, -2), S),
# S = [[4, 1.2], [1.2, 1]].  Under the gaussian model (sigma = 1, flat
# prior) the posterior is N(mean of the c_i, I / N) exactly; this prints
# that mean, which the tests recompute from the file.
# Run from tests/data:  Rscript centres2.R
library(MASS)
set.seed(20190601)
N <- 1000
C <- mvrnorm(N, c(1, -2), matrix(c(4, 1.2, 1.2, 1), 2))
df <- data.frame(c.1 = C[, 1], c.2 = C[, 2])
names(df) <- c("c.1", "c.2")
write.csv(df, "centres2.csv", row.names = FALSE, quote = FALSE)
df <- read.csv("centres2.csv", check.names = FALSE)
cat(sprintf("posterior mean %.10f %.10f, sd %.10f\n",
            mean(df[["c.1"]]), mean(df[["c.2"]]), 1 / sqrt(N)))
