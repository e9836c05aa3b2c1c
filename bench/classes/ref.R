# ref.R: references for bench/classes, independent of drift: R's glm and
# lm (flat-prior posteriors: the models' N(0, 10) and N(0, 100) priors
# move nothing at these N), and rstan for the Student-t regression.
# Writes ref-pois.csv, ref-lin.csv, ref-badlr.csv, ref-rob.csv (name,mean,sd).
out <- function(nm, m, s, f)
  write.csv(data.frame(name = nm, mean = m, sd = s), f, row.names = FALSE,
            quote = FALSE)
d <- read.csv("pois.csv"); X <- as.matrix(d[, grep("^x", names(d))])
s <- summary(glm(d$y ~ X, family = poisson()))$coefficients
out(c("a", paste0("w.", 1:10)), s[, 1], s[, 2], "ref-pois.csv")
d <- read.csv("lin.csv"); X <- as.matrix(d[, grep("^x", names(d))])
l <- lm(d$y ~ X); s <- summary(l)$coefficients; n <- nrow(d); p <- 11
# sigma^2 | y ~ scaled inverse chi-square(n - p, RSS / (n - p)); the
# coefficients' marginal is Student-t with n - p degrees of freedom
set.seed(1); sg <- sqrt(sum(resid(l)^2) / rchisq(400000, n - p))
out(c("a", paste0("w.", 1:10), "sigma"), c(s[, 1], mean(sg)),
    c(s[, 2] * sqrt((n - p) / (n - p - 2)), sd(sg)), "ref-lin.csv")
d <- read.csv("badlr.csv"); X <- as.matrix(d[, grep("^x", names(d))])
s <- summary(glm(d$y ~ X, family = binomial()))$coefficients
out(c("a", paste0("w.", 1:8)), s[, 1], s[, 2], "ref-badlr.csv")
suppressMessages(library(rstan))
dir.create("bl", showWarnings = FALSE)
if (!file.exists("bl/boost")) file.symlink("/usr/include/boost", "bl/boost")
rstan_options(boost_lib = normalizePath("bl"))
fit <- stan("rob.stan", data = jsonlite::fromJSON("rob.json"), chains = 4,
            iter = 3000, warmup = 1000, seed = 1, cores = 1, refresh = 0)
s <- summary(fit)$summary; s <- s[rownames(s) != "lp__", ]
stopifnot(max(s[, "Rhat"]) < 1.01)
out(gsub("\\[(\\d+)\\]", ".\\1", rownames(s)), s[, "mean"], s[, "sd"],
    "ref-rob.csv")
