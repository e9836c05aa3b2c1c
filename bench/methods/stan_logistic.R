# stan_logistic.R: Stan on the logistic case of variational.sh (rstan,
# defaults but the seed; compilation not counted):
#   vb    ADVI, meanfield and fullrank: OUTDIR/stan_mf.csv, stan_fr.csv
#   nuts  NUTS, 4 chains x 1000 draws, the reference the others are judged
#         against: OUTDIR/stan_nuts.csv (pooled), with its largest R-hat
#         and smallest bulk ESS
# Each file has columns w.1 ... w.D; prints each call's wall seconds.
# Not a test.
#
#   Rscript stan_logistic.R WORK LR.CSV OUTDIR SEED vb|nuts
#       (WORK/boost/boost -> /usr/include/boost)
a <- commandArgs(TRUE)
suppressMessages(library(rstan))
rstan_options(boost_lib = file.path(a[1], "boost"))
d <- read.csv(a[2]); X <- as.matrix(d[, -1])
code <- "data { int<lower=0> N; int<lower=1> D; matrix[N, D] X; int<lower=0, upper=1> y[N]; }
parameters { vector[D] w; }
model { w ~ normal(0, sqrt(10)); y ~ bernoulli_logit(X * w); }"
m <- suppressWarnings(stan_model(model_code = code, model_name = "logistic"))
data <- list(N = nrow(X), D = ncol(X), X = X, y = d$y)
seed <- as.integer(a[4])
load <- function() scan("/proc/loadavg", what = "", n = 1, quiet = TRUE)
put <- function(f, name) {
  w <- as.matrix(f, pars = "w")
  colnames(w) <- paste0("w.", seq_len(ncol(w)))
  write.csv(w, file.path(a[3], name), row.names = FALSE)
}
if (a[5] == "vb") {
  for (alg in c("meanfield", "fullrank")) {
    t <- system.time(f <- vb(m, data = data, algorithm = alg, seed = seed,
                             refresh = 0))
    put(f, paste0("stan_", if (alg == "meanfield") "mf" else "fr", ".csv"))
    cat(sprintf("    stan vb %s: wall %.1f s (load %s)\n", alg,
                t[["elapsed"]], load()))
  }
} else {
  t <- system.time(f <- sampling(m, data = data, chains = 4, cores = 1,
                                 seed = seed, refresh = 0))
  put(f, "stan_nuts.csv")
  s <- summary(f, pars = "w")$summary
  cat(sprintf("    stan nuts: wall %.1f s, max R-hat %.4f, min n_eff %.0f (load %s)\n",
              t[["elapsed"]], max(s[, "Rhat"]), min(s[, "n_eff"]), load()))
}
