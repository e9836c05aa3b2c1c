"""drift.optimize and drift.log_prob against closed forms: a normal model
with unknown mean and scale under flat priors, whose mode without the
Jacobian is the maximum-likelihood estimate and with it (log sigma's
Jacobian, sigma) has sigma^2 = S / (n - 1)."""

import math

import numpy as np
import pytest

import drift

MODEL = """rows { y : real }
param { mu : real  sigma : real<lower=0> }
datum { y ~ normal(mu, sigma) }
"""


@pytest.fixture(scope="module")
def ys():
    return np.random.default_rng(3).normal(1.5, 2.0, size=200)


def test_optimize_closed_form(drift_bin, ys):
    m = ys.mean()
    S = float(((ys - m) ** 2).sum())
    n = len(ys)
    mode = drift.optimize(MODEL, data={"y": ys}, seed=1, drift_bin=drift_bin,
                          tol_rel_grad=1e2)
    assert mode["mu"] == pytest.approx(m, rel=1e-6)
    assert mode["sigma"] == pytest.approx(math.sqrt(S / n), rel=1e-6)
    jac = drift.optimize(MODEL, data={"y": ys}, seed=1, jacobian=True,
                         drift_bin=drift_bin, tol_rel_grad=1e2)
    assert jac["mu"] == pytest.approx(m, rel=1e-6)
    assert jac["sigma"] == pytest.approx(math.sqrt(S / (n - 1)), rel=1e-6)


def test_log_prob_closed_form(drift_bin, ys):
    mu, sigma = 0.3, 1.7
    r = ys - mu
    ll = float(-0.5 * len(ys) * math.log(2 * math.pi * sigma ** 2)
               - (r ** 2).sum() / (2 * sigma ** 2))
    g_mu = float(r.sum() / sigma ** 2)
    # the gradient in log sigma (the unconstrained coordinate)
    g_ls = float(-len(ys) + (r ** 2).sum() / sigma ** 2)
    lp, g = drift.log_prob(MODEL, {"mu": mu, "sigma": sigma},
                           data={"y": ys}, drift_bin=drift_bin)
    assert lp == pytest.approx(ll + math.log(sigma), rel=1e-10)
    assert g["mu"] == pytest.approx(g_mu, rel=1e-9)
    assert g["sigma"] == pytest.approx(g_ls + 1.0, rel=1e-9)
    lp0, g0 = drift.log_prob(MODEL, {"mu": mu, "sigma": sigma},
                             data={"y": ys}, jacobian=False,
                             drift_bin=drift_bin)
    assert lp0 == pytest.approx(ll, rel=1e-10)
    assert g0["sigma"] == pytest.approx(g_ls, rel=1e-9)


def test_optimize_refusal(drift_bin):
    with pytest.raises(drift.DriftError, match="nope"):
        drift.optimize(MODEL, data={"y": np.ones(3)}, drift_bin=drift_bin,
                       nope=1)
