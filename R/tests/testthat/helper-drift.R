# Where the tests find drift: the build's executable through DRIFT_BIN
# (plugins through DRIFT_PLUGIN_DIR / DRIFT_PLUGIN_PATH, as the C tests),
# the source tree's examples through srcdir.
skip_if_no_drift <- function() {
  ok <- tryCatch({ drift_path(); TRUE }, error = function(e) FALSE)
  if (!ok) skip("no drift executable: set DRIFT_BIN to the build's drift")
}

drift_srcdir <- function() {
  s <- Sys.getenv("srcdir", "")
  if (nzchar(s) && file.exists(file.path(s, "examples"))) return(s)
  s <- normalizePath(file.path(testthat::test_path(), "..", "..", ".."),
                     mustWork = FALSE)
  if (!file.exists(file.path(s, "examples", "logistic")))
    skip("the source tree's examples/ is not found: set srcdir")
  s
}

example_file <- function(...) file.path(drift_srcdir(), "examples", ...)

# A fresh output directory for one test, removed when the test ends.
local_outdir <- function(env = parent.frame()) {
  d <- tempfile("drift-rtest-")
  dir.create(d)
  withr::defer(unlink(d, recursive = TRUE), envir = env)
  d
}

# The posterior of Bayesian logistic regression with prior N(0, s2 I),
# independently of drift: its mode and Hessian by Newton's method, then
# self-normalised importance sampling from a multivariate t (5 degrees of
# freedom) centred there.  Returns means and sds with their standard errors.
logistic_reference <- function(X, y, s2 = 10, draws = 2e5, seed = 7) {
  d <- ncol(X)
  w <- rep(0, d)
  for (k in 1:50) {
    p <- plogis(drop(X %*% w))
    g <- crossprod(X, y - p) - w / s2
    H <- crossprod(X * (p * (1 - p)), X) + diag(1 / s2, d)
    step <- solve(H, g)
    w <- w + drop(step)
    if (max(abs(step)) < 1e-12) break
  }
  L <- chol(solve(H))
  set.seed(seed)
  nu <- 5
  z <- matrix(rnorm(draws * d), draws, d) %*% L
  u <- sqrt(rchisq(draws, nu) / nu)
  th <- sweep(z / u, 2, w, "+")
  Xty <- drop(crossprod(X, y))
  log_post <- function(th) {
    eta <- th %*% t(X)
    drop(th %*% Xty) - rowSums(pmax(eta, 0) + log1p(exp(-abs(eta)))) -
      rowSums(th^2) / (2 * s2)
  }
  lp <- numeric(draws)
  for (s in split(seq_len(draws), ceiling(seq_len(draws) / 1e4)))
    lp[s] <- log_post(th[s, , drop = FALSE])
  dev <- (z / u) %*% solve(L)          # whitened offsets, for the t density
  lq <- -(nu + d) / 2 * log1p(rowSums(dev^2) / nu)
  lw <- lp - lq
  wt <- exp(lw - max(lw))
  wt <- wt / sum(wt)
  mean <- colSums(th * wt)
  var <- colSums(sweep(th, 2, mean)^2 * wt)
  ess <- 1 / sum(wt^2)
  list(mode = w, mean = mean, sd = sqrt(var), se_mean = sqrt(var / ess),
       ess = ess)
}
