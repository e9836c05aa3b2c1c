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


def test_laplace_closed_form(drift_bin, ys):
    """With the Jacobian (log sigma's), the mode has mu = mean(y) and
    sigma^2 = S / (n - 1); the negative Hessian in (mu, log sigma) there is
    diagonal with n / sigma^2 for mu, so mu's Laplace sd is sigma / sqrt(n).
    4000 draws: the mean's Monte Carlo sd is sd / 63, the sd's 1.1 %."""
    m = ys.mean()
    n = len(ys)
    sigma = math.sqrt(float(((ys - m) ** 2).sum()) / (n - 1))
    sd = sigma / math.sqrt(n)
    fit = drift.laplace(MODEL, data={"y": ys}, draws=4000, seed=2,
                        drift_bin=drift_bin)
    mu = fit.draws()["mu"].ravel()
    assert len(mu) == 4000
    assert abs(mu.mean() - m) < 4 * sd / math.sqrt(4000)
    assert mu.std() == pytest.approx(sd, rel=0.05)
    assert "log_p__" in fit.column_names and "log_g__" in fit.column_names
    # the same with the mode given, as drift.optimize returns it
    mode = drift.optimize(MODEL, data={"y": ys}, seed=1, jacobian=True,
                          drift_bin=drift_bin)
    fit2 = drift.laplace(MODEL, data={"y": ys}, mode=mode, draws=4000,
                         seed=2, drift_bin=drift_bin)
    assert abs(fit2.draws()["mu"].mean() - m) < 4 * sd / math.sqrt(4000)


GQ_MODEL = """rows { y : real }
param { mu : real }
prior { mu ~ normal(0, 10) }
datum { y ~ normal(mu, 1) }
generated { shifted = mu + 100 }
"""


def test_generate_recomputes(drift_bin, ys, tmp_path):
    """drift.generate over a fit's files: one output per chain, the
    generated column recomputed at every draw by the model given (mu + 200
    where the fit had mu + 100), to the files' printed precision."""
    fit = drift.sample(GQ_MODEL, data={"y": ys}, chains=2, seed=4,
                       iter=1000, warmup=500, show_progress=False,
                       drift_bin=drift_bin)
    # the generated block changed: every value must be the new block's
    gen = drift.generate(GQ_MODEL.replace("+ 100", "+ 200"), fit,
                         data={"y": ys}, seed=5, drift_bin=drift_bin)
    assert gen.chains == 2 and gen.num_draws == 1000
    d = gen.draws()
    np.testing.assert_allclose(d["shifted"], d["mu"] + 200, rtol=0,
                               atol=1e-6)
    np.testing.assert_array_equal(d["mu"], fit.draws()["mu"])


def test_pathfinder_normal(drift_bin, ys):
    """Pathfinder on the normal model: 1000 resampled draws whose mu has
    the posterior's mean (mean(y); a quarter of its sd allows the Monte
    Carlo error, about 0.05 sd, and the approximation's) and sd
    (sigma / sqrt(n) within 15 %)."""
    m = ys.mean()
    n = len(ys)
    sd = math.sqrt(float(((ys - m) ** 2).sum()) / (n - 1)) / math.sqrt(n)
    fit = drift.pathfinder(MODEL, data={"y": ys}, seed=3,
                           drift_bin=drift_bin)
    mu = fit.draws()["mu"].ravel()
    assert len(mu) == 1000
    assert abs(mu.mean() - m) < 0.25 * sd
    assert mu.std() == pytest.approx(sd, rel=0.15)
    assert fit.column_names[:2] == ["lp_approx__", "lp__"]
    one = drift.pathfinder(MODEL, data={"y": ys}, seed=3, num_paths=1,
                           num_draws=200, drift_bin=drift_bin)
    assert one.num_draws == 200


def test_variational_normal(drift_bin, ys):
    """ADVI (meanfield) on the normal model: the approximation's mean of mu
    within a quarter of the posterior sd of mean(y) (Stan's stopping rule
    leaves the optimum's noise), its 1000 draws' sd within 25 % of
    sigma / sqrt(n) (meanfield is exact in mu up to the stopping noise);
    the mean's row kept apart from the draws."""
    m = ys.mean()
    n = len(ys)
    sd = math.sqrt(float(((ys - m) ** 2).sum()) / (n - 1)) / math.sqrt(n)
    fit = drift.variational(MODEL, data={"y": ys}, seed=3,
                            drift_bin=drift_bin)
    assert fit.num_draws == 1000
    assert abs(fit.variational_mean["mu"] - m) < 0.25 * sd
    mu = fit.draws()["mu"].ravel()
    assert mu.std() == pytest.approx(sd, rel=0.25)
    assert fit.column_names[:3] == ["lp__", "log_p__", "log_g__"]
