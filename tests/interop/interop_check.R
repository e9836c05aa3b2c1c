# interop_check.R: the draws rstan, cmdstanr and posterior return from
# drift's files equal the rows of the files themselves, and bayesplot plots
# them (tests/interop/test_interop.sh runs it).
#
#   Rscript interop_check.R RLIB SETS
#
# RLIB is where read-all installed cmdstanr; SETS names one run a line:
# "LABEL FILE..." (one file per chain).  The files are parsed here without
# any reader: the rows before CmdStan's "# Adaptation terminated" comment
# are saved warmup draws, the rows after it the draws.  Any error or
# warning of a reader fails the run.  Prints "ok LABEL ..." or
# "FAIL LABEL: why" per run; exit status 1 when one failed.
args <- commandArgs(trailingOnly = TRUE)
.libPaths(c(args[1], .libPaths()))
suppressMessages({
  library(posterior)
})

parse_file <- function(path) {
  lines <- readLines(path)
  lines <- lines[nzchar(trimws(lines))]
  comment <- startsWith(lines, "#")
  head <- which(!comment)[1]
  names <- strsplit(lines[head], ",")[[1]]
  marker <- which(lines == "# Adaptation terminated")
  marker <- marker[marker > head][1]
  if (is.na(marker)) stop(path, ": no '# Adaptation terminated' line")
  rows <- which(!comment)
  rows <- rows[rows > head]
  to_mat <- function(r) {
    if (!length(r)) return(matrix(numeric(0), 0, length(names), dimnames = list(NULL, names)))
    m <- do.call(rbind, lapply(strsplit(lines[r], ","), as.numeric))
    colnames(m) <- names
    m
  }
  list(names = names, warm = to_mat(rows[rows < marker]), post = to_mat(rows[rows > marker]))
}

same <- function(a, b) {
  a <- as.numeric(a); b <- as.numeric(b)
  length(a) == length(b) && all(abs(a - b) <= 1e-12 * pmax(1, abs(b)))
}

# r: a reader's result; fails on an error or a warning.
quietly <- function(who, expr) {
  w <- character(0)
  r <- withCallingHandlers(tryCatch(expr, error = function(e) stop(who, ": ", conditionMessage(e), call. = FALSE)),
                           warning = function(x) { w <<- c(w, conditionMessage(x)); invokeRestart("muffleWarning") })
  if (length(w)) stop(who, " warned: ", paste(unique(w), collapse = "; "), call. = FALSE)
  r
}

check <- function(label, files) {
  refs <- lapply(files, parse_file)
  names <- refs[[1]]$names
  K <- length(files)
  S <- nrow(refs[[1]]$post); W <- nrow(refs[[1]]$warm)
  model <- names[!endsWith(names, "__")]
  post <- function(chain, col) refs[[chain]]$post[, col]
  # rstan: every column but its seven sampler names is a "parameter".
  fit <- quietly("rstan::read_stan_csv", rstan::read_stan_csv(files))
  a <- quietly("rstan::extract", rstan::extract(fit, permuted = FALSE, inc_warmup = FALSE))
  if (dim(a)[1] != S || dim(a)[2] != K)
    stop(sprintf("rstan: %d draws x %d chains, the files hold %d x %d", dim(a)[1], dim(a)[2], S, K))
  rs_names <- rstan:::dotfnames_to_sqrfnames(names)
  for (k in seq_len(K)) for (col in names) {
    j <- match(rstan:::dotfnames_to_sqrfnames(col), dimnames(a)[[3]])
    if (is.na(j)) {
      sp <- attr(fit@sim$samples[[k]], "sampler_params")
      if (!(col %in% names(sp))) stop("rstan: no column ", col)
      v <- sp[[col]]; v <- v[(length(v) - S + 1):length(v)]
    } else v <- a[, k, j]
    if (!same(v, post(k, col))) stop("rstan: column ", col, " differs from the file")
  }
  s <- quietly("rstan::summary", rstan::summary(fit)$summary)
  # cmdstanr and posterior.
  r <- quietly("cmdstanr::read_cmdstan_csv", cmdstanr::read_cmdstan_csv(files))
  d <- r$post_warmup_draws
  # cmdstanr reads a fixed_param file's columns ending in __ (lp__ too,
  # 0 there) as neither variables nor sampler diagnostics.
  fixed <- any(readLines(files[1]) == "#     algorithm = fixed_param")
  vars <- if (fixed) model else c("lp__", model)
  if (niterations(d) != S || nchains(d) != K || nvariables(d) != length(vars))
    stop(sprintf("cmdstanr: %d draws x %d chains x %d variables, the files hold %d x %d x %d",
                 niterations(d), nchains(d), nvariables(d), S, K, length(vars)))
  vn <- variables(d)
  for (k in seq_len(K)) for (col in vars) {
    j <- match(cmdstanr:::repair_variable_names(col), vn)
    if (is.na(j) || !same(unclass(d)[, k, j], post(k, col)))
      stop("cmdstanr: column ", col, " differs from the file")
  }
  sd <- r$post_warmup_sampler_diagnostics
  for (col in if (fixed) character(0) else setdiff(names[endsWith(names, "__")], "lp__"))
    for (k in seq_len(K))
      if (!same(unclass(sd)[, k, col], post(k, col))) stop("cmdstanr: sampler column ", col, " differs")
  if (W) {
    dw <- r$warmup_draws
    if (is.null(dw) || niterations(dw) != W) stop("cmdstanr: ", if (is.null(dw)) 0 else niterations(dw), " warmup draws, the files hold ", W)
    for (k in seq_len(K)) for (col in model)
      if (!same(unclass(dw)[, k, match(cmdstanr:::repair_variable_names(col), variables(dw))], refs[[k]]$warm[, col]))
        stop("cmdstanr: warmup of ", col, " differs")
  } else if (!is.null(r$warmup_draws)) stop("cmdstanr: warmup draws in a file without saved warmup")
  sm <- quietly("posterior::summarise_draws", summarise_draws(d))
  for (col in vars) {
    want <- mean(unlist(lapply(seq_len(K), function(k) post(k, col))))
    got <- sm$mean[sm$variable == cmdstanr:::repair_variable_names(col)]
    if (!same(got, want) && abs(got - want) > 1e-9 * max(1, abs(want)))
      stop("posterior: mean of ", col, " is ", got, ", the files' ", want)
  }
  # bayesplot: the plots users make first, lp__ included.
  quietly("bayesplot", {
    plots <- list(bayesplot::mcmc_trace(d), bayesplot::mcmc_intervals(d),
                  bayesplot::mcmc_areas(d))
    if (K > 1) plots <- c(plots, list(bayesplot::mcmc_dens_overlay(d)))
    for (p in plots) invisible(ggplot2::ggplot_build(p))
    TRUE
  })
  sprintf("ok %s: %d chains x %d draws (+%d warmup), %d columns", label, K, S, W, length(names))
}

bad <- 0
for (line in readLines(args[2])) {
  f <- strsplit(trimws(line), "[ ]+")[[1]]
  if (!length(f) || !nzchar(f[1])) next
  msg <- tryCatch(check(f[1], f[-1]), error = function(e) paste0("FAIL ", f[1], ": ", gsub("\n", " ", conditionMessage(e))))
  if (startsWith(msg, "FAIL")) bad <- 1
  cat(substr(msg, 1, 500), "\n", sep = "")
}
quit(status = bad)
