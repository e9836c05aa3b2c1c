# drift_optimize and drift_log_prob against closed forms: a normal model
# with unknown mean and scale under flat priors, whose mode without the
# Jacobian is the maximum-likelihood estimate and with it (log sigma's
# Jacobian, sigma) has sigma^2 = S / (n - 1).

model <- "rows { y : real }
param { mu : real  sigma : real<lower=0> }
datum { y ~ normal(mu, sigma) }
"

test_that("drift_optimize finds the closed-form modes", {
  skip_if_no_drift()
  set.seed(3)
  y <- rnorm(200, 1.5, 2)
  n <- length(y)
  S <- sum((y - mean(y))^2)
  m <- drift_optimize(model, data = list(y = y), seed = 1,
                      tol_rel_grad = 1e2)
  expect_equal(unname(m["mu"]), mean(y), tolerance = 1e-6)
  expect_equal(unname(m["sigma"]), sqrt(S / n), tolerance = 1e-6)
  j <- drift_optimize(model, data = list(y = y), seed = 1, jacobian = TRUE,
                      tol_rel_grad = 1e2)
  expect_equal(unname(j["sigma"]), sqrt(S / (n - 1)), tolerance = 1e-6)
})

test_that("drift_log_prob gives the closed-form density and gradient", {
  skip_if_no_drift()
  set.seed(3)
  y <- rnorm(200, 1.5, 2)
  mu <- 0.3
  sigma <- 1.7
  r <- y - mu
  ll <- sum(dnorm(y, mu, sigma, log = TRUE))
  g_ls <- -length(y) + sum(r^2) / sigma^2
  lp <- drift_log_prob(model, list(mu = mu, sigma = sigma),
                       data = list(y = y))
  expect_equal(lp$lp, ll + log(sigma), tolerance = 1e-10)
  expect_equal(unname(lp$gradient["mu"]), sum(r) / sigma^2,
               tolerance = 1e-9)
  expect_equal(unname(lp$gradient["sigma"]), g_ls + 1, tolerance = 1e-9)
  lp0 <- drift_log_prob(model, list(mu = mu, sigma = sigma),
                        data = list(y = y), jacobian = FALSE)
  expect_equal(lp0$lp, ll, tolerance = 1e-10)
})

test_that("drift_optimize passes drift's refusal on", {
  skip_if_no_drift()
  expect_error(drift_optimize(model, data = list(y = c(1, 2, 3)), nope = 1),
               "nope")
})
