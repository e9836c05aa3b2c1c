# NUTS on the Pima logistic regression against an independent reference:
# importance sampling from the Laplace approximation, computed here in R.

pima <- function() {
  d <- utils::read.csv(example_file("logistic", "pima-train.csv"),
                       check.names = FALSE)
  list(df = d, X = as.matrix(d[, -1]), y = d$y)
}

expect_matches_reference <- function(fit, ref) {
  dr <- fit$draws()
  w <- posterior::subset_draws(dr, variable = "w")
  s <- posterior::summarise_draws(w, "mean", "sd", "mcse_mean")
  expect_equal(posterior::variables(w), sprintf("w[%d]", 1:8))
  # within 4.5 combined standard errors of the two Monte Carlo estimates
  z <- (s$mean - ref$mean) / sqrt(s$mcse_mean^2 + ref$se_mean^2)
  expect_true(all(abs(z) < 4.5), info = paste(round(as.numeric(z), 2), collapse = " "))
  # sds within 10% (about 4 standard errors at these ESS)
  expect_true(all(abs(s$sd / ref$sd - 1) < 0.1),
              info = paste(round(as.numeric(s$sd / ref$sd), 3), collapse = " "))
}

test_that("nuts on the Pima data agrees with an importance-sampling reference", {
  skip_if_no_drift()
  p <- pima()
  ref <- logistic_reference(p$X, p$y)
  expect_gt(ref$ess, 2e4)
  # the reference's mode is glm's fit with the prior's penalty: close to it
  g <- stats::glm.fit(p$X, p$y, family = stats::binomial())
  expect_lt(max(abs(ref$mode - g$coefficients)), 0.05)

  out <- local_outdir()
  msgs <- capture_messages(
    fit <- drift_sample(example_file("logistic", "logistic.drift"),
                        data = list(x = p$X, y = p$y), seed = 11,
                        output_dir = out))
  # progress relayed as messages, CmdStan's lines
  expect_true(any(grepl("^Chain 1 Iteration: +[0-9]+ / 2000", msgs)))
  expect_true(any(grepl("^drift: chain 4: 2000 iterations", msgs)))
  expect_s3_class(fit, "drift_fit")
  expect_length(fit$csv_files, 4)
  expect_true(all(file.exists(fit$csv_files)))
  dr <- fit$draws()
  expect_s3_class(dr, "draws_array")
  expect_equal(dim(dr), c(1000, 4, 9))
  expect_equal(posterior::variables(dr)[1], "lp__")
  diag <- fit$sampler_diagnostics()
  expect_true(all(c("accept_stat__", "stepsize__", "treedepth__",
                    "n_leapfrog__", "divergent__", "energy__") %in%
                  posterior::variables(diag)))
  expect_equal(posterior::variables(fit$draws(c("lp__", "accept_stat__"))),
               c("lp__", "accept_stat__"))
  expect_matches_reference(fit, ref)

  # drift's own summary of the same files agrees with posterior's
  ds <- drift_summary(fit)
  ps <- fit$summary()
  expect_equal(ds$variable[seq_len(nrow(ps))], ps$variable)
  expect_equal(ds$mean[seq_len(nrow(ps))], as.numeric(ps$mean), tolerance = 1e-6)
  expect_equal(ds$ess_bulk[seq_len(nrow(ps))], as.numeric(ps$ess_bulk), tolerance = 1e-6)
  expect_equal(ds$rhat[seq_len(nrow(ps))], as.numeric(ps$rhat), tolerance = 1e-6)
  expect_output(print(fit), "w\\[8\\]")
})

test_that("a data.frame of rows and a Stan program given as text fit the same posterior", {
  skip_if_no_drift()
  p <- pima()
  ref <- logistic_reference(p$X, p$y)
  out <- local_outdir()
  fit <- drift_sample(example_file("logistic", "logistic.drift"),
                      data = p$df, seed = 3, quiet = TRUE, output_dir = out)
  expect_matches_reference(fit, ref)

  stan <- "
data {
  int<lower=0> N;
  int<lower=1> K;
  matrix[N, K] X;
  array[N] int<lower=0, upper=1> y;
}
parameters {
  vector[K] w;
}
model {
  w ~ normal(0, sqrt(10));
  y ~ bernoulli_logit(X * w);
}
"
  fit2 <- drift_sample(stan, data = list(N = nrow(p$X), K = ncol(p$X),
                                         X = p$X, y = p$y),
                       seed = 5, quiet = TRUE, output_dir = out)
  expect_matches_reference(fit2, ref)

  drift_prog <- drift_translate(stan, data = list(N = nrow(p$X),
                                                  K = ncol(p$X), X = p$X,
                                                  y = p$y))
  expect_match(drift_prog, "rows \\{")
  expect_match(drift_prog, "bernoulli_logit")
})
