# ksd_ref.R: reference values of the IMQ kernel Stein discrepancy for
# tests/engine/stats/test_ksd.c, computed independently of drift: the
# Stein kernel is built here by R's symbolic differentiation (D) of the IMQ kernel
#     k(x, y) = (c^2 + |x - y|^2)^beta
# as k0(x, y) = sum_k [ s_k(x) s_k(y) k + s_k(x) dk/dy_k + s_k(y) dk/dx_k
#                       + d2k/dx_k dy_k ],
# not from drift's closed-form expression.  Draws: 7 points in 3-D (fixed
# seed); scores those of N(mu, P^-1) for a fixed precision P,
# s(x) = -P (x - mu).  Prints the draws and scores as C initialisers and,
# for two kernels, KSD^2 (V-statistic), its U-statistic and the per-
# coordinate parts of the V-statistic.  Its output is tests/data/ksd_ref.out:
#     Rscript tests/data/ksd_ref.R > tests/data/ksd_ref.out
set.seed(17)
n <- 7; d <- 3
x <- matrix(rnorm(n * d), n, d) * 0.8 + 0.3
mu <- c(0.5, -0.2, 0.1)
P <- matrix(c(2.0, 0.6, 0.0,
              0.6, 1.5, -0.4,
              0.0, -0.4, 0.8), 3, 3)
s <- -t(P %*% (t(x) - mu))

xs <- paste0("x", 1:d); ys <- paste0("y", 1:d)
kexpr <- parse(text = paste0("(c^2 + ", paste0("(", xs, " - ", ys, ")^2",
                                                collapse = " + "), ")^beta"))[[1]]
dkdx <- lapply(xs, function(v) D(kexpr, v))
dkdy <- lapply(ys, function(v) D(kexpr, v))
d2k <- lapply(1:d, function(k) D(dkdx[[k]], ys[k]))

stein <- function(cc, beta) {
  part <- matrix(0, n, n * d)
  parts <- numeric(d)
  total <- matrix(0, n, n)
  for (i in 1:n) for (j in 1:n) {
    env <- list(c = cc, beta = beta)
    for (k in 1:d) { env[[xs[k]]] <- x[i, k]; env[[ys[k]]] <- x[j, k] }
    kv <- eval(kexpr, env)
    for (k in 1:d) {
      term <- s[i, k] * s[j, k] * kv + s[i, k] * eval(dkdy[[k]], env) +
        s[j, k] * eval(dkdx[[k]], env) + eval(d2k[[k]], env)
      parts[k] <- parts[k] + term
      total[i, j] <- total[i, j] + term
    }
  }
  list(V = sum(total) / n^2, U = (sum(total) - sum(diag(total))) / (n * (n - 1)),
       parts = parts / n^2)
}

cat("/* draws x (7 x 3, row-major) */\n")
cat(paste0(sprintf("%.17g", t(x)), collapse = ", "), "\n")
cat("/* scores s = -P (x - mu) (7 x 3, row-major) */\n")
cat(paste0(sprintf("%.17g", t(s)), collapse = ", "), "\n")
for (kern in list(c(1, -0.5), c(2, -0.3))) {
  r <- stein(kern[1], kern[2])
  cat(sprintf("/* c = %g, beta = %g: KSD^2 (V), KSD^2 (U), parts */\n", kern[1], kern[2]))
  cat(sprintf("%.17g, %.17g,", r$V, r$U), paste0(sprintf("%.17g", r$parts), collapse = ", "), "\n")
}
