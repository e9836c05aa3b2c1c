test_that("the row store written from R is byte for byte drift data convert's", {
  skip_if_no_drift()
  out <- local_outdir()
  csv <- example_file("logistic", "pima-train.csv")
  ref <- file.path(out, "ref.drs")
  r <- processx::run(drift_path(), c("data", "convert", csv, ref))
  expect_equal(r$status, 0)
  mine <- file.path(out, "mine.drs")
  drift:::drift_write_rowstore(utils::read.csv(csv, check.names = FALSE),
                               mine)
  expect_identical(readBin(mine, "raw", file.size(mine)),
                   readBin(ref, "raw", file.size(ref)))
})

test_that("data are passed exactly: JSON numbers read back to the same doubles", {
  x <- c(0.1, 1 / 3, pi, 1e-300, 2^60 + 2^8, -2.5e-7, 123456789.123456789)
  expect_identical(as.numeric(drift:::drift_num_text(x)), x)
  f <- tempfile(fileext = ".json")
  withr::defer(unlink(f))
  m <- matrix(c(1 / 3, 2, 3, 4, 5, 6), 2, 3)
  a <- array(seq_len(24) / 7, c(2, 3, 4))
  drift:::drift_write_json(list(s = 1 / 3, v = x, m = m, a = a,
                                one = array(2, 1), k = 3L), f)
  back <- jsonlite::fromJSON(f, simplifyVector = TRUE)
  expect_identical(back$v, x)
  expect_identical(back$m, m)
  expect_identical(back$a, a)
  expect_identical(back$s, 1 / 3)
  expect_identical(back$one, 2L)
  expect_identical(back$k, 3L)
})

test_that("drift_check reports a model's rows and data", {
  skip_if_no_drift()
  d <- utils::read.csv(example_file("logistic", "pima-train.csv"),
                       check.names = FALSE)
  rep <- drift_check(example_file("logistic", "logistic.drift"),
                     data = list(x = as.matrix(d[, -1]), y = d$y),
                     quiet = TRUE)
  expect_true(any(grepl("rows: N = 200", rep)))
  expect_true(any(grepl("the data match the model", rep)))
})

test_that("block data go to JSON and rows to the row store for a .drift model", {
  skip_if_no_drift()
  out <- local_outdir()
  model <- "
data  { s : real<lower=0> }
rows  { y : real }
param { mu : real }
prior { mu ~ normal(0, 10) }
datum { y ~ normal(mu, s) }
"
  set.seed(9)
  y <- rnorm(500, 3, 2)
  fit <- drift_sample(model, data = list(y = y, s = 2, N = 500), seed = 1,
                      quiet = TRUE, output_dir = out)
  files <- fit$data_files
  expect_true(any(grepl("\\.drs$", files)))
  expect_true(any(grepl("\\.json$", files)))
  # conjugate normal posterior for mu
  prec <- 500 / 4 + 1 / 100
  m <- (sum(y) / 4) / prec
  s <- posterior::summarise_draws(fit$draws("mu"), "mean", "sd", "mcse_mean")
  expect_lt(abs(s$mean - m), 4.5 * s$mcse_mean)
  expect_lt(abs(s$sd / sqrt(1 / prec) - 1), 0.1)
})

test_that("a list of rows gives the same draws as drift reading the CSV file", {
  skip_if_no_drift()
  out <- local_outdir()
  csv <- example_file("logistic", "pima-train.csv")
  model <- example_file("logistic", "logistic.drift")
  d <- utils::read.csv(csv, check.names = FALSE)
  run <- function(data) drift_sample(model, data = data, chains = 1,
                                     seed = 8, iter = 100, warmup = 100,
                                     quiet = TRUE, output_dir = out)
  from_file <- suppressWarnings(run(csv))$draws()
  from_list <- suppressWarnings(run(list(x = as.matrix(d[, -1]),
                                         y = d$y)))$draws()
  expect_identical(unclass(from_list), unclass(from_file))
})

test_that("saved warmup draws come back with inc_warmup = TRUE only", {
  skip_if_no_drift()
  out <- local_outdir()
  d <- utils::read.csv(example_file("logistic", "pima-train.csv"),
                       check.names = FALSE)
  fit <- suppressWarnings(drift_sample(
    example_file("logistic", "logistic.drift"), data = d, seed = 1,
    chains = 2, warmup = 100, iter = 150, save_warmup = TRUE, quiet = TRUE,
    output_dir = out))
  expect_equal(dim(fit$draws()), c(150, 2, 9))
  expect_equal(dim(fit$draws(inc_warmup = TRUE)), c(250, 2, 9))
  expect_equal(dim(fit$sampler_diagnostics(inc_warmup = TRUE)), c(250, 2, 7))
  expect_equal(as.vector(unclass(fit$draws(inc_warmup = TRUE))[101:250, , ]),
               as.vector(unclass(fit$draws())))
  expect_s3_class(fit$draws("w", format = "draws_df"), "draws_df")
})
