# vb.R: Stan's ADVI (rstan vb, meanfield and fullrank, defaults but the
# seed) on the logistic case of variational.sh, for the side-by-side with
# drift variational.  Writes OUTDIR/stan_mf.csv and stan_fr.csv (columns
# w.1 ... w.D) and prints the wall seconds of each vb() call (compilation
# not counted).  Not a test.
#
#   Rscript vb.R WORK LR.CSV OUTDIR SEED     (WORK/boost/boost -> /usr/include/boost)
a <- commandArgs(TRUE)
suppressMessages(library(rstan))
rstan_options(boost_lib = file.path(a[1], "boost"))
d <- read.csv(a[2]); X <- as.matrix(d[, -1])
code <- "data { int<lower=0> N; int<lower=1> D; matrix[N, D] X; int<lower=0, upper=1> y[N]; }
parameters { vector[D] w; }
model { w ~ normal(0, sqrt(10)); y ~ bernoulli_logit(X * w); }"
m <- suppressWarnings(stan_model(model_code = code, model_name = "logistic"))
data <- list(N = nrow(X), D = ncol(X), X = X, y = d$y)
for (alg in c("meanfield", "fullrank")) {
  t <- system.time(f <- vb(m, data = data, algorithm = alg, seed = as.integer(a[4]), refresh = 0))
  w <- as.matrix(f, pars = "w")
  colnames(w) <- paste0("w.", seq_len(ncol(w)))
  write.csv(w, file.path(a[3], paste0("stan_", if (alg == "meanfield") "mf" else "fr", ".csv")),
            row.names = FALSE)
  cat(sprintf("    stan vb %s: wall %.1f s (load %s)\n", alg, t[["elapsed"]],
              scan("/proc/loadavg", what = "", n = 1, quiet = TRUE)))
}
