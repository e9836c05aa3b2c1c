test_that("bayesplot draws the fit's draws_array to a PNG file", {
  skip_if_no_drift()
  skip_if_not_installed("bayesplot")
  skip_if_not(capabilities("png"), "R has no PNG device")
  out <- local_outdir()
  d <- utils::read.csv(example_file("logistic", "pima-train.csv"),
                       check.names = FALSE)
  fit <- drift_sample(example_file("logistic", "logistic.drift"), data = d,
                      seed = 2, quiet = TRUE,
                      output_dir = out)
  f <- file.path(out, "trace.png")
  grDevices::png(f, width = 800, height = 600)
  print(bayesplot::mcmc_trace(fit$draws(), pars = c("w[1]", "w[2]")))
  print(bayesplot::mcmc_areas(fit$draws(), regex_pars = "^w"))
  grDevices::dev.off()
  expect_true(file.exists(f))
  expect_gt(file.size(f), 5000)
  expect_equal(readBin(f, "raw", 8),
               as.raw(c(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)))
})
