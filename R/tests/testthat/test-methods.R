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

test_that("drift_laplace draws around the closed-form mode", {
  # With the Jacobian the mode has sigma^2 = S / (n - 1) and the negative
  # Hessian in (mu, log sigma) is diagonal there, n / sigma^2 for mu: mu's
  # Laplace sd is sigma / sqrt(n).  4000 draws: the mean's Monte Carlo sd
  # is sd / 63, the sd's about 1.1 %.
  skip_if_no_drift()
  set.seed(3)
  y <- rnorm(200, 1.5, 2)
  n <- length(y)
  sd_mu <- sqrt(sum((y - mean(y))^2) / (n - 1)) / sqrt(n)
  d <- drift_laplace(model, data = list(y = y), draws = 4000, seed = 2)
  expect_s3_class(d, "draws_array")
  mu <- as.vector(d[, , "mu"])
  expect_length(mu, 4000)
  expect_lt(abs(mean(mu) - mean(y)), 4 * sd_mu / sqrt(4000))
  expect_equal(sd(mu), sd_mu, tolerance = 0.05)
  expect_true(all(c("log_p__", "log_g__") %in% posterior::variables(d)))
  m <- drift_optimize(model, data = list(y = y), seed = 1, jacobian = TRUE)
  d2 <- drift_laplace(model, data = list(y = y), mode = m, draws = 4000,
                      seed = 2)
  expect_lt(abs(mean(as.vector(d2[, , "mu"])) - mean(y)),
            4 * sd_mu / sqrt(4000))
})

test_that("drift_generate recomputes the generated block of a fit", {
  skip_if_no_drift()
  set.seed(3)
  y <- rnorm(200, 1.5, 2)
  gq <- "rows { y : real }
param { mu : real }
prior { mu ~ normal(0, 10) }
datum { y ~ normal(mu, 1) }
generated { shifted = mu + 100 }
"
  fit <- drift_sample(gq, data = list(y = y), chains = 2, seed = 4,
                      iter = 1000, warmup = 500, quiet = TRUE)
  # the block changed: every value must be the new one's
  g <- drift_generate(sub("+ 100", "+ 200", gq, fixed = TRUE), fit,
                      data = list(y = y), seed = 5)
  expect_equal(dim(g)[1:2], c(1000L, 2L))
  expect_equal(as.vector(g[, , "shifted"]), as.vector(g[, , "mu"]) + 200,
               tolerance = 1e-8)
})

test_that("drift_pathfinder draws around the posterior of mu", {
  # 1000 resampled draws: mu's mean within a quarter of its sd of mean(y)
  # (Monte Carlo error about 0.05 sd, plus the approximation's), its sd
  # within 15 % of sigma / sqrt(n).
  skip_if_no_drift()
  set.seed(3)
  y <- rnorm(200, 1.5, 2)
  n <- length(y)
  sd_mu <- sqrt(sum((y - mean(y))^2) / (n - 1)) / sqrt(n)
  d <- drift_pathfinder(model, data = list(y = y), seed = 3)
  mu <- as.vector(d[, , "mu"])
  expect_length(mu, 1000)
  expect_lt(abs(mean(mu) - mean(y)), 0.25 * sd_mu)
  expect_equal(sd(mu), sd_mu, tolerance = 0.15)
  one <- drift_pathfinder(model, data = list(y = y), seed = 3,
                          num_paths = 1, num_draws = 200)
  expect_equal(dim(one)[1], 200L)
})

test_that("drift_variational fits the posterior of mu", {
  # meanfield ADVI: the approximation's mean of mu within a quarter of the
  # posterior sd of mean(y), its draws' sd within 25 % of sigma / sqrt(n);
  # sigma's draws (posterior mean about sd(y), sd about sd(y) / sqrt(2 n))
  # more than half a posterior sd off come with drift's warning naming it
  skip_if_no_drift()
  set.seed(3)
  y <- rnorm(200, 1.5, 2)
  n <- length(y)
  sd_mu <- sqrt(sum((y - mean(y))^2) / (n - 1)) / sqrt(n)
  said <- character()
  d <- withCallingHandlers(
    drift_variational(model, data = list(y = y), seed = 3),
    warning = function(w) {
      said <<- c(said, conditionMessage(w))
      invokeRestart("muffleWarning")
    })
  expect_equal(dim(d)[1], 1000L)
  expect_lt(abs(attr(d, "mean")[["mu"]] - mean(y)), 0.25 * sd_mu)
  expect_equal(sd(as.vector(d[, , "mu"])), sd_mu, tolerance = 0.25)
  sd_sigma <- sd(y) / sqrt(2 * n)
  if (abs(mean(d[, , "sigma"]) - sd(y)) > 0.5 * sd_sigma)
    expect_true(any(grepl("mean of sigma", said)))
})
