"""The package's interface: data written exactly, Ctrl-C, warnings,
summary, ArviZ, the thin wrappers, and clear errors for bad input."""

import os
import signal
import subprocess
import threading
import warnings

import numpy as np
import pytest

import drift
from conftest import example

MODEL = example("logistic", "logistic.drift")

# drift's warnings on short test runs (low ESS) are expected here.
pytestmark = pytest.mark.filterwarnings("ignore::drift.DriftWarning")


def test_rowstore_matches_drift_data_convert(drift_bin, tmp_path):
    """Our writer and drift's converter give the same bytes for the same
    numbers (the CSV written with repr, which round-trips float64), on
    values that need all 17 digits."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((300, 3)) * 10.0 ** rng.integers(-300, 300,
                                                             (300, 3))
    y = rng.integers(0, 2, 300)
    csv = tmp_path / "d.csv"
    with open(csv, "w") as f:
        f.write("y,x.1,x.2,x.3\n")
        for yi, xi in zip(y, x):
            f.write(",".join([str(yi)] + [repr(float(v)) for v in xi]) + "\n")
    subprocess.run([drift_bin, "data", "convert", str(csv),
                    str(tmp_path / "ref.drs")], check=True,
                   capture_output=True)
    n = drift.rowstore.write(tmp_path / "ours.drs", {"y": y, "x": x})
    assert n == 300
    assert (tmp_path / "ours.drs").read_bytes() == \
        (tmp_path / "ref.drs").read_bytes()


def read_libsvm(path):
    """A LIBSVM file as (labels, scipy CSR matrix), in plain Python."""
    sp = pytest.importorskip("scipy.sparse")
    ys, rows, cols, vals = [], [], [], []
    with open(path) as f:
        for i, line in enumerate(f):
            t = line.split()
            ys.append(float(t[0]))
            for kv in t[1:]:
                k, v = kv.split(":")
                rows.append(i)
                cols.append(int(k) - 1)
                vals.append(float(v))
    X = sp.csr_matrix((vals, (rows, cols)), shape=(len(ys), max(cols) + 1))
    return np.array(ys), X


def test_sparse_rowstore_and_sample(drift_bin, tmp_path):
    """A scipy.sparse matrix is a sparse rows variable: the store is the
    bytes drift data convert makes of the LIBSVM file, and a run from the
    dict draws what a run from the file draws."""
    path = example("sparse", "train.libsvm")
    y, X = read_libsvm(path)
    subprocess.run([drift_bin, "data", "convert", path,
                    str(tmp_path / "ref.drs")], check=True,
                   capture_output=True)
    drift.rowstore.write(tmp_path / "ours.drs", {"y": y, "x": X})
    assert (tmp_path / "ours.drs").read_bytes() == \
        (tmp_path / "ref.drs").read_bytes()
    model = example("sparse", "sparse_logistic.drift")
    kw = dict(sampler="sgld", seed=2, chains=1, iter=200, batch=50,
              set={"h": 1e-3}, show_progress=False)
    a = drift.sample(model, data={"y": y.astype(np.int64), "x": X}, **kw)
    b = drift.sample(model, data=path, **kw)
    np.testing.assert_array_equal(a["w"], b["w"])


def test_rowstore_refuses_bad_columns(tmp_path):
    with pytest.raises(ValueError, match="not finite"):
        drift.rowstore.write(tmp_path / "a.drs", {"y": np.array([1.0, np.inf])})
    with pytest.raises(ValueError, match="rows"):
        drift.rowstore.write(tmp_path / "a.drs",
                             {"y": np.zeros(3), "x": np.zeros((4, 2))})


def test_interrupt_returns_draws_so_far(drift_bin, transport):
    """A KeyboardInterrupt (here SIGINT to this process, as Ctrl-C sends)
    stops drift, and the fit holds the draws up to then."""
    # Python raises KeyboardInterrupt on SIGINT only where SIGINT was not
    # ignored when it started (a job run in the background of a shell
    # inherits it ignored): install the handler a terminal session has.
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(2.0, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        # Long enough never to end by itself within the 2 s, short and
        # thinned enough that a lost signal fails the test in minutes
        # instead of hanging it.
        with pytest.warns(drift.DriftWarning, match="interrupted"):
            fit = drift.sample(MODEL, data=example("logistic",
                                                   "pima-train.csv"),
                               seed=1, chains=2, iter=2 * 10 ** 6,
                               thin=100, show_progress=False)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, old)
    assert fit.interrupted
    assert fit.chains == 2
    assert 0 < fit.num_draws < 2 * 10 ** 4
    assert fit["w"].shape == (2, fit.num_draws, 8)
    assert np.all(np.isfinite(fit["w"]))
    assert any("interrupted" in n for n in fit._chains[0].notes)


def test_signal_from_elsewhere_keeps_draws(drift_bin, monkeypatch):
    """SIGTERM to drift itself (a batch system's stop) ends the run as
    Ctrl-C does: the fit holds the draws so far."""
    monkeypatch.setenv("DRIFT_TRANSPORT", "cli")  # a drift process
    import subprocess as sp
    started = []

    class Recording(sp.Popen):
        """Popen that keeps the sampling run (not drift check or --help)."""
        def __init__(self, args, *a, **k):
            super().__init__(args, *a, **k)
            if "--out" in args:
                started.append(self)

    monkeypatch.setattr(drift._cli.subprocess, "Popen", Recording)
    timer = threading.Timer(2.0, lambda: started[0].terminate())
    timer.start()
    try:
        with pytest.warns(drift.DriftWarning, match="exit status 143"):
            fit = drift.sample(MODEL, data=example("logistic",
                                                   "pima-train.csv"),
                               seed=1, chains=2, iter=2 * 10 ** 6,
                               thin=100, show_progress=False)
    finally:
        timer.cancel()
    assert fit.interrupted and fit.chains == 2 and fit.num_draws > 0


def test_progress_and_warnings(drift_bin, capfd, transport):
    """drift's warnings become DriftWarning; progress goes to tqdm, and
    nothing of drift's reaches standard error."""
    pytest.importorskip("tqdm")
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        fit = drift.sample(MODEL, data=example("logistic", "pima-train.csv"),
                           seed=2, chains=2, iter=30, warmup=30,
                           show_progress=True)
    assert fit.num_draws == 30
    msgs = [str(w.message) for w in got if w.category is drift.DriftWarning]
    assert any("ESS" in m or "R-hat" in m for m in msgs), msgs
    err = capfd.readouterr().err
    assert "chain 1" in err and "chain 2" in err
    assert "Iteration:" not in err     # parsed, not echoed


def test_summary_and_draws(drift_bin):
    fit = drift.sample(MODEL, data=example("logistic", "pima-train.csv"),
                       seed=4, chains=2, iter=300, warmup=300,
                       show_progress=False)
    s = fit.summary()
    mean = fit["w"].mean(axis=(0, 1))
    if isinstance(s, dict):
        got = [s[f"w.{k}"]["mean"] for k in range(1, 9)]
    else:
        got = s.loc[[f"w.{k}" for k in range(1, 9)], "mean"].to_numpy()
    np.testing.assert_allclose(got, mean, rtol=1e-6, atol=1e-8)
    assert drift.summary(fit.csv_files) is not None
    d = fit.draws()
    assert set(d) >= {"lp__", "accept_stat__", "w"}
    assert fit.stan_variable("w").shape == (600, 8)


LOGLIK_MODEL = """
data  { }
rows  { x : real  y : real }
param { a : real  b : real }
prior { a ~ normal(0, 10)  b ~ normal(0, 10) }
datum { y ~ normal(a + b * x, 1) }
generated { log_lik = normal_lpdf(y | a + b * x, 1) }
"""


def test_inference_data(drift_bin, tmp_path):
    """ArviZ InferenceData: the groups, and the same posterior and
    sample_stats as arviz.from_cmdstan makes of the same files."""
    az = pytest.importorskip("arviz", reason="ArviZ is not importable "
                             "(pip install arviz, or its copy in "
                             "../shared/interop/python beside the tree)")
    rng = np.random.default_rng(3)
    x = rng.standard_normal(50)
    y = 1.0 + 2.0 * x + rng.standard_normal(50)
    fit = drift.sample(LOGLIK_MODEL, data={"x": x, "y": y}, seed=5,
                       chains=2, iter=200, warmup=100, save_warmup=True,
                       show_progress=False)
    idata = fit.to_inference_data()
    for g in ("posterior", "sample_stats", "log_likelihood",
              "observed_data", "warmup_posterior", "warmup_sample_stats"):
        assert g in idata.groups(), (g, idata.groups())
    assert idata.log_likelihood["log_lik"].shape == (2, 200, 50)
    assert "log_lik" not in idata.posterior
    ref = az.from_cmdstan(posterior=fit.csv_files, log_likelihood="log_lik",
                          save_warmup=True)
    for v in ("a", "b"):
        np.testing.assert_array_equal(idata.posterior[v].values,
                                      ref.posterior[v].values)
        np.testing.assert_array_equal(idata.warmup_posterior[v].values,
                                      ref.warmup_posterior[v].values)
    for v in ref.sample_stats.data_vars:
        assert v in idata.sample_stats, v
        np.testing.assert_array_equal(idata.sample_stats[v].values,
                                      ref.sample_stats[v].values)
    np.testing.assert_array_equal(idata.observed_data["y"].values, y)


def test_arviz_plot_png(drift_bin, tmp_path):
    az = pytest.importorskip("arviz", reason="ArviZ is not importable")
    pytest.importorskip("matplotlib", reason="matplotlib is not importable")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fit = drift.sample(MODEL, data=example("logistic", "pima-train.csv"),
                       seed=6, chains=2, iter=200, warmup=200,
                       show_progress=False)
    az.plot_trace(fit.to_inference_data(), var_names=["w"])
    png = tmp_path / "trace.png"
    plt.savefig(png)
    plt.close("all")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_translate_check_diagnose(drift_bin):
    text = drift.translate(os.path.join(os.path.dirname(MODEL), "..", "..",
                                        "tests", "stan", "logistic.stan"))
    assert "param {" in text and "datum {" in text
    report = drift.check(MODEL, data=example("logistic", "pima-train.csv"))
    assert "the data match the model" in report
    out = drift.diagnose(MODEL, data=example("logistic", "pima-train.csv"),
                         seed=1)
    assert out


def test_bad_input(drift_bin, pima, transport):
    X, y = pima
    data = {"x": X, "y": y}
    with pytest.raises(drift.DriftError, match="unknown sampler 'nutz'.*nuts"):
        drift.sample(MODEL, data=data, sampler="nutz", show_progress=False)
    with pytest.raises(TypeError, match="unknown option 'iters'.*iter"):
        drift.sample(MODEL, data=data, iters=10, show_progress=False)
    with pytest.raises(drift.DriftError, match="'y'"):
        drift.sample(MODEL, data={"x": X}, show_progress=False)
    # the executable reads a row store, libdrift the columns themselves
    with pytest.raises(drift.DriftError,
                       match="not integers|declared int, but the value is 0.5"):
        drift.sample(MODEL, data={"x": X, "y": y + 0.5}, show_progress=False)
    with pytest.raises(ValueError, match="not finite"):
        drift.sample(MODEL, data={"x": X * np.nan, "y": y},
                     show_progress=False)
    with pytest.raises(ValueError, match="rows"):
        drift.sample(MODEL, data={"x": X[:10], "y": y}, show_progress=False)
    with pytest.raises(FileNotFoundError, match="no such model"):
        drift.sample("nowhere.drift", data=data)
    with pytest.raises(TypeError, match="data must be"):
        drift.sample(MODEL, data=42)
    with pytest.raises(ValueError, match="chains"):
        drift.sample(MODEL, data=data, chains=0)
    with pytest.raises(drift.DriftError, match="hyperparameter 'hh'"):
        drift.sample(MODEL, data=data, set={"hh": 1}, show_progress=False)


def test_drift_not_found(monkeypatch, tmp_path):
    monkeypatch.setenv("DRIFT_BIN", str(tmp_path / "no-drift"))
    with pytest.raises(drift.DriftNotFoundError, match="DRIFT_BIN"):
        drift.find_drift()
    monkeypatch.delenv("DRIFT_BIN")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(drift.DriftNotFoundError, match="DRIFT_BIN"):
        drift.find_drift()
