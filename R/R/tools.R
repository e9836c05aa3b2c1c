# tools.R: drift's other commands for R users: summaries of draws files,
# checking a model against its data, translating a Stan program.  Not for
# sampling (sample.R).

#' Summarise draws files with drift's own summary
#'
#' Runs `drift summary` (mean, MCSE, sd, quantiles, bulk and tail ESS,
#' R-hat, computed as posterior computes them) on Stan CSV files.
#'
#' @param x a `drift_fit`, or paths to Stan CSV files (drift's or CmdStan's).
#' @param variables optional variable names (`"w"` for all of w, `"w[1]"`).
#' @param probs quantiles to report (default 0.05, 0.5, 0.95).
#' @param drift_bin path to the drift executable.
#' @return a data.frame, one row per quantity; drift's printed table is its
#'   attribute "text".
#' @export
drift_summary <- function(x, variables = NULL, probs = NULL,
                          drift_bin = NULL) {
  files <- if (inherits(x, "drift_fit")) x$csv_files else x
  if (!is.character(files) || !length(files))
    stop("drift_summary() takes a drift fit or paths to Stan CSV files",
         call. = FALSE)
  missing <- files[!file.exists(files)]
  if (length(missing))
    stop("no such file: ", paste(missing, collapse = ", "), call. = FALSE)
  args <- character()
  if (!is.null(variables))
    args <- c(args, "--vars", paste(variables, collapse = ","))
  if (!is.null(probs))
    args <- c(args, "-p", paste(drift_num_text(100 * probs), collapse = ","))
  tab <- drift_transport_summary(files, args, drift_bin)
  tab$name <- stan_variable_names(tab$name)
  names(tab)[names(tab) == "name"] <- "variable"
  class(tab) <- c("drift_summary", class(tab))
  tab
}

#' @export
print.drift_summary <- function(x, ...) {
  print.data.frame(x, digits = 3, row.names = FALSE, ...)
  invisible(x)
}

#' Check a model (and its data)
#'
#' Runs `drift check`: parses and type-checks the model and, with data,
#' checks that the data match it.
#'
#' @inheritParams drift_sample
#' @return (invisibly) drift's report as a character vector, printed unless
#'   quiet; an error with drift's message when the model or data are wrong.
#' @export
drift_check <- function(model, data = NULL, quiet = FALSE, drift_bin = NULL) {
  dir <- tempfile("drift-check-")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  model_file <- drift_transport_model_file(model, dir)
  data_files <- drift_transport_data_files(data, model_file, dir, drift_bin)
  r <- drift_transport_run(c("check", model_file,
                             data_args(data_files)),
                           path = drift_bin, quiet = TRUE)
  report <- c(r$stdout, grep("warning", r$stderr, value = TRUE))
  if (!identical(r$status, 0L))
    stop("drift check found problems:\n", paste(r$stderr, collapse = "\n"),
         call. = FALSE)
  if (!quiet) writeLines(report)
  invisible(report)
}

#' Translate a Stan program into drift's language
#'
#' @param stan_file path to a `.stan` file (or Stan program text).
#' @param data optional data (as for drift_sample) to open the program over.
#' @param out optional path for the `.drift` program.
#' @inheritParams drift_sample
#' @return the `.drift` program's text (invisibly when written to `out`).
#' @export
drift_translate <- function(stan_file, data = NULL, out = NULL,
                            drift_bin = NULL) {
  dir <- tempfile("drift-translate-")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  model_file <- drift_transport_model_file(stan_file, dir)
  if (!grepl("\\.stan$", model_file))
    stop("drift_translate() takes a Stan program (a .stan file or Stan ",
         "text)", call. = FALSE)
  data_files <- drift_transport_data_files(data, model_file, dir, drift_bin)
  r <- drift_transport_run(c("translate", model_file,
                             data_args(data_files)),
                           path = drift_bin, quiet = TRUE)
  if (!identical(r$status, 0L))
    stop("drift translate failed:\n", paste(r$stderr, collapse = "\n"),
         call. = FALSE)
  for (w in r$warnings) warning("drift: ", w, call. = FALSE)
  text <- paste(r$stdout, collapse = "\n")
  if (!is.null(out)) {
    writeLines(text, out)
    return(invisible(text))
  }
  text
}

#' The posterior mode
#'
#' Runs `drift optimize`: L-BFGS on the unconstrained scale, as CmdStan's
#' optimize method, without the constraint transforms' log-Jacobians
#' unless `jacobian = TRUE`.
#'
#' @inheritParams drift_sample
#' @param jacobian include the log-Jacobians (the mode on the
#'   unconstrained scale).
#' @param ... drift optimize's options by name, underscores for dashes
#'   (`tol_rel_grad = 1e2`, `iter = 5000`, ...).
#' @return a named numeric vector: lp__, the parameters (Stan's flat
#'   names, "w.1", ...) and the generated quantities at the mode; an error
#'   with drift's message when it refuses or the search fails.
#' @export
drift_optimize <- function(model, data = NULL, seed = NULL, jacobian = FALSE,
                           drift_bin = NULL, ...) {
  dir <- tempfile("drift-optimize-")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  out <- drift_method_run("optimize", model, data, dir, seed,
                          if (isTRUE(jacobian)) "--jacobian" else character(),
                          list(...), drift_bin)
  f <- read_stan_csv_file(out)
  stats::setNames(as.numeric(f$draws[1, ]), f$columns)
}

#' The log density and its gradient at a point
#'
#' Runs `drift log-prob` at one point, as CmdStan's log_prob method.
#'
#' @inheritParams drift_sample
#' @param point a named list of the parameters' constrained values.
#' @param jacobian include the constraint transforms' log-Jacobians (the
#'   default, as CmdStan).
#' @return a list: `lp`, the log density (every normalising constant
#'   kept), and `gradient`, its gradient on the unconstrained scale named
#'   by coordinate.
#' @export
drift_log_prob <- function(model, point, data = NULL, jacobian = TRUE,
                           drift_bin = NULL) {
  dir <- tempfile("drift-log-prob-")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  pfile <- file.path(dir, "point.json")
  drift_write_json(point, pfile)
  out <- drift_method_run("log-prob", model, data, dir, NULL,
                          c("--point", pfile,
                            if (!isTRUE(jacobian)) "--no-jacobian"),
                          list(), drift_bin)
  f <- read_stan_csv_file(out)
  g <- stats::setNames(as.numeric(f$draws[1, -1]),
                       sub("^g_", "", f$columns[-1]))
  list(lp = f$draws[1, 1][[1]], gradient = g)
}

# Runs `drift COMMAND` on model and data (written into dir) with args and
# options opts by name (underscores for dashes, logicals as 0 or 1), its
# output in dir as COMMAND.csv (that path returned); a failure stops with
# drift's message, drift's warnings become R warnings.
drift_method_run <- function(command, model, data, dir, seed, args, opts,
                             drift_bin) {
  model_file <- drift_transport_model_file(model, dir)
  data_files <- drift_transport_data_files(data, model_file, dir, drift_bin)
  out <- file.path(dir, paste0(command, ".csv"))
  a <- c(command, model_file, data_args(data_files), args)
  if (!is.null(seed)) a <- c(a, "--seed", as.character(seed))
  for (nm in names(opts)) {
    v <- opts[[nm]]
    if (is.logical(v)) v <- as.integer(v)
    a <- c(a, paste0("--", gsub("_", "-", nm)), drift_num_or_text(v))
  }
  r <- drift_transport_run(c(a, "--out", out), path = drift_bin, quiet = TRUE)
  if (!identical(r$status, 0L))
    stop("drift ", command, " failed:\n", paste(r$stderr, collapse = "\n"),
         call. = FALSE)
  for (w in grep("warning:", r$stderr, value = TRUE))
    warning(sub(".*warning: *", "", w), call. = FALSE)
  out
}

#' Draws from the Laplace approximation at the mode
#'
#' Runs `drift laplace`, as CmdStan's laplace method: draws from the
#' Gaussian on the unconstrained scale whose mean is the posterior mode and
#' whose covariance is the inverse of the negative Hessian there, with the
#' constraint transforms' log-Jacobians unless `jacobian = FALSE`.
#'
#' @inheritParams drift_sample
#' @param mode the mode: a named numeric vector as [drift_optimize()]
#'   returns, an optimize CSV file's path, or `NULL` (found by L-BFGS).
#' @param draws the number of draws.
#' @param jacobian include the constraint transforms' log-Jacobians.
#' @return a posterior::draws_array of one chain: `log_p__` (the log
#'   density at the draw), `log_g__` (the approximation's, up to its
#'   constant), the parameters and the generated quantities.
#' @export
drift_laplace <- function(model, data = NULL, mode = NULL, draws = 1000,
                          seed = NULL, jacobian = TRUE, drift_bin = NULL) {
  dir <- tempfile("drift-laplace-")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  args <- c("--draws", format(as.integer(draws)))
  if (!isTRUE(jacobian)) args <- c(args, "--no-jacobian")
  if (is.numeric(mode)) {
    mfile <- file.path(dir, "mode.csv")
    writeLines(c("# method = optimize", paste(names(mode), collapse = ","),
                 paste(format(unname(mode), digits = 17), collapse = ",")),
               mfile)
    args <- c(args, "--mode", mfile)
  } else if (!is.null(mode)) {
    args <- c(args, "--mode", mode)
  }
  out <- drift_method_run("laplace", model, data, dir, seed, args, list(),
                          drift_bin)
  as_draws_array_chains(list(read_stan_csv_file(out)$draws))
}

#' Generated quantities over an existing fit
#'
#' Runs `drift generate`, as CmdStan's standalone generated quantities: the
#' model's derived and generated blocks at every draw of a fit's files.
#'
#' @inheritParams drift_sample
#' @param fit a fit from [drift_sample()] or its Stan CSV files.
#' @return a posterior::draws_array, a chain per input file, of every
#'   column of the inputs with the generated ones recomputed.
#' @export
drift_generate <- function(model, fit, data = NULL, seed = NULL,
                           drift_bin = NULL) {
  files <- if (inherits(fit, "drift_fit")) fit$csv_files else fit
  dir <- tempfile("drift-generate-")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  out <- drift_method_run("generate", model, data, dir, seed,
                          c("--draws", files), list(), drift_bin)
  outs <- if (length(files) == 1) out else
    file.path(dir, sprintf("generate_%d.csv", seq_along(files)))
  as_draws_array_chains(lapply(outs, function(f) read_stan_csv_file(f)$draws))
}

#' Approximate draws by Pathfinder
#'
#' Runs `drift pathfinder`, as CmdStan's pathfinder method: L-BFGS paths,
#' the best Gaussian approximation of each by its ELBO, and several paths
#' pooled by Pareto-smoothed importance resampling.
#'
#' @inheritParams drift_sample
#' @param ... drift pathfinder's options by name, underscores for dashes
#'   (`num_paths = 4`, `num_draws = 1000`, `psis_resample = TRUE`, ...).
#' @return a posterior::draws_array of one chain: `lp_approx__`, `lp__`,
#'   the parameters and the generated quantities.
#' @export
drift_pathfinder <- function(model, data = NULL, seed = NULL,
                             drift_bin = NULL, ...) {
  dir <- tempfile("drift-pathfinder-")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  out <- drift_method_run("pathfinder", model, data, dir, seed, character(),
                          list(...), drift_bin)
  as_draws_array_chains(list(read_stan_csv_file(out)$draws))
}

#' Variational inference by ADVI
#'
#' Runs `drift variational`, as CmdStan's variational method: a meanfield
#' or fullrank Gaussian fitted to the posterior on the unconstrained scale,
#' with gradients from minibatches on large data.
#'
#' @inheritParams drift_sample
#' @param algorithm `"meanfield"` or `"fullrank"`.
#' @param ... drift variational's options by name, underscores for dashes
#'   (`output_samples = 1000`, `tol_rel_obj = 0.01`, `batch = ...`).
#' @return a posterior::draws_array of one chain of the approximation's
#'   draws (`lp__` = 0, `log_p__`, `log_g__`, the parameters and the
#'   generated quantities), with the approximation's mean (the file's first
#'   row) as its attribute `"mean"`.
#' @export
drift_variational <- function(model, data = NULL, algorithm = "meanfield",
                              seed = NULL, drift_bin = NULL, ...) {
  if (!algorithm %in% c("meanfield", "fullrank"))
    stop("algorithm must be \"meanfield\" or \"fullrank\"", call. = FALSE)
  dir <- tempfile("drift-variational-")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  out <- drift_method_run("variational", model, data, dir, seed,
                          c("--algorithm", algorithm, "--quiet"), list(...),
                          drift_bin)
  d <- read_stan_csv_file(out)$draws
  a <- as_draws_array_chains(list(d[-1, , drop = FALSE]))
  attr(a, "mean") <- d[1, ]
  a
}
