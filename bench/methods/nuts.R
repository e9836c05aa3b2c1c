# nuts.R: Stan's NUTS (rstan sampling: 4 chains, 1000 warmup + 1000
# draws, defaults but the seed) on the logistic case of variational.sh, as
# the reference drift's ADVI and minibatch samplers are judged against.
# Writes OUTDIR/stan_nuts.csv (columns w.1 ... w.D, the 4000 draws
# pooled) and prints the wall seconds of sampling (compilation not
# counted), the largest R-hat and the smallest bulk ESS.  Not a test.
#
#   Rscript nuts.R WORK LR.CSV OUTDIR SEED     (WORK/boost/boost -> /usr/include/boost)
a <- commandArgs(TRUE)
suppressMessages(library(rstan))
rstan_options(boost_lib = file.path(a[1], "boost"))
d <- read.csv(a[2]); X <- as.matrix(d[, -1])
code <- "data { int<lower=0> N; int<lower=1> D; matrix[N, D] X; int<lower=0, upper=1> y[N]; }
parameters { vector[D] w; }
model { w ~ normal(0, sqrt(10)); y ~ bernoulli_logit(X * w); }"
m <- suppressWarnings(stan_model(model_code = code, model_name = "logistic"))
data <- list(N = nrow(X), D = ncol(X), X = X, y = d$y)
t <- system.time(f <- sampling(m, data = data, chains = 4, cores = 1,
                               seed = as.integer(a[4]), refresh = 0))
w <- as.matrix(f, pars = "w")
colnames(w) <- paste0("w.", seq_len(ncol(w)))
write.csv(w, file.path(a[3], "stan_nuts.csv"), row.names = FALSE)
s <- summary(f, pars = "w")$summary
cat(sprintf("    stan nuts: wall %.1f s, max R-hat %.4f, min n_eff %.0f (load %s)\n",
            t[["elapsed"]], max(s[, "Rhat"]), min(s[, "n_eff"]),
            scan("/proc/loadavg", what = "", n = 1, quiet = TRUE)))
