# sample.R: drift_sample(), the package's run: checks the arguments, hands
# them to the transport and wraps what comes back as a fit object.  Not
# for how drift is reached (transport.R) or what a fit offers (fit.R).

#' Sample from a model's posterior with drift
#'
#' Runs one of drift's samplers (NUTS by default, or a minibatch sampler
#' such as `"sgld"`) on a model and data, as cmdstanr's `$sample()` runs
#' CmdStan, and returns a fit whose `$draws()` is a posterior draws_array.
#'
#' @param model a path to a `.drift` model or a `.stan` program, or the
#'   text of one (Stan text is recognised by its parameters or model
#'   block).
#' @param data a named list as cmdstanr takes (numbers, vectors, matrices,
#'   arrays), a data.frame (or named matrix) of rows with columns named as
#'   drift names them (`y`, `x.1`, ...), or paths to data files drift reads
#'   (CSV, CmdStan JSON, LIBSVM, a row store).  For a `.drift` model a
#'   list's rows variables (the model's `rows` block) are passed as a binary
#'   row store and the others as JSON; numbers are passed exactly.
#' @param sampler the sampler's name (see `drift samplers`).
#' @param chains number of chains.
#' @param seed random seed (an integer), or NULL for drift's own.
#' @param ... drift's options by name, e.g. `iter`, `warmup`, `thin`,
#'   `batch`, `passes`, `seconds`, `gradient`, `init`, `save_warmup = TRUE`,
#'   and the named lists `set = list(h = 1e-3)` (sampler hyperparameters),
#'   `model_set`, `data_set`.
#' @param output_dir directory for the draws files (kept after the run).
#' @param quiet TRUE: no progress messages.
#' @param timeout seconds after which the run is stopped as by Ctrl-C,
#'   keeping the draws so far (Inf: none).
#' @param drift_bin path to the drift executable (else `drift_path()`'s
#'   search).
#' @return a `drift_fit`.
#' @export
drift_sample <- function(model, data = NULL, sampler = "nuts", chains = 4,
                         seed = NULL, ..., output_dir = tempdir(),
                         quiet = FALSE, timeout = Inf, drift_bin = NULL) {
  drift_path(drift_bin)
  opts <- list(...)
  if (length(opts) && (is.null(names(opts)) || any(!nzchar(names(opts)))))
    stop("options in `...` must be named, e.g. iter = 2000", call. = FALSE)
  unknown <- setdiff(names(opts), names(drift_cli_options))
  if (length(unknown))
    stop("unknown option", if (length(unknown) > 1) "s", " ",
         paste0("'", unknown, "'", collapse = ", "), "; drift_sample() ",
         "takes ", paste(names(drift_cli_options), collapse = ", "),
         call. = FALSE)
  if (!is.character(sampler) || length(sampler) != 1 || !nzchar(sampler))
    stop("`sampler` must be a sampler's name, e.g. \"nuts\" or \"sgld\"",
         call. = FALSE)
  if (!is.numeric(chains) || length(chains) != 1 || chains < 1 ||
      chains != round(chains))
    stop("`chains` must be a positive whole number", call. = FALSE)
  if (!is.null(seed) && (!is.numeric(seed) || length(seed) != 1 ||
                         seed != round(seed) || seed < 0))
    stop("`seed` must be a non-negative whole number or NULL", call. = FALSE)
  if (!is.numeric(timeout) || length(timeout) != 1 || timeout <= 0)
    stop("`timeout` must be a positive number of seconds (Inf: none)",
         call. = FALSE)
  r <- drift_transport_sample(model, data, sampler, as.integer(chains), seed,
                              opts, output_dir, drift_bin, quiet, timeout)
  if (!r$interrupted && !identical(r$status, 0L)) {
    msg <- drift_transport_error_text(r)
    if (length(r$csv_files)) {
      warning("drift sample ended with status ", r$status,
              "; the draws it kept are in the fit:\n", msg, call. = FALSE)
    } else {
      stop("drift sample failed (status ", r$status, "):\n", msg,
           call. = FALSE)
    }
  }
  for (w in r$warnings) warning("drift: ", w, call. = FALSE)
  if (r$interrupted && !length(r$csv_files))
    warning("the run was interrupted before any draw was kept",
            call. = FALSE)
  new_drift_fit(r)
}
