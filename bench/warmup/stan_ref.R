# stan_ref.R KIND DSEED NSEEDS BOOST: rstan on KIND_DSEED.csv (the current
# directory): a long reference run (4 chains of 5000 draws after 1000
# warmup, seed 999, started at 0) written to ref_KIND_DSEED.csv
# (name,mean,sd,rhat),
# then NSEEDS runs at Stan's defaults (4 chains, 1000 + 1000, seeds 1..),
# each judged as judge.py judges drift's: per chain, the worst
# |mean - ref| / ref_sd over the parameters and the worst sd ratio.
# BOOST: a symlink to /usr/include/boost (Debian's rstan needs it).
a <- commandArgs(TRUE)
kind <- a[1]; dseed <- a[2]; nseeds <- as.integer(a[3])
suppressMessages(library(rstan))
rstan_options(boost_lib = a[4])
d <- read.csv(sprintf("%s_%s.csv", kind, dseed))
data <- switch(kind,
  offset = list(N = nrow(d), y = d$y, x = d$x, z = d$z, e = d$e),
  roach = list(N = nrow(d), y = d$y, x = d$x, t = d$t, s = d$s, e = d$e),
  list(N = nrow(d), P = max(d$p), y = d$y, x = d$x, p = d$p))
m <- stan_model(sprintf("%s.stan", kind))
pars <- switch(kind, offset = c("b0", "b1", "b2"), roach = c("b0", "b1", "b2", "b3"),
               c("a", "b", "g", "s"))
# The reference starts every chain at zero on the unconstrained scale (all
# linear predictors 0): from Stan's random inits its own chains get lost
# here too (a reference run with R-hat 61 on the dose data), and the
# reference must not depend on the warmup being judged.
f <- sampling(m, data = data, chains = 4, iter = 6000, warmup = 1000, seed = 999,
              refresh = 0, init = 0)
s <- summary(f, pars = pars)$summary
if (max(s[, "Rhat"]) > 1.01) stop("the reference run did not mix: R-hat ", max(s[, "Rhat"]))
write.csv(data.frame(name = rownames(s), mean = s[, "mean"], sd = s[, "sd"], rhat = s[, "Rhat"]),
          sprintf("ref_%s_%s.csv", kind, dseed), row.names = FALSE)
lost_runs <- 0
for (seed in seq_len(nseeds)) {
  f <- sampling(m, data = data, chains = 4, seed = seed, refresh = 0)
  a <- extract(f, pars = pars, permuted = FALSE)
  z <- apply(abs(sweep(sweep(apply(a, c(2, 3), mean), 2, s[, "mean"]), 2, s[, "sd"], "/")), 1, max)
  r <- apply(apply(a, c(2, 3), sd) / matrix(s[, "sd"], 4, length(pars), byrow = TRUE), 1,
             function(v) max(v, 1 / v))
  lost <- sum(z > 0.5 | r > 1.6)
  lost_runs <- lost_runs + (lost > 0)
  cat(sprintf("stan %s seed %2d: %s%s\n", kind, seed,
              paste(sprintf("|z| %8.3g sd-ratio %8.3g", z, r), collapse = "  "),
              if (lost) sprintf("   LOST %d", lost) else ""))
}
cat(sprintf("stan %s: %d runs, %d with a lost chain\n", kind, nseeds, lost_runs))
