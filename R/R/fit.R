# fit.R: the fit object drift_sample() returns, cmdstanr's way: an
# environment of methods ($draws(), $summary(), $sampler_diagnostics() ...)
# over the chains' Stan CSV files, read once and kept.  Not for running
# drift (transport.R) or for options (sample.R).

# Stan's name of a column as written in a CSV file: w.1 -> w[1],
# M.1.2 -> M[1,2]; sampler columns (lp__, ...) as they are.
stan_variable_names <- function(x) {
  m <- regmatches(x, regexec("^([^.]+)\\.([0-9]+(\\.[0-9]+)*)$", x))
  vapply(seq_along(x), function(i) {
    if (length(m[[i]]) == 0) return(x[i])
    paste0(m[[i]][2], "[", gsub(".", ",", m[[i]][3], fixed = TRUE), "]")
  }, character(1))
}

# Reads one Stan CSV file: list(warmup, draws) of numeric matrices (rows:
# draws, columns: the file's columns, by Stan's names) and the header's
# "key = value" comment lines.
read_stan_csv_file <- function(file) {
  lines <- readLines(file, warn = FALSE)
  comment <- startsWith(lines, "#")
  header_at <- which(!comment)[1]
  if (is.na(header_at))
    stop("'", file, "' holds no column header: not a Stan CSV file",
         call. = FALSE)
  cols <- strsplit(lines[header_at], ",", fixed = TRUE)[[1]]
  adapt_at <- grep("^# Adaptation terminated", lines)[1]
  body <- seq_along(lines) > header_at & !comment & nzchar(lines)
  parse <- function(which) {
    txt <- lines[which]
    if (!length(txt)) return(matrix(numeric(), 0, length(cols)))
    v <- scan(text = txt, what = numeric(), sep = ",", quiet = TRUE,
              na.strings = c("NA", "nan", "-nan", "NaN"))
    matrix(v, ncol = length(cols), byrow = TRUE)
  }
  if (!is.na(adapt_at)) {
    warm <- parse(body & seq_along(lines) < adapt_at)
    draws <- parse(body & seq_along(lines) > adapt_at)
  } else {
    warm <- parse(rep(FALSE, length(lines)))
    draws <- parse(body)
  }
  colnames(warm) <- colnames(draws) <- stan_variable_names(cols)
  meta <- lines[comment & seq_along(lines) < header_at]
  kv <- regmatches(meta, regexec("^#\\s*([A-Za-z_][A-Za-z0-9_.]*) = (.*)$",
                                 meta))
  kv <- kv[lengths(kv) == 3]
  metadata <- stats::setNames(lapply(kv, function(m) sub(" \\(Default\\)$",
                                                         "", m[3])),
                              vapply(kv, function(m) m[2], character(1)))
  notes <- grep("^# drift:", lines, value = TRUE)
  list(warmup = warm, draws = draws, metadata = metadata, notes = notes,
       columns = cols)
}

# Chains' matrices as a posterior::draws_array (iterations x chains x
# variables), cut to the shortest chain.
as_draws_array_chains <- function(mats) {
  n <- min(vapply(mats, nrow, integer(1)))
  vars <- colnames(mats[[1]])
  a <- array(NA_real_, c(n, length(mats), length(vars)),
             dimnames = list(iteration = NULL, chain = NULL, variable = vars))
  for (k in seq_along(mats))
    a[, k, ] <- mats[[k]][seq_len(n), , drop = FALSE]
  posterior::as_draws_array(a)
}

is_diagnostic <- function(x) endsWith(x, "__") & x != "lp__"

new_drift_fit <- function(result) {
  fit <- new.env(parent = emptyenv())
  fit$csv_files <- result$csv_files
  fit$warnings <- result$warnings
  fit$interrupted <- result$interrupted
  fit$status <- result$status
  fit$command <- result$command
  fit$model_file <- result$model_file
  fit$data_files <- result$data_files
  cache <- NULL
  chains <- function() {
    if (is.null(cache)) {
      if (!length(fit$csv_files))
        stop("this run left no draws (", if (fit$interrupted)
          "it was interrupted before any draw was kept" else
          "drift wrote no files", ")", call. = FALSE)
      cache <<- lapply(fit$csv_files, read_stan_csv_file)
    }
    cache
  }
  pick <- function(inc_warmup, keep) {
    mats <- lapply(chains(), function(ch) {
      m <- if (inc_warmup) rbind(ch$warmup, ch$draws) else ch$draws
      m[, keep(colnames(m)), drop = FALSE]
    })
    as_draws_array_chains(mats)
  }
  # lp__ and the model's quantities, as cmdstanr's $draws(); sampler
  # columns (accept_stat__, ...) when named in variables.
  fit$draws <- function(variables = NULL, inc_warmup = FALSE,
                        format = "draws_array") {
    d <- pick(inc_warmup, function(v) if (is.null(variables))
      !is_diagnostic(v) else rep(TRUE, length(v)))
    if (!is.null(variables)) {
      d <- posterior::subset_draws(d, variable = variables)
    }
    convert_draws(d, format)
  }
  fit$sampler_diagnostics <- function(inc_warmup = FALSE,
                                      format = "draws_array") {
    convert_draws(pick(inc_warmup, is_diagnostic), format)
  }
  fit$summary <- function(variables = NULL, ...) {
    posterior::summarise_draws(fit$draws(variables), ...)
  }
  fit$drift_summary <- function(...) drift_summary(fit$csv_files, ...)
  fit$metadata <- function() chains()[[1]]$metadata
  fit$num_chains <- function() length(fit$csv_files)
  fit$output <- function() result$stderr
  fit$notes <- function() unlist(lapply(chains(), `[[`, "notes"))
  class(fit) <- "drift_fit"
  fit
}

convert_draws <- function(d, format) {
  switch(format,
         draws_array = , array = posterior::as_draws_array(d),
         draws_matrix = , matrix = posterior::as_draws_matrix(d),
         draws_df = , df = , data.frame = posterior::as_draws_df(d),
         draws_list = , list = posterior::as_draws_list(d),
         draws_rvars = , rvars = posterior::as_draws_rvars(d),
         stop("unknown format '", format, "' (draws_array, draws_matrix, ",
              "draws_df, draws_list or draws_rvars)", call. = FALSE))
}

#' @export
print.drift_fit <- function(x, ..., max_rows = 10) {
  cat("drift fit:", x$num_chains(), "chain(s) of",
      basename(x$model_file %||% "?"), "\n")
  if (isTRUE(x$interrupted))
    cat("(interrupted: the draws are those kept before it stopped)\n")
  if (length(x$csv_files)) {
    s <- x$summary(NULL, "mean", "median", "sd", "mad",
                   ~posterior::quantile2(.x, probs = c(0.05, 0.95)),
                   posterior::default_convergence_measures())
    s <- as.data.frame(s)
    s[] <- lapply(s, function(col)
      if (is.numeric(col)) signif(as.numeric(col), 3) else col)
    print(utils::head(s, max_rows), row.names = FALSE)
    if (nrow(s) > max_rows)
      cat("#", nrow(s) - max_rows, "more rows: $summary() for all\n")
  }
  for (w in x$warnings) cat("warning:", w, "\n")
  invisible(x)
}

`%||%` <- function(a, b) if (is.null(a)) b else a
