# nuts_accept.R: the reference of tests/samplers/test_nuts.c's adaptation test:
# the mean accept_stat__ of Stan's NUTS in sampling, per chain, on a 100-D
# standard normal at CmdStan's defaults (1000 warmup + 1000 draws, diagonal
# metric) for adapt_delta 0.6, 0.8 and 0.95: 40 chains each (seeds
# 101..110, 4 chains a seed).  Prints, per delta, the mean over chains, the
# sd of one chain's mean and the standard error of the mean.
# Run:  Rscript nuts_accept.R BOOSTDIR   (Debian's rstan: BOOSTDIR holds
# only a symlink boost -> /usr/include/boost)
# rstan 2.21.7 printed (November 2026):
#   delta 0.60: mean 0.6761 sd 0.0458 se 0.0072
#   delta 0.80: mean 0.8511 sd 0.0201 se 0.0032
#   delta 0.95: mean 0.9472 sd 0.0100 se 0.0016
suppressMessages(library(rstan))
a <- commandArgs(TRUE)
if (length(a)) rstan_options(boost_lib = a[1])
m <- stan_model(model_code =
  "parameters { vector[100] x; } model { x ~ std_normal(); }")
for (delta in c(0.6, 0.8, 0.95)) {
  acc <- c()
  for (s in 101:110) {
    f <- sampling(m, chains = 4, cores = 1, seed = s, refresh = 0,
                  control = list(adapt_delta = delta))
    sp <- get_sampler_params(f, inc_warmup = FALSE)
    acc <- c(acc, sapply(sp, function(x) mean(x[, "accept_stat__"])))
  }
  cat(sprintf("delta %.2f: mean %.4f sd %.4f se %.4f\n", delta, mean(acc),
              sd(acc), sd(acc) / sqrt(length(acc))))
}
