# sgld at the engine's defaults on 10^6 rows from an in-memory matrix,
# against glm: with N = 10^6 the posterior is the MLE's normal
# approximation to well under 0.01 sd, so glm's coefficients (moved by one
# Newton step to the mode under drift's N(0, 10) prior) and standard
# errors are the reference.

test_that("sgld on 10^6 rows matches glm within 0.1 sd", {
  skip_if_no_drift()
  set.seed(2026)
  N <- 1e6
  beta <- c(-0.5, 1, -0.7, 0.3, 0.05)
  X <- cbind(1, matrix(rnorm(N * 4), N, 4))
  y <- rbinom(N, 1, plogis(drop(X %*% beta)))
  g <- stats::glm.fit(X, y, family = stats::binomial())
  b <- g$coefficients
  p <- plogis(drop(X %*% b))
  H <- crossprod(X * (p * (1 - p)), X) + diag(1 / 10, 5)
  mode <- b - drop(solve(H, b / 10))
  se <- sqrt(diag(solve(H)))

  out <- local_outdir()
  fit <- drift_sample(example_file("logistic", "logistic.drift"),
                      data = list(x = X, y = y), sampler = "sgld",
                      seed = 1, quiet = TRUE, output_dir = out)
  s <- posterior::summarise_draws(
    posterior::subset_draws(fit$draws(), variable = "w"),
    "mean", "sd", "ess_bulk")
  expect_true(all(s$ess_bulk > 400))
  z <- (s$mean - mode) / se
  expect_true(all(abs(z) < 0.1), info = paste(round(as.numeric(z), 3), collapse = " "))
  expect_true(all(abs(s$sd / se - 1) < 0.15),
              info = paste(round(as.numeric(s$sd / se), 3), collapse = " "))
})
