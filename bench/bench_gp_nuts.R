# bench_gp_nuts.R: a Gaussian-process regression (bench_gp's model and
# data: exponentiated-quadratic kernel plus noise on the diagonal,
# multi_normal_cholesky through cholesky_decompose) sampled with nuts by
# one or more drift trees and by Stan (rstan), one after another in one
# sitting, at each N.  Not a test.
#
#   Rscript bench_gp_nuts.R WORK SEED CHAINS WARMUP DRAWS N... 
#
# WORK: a scratch directory (boost/ there, a symlink to /usr/include/boost,
# is made for Debian's rstan); DRIFT_TREES: "LABEL=DIR ...", build trees
# holding drift and plugins/samplers/.libs (each is run with its own
# plugins); DRIFT_SKIP: "LABEL=N ..." pairs not to run (a slow tree at a
# large N); STAN=0 leaves Stan out.  Per N and run: wall and CPU seconds
# (drift: the child's user + system time; Stan: the sampling() call's,
# compilation before it not counted), gradients (leapfrog steps of
# warmup and draws, from n_leapfrog__), CPU ms per gradient, the
# posterior means, and how many iterations (warmup included) of each
# drift tree's draws equal the first tree's (to 1e-8 relative) before
# they part.
a <- commandArgs(TRUE)
work <- a[1]; seed <- as.integer(a[2]); chains <- as.integer(a[3])
warmup <- as.integer(a[4]); draws <- as.integer(a[5])
ns <- as.integer(a[-(1:5)])
trees <- strsplit(strsplit(Sys.getenv("DRIFT_TREES"), " +")[[1]], "=")
skip <- strsplit(Sys.getenv("DRIFT_SKIP"), " +")[[1]]
use_stan <- Sys.getenv("STAN", "1") != "0"
dir.create(work, showWarnings = FALSE)

drift_model <- "data  { x : array[N] real  y : vector[N] }
param { rho : real<lower=0>  alpha : real<lower=0>  sigma : real<lower=0> }
prior {
  rho ~ gamma(25, 4)
  alpha ~ normal(0, 2)
  sigma ~ normal(0, 1)
  y ~ multi_normal_cholesky(rep_vector(0, N),
        cholesky_decompose(add_diag(gp_exp_quad_cov(x, alpha, rho), sigma)))
}
"
stan_code <- "data { int<lower=1> N; real x[N]; vector[N] y; }
parameters { real<lower=0> rho; real<lower=0> alpha; real<lower=0> sigma; }
model {
  matrix[N, N] K = cov_exp_quad(x, alpha, rho);
  for (i in 1:N) K[i, i] = K[i, i] + sigma;
  rho ~ gamma(25, 4);
  alpha ~ normal(0, 2);
  sigma ~ normal(0, 1);
  y ~ multi_normal_cholesky(rep_vector(0, N), cholesky_decompose(K));
}
"
mfile <- file.path(work, "gp.drift")
writeLines(drift_model, mfile)

# bench_gp's data: x on [0, 10] with a deterministic wobble, y = sin(x)
# plus a fixed pattern.
gp_data <- function(n) {
  i <- 0:(n - 1)
  x <- 10 * (i + 0.3 * sin(7 * i)) / n
  list(N = n, x = x, y = sin(x) + 0.3 * sin(13 * i))
}

cpu_child <- function(t) t[["user.child"]] + t[["sys.child"]]
pars <- c("rho", "alpha", "sigma")
rows <- list()
add <- function(...) rows[[length(rows) + 1]] <<- data.frame(...)

if (use_stan) {
  suppressMessages(library(rstan))
  if (!file.exists(file.path(work, "boost")))
    file.symlink("/usr/include/boost", file.path(work, "boost"))
  rstan_options(boost_lib = work)
  sm <- stan_model(model_code = stan_code)
}

for (n in ns) {
  d <- gp_data(n)
  dfile <- file.path(work, sprintf("gp%d.json", n))
  writeLines(jsonlite::toJSON(d, digits = NA, auto_unbox = TRUE), dfile)
  first <- NULL
  for (tr in trees) {
    label <- tr[1]; top <- tr[2]
    if (paste0(label, "=", n) %in% skip) next
    out <- file.path(work, sprintf("%s_%d.csv", label, n))
    args <- c("sample", mfile, "--data", dfile, "--chains", chains,
              "--warmup", warmup, "--iter", draws, "--seed", seed,
              "--save-warmup", "--quiet", "--out", out)
    Sys.setenv(DRIFT_PLUGIN_PATH = file.path(top, "plugins/samplers/.libs"),
               OPENBLAS_NUM_THREADS = "1")
    t <- system.time(st <- system2(file.path(top, "drift"), args))
    if (st != 0) stop(label, " failed at N = ", n)
    files <- if (chains == 1) out else
      sub("\\.csv$", sprintf("_%d.csv", seq_len(chains)), out)
    dr <- do.call(rbind, lapply(files, read.csv, comment.char = "#"))
    kept <- dr[unlist(lapply(seq_along(files), function(k)
      (k - 1) * (warmup + draws) + warmup + seq_len(draws))), ]
    # Iterations (warmup included) whose draws equal the first tree's
    # to 1e-8 relative before the first that does not.
    cur <- as.matrix(dr[, pars])
    same <- if (is.null(first) || nrow(first) != nrow(cur)) NA else {
      off <- apply(abs(cur - first) > 1e-8 * pmax(1, abs(first)), 1, any)
      if (any(off)) which(off)[1] - 1 else nrow(cur)
    }
    if (is.null(first)) first <- cur
    g <- sum(dr$n_leapfrog__)
    add(N = n, run = label, wall_s = t[["elapsed"]], cpu_s = cpu_child(t),
        grads = g, ms_per_grad = 1e3 * cpu_child(t) / g,
        rho = mean(kept$rho), alpha = mean(kept$alpha),
        sigma = mean(kept$sigma), iters_equal_first = same)
  }
  if (use_stan) {
    t <- system.time(fit <- sampling(sm, data = d, chains = chains,
                                     iter = warmup + draws, warmup = warmup,
                                     seed = seed, cores = 1, refresh = 0))
    sp <- get_sampler_params(fit, inc_warmup = TRUE)
    g <- sum(sapply(sp, function(s) sum(s[, "n_leapfrog__"])))
    m <- colMeans(as.matrix(fit, pars = pars))
    cpu <- t[["user.self"]] + t[["sys.self"]]
    add(N = n, run = "rstan", wall_s = t[["elapsed"]], cpu_s = cpu,
        grads = g, ms_per_grad = 1e3 * cpu / g, rho = m[["rho"]],
        alpha = m[["alpha"]], sigma = m[["sigma"]], iters_equal_first = NA)
  }
  print(do.call(rbind, rows[sapply(rows, function(r) r$N == n)]),
        row.names = FALSE, digits = 4)
  flush.console()
}
cat(sprintf("load average at the end: %s\n",
            scan("/proc/loadavg", what = "", n = 1, quiet = TRUE)))
