# modes.R: the R half of compare.sh, parts 1 and 2.  For each posteriordb
# posterior: (1) drift optimize against rstan's optimizing (L-BFGS, both
# without the Jacobian, both with the tight tolerances below, each from its
# own random init), the largest relative and sd-scaled difference of the
# modes; (2) drift laplace and drift pathfinder (defaults but --seed)
# against reference.csv (Stan NUTS): the largest |mean - ref| / ref_sd and
# the sd ratio farthest from 1.  Not a test.
#
#   Rscript modes.R WORK TOP DRIFT PDB SEED CASE...
#
# WORK: scratch dir with boost/boost -> /usr/include/boost; TOP: the source
# tree; DRIFT: the executable; PDB: a posteriordb git directory.
a <- commandArgs(TRUE)
work <- a[1]; top <- a[2]; drift <- a[3]; pdb <- a[4]
seed <- as.integer(a[5]); cases <- a[-(1:5)]
suppressMessages(library(rstan))
rstan_options(boost_lib = file.path(work, "boost"))

# Tight tolerances, the same numbers on both sides.
TOL <- list(iter = 20000, tol_obj = 1e-14, tol_rel_obj = 1, tol_grad = 1e-10,
            tol_rel_grad = 1, tol_param = 1e-10)
drift_tol <- c("--iter", TOL$iter, "--tol-obj", TOL$tol_obj, "--tol-rel-obj", TOL$tol_rel_obj,
               "--tol-grad", TOL$tol_grad, "--tol-rel-grad", TOL$tol_rel_grad,
               "--tol-param", TOL$tol_param)

source(file.path(top, "bench/posteriordb.R"))
stan_case <- function(name) {
  sc <- pdb_case(name)
  c(sc, list(ref = read.csv(file.path(sc$dir, "reference.csv"))))
}
read_draws <- function(p) read.csv(p, comment.char = "#", check.names = FALSE)
run_drift <- function(args) {
  t <- system.time(st <- system2(drift, args, stdout = FALSE, stderr = file.path(work, "drift.err")))
  list(status = st, wall = t[["elapsed"]])
}
# Largest |mean - ref| / ref_sd and the sd ratio farthest from 1 (on log scale).
judge <- function(d, ref) {
  keep <- ref$name %in% names(d)
  ref <- ref[keep, ]
  z <- abs(sapply(ref$name, function(v) mean(d[[v]])) - ref$mean) / ref$sd
  r <- sapply(ref$name, function(v) sd(d[[v]])) / ref$sd
  list(z = max(z), zname = ref$name[which.max(z)], r = r[which.max(abs(log(r)))],
       rname = ref$name[which.max(abs(log(r)))], n = nrow(ref))
}

# A list of the parameters (shapes from skel, rstan's as_vector = FALSE
# par) filled from a vector named as Stan names them (beta[3]).
to_list <- function(skel, v) {
  lapply(setNames(names(skel), names(skel)), function(nm) {
    k <- length(skel[[nm]])
    if (k == 1 && is.null(dim(skel[[nm]])) && nm %in% names(v)) return(unname(v[nm]))
    x <- v[paste0(nm, "[", seq_len(k), "]")]
    if (anyNA(x)) skel[[nm]] else array(unname(x), dim = if (is.null(dim(skel[[nm]]))) k else dim(skel[[nm]]))
  })
}
# An independent Laplace approximation on Stan's own density: the mode of
# log_prob with the Jacobian (adjust_transform = TRUE) on the unconstrained
# scale by R's BFGS on rstan's gradient, the Hessian by optimHess (finite
# differences of rstan's gradient), NDRAWS Gaussian draws mapped back by
# constrain_pars.  Returns a matrix of draws, columns named as Stan.
r_laplace <- function(fit0, ndraws, start) {
  f <- function(u) tryCatch(-log_prob(fit0, u, adjust_transform = TRUE), error = function(e) Inf)
  g <- function(u) -grad_log_prob(fit0, u, adjust_transform = TRUE)
  o <- optim(start, f, g, method = "BFGS", control = list(reltol = 1e-15, maxit = 100000))
  o <- optim(o$par, f, g, method = "BFGS", control = list(reltol = 1e-15, maxit = 100000))
  H <- optimHess(o$par, f, g)
  L <- t(chol(solve(H)))
  z <- matrix(rnorm(ndraws * length(o$par)), length(o$par))
  d <- t(apply(L %*% z + o$par, 2, function(u) unlist(constrain_pars(fit0, u))))
  cp <- constrain_pars(fit0, o$par)
  colnames(d) <- unlist(lapply(names(cp), function(n)
    if (length(cp[[n]]) == 1 && is.null(dim(cp[[n]]))) n else paste0(n, "[", seq_along(cp[[n]]), "]")))
  d
}

out <- list()
set.seed(seed)
for (name in cases) {
  sc <- stan_case(name)
  m <- suppressWarnings(stan_model(model_code = sc$code, model_name = gsub("[^A-Za-z0-9]", "_", name)))
  # 1: modes
  so <- do.call(optimizing, c(list(m, data = sc$data, algorithm = "LBFGS", seed = seed,
                                   as_vector = TRUE, hessian = FALSE), TOL))
  f_opt <- file.path(work, paste0(name, "_opt.csv"))
  ro <- run_drift(c("optimize", sc$drift, drift_tol, "--seed", seed, "--out", f_opt))
  dopt <- read_draws(f_opt)
  vars <- setdiff(names(dopt), "lp__")
  svars <- vapply(vars, stan_name, "")
  keep <- svars %in% names(so$par); vars <- vars[keep]; svars <- svars[keep]
  dv <- unlist(dopt[1, vars]); sv <- so$par[svars]
  # Stan's log density (no Jacobian, as both optimisers) at drift's mode
  # minus at Stan's: > 0 means drift's point is higher on Stan's density.
  fit0 <- suppressWarnings(sampling(m, data = sc$data, chains = 0))
  sl <- optimizing(m, data = sc$data, algorithm = "LBFGS", seed = seed, as_vector = FALSE,
                   iter = 1)$par
  sv_all <- so$par; sv_d <- sv_all; sv_d[svars] <- dv
  lp_at <- function(v) log_prob(fit0, unconstrain_pars(fit0, to_list(sl, v)), adjust_transform = FALSE)
  dlp_stan <- lp_at(sv_d) - lp_at(sv_all)
  rel <- abs(dv - sv) / pmax(abs(sv), 1e-300)
  rsd <- sc$ref$sd[match(vars, sc$ref$name)]
  zsd <- abs(dv - sv) / rsd
  cat(sprintf("\n== %s (%d parameters)\n", name, length(vars)))
  cat(sprintf("optimize: stan return_code %d lp %.10g | drift exit %d lp %.10g | Stan's lp at drift's mode - at Stan's %.3g\n",
              so$return_code, so$value, ro$status, dopt$lp__[1], dlp_stan))
  print(data.frame(param = vars, drift = signif(dv, 10), stan = signif(sv, 10),
                   rel_diff = signif(rel, 3), diff_over_sd = signif(zsd, 3)), row.names = FALSE)
  # The same at both sides' default tolerances: how far each default stop
  # is from the tight mode (in ref sds), and from each other.
  sd0 <- optimizing(m, data = sc$data, algorithm = "LBFGS", seed = seed, as_vector = TRUE)
  f_opt0 <- file.path(work, paste0(name, "_opt0.csv"))
  ro0 <- run_drift(c("optimize", sc$drift, "--seed", seed, "--out", f_opt0))
  dv0 <- unlist(read_draws(f_opt0)[1, vars]); sv0 <- sd0$par[svars]
  def_d <- max(abs(dv0 - sv) / rsd); def_s <- max(abs(sv0 - sv) / rsd); def_ds <- max(abs(dv0 - sv0) / rsd)
  cat(sprintf("defaults: drift (exit %d) from the tight mode %.3g sd, Stan (rc %d) %.3g sd, drift from Stan %.3g sd\n",
              ro0$status, def_d, sd0$return_code, def_s, def_ds))
  # 2: laplace, pathfinder
  f_lap <- file.path(work, paste0(name, "_lap.csv"))
  rl <- run_drift(c("laplace", sc$drift, "--seed", seed, "--out", f_lap))
  f_pf <- file.path(work, paste0(name, "_pf.csv"))
  rp <- run_drift(c("pathfinder", sc$drift, "--seed", seed, "--out", f_pf))
  jl <- if (rl$status == 0) judge(read_draws(f_lap), sc$ref) else NULL
  # drift laplace against R's Laplace on Stan's density (20000 draws).
  rd <- r_laplace(fit0, 20000, unconstrain_pars(fit0, to_list(sl, so$par)))
  rref <- data.frame(name = vars, mean = colMeans(rd)[svars], sd = apply(rd, 2, sd)[svars])
  jr <- if (rl$status == 0) judge(read_draws(f_lap), rref) else NULL
  jr0 <- judge(setNames(as.data.frame(rd[, svars]), vars), sc$ref)
  jp <- if (rp$status == 0) judge(read_draws(f_pf), sc$ref) else NULL
  pk <- grep("Pareto", c(readLines(f_pf), readLines(file.path(work, "drift.err"))), value = TRUE)
  if (length(pk)) cat("pathfinder:", pk, "\n")
  out[[name]] <- data.frame(
    posterior = name, d = length(vars),
    opt_max_rel = max(rel), opt_worst = vars[which.max(rel)], opt_max_sd = max(zsd),
    opt_lp_diff = dlp_stan, def_d = def_d, def_s = def_s, def_ds = def_ds, stan_rc = so$return_code, drift_rc = ro$status,
    lap_z = if (is.null(jl)) NA else jl$z, lap_z_at = if (is.null(jl)) "-" else jl$zname,
    lap_sdr = if (is.null(jl)) NA else jl$r, lap_sdr_at = if (is.null(jl)) "-" else jl$rname,
    rl_z = jr0$z, rl_sdr = jr0$r, lvr_z = if (is.null(jr)) NA else jr$z,
    lvr_sdr = if (is.null(jr)) NA else jr$r,
    pf_z = if (is.null(jp)) NA else jp$z, pf_z_at = if (is.null(jp)) "-" else jp$zname,
    pf_sdr = if (is.null(jp)) NA else jp$r, pf_sdr_at = if (is.null(jp)) "-" else jp$rname)
  print(out[[name]], row.names = FALSE)
  flush.console()
}
tab <- do.call(rbind, out)
cat("\n== summary: optimize\n")
cat(sprintf("%-40s %3s %9s %-14s %9s %10s %3s %3s | %8s %8s %8s\n", "posterior", "d", "max_rel", "(at)",
            "max/sd", "dlp_stan", "src", "drc", "dft_drft", "dft_stan", "dft_d-s"))
for (i in seq_len(nrow(tab))) with(tab[i, ], cat(sprintf("%-40s %3d %9.2e %-14s %9.2e %10.2e %3d %3d | %8.2e %8.2e %8.2e\n",
  posterior, d, opt_max_rel, opt_worst, opt_max_sd, opt_lp_diff, stan_rc, drift_rc, def_d, def_s, def_ds)))
cat("max_rel: max |drift - stan| / |stan| over parameters; max/sd: max |drift - stan| / ref sd;\n",
    "dlp_stan: Stan's log density (no Jacobian) at drift's mode minus at Stan's; src, drc: return codes;\n",
    "dft_*: at default tolerances, max distance in ref sds of drift's / Stan's stop from Stan's tight mode, and of drift's from Stan's\n")
cat("\n== summary: laplace and pathfinder vs reference.csv (Stan NUTS)\n")
cat(sprintf("%-40s | %7s %-12s %7s %-12s | %7s %7s | %7s %7s | %7s %-12s %7s %-12s\n", "posterior",
            "lap_z", "(at)", "lap_sdr", "(at)", "Rlap_z", "Rlapsdr", "vsR_z", "vsR_sdr",
            "pf_z", "(at)", "pf_sdr", "(at)"))
for (i in seq_len(nrow(tab))) with(tab[i, ], cat(sprintf(
  "%-40s | %7.3f %-12s %7.3f %-12s | %7.3f %7.3f | %7.3f %7.3f | %7.3f %-12s %7.3f %-12s\n",
  posterior, lap_z, lap_z_at, lap_sdr, lap_sdr_at, rl_z, rl_sdr, lvr_z, lvr_sdr,
  pf_z, pf_z_at, pf_sdr, pf_sdr_at)))
cat("lap_z, pf_z: max |mean - ref_mean| / ref_sd; lap_sdr, pf_sdr: the sd / ref_sd farthest from 1;\n",
    "Rlap_*: R's own Laplace on Stan's density (20000 draws) against the reference;\n",
    "vsR_*: drift laplace against R's Laplace (z in R-Laplace sds)\n")
