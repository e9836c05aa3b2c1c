set.seed(7)
J <- 100; D <- 4; N <- 100000
# group sizes: a few big, many small (Zipf-like), the smallest with 3 rows
w <- 1 / (1:J)^2; n <- pmax(3, round(w / sum(w) * N)); n[1] <- n[1] + (N - sum(n))
g <- rep(1:J, n)
x <- matrix(rnorm(N * D), N, D)
mu_a <- -0.5; tau_a <- 0.6; mu_b <- 0.8; tau_b <- 0.3
a <- mu_a + tau_a * rnorm(J); b <- mu_b + tau_b * rnorm(J)
beta <- c(0.5, -0.7, 0.2, 0)
eta <- a[g] + b[g] * x[,1] + x[,-1] %*% beta[-1]
y <- rbinom(N, 1, plogis(eta))
df <- data.frame(x = x, y = y, g = g)
names(df) <- c(paste0("x.", 1:D), "y", "g")
write.csv(df, "hier.csv", row.names = FALSE, quote = FALSE)
saveRDS(list(N = N, D = D, J = J, x = x, y = y, g = g), "hier.rds")
cat("sizes:", head(n), "...", tail(n), "\n")
