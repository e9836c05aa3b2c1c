# bench_nuts.R: the R half of bench_nuts.sh: for each case, drift's
# nuts then Stan's NUTS (rstan), one right after the other, both at
# CmdStan's defaults (4 chains, 1000 warmup + 1000 draws, delta 0.8,
# diagonal metric), and a table of min bulk ESS per CPU second with the
# drift / Stan ratio.  Not a test.
#
#   Rscript bench_nuts.R WORK TOP DRIFT PDB SEED CASE...
#
# WORK: a scratch directory holding lr.csv (the logistic case's data) and
# boost/ (a symlink boost -> /usr/include/boost for Debian's rstan); TOP:
# the source tree; DRIFT: the drift executable; PDB: the git directory of a
# posteriordb clone ("" for none); CASE: `logistic`, or a posteriordb
# posterior in tests/posteriordb (drift's model and data from there, Stan's
# program and data from PDB).
#
# Timing: drift is a child process (user + system CPU of it and its
# threads); Stan's is the CPU of the sampling() call (compilation is
# before, not counted), and the sampler's own elapsed warmup + sampling
# (get_elapsed_time) is printed beside it.  Both are bulk ESS from
# posterior::ess_bulk over the chains, minimised over the parameters drift
# writes (lp__ and generated quantities are left out).
a <- commandArgs(TRUE)
work <- a[1]; top <- a[2]; drift <- a[3]; pdb <- a[4]
seed <- as.integer(a[5]); cases <- a[-(1:5)]
suppressMessages({library(rstan); library(posterior)})
rstan_options(boost_lib = file.path(work, "boost"))

source(file.path(top, "bench/posteriordb.R"))

stan_case <- function(name) {
  if (name == "logistic") {
    d <- read.csv(file.path(work, "lr.csv"))
    X <- as.matrix(d[, -1])
    code <- "data { int<lower=0> N; int<lower=1> D; matrix[N, D] X; int<lower=0, upper=1> y[N]; }
parameters { vector[D] w; }
model { w ~ normal(0, sqrt(10)); y ~ bernoulli_logit_glm(X, 0, w); }"
    return(list(code = code, data = list(N = nrow(X), D = ncol(X), X = X, y = d$y),
                drift = c(file.path(top, "examples/logistic/logistic.drift"),
                          "--data", file.path(work, "lr.csv"))))
  }
  pdb_case(name)
}

load_now <- function() scan("/proc/loadavg", what = "", n = 1, quiet = TRUE)

# Stan compiles on every core; the timed pair runs on one (drift, a child,
# inherits the pinning), when taskset(1) exists.
all_cores <- if (nzchar(Sys.which("taskset")))
  system2("taskset", c("-p", "-c", Sys.getpid()), stdout = TRUE, stderr = FALSE) else ""
all_cores <- if (length(all_cores)) sub(".*: *", "", all_cores[1]) else ""
pin <- function(cores) if (nzchar(all_cores))
  invisible(system2("taskset", c("-p", "-c", cores, Sys.getpid()), stdout = FALSE))

rows <- list()
for (name in cases) {
  sc <- stan_case(name)
  m <- suppressWarnings(stan_model(model_code = sc$code, model_name = gsub("[^A-Za-z0-9]", "_", name)))
  pin("0")
  load0 <- load_now()
  out <- file.path(work, paste0("drift_", gsub("[^A-Za-z0-9]", "_", name), ".csv"))
  td <- system.time(st <- system2(drift, c("sample", sc$drift, "--seed", seed, "--out", out,
                                           "--quiet")))
  if (st != 0) stop("drift failed on ", name)
  drift_cpu <- td[["user.child"]] + td[["sys.child"]]
  ts <- system.time(f <- suppressWarnings(sampling(m, data = sc$data, chains = 4, cores = 1,
                                                    seed = seed, refresh = 0)))
  stan_cpu <- ts[["user.self"]] + ts[["sys.self"]] + ts[["user.child"]] + ts[["sys.child"]]
  stan_inner <- sum(get_elapsed_time(f))
  load1 <- load_now()
  pin(all_cores)
  files <- sprintf("%s_%d.csv", sub("\\.csv$", "", out), 1:4)
  ch <- lapply(files, function(p) read.csv(p, comment.char = "#", check.names = FALSE))
  vars <- grep("__$", names(ch[[1]]), value = TRUE, invert = TRUE)
  sd_ <- as_draws_array(f)
  svars <- vapply(vars, stan_name, "")
  keep <- svars %in% variables(sd_)
  if (!all(keep))
    message(name, ": not in Stan's output (left out): ", paste(vars[!keep], collapse = " "))
  vars <- vars[keep]; svars <- svars[keep]
  dm <- function(v) sapply(ch, function(x) x[[v]])
  dess <- min(sapply(vars, function(v) ess_bulk(dm(v))))
  sess <- min(sapply(svars, function(v) ess_bulk(extract_variable_matrix(sd_, v))))
  z <- max(mapply(function(v, s) {
    sm <- extract_variable_matrix(sd_, s)
    abs(mean(dm(v)) - mean(sm)) / sd(sm)
  }, vars, svars))
  r <- data.frame(case = name, d = length(vars), drift_ess = dess, drift_cpu = drift_cpu,
                  drift_eps = dess / drift_cpu, stan_ess = sess, stan_cpu = stan_cpu,
                  stan_sampler = stan_inner, stan_eps = sess / stan_cpu,
                  ratio = (dess / drift_cpu) / (sess / stan_cpu),
                  drift_leap = mean(unlist(lapply(ch, function(x) x$n_leapfrog__))),
                  stan_leap = mean(unlist(lapply(get_sampler_params(f, inc_warmup = FALSE),
                                                 function(x) x[, "n_leapfrog__"]))),
                  drift_acc = mean(unlist(lapply(ch, function(x) x$accept_stat__))),
                  stan_acc = mean(unlist(lapply(get_sampler_params(f, inc_warmup = FALSE),
                                                function(x) x[, "accept_stat__"]))),
                  z = z, load = paste0(load0, "/", load1))
  rows[[length(rows) + 1]] <- r
  cat(sprintf("%-42s %3d %8.0f %8.2f %9.1f %8.0f %8.2f %8.2f %9.1f %7.2f %6.1f %6.1f %5.2f %5.2f %6.3f %s\n",
              r$case, r$d, r$drift_ess, r$drift_cpu, r$drift_eps, r$stan_ess, r$stan_cpu,
              r$stan_sampler, r$stan_eps, r$ratio, r$drift_leap, r$stan_leap, r$drift_acc, r$stan_acc, r$z, r$load))
  if (length(rows) == 1) flush.console()
}
tab <- do.call(rbind, rows)
cat("\nmin bulk ESS per CPU second, 4 chains x (1000 warmup + 1000 draws), one core:\n")
cat(sprintf("%-42s %3s %8s %8s %9s %8s %8s %8s %9s %7s %6s %6s %5s %5s %6s %s\n", "case", "d",
            "drift", "cpu s", "ess/s", "stan", "cpu s", "sampler", "ess/s", "ratio",
            "leapD", "leapS", "accD", "accS", "|dz|", "load before/after"))
for (i in seq_len(nrow(tab))) with(tab[i, ],
  cat(sprintf("%-42s %3d %8.0f %8.2f %9.1f %8.0f %8.2f %8.2f %9.1f %7.2f %6.1f %6.1f %5.2f %5.2f %6.3f %s\n",
              case, d, drift_ess, drift_cpu, drift_eps, stan_ess, stan_cpu, stan_sampler,
              stan_eps, ratio, drift_leap, stan_leap, drift_acc, stan_acc, z, load)))
cat("ratio: drift / Stan in min bulk ESS per CPU second (> 1: drift faster);",
    "|dz|: largest |mean difference| in Stan sds;\nleapD/leapS, accD/accS: mean",
    "n_leapfrog__ and accept_stat__ in sampling\n")
