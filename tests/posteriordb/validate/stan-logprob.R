# Stan's log density (rstan's log_prob on the unconstrained scale, with the
# Jacobian: adjust_transform = TRUE) of a posteriordb model at given points.
#   Rscript stan-logprob.R MODEL.stan DATA.json POINTS.json OUT.txt
# POINTS.json: a list of objects, each a point on the constrained scale
# named as Stan's parameters block.  OUT.txt: one log density a line.
suppressMessages(library(rstan))
if (dir.exists("/usr/include/boost"))  # Debian's r-cran-bh is virtual
  rstan_options(boost_lib = "/usr/include")
rstan_options(auto_write = TRUE)
a <- commandArgs(trailingOnly = TRUE)
sm <- stan_model(a[1])
d <- jsonlite::fromJSON(a[2])
fit <- sampling(sm, data = d, chains = 0)
pts <- jsonlite::fromJSON(a[3], simplifyVector = TRUE,
                          simplifyDataFrame = FALSE)
lp <- sapply(pts, function(p) log_prob(fit, unconstrain_pars(fit, p),
                                       adjust_transform = TRUE))
writeLines(sprintf("%.17g", lp), a[4])
