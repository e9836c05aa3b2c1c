library(rstan); options(mc.cores = 2); rstan_options(boost_lib = file.path(getwd(), "bl"))  # bl/boost -> /usr/include/boost (Debian rstan 2.21)
d <- readRDS("hier.rds")
m <- stan_model("hier.stan")
t0 <- Sys.time()
fit <- sampling(m, data = d, chains = 4, iter = 2000, warmup = 1000, seed = 11, refresh = 200)
el <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
print(get_elapsed_time(fit))
s <- summary(fit)$summary
s <- s[rownames(s) != "lp__", ]
nm <- gsub("\\[", ".", gsub("\\]", "", rownames(s)))
write.csv(data.frame(name = nm, mean = s[, "mean"], sd = s[, "sd"]), "ref_hier.csv", row.names = FALSE, quote = FALSE)
cat("wall", el, "max rhat", max(s[, "Rhat"]), "min ess", min(s[, "n_eff"]), "\n")
