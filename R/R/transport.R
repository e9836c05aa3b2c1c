# transport.R: how the package reaches drift: by running the `drift`
# executable in a child process, handing it the model and data as files
# (CmdStan JSON, drift's binary row store) and reading back its Stan CSV
# files and its messages.  Everything that knows about the executable, its
# options and its files lives here; the rest of the package calls only
# drift_transport_*() and works on the lists they return.  Not for the
# user-facing API (sample.R, fit.R, tools.R).

# ---- finding the executable ----------------------------------------------

#' Path to the drift executable
#'
#' Looks, in order, at `path`, the option `drift.bin`, the environment
#' variable `DRIFT_BIN`, then `drift` on the `PATH`.
#'
#' @param path optional path to a `drift` executable.
#' @return the path, or an error saying how to make drift findable.
#' @export
drift_path <- function(path = NULL) {
  tried <- character()
  candidates <- list(
    list(path, "the argument"),
    list(getOption("drift.bin"), "options(drift.bin)"),
    list(Sys.getenv("DRIFT_BIN", ""), "the environment variable DRIFT_BIN")
  )
  for (cand in candidates) {
    p <- cand[[1]]
    if (is.null(p) || !nzchar(p)) next
    p <- path.expand(p)
    if (file.exists(p) && !dir.exists(p) && file.access(p, 1) == 0)
      return(normalizePath(p))
    tried <- c(tried, sprintf("%s (%s): %s", p, cand[[2]],
                              if (!file.exists(p)) "no such file"
                              else "not an executable file"))
    # a path asked for by name is not replaced by another drift
    break
  }
  if (!length(tried)) {
    p <- Sys.which("drift")
    if (nzchar(p)) return(unname(p))
    tried <- "`drift` on the PATH: not found"
  }
  stop("cannot find the drift executable; tried\n  ",
       paste(tried, collapse = "\n  "),
       "\nBuild drift (./configure && make) and set ",
       "Sys.setenv(DRIFT_BIN = \"/path/to/drift\") or ",
       "options(drift.bin = \"/path/to/drift\"), or put drift on the PATH.",
       call. = FALSE)
}

#' The version of the drift executable
#' @inheritParams drift_path
#' @export
drift_version <- function(path = NULL) {
  r <- drift_transport_run(c("--version"), path = path, quiet = TRUE)
  trimws(r$stdout[1])
}

# ---- running a command ---------------------------------------------------

# Runs drift with args; returns list(status, stdout, stderr, warnings,
# interrupted).  stderr is read as it comes: progress lines ("Chain 1
# Iteration: ...") become messages unless quiet, "warning:" lines are
# collected.  An R interrupt (or timeout seconds passing) sends drift one
# SIGINT, after which drift finishes its files with the draws so far; the
# process is killed only if it has not ended within grace seconds.
drift_transport_run <- function(args, path = NULL, quiet = FALSE,
                                timeout = Inf, grace = 30, wd = NULL) {
  bin <- drift_path(path)
  if (!requireNamespace("processx", quietly = TRUE))
    stop("the processx package is needed to run drift", call. = FALSE)
  p <- processx::process$new(bin, args, stdout = "|", stderr = "|",
                             wd = wd, cleanup = TRUE)
  out <- character()
  err <- character()
  partial <- c(out = "", err = "")
  interrupted <- FALSE
  signalled_at <- NULL
  started <- Sys.time()
  # Progress and drift's other messages become R messages; warning lines
  # are raised as R warnings by the caller instead.
  relay_line <- function(line) {
    if (!quiet && !grepl("^(drift: )?warning: ", line))
      message(line)
  }
  take <- function(which, text) {
    if (!nzchar(text)) return(invisible())
    text <- paste0(partial[[which]], text)
    lines <- strsplit(text, "\n", fixed = TRUE)[[1]]
    if (!endsWith(text, "\n")) {
      partial[[which]] <<- lines[length(lines)]
      lines <- lines[-length(lines)]
    } else {
      partial[[which]] <<- ""
    }
    lines <- sub("\r$", "", lines)
    if (which == "err") {
      err <<- c(err, lines)
      for (l in lines) relay_line(l)
    } else {
      out <<- c(out, lines)
    }
  }
  drain <- function() {
    take("out", p$read_output())
    take("err", p$read_error())
  }
  stop_child <- function() {
    if (is.null(signalled_at) && p$is_alive()) {
      p$interrupt()
      signalled_at <<- Sys.time()
    }
  }
  # One poll loop; an interrupt while in it sends SIGINT and polls on.
  poll_until_done <- function() {
    while (p$is_alive() || p$is_incomplete_output() ||
           p$is_incomplete_error()) {
      p$poll_io(200)
      drain()
      if (!is.null(signalled_at) && p$is_alive() &&
          difftime(Sys.time(), signalled_at, units = "secs") > grace) {
        p$kill()
      }
      if (is.finite(timeout) && is.null(signalled_at) &&
          difftime(Sys.time(), started, units = "secs") > timeout) {
        interrupted <<- TRUE
        if (!quiet)
          message("drift: timeout of ", timeout, " s reached; stopping ",
                  "the run (the draws so far are kept)")
        stop_child()
      }
      if (!p$is_alive() && !p$is_incomplete_output() &&
          !p$is_incomplete_error())
        break
    }
  }
  repeat {
    done <- tryCatch({
      poll_until_done()
      TRUE
    }, interrupt = function(e) {
      interrupted <<- TRUE
      if (is.null(signalled_at)) {
        message("drift: interrupted; stopping the run (the draws so far ",
                "are kept; interrupt again to kill it)")
        stop_child()
      } else {
        p$kill()
      }
      FALSE
    })
    if (done) break
  }
  p$wait()
  drain()
  for (w in c("out", "err"))
    if (nzchar(partial[[w]])) take(w, "\n")
  status <- p$get_exit_status()
  if (is.null(status)) status <- NA_integer_
  warn <- grep("^(drift: )?warning: ", err, value = TRUE)
  list(status = status, stdout = out, stderr = err,
       warnings = sub("^(drift: )?warning: ", "", warn),
       interrupted = interrupted || isTRUE(status %in% c(130L, -2L)),
       command = c(bin, args))
}

# drift's own message for a failed command: its error lines, or the tail
# of its stderr.
drift_transport_error_text <- function(r) {
  e <- grep("error", r$stderr, value = TRUE)
  if (!length(e)) e <- utils::tail(r$stderr, 10)
  paste(e, collapse = "\n")
}

# ---- models --------------------------------------------------------------

# A model argument as a file: an existing .drift/.stan path is used as it
# is; text is written to a temporary file whose extension says which
# language it is in.
drift_transport_model_file <- function(model, dir = tempdir()) {
  if (!is.character(model) || length(model) != 1 || is.na(model))
    stop("`model` must be one string: a path to a .drift or .stan file, ",
         "or the text of a model", call. = FALSE)
  is_text <- grepl("[\n{]", model)
  if (!is_text) {
    if (!file.exists(model))
      stop("model file '", model, "' does not exist (give a path to a ",
           ".drift or .stan file, or the model's text)", call. = FALSE)
    if (!grepl("\\.(drift|stan)$", model))
      stop("model file '", model, "' must end in .drift (drift's language) ",
           "or .stan (a Stan program)", call. = FALSE)
    return(normalizePath(model))
  }
  lang <- drift_model_language(model)
  f <- tempfile("model-", tmpdir = dir, fileext = paste0(".", lang))
  writeLines(model, f)
  f
}

# "stan" when the text has Stan's blocks, else "drift".
drift_model_language <- function(text) {
  if (grepl("(^|\n)\\s*(parameters|model|transformed\\s+data)\\s*\\{", text))
    "stan" else "drift"
}

# The rows variables of a .drift model, from `drift check` without data:
# names of the entries of its data section marked "(one per row)".
drift_transport_rows_vars <- function(model_file, path = NULL) {
  r <- drift_transport_run(c("check", model_file), path = path, quiet = TRUE)
  if (!identical(r$status, 0L))
    stop("drift check ", model_file, " failed:\n",
         drift_transport_error_text(r), call. = FALSE)
  lines <- r$stdout
  start <- match("data:", lines)
  if (is.na(start)) return(character())
  rest <- lines[-seq_len(start)]
  end <- which(!grepl("^  ", rest))[1]
  if (!is.na(end)) rest <- rest[seq_len(end - 1)]
  rows <- grep("\\(one per row\\)", rest, value = TRUE)
  sub("^\\s*(\\S+).*$", "\\1", rows)
}

# ---- data ----------------------------------------------------------------

# Writes data for a run; returns the --data files.  data: NULL, paths to
# files drift reads (CSV, LIBSVM, row store, JSON), a data.frame or matrix
# of rows (one per row, columns named as drift names them: y, x.1, ...), or
# a named list as cmdstanr takes (CmdStan JSON).  For a .drift model a
# list's rows variables go to a row store, the rest to JSON; a Stan program
# takes its data as CmdStan JSON, whole.
drift_transport_data_files <- function(data, model_file, dir = tempdir(),
                                       path = NULL) {
  if (is.null(data)) return(character())
  if (is.character(data)) {
    missing <- data[!file.exists(data)]
    if (length(missing))
      stop("data file ", paste0("'", missing, "'", collapse = ", "),
           " does not exist", call. = FALSE)
    return(normalizePath(data))
  }
  if (is.matrix(data)) {
    if (is.null(colnames(data)))
      stop("a data matrix needs column names as drift names its columns ",
           "(y, x.1, x.2, ...), or pass a named list such as ",
           "list(x = X, y = y)", call. = FALSE)
    data <- as.data.frame(data, stringsAsFactors = FALSE)
  }
  if (is.data.frame(data)) {
    f <- tempfile("rows-", tmpdir = dir, fileext = ".drs")
    drift_write_rowstore(data, f)
    return(f)
  }
  if (!is.list(data))
    stop("`data` must be a named list, a data.frame, or paths to data ",
         "files (CSV, JSON, LIBSVM or a row store)", call. = FALSE)
  if (length(data) && (is.null(names(data)) || any(!nzchar(names(data)))))
    stop("every element of the `data` list must be named (as the model's ",
         "data are)", call. = FALSE)
  files <- character()
  if (grepl("\\.drift$", model_file) && length(data)) {
    rows <- intersect(names(data), drift_transport_rows_vars(model_file, path))
    if (length(rows)) {
      cols <- drift_rows_columns(data[rows])
      f <- tempfile("rows-", tmpdir = dir, fileext = ".drs")
      drift_write_rowstore(cols, f)
      files <- c(files, f)
      # the rest (N among them, which drift checks against the rows)
      data <- data[setdiff(names(data), rows)]
    }
  }
  if (length(data)) {
    f <- tempfile("data-", tmpdir = dir, fileext = ".json")
    drift_write_json(data, f)
    files <- c(files, f)
  }
  files
}

# The columns of rows variables, named as drift names them: a vector y
# gives y; a matrix x (one row per datum) x.1 ... x.K; an array N x a x b
# x.i.j (first index fastest in R's order, names by element).
drift_rows_columns <- function(vars) {
  n <- vapply(vars, function(v) {
    if (is.data.frame(v)) nrow(v)
    else if (is.null(dim(v))) length(v) else dim(v)[1]
  }, numeric(1))
  if (length(unique(n)) != 1)
    stop("the rows variables must have one entry per row each, but ",
         paste(sprintf("'%s' has %d", names(vars), n), collapse = ", "),
         call. = FALSE)
  out <- list()
  for (nm in names(vars)) {
    v <- vars[[nm]]
    if (is.data.frame(v)) v <- as.matrix(v)
    d <- dim(v)
    if (is.null(d) || length(d) == 1) {
      out[[nm]] <- as.vector(v)
    } else {
      idx <- as.matrix(expand.grid(lapply(d[-1], seq_len)))
      m <- matrix(v, nrow = d[1])
      for (j in seq_len(nrow(idx)))
        out[[paste(c(nm, idx[j, ]), collapse = ".")]] <- m[, j]
    }
  }
  as.data.frame(out, check.names = FALSE, optional = TRUE)
}

# Numbers as text that reads back to the same double: 15 significant
# digits where they do, else 17.
drift_num_text <- function(x) {
  if (is.integer(x) || is.logical(x)) return(as.character(as.integer(x)))
  s <- sprintf("%.15g", x)
  bad <- as.numeric(s) != x
  bad[is.na(bad)] <- FALSE
  s[bad] <- sprintf("%.17g", x[bad])
  s
}

# A named list as CmdStan JSON: scalars for length-one vectors without
# dim, arrays otherwise (a matrix as a list of its rows), numbers that
# read back exactly.
drift_write_json <- function(data, file) {
  to_json <- function(v, nm) {
    if (is.data.frame(v)) v <- as.matrix(v)
    if (is.factor(v)) v <- as.integer(v)
    if (!is.numeric(v) && !is.logical(v))
      stop("data '", nm, "' is of type ", typeof(v), "; drift takes ",
           "numbers (numeric, integer or logical vectors, matrices, arrays)",
           call. = FALSE)
    if (anyNA(v))
      stop("data '", nm, "' holds NA values; drift takes finite numbers",
           call. = FALSE)
    if (any(!is.finite(v)))
      stop("data '", nm, "' holds infinite values; drift takes finite ",
           "numbers", call. = FALSE)
    d <- dim(v)
    txt <- drift_num_text(as.vector(v))
    if (is.null(d)) {
      if (length(v) == 1) return(txt)
      return(paste0("[", paste(txt, collapse = ","), "]"))
    }
    nest <- function(txt, d) {
      if (length(d) == 1) return(paste0("[", paste(txt, collapse = ","), "]"))
      # R's order: first index fastest; JSON nests by the first index.
      a <- array(txt, d)
      parts <- vapply(seq_len(d[1]), function(i) {
        sub <- do.call(`[`, c(list(a, i), rep(list(TRUE), length(d) - 1),
                              list(drop = FALSE)))
        nest(as.vector(sub), d[-1])
      }, character(1))
      paste0("[", paste(parts, collapse = ","), "]")
    }
    nest(txt, d)
  }
  body <- vapply(names(data), function(nm) {
    paste0(jsonlite_quote(nm), ": ", to_json(data[[nm]], nm))
  }, character(1))
  writeLines(paste0("{\n", paste(body, collapse = ",\n"), "\n}"), file)
  invisible(file)
}

jsonlite_quote <- function(s) {
  s <- gsub("\\\\", "\\\\\\\\", s)
  s <- gsub("\"", "\\\\\"", s)
  paste0("\"", s, "\"")
}

# FNV-1a 64 of a raw vector, in 16-bit limbs (R has no 64-bit integers);
# returns the 8 bytes, little-endian.
drift_fnv1a64 <- function(bytes) {
  h <- c(0x2325, 0x8422, 0x9ce4, 0xcbf2)  # 0xcbf29ce484222325, low first
  b <- as.integer(bytes)
  for (k in seq_along(b)) {
    h[1] <- bitwXor(h[1], b[k])
    # h * 0x100000001b3 = h * 0x1b3 + (h << 40), mod 2^64
    m <- h * 0x1b3
    m[3] <- m[3] + h[1] * 256
    m[4] <- m[4] + h[2] * 256
    carry <- 0
    for (i in 1:4) {
      t <- m[i] + carry
      h[i] <- t %% 65536
      carry <- t %/% 65536
    }
  }
  lo <- h[1] + h[2] * 65536
  hi <- h[3] + h[4] * 65536
  c(u32_bytes(lo), u32_bytes(hi))
}

u32_bytes <- function(x) {
  as.raw(c(x %% 256, (x %/% 256) %% 256, (x %/% 65536) %% 256,
           (x %/% 16777216) %% 256))
}

u64_bytes <- function(x) c(u32_bytes(x %% 4294967296), u32_bytes(x %/% 4294967296))

# Writes a data.frame of numeric columns as drift's binary row store
# (src/engine/data/rowstore.c): a 96-byte prefix, the column table (name
# length, type 1 for integer-valued columns, name padded to 8 bytes), zero
# padding to 4096 bytes, then the rows' doubles, row-major.  Integers are
# written little-endian, as the endian field records.
drift_write_rowstore <- function(df, file) {
  if (!nrow(df) || !ncol(df))
    stop("the rows data are empty (", nrow(df), " rows, ", ncol(df),
         " columns)", call. = FALSE)
  nm <- names(df)
  if (is.null(nm) || any(!nzchar(nm)) || anyDuplicated(nm))
    stop("every data column needs a name of its own (as drift names ",
         "them: y, x.1, x.2, ...)", call. = FALSE)
  types <- integer(length(nm))
  for (j in seq_along(nm)) {
    v <- df[[j]]
    if (is.factor(v)) v <- as.integer(v)
    if (!is.numeric(v) && !is.logical(v))
      stop("data column '", nm[j], "' is of type ", class(v)[1],
           "; drift takes numbers", call. = FALSE)
    if (anyNA(v))
      stop("data column '", nm[j], "' holds NA values (row ",
           which(is.na(v))[1], "); drift takes finite numbers", call. = FALSE)
    if (any(!is.finite(v)))
      stop("data column '", nm[j], "' holds infinite values (row ",
           which(!is.finite(v))[1], "); drift takes finite numbers",
           call. = FALSE)
    types[j] <- as.integer(all(v == round(v)))
    df[[j]] <- as.double(v)
  }
  n_rows <- nrow(df)
  n_cols <- ncol(df)
  table <- raw()
  for (j in seq_along(nm)) {
    name <- charToRaw(enc2utf8(nm[j]))
    pad <- (8 - length(name) %% 8) %% 8
    table <- c(table, u32_bytes(length(name)), u32_bytes(types[j]), name,
               raw(pad))
  }
  header_bytes <- ceiling((96 + length(table)) / 4096) * 4096
  file_bytes <- header_bytes + n_rows * n_cols * 8
  prefix <- c(charToRaw("DRIFTRS"), as.raw(0x1a),
              u32_bytes(1), u32_bytes(0x01020304),
              u64_bytes(header_bytes), u64_bytes(n_rows), u64_bytes(n_cols),
              u64_bytes(0), u64_bytes(file_bytes), raw(8), raw(32))
  hdr <- c(prefix, table, raw(header_bytes - 96 - length(table)))
  hdr[57:64] <- drift_fnv1a64(hdr)
  con <- file(file, "wb")
  on.exit(close(con))
  writeBin(hdr, con)
  # Row-major doubles, in chunks of rows to bound memory.
  chunk <- max(1L, as.integer(2^22 %/% n_cols))
  for (s in seq(1, n_rows, by = chunk)) {
    e <- min(n_rows, s + chunk - 1)
    m <- do.call(rbind, lapply(df, function(v) v[s:e]))
    writeBin(as.vector(m), con, size = 8, endian = "little")
  }
  invisible(file)
}

# ---- runs ----------------------------------------------------------------

# --data FILE for each file.
data_args <- function(files) {
  if (!length(files)) return(character())
  as.vector(rbind("--data", files))
}

# drift's name for each option of drift_sample's `...`.
drift_cli_options <- c(
  iter = "--iter", warmup = "--warmup", thin = "--thin", batch = "--batch",
  passes = "--passes", seconds = "--seconds", gradient = "--gradient",
  access = "--access", init = "--init", save_warmup = "--save-warmup",
  grad_noise = "--grad-noise", max_memory = "--max-memory",
  chain_id = "--chain-id", test = "--test", eval_every = "--eval-every",
  emit = "--emit", threads = "--threads",
  generated_every = "--generated-every", step_timeout = "--step-timeout",
  save_gradients = "--save-gradients", model_set = "--model-set",
  data_set = "--data-set", set = "--set")

# The command-line arguments for options given as R values: flags for
# TRUE (omitted for FALSE), K=V pairs for the named lists set, model_set
# and data_set, the value as text otherwise.
drift_transport_option_args <- function(opts) {
  args <- character()
  for (nm in names(opts)) {
    v <- opts[[nm]]
    if (is.null(v)) next
    flag <- drift_cli_options[[nm]]
    if (nm %in% c("set", "model_set", "data_set")) {
      if (!is.list(v) && !is.vector(v) || is.null(names(v)) ||
          any(!nzchar(names(v))))
        stop("`", nm, "` must be a named list, e.g. ", nm,
             " = list(h = 1e-3)", call. = FALSE)
      for (k in names(v))
        args <- c(args, flag, paste0(k, "=", drift_num_or_text(v[[k]])))
    } else if (is.logical(v)) {
      if (length(v) != 1 || is.na(v))
        stop("`", nm, "` must be TRUE or FALSE", call. = FALSE)
      if (v) args <- c(args, flag)
    } else {
      if (length(v) != 1)
        stop("`", nm, "` must be a single value", call. = FALSE)
      args <- c(args, flag, drift_num_or_text(v))
    }
  }
  args
}

drift_num_or_text <- function(v) {
  if (is.numeric(v)) drift_num_text(v) else as.character(v)
}

# Runs a sampler; returns list(csv_files, warnings, status, interrupted,
# stderr, stdout, command).  files are the chains' Stan CSV files.
drift_transport_sample <- function(model, data, sampler, chains, seed,
                                   opts, output_dir, path, quiet,
                                   timeout) {
  dir.create(output_dir, showWarnings = FALSE, recursive = TRUE)
  model_file <- drift_transport_model_file(model, output_dir)
  data_files <- drift_transport_data_files(data, model_file, output_dir, path)
  stem <- file.path(normalizePath(output_dir),
                    paste0(sub("\\.(drift|stan)$", "", basename(model_file)),
                           "-", format(Sys.time(), "%Y%m%d%H%M%S"), "-",
                           paste(sample(c(0:9, letters), 6, TRUE),
                                 collapse = "")))
  args <- c("sample", model_file,
            data_args(data_files),
            "--sampler", sampler, "--chains", as.character(chains),
            "--out", paste0(stem, ".csv"))
  if (!is.null(seed)) args <- c(args, "--seed", drift_num_text(seed))
  if (quiet) args <- c(args, "--quiet")
  args <- c(args, drift_transport_option_args(opts))
  r <- drift_transport_run(args, path = path, quiet = quiet,
                           timeout = timeout)
  files <- if (chains == 1) paste0(stem, ".csv")
           else paste0(stem, "_", seq_len(chains), ".csv")
  r$csv_files <- files[file.exists(files)]
  r$model_file <- model_file
  r$data_files <- data_files
  r
}

# Runs `drift summary` on files; returns its table as a data.frame.
drift_transport_summary <- function(files, args = character(), path = NULL) {
  out <- tempfile("summary-", fileext = ".csv")
  on.exit(unlink(out))
  r <- drift_transport_run(c("summary", "--csv", out, args, files),
                           path = path, quiet = TRUE)
  if (!identical(r$status, 0L))
    stop("drift summary failed:\n", drift_transport_error_text(r),
         call. = FALSE)
  tab <- utils::read.csv(out, stringsAsFactors = FALSE, check.names = FALSE)
  attr(tab, "text") <- r$stdout
  attr(tab, "warnings") <- r$warnings
  tab
}
