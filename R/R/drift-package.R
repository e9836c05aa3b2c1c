# drift-package.R: the package's help page.

#' drift: R interface to the drift Bayesian inference engine
#'
#' Runs drift's samplers on models written in drift's language or as Stan
#' programs, as cmdstanr runs CmdStan.  Start with [drift_sample()]; the fit
#' it returns offers `$draws()` (a posterior draws_array), `$summary()`,
#' `$sampler_diagnostics()`, `$csv_files`, `$warnings`.  The package finds
#' the `drift` executable through [drift_path()].
#'
#' @section Fit methods:
#' \describe{
#'   \item{`$draws(variables = NULL, inc_warmup = FALSE, format = "draws_array")`}{
#'     lp__ and the model's quantities (Stan's names: `w[1]`), iterations x
#'     chains x variables; sampler columns such as `accept_stat__` when named
#'     in `variables`.}
#'   \item{`$sampler_diagnostics(inc_warmup = FALSE, format = "draws_array")`}{
#'     the sampler's `__` columns but lp__.}
#'   \item{`$summary(variables = NULL, ...)`}{`posterior::summarise_draws()`
#'     of `$draws(variables)`, `...` passed on.}
#'   \item{`$drift_summary(...)`}{[drift_summary()] of the fit's files.}
#'   \item{`$metadata()`}{the first file's header, as a named list.}
#'   \item{`$output()`}{drift's messages; `$notes()` the files' `# drift:` notes.}
#'   \item{`$csv_files`, `$warnings`, `$interrupted`, `$status`}{the draws
#'     files, drift's warnings, whether the run was stopped early, drift's
#'     exit status.}
#' }
#' @keywords internal
"_PACKAGE"
