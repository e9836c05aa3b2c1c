# A run stopped mid-way (a timeout, or an R interrupt) sends drift one
# SIGINT; drift completes its files with the draws so far, marked
# interrupted, and the fit holds them.

long_run <- function(out, ...) {
  d <- utils::read.csv(example_file("logistic", "pima-train.csv"),
                       check.names = FALSE)
  drift_sample(example_file("logistic", "logistic.drift"), data = d,
               seed = 4, chains = 2, iter = 1e8, warmup = 100,
               output_dir = out, ...)
}

check_partial <- function(fit) {
  expect_true(fit$interrupted)
  expect_equal(fit$status, 130L)
  expect_length(fit$csv_files, 2)
  dr <- fit$draws()
  expect_gt(posterior::niterations(dr), 10)
  expect_lt(posterior::niterations(dr), 1e8)
  expect_equal(posterior::nchains(dr), 2)
  expect_false(anyNA(dr))
  expect_true(any(grepl("interrupted", fit$notes())))
}

test_that("a timeout stops drift with SIGINT and keeps the draws so far", {
  skip_if_no_drift()
  out <- local_outdir()
  t0 <- Sys.time()
  msgs <- capture_messages(fit <- long_run(out, timeout = 2))
  expect_true(any(grepl("timeout of 2 s reached", msgs)))
  expect_true(any(grepl("^Chain 1 Iteration", msgs)))
  expect_lt(as.numeric(difftime(Sys.time(), t0, units = "secs")), 30)
  check_partial(fit)
})

test_that("an R interrupt stops drift with SIGINT and returns the draws so far", {
  skip_if_no_drift()
  skip_on_os("windows")
  out <- local_outdir()
  # a SIGINT to this R process 3 s from now, as Ctrl-C would send
  killer <- processx::process$new(
    "sh", c("-c", sprintf("sleep 3; kill -INT %d", Sys.getpid())))
  withr::defer(killer$kill())
  t0 <- Sys.time()
  msgs <- capture_messages(fit <- long_run(out))
  expect_true(any(grepl("^drift: interrupted; stopping the run", msgs)))
  expect_true(any(grepl("interrupted by SIGINT", msgs)))
  expect_lt(as.numeric(difftime(Sys.time(), t0, units = "secs")), 30)
  check_partial(fit)
})
