test_that("a missing executable says how to point the package at drift", {
  expect_error(drift_path("/nonexistent/drift"),
               "DRIFT_BIN.*options\\(drift.bin")
  withr::local_envvar(DRIFT_BIN = "/nonexistent/drift", PATH = "/nonexistent")
  withr::local_options(drift.bin = NULL)
  expect_error(drift_sample("x.drift"), "cannot find the drift executable")
})

test_that("bad arguments give clear R errors", {
  skip_if_no_drift()
  model <- example_file("logistic", "logistic.drift")
  expect_error(drift_sample("no-such-model.drift"), "does not exist")
  expect_error(drift_sample(model, data = list(1, 2)), "must be named")
  expect_error(drift_sample(model, data = "no-such-data.csv"),
               "does not exist")
  expect_error(drift_sample(model, data = list(x = matrix(1, 3, 2),
                                               y = c(0, 1, NA))),
               "'y'.*NA")
  expect_error(drift_sample(model, data = list(x = matrix(1, 3, 2),
                                               y = c(0, 1))),
               "one entry per row")
  expect_error(drift_sample(model, itre = 10), "unknown option 'itre'")
  expect_error(drift_sample(model, chains = 0), "chains")
  expect_error(drift_sample(model, set = list(1)), "named list")
})

test_that("drift's own errors reach R with drift's message", {
  skip_if_no_drift()
  out <- local_outdir()
  model <- example_file("logistic", "logistic.drift")
  # an outcome outside bernoulli's support
  expect_error(drift_sample(model, data = list(x = matrix(1, 3, 2),
                                               y = c(0, 1, 2)),
                            quiet = TRUE, output_dir = out),
               "drift sample failed.*bernoulli")
  expect_error(drift_sample("param { w : real }\nprior { w ~ normal(0, ) }",
                            quiet = TRUE, output_dir = out),
               "drift sample failed.*error")
  expect_error(drift_sample(model, sampler = "no-such-sampler",
                            data = list(x = matrix(1, 3, 2), y = c(0, 1, 1)),
                            quiet = TRUE, output_dir = out),
               "no-such-sampler")
  expect_error(drift_check(model, data = list(x = matrix(1, 3, 2),
                                              y = c(0, 1, 2))),
               "drift check found problems")
})

test_that("an N that is not the number of rows is drift's error", {
  skip_if_no_drift()
  out <- local_outdir()
  model <- "
data  { s : real<lower=0> }
rows  { y : real }
param { mu : real }
prior { mu ~ normal(0, 10) }
datum { y ~ normal(mu, s) }
"
  expect_error(drift_sample(model, data = list(y = c(1, 2, 3), s = 1, N = 4),
                            quiet = TRUE, output_dir = out),
               "'N' is 4, but .* has 3 rows")
})
