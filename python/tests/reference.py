"""Independent references for logistic regression with a N(0, s^2 I) prior,
in numpy alone: the posterior mode by Newton's method (IRLS), and the
posterior mean and sd by importance sampling from a multivariate t
around the mode (Laplace's covariance), with their Monte Carlo errors."""

import numpy as np


def log_post(W: np.ndarray, X: np.ndarray, y: np.ndarray, s2: float):
    """log p(w | y) up to a constant, for each row of W."""
    eta = X @ W.T                                   # n x M
    ll = (y[:, None] * eta - np.logaddexp(0.0, eta)).sum(axis=0)
    return ll - 0.5 * (W * W).sum(axis=1) / s2


def newton(X: np.ndarray, y: np.ndarray, s2: float, tol: float = 1e-12):
    """The posterior mode and the Hessian of -log p there."""
    w = np.zeros(X.shape[1])
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(X @ w)))
        g = X.T @ (y - p) - w / s2
        H = (X * (p * (1 - p))[:, None]).T @ X + np.eye(len(w)) / s2
        step = np.linalg.solve(H, g)
        w = w + step
        if np.max(np.abs(step)) < tol:
            break
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    H = (X * (p * (1 - p))[:, None]).T @ X + np.eye(len(w)) / s2
    return w, H


def posterior_moments(X, y, s2, draws=200_000, df=10.0, seed=12345):
    """Posterior mean and sd by self-normalised importance sampling with a
    multivariate t(df) proposal at the mode with the Laplace covariance;
    also the Monte Carlo standard error of the mean (delta method)."""
    rng = np.random.default_rng(seed)
    mode, H = newton(X, y, s2)
    d = len(mode)
    L = np.linalg.cholesky(np.linalg.inv(H))
    logw, W = [], []
    for _ in range(draws // 20_000):
        z = rng.standard_normal((20_000, d))
        u = rng.chisquare(df, 20_000) / df
        w = mode + (z @ L.T) / np.sqrt(u)[:, None]
        # log density of the t proposal, up to a constant
        r = np.linalg.solve(L, (w - mode).T)
        logq = -0.5 * (df + d) * np.log1p((r * r).sum(axis=0) / df)
        logw.append(log_post(w, X, y, s2) - logq)
        W.append(w)
    logw = np.concatenate(logw)
    W = np.concatenate(W)
    a = np.exp(logw - logw.max())
    a /= a.sum()
    mean = a @ W
    sd = np.sqrt(a @ (W - mean) ** 2)
    mcse = np.sqrt((a[:, None] ** 2 * (W - mean) ** 2).sum(axis=0))
    ess = 1.0 / (a * a).sum()
    return mean, sd, mcse, ess
