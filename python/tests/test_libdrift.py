"""drift.sample in process through libdrift: the transport chosen, numpy
rows read in place (no copy made here), Ctrl-C, drift's warnings, and the
in-process runs against the executable's (same seed, same draws)."""

import _thread
import os
import threading
import tracemalloc
import warnings

import numpy as np
import pytest

import drift
from conftest import example

MODEL = example("logistic", "logistic.drift")

pytestmark = pytest.mark.filterwarnings("ignore::drift.DriftWarning")


@pytest.fixture
def libdrift(monkeypatch):
    monkeypatch.delenv("DRIFT_TRANSPORT", raising=False)
    try:
        return drift.transport("libdrift")
    except drift.DriftNotFoundError as e:
        pytest.skip(str(e))


def test_transport_choice(libdrift, monkeypatch):
    assert drift.transport() == "libdrift"
    monkeypatch.setenv("DRIFT_TRANSPORT", "cli")
    assert drift.transport() == "cli"
    assert drift.transport("libdrift") == "libdrift"
    with pytest.raises(ValueError, match="transport"):
        drift.transport("pipes")


def logistic_rows(n, d, seed):
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), rng.standard_normal((n, d - 1))])
    w = np.linspace(-1, 1, d)
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ w)))).astype(np.int64)
    return X, y


def test_same_draws_both_transports(drift_bin, libdrift, pima):
    """In process and through the executable: the same draws, bit for
    bit, from a strided X (the Pima table's columns 1-8, a view), and
    from a DataFrame."""
    X, y = pima
    assert not X.flags.c_contiguous
    kw = dict(seed=6, chains=2, iter=150, warmup=150, show_progress=False)
    a = drift.sample(MODEL, data={"x": X, "y": y}, transport="libdrift",
                     **kw)
    b = drift.sample(MODEL, data={"x": X, "y": y}, transport="cli", **kw)
    np.testing.assert_array_equal(a["w"], b["w"])
    np.testing.assert_array_equal(a["lp__"], b["lp__"])
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"y": y, **{f"x.{k + 1}": X[:, k]
                                     for k in range(X.shape[1])}})
    c = drift.sample(MODEL, data=frame, transport="libdrift", **kw)
    np.testing.assert_array_equal(a["w"], c["w"])


def test_dtypes_converted_same_draws(drift_bin, libdrift, pima):
    """bool and int32 outcomes, a float32-exact X: the draws of int64 and
    float64 arrays holding the same numbers."""
    X, y = pima
    X = X.astype(np.float32).astype(np.float64)
    kw = dict(seed=2, chains=1, iter=100, warmup=100, show_progress=False,
              transport="libdrift")
    a = drift.sample(MODEL, data={"x": X, "y": y}, **kw)
    b = drift.sample(MODEL, data={"x": X.astype(np.float32),
                                  "y": y.astype(bool)}, **kw)
    c = drift.sample(MODEL, data={"x": np.asfortranarray(X),
                                  "y": y.astype(np.int32)}, **kw)
    np.testing.assert_array_equal(a["w"], b["w"])
    np.testing.assert_array_equal(a["w"], c["w"])


def peak_during_sample(X, y, transport):
    """The peak of Python's allocations (tracemalloc: numpy's arrays are
    traced) while drift.sample runs on X, y, and the fit."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        fit = drift.sample(MODEL, data={"x": X, "y": y}, sampler="sgld",
                           seed=1, chains=1, iter=50, warmup=0,
                           batch=100, set={"h": 1e-5},
                           show_progress=False, transport=transport)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    return peak, fit


def test_strided_x_not_copied(drift_bin, libdrift):
    """A C-ordered X (200000 x 8, 12.8 MB) reaches libdrift without a copy
    made here: the peak of this process's allocations during the call stays
    far below X's size, where the executable's transport, writing a row
    store, copies it."""
    X, y = logistic_rows(200_000, 8, 3)
    assert X.flags.c_contiguous
    peak_lib, a = peak_during_sample(X, y, "libdrift")
    peak_cli, b = peak_during_sample(X, y, "cli")
    assert peak_lib < X.nbytes / 10, (peak_lib, X.nbytes)
    assert peak_cli > X.nbytes / 2, (peak_cli, X.nbytes)
    np.testing.assert_array_equal(a["w"], b["w"])


def test_keyboard_interrupt_in_process(drift_bin, libdrift):
    """KeyboardInterrupt in the main thread (as Ctrl-C raises it) stops the
    chains after their step: the fit holds the draws so far, marked
    interrupted, and a later run is not stopped by it."""
    timer = threading.Timer(1.5, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.warns(drift.DriftWarning, match="interrupted"):
            fit = drift.sample(MODEL, data=example("logistic",
                                                   "pima-train.csv"),
                               seed=1, chains=2, iter=2 * 10 ** 6,
                               thin=100, show_progress=False,
                               transport="libdrift")
    finally:
        timer.cancel()
    assert fit.interrupted and fit.chains == 2
    assert 0 < fit.num_draws < 2 * 10 ** 4
    assert np.all(np.isfinite(fit["w"]))
    again = drift.sample(MODEL, data=example("logistic", "pima-train.csv"),
                         seed=1, chains=1, iter=50, warmup=50,
                         show_progress=False, transport="libdrift")
    assert not again.interrupted and again.num_draws == 50


def sample_pima_warned(**kw):
    """drift.sample of the Pima example in process: the fit, and the
    DriftWarnings it gave."""
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        fit = drift.sample(MODEL, data=example("logistic", "pima-train.csv"),
                           show_progress=False, transport="libdrift", **kw)
    return fit, [str(w.message) for w in got
                 if w.category is drift.DriftWarning]


def test_engine_warning_in_process(drift_bin, libdrift, monkeypatch,
                                   tmp_path, capfd):
    """A warning of the engine's (here a file on the plugin path that is
    not a plugin) arrives as a DriftWarning, not on standard error."""
    (tmp_path / "nuts.so").write_text("not a plugin\n")
    var = ("DRIFT_PLUGIN_DIR" if os.environ.get("DRIFT_PLUGIN_DIR")
           else "DRIFT_PLUGIN_PATH")
    monkeypatch.setenv(var, f"{tmp_path}:{os.environ.get(var, '')}")
    fit, msgs = sample_pima_warned(seed=2, chains=1, iter=50, warmup=50)
    assert fit.num_draws == 50
    assert any("nuts.so: cannot load plugin" in m for m in msgs), msgs
    assert "nuts.so" not in capfd.readouterr().err


def test_post_run_checks_in_process(libdrift, monkeypatch, capfd):
    """drift sample's checks of the files after a run (here: 2 chains of
    30 draws, far below 100 effective draws a chain) come from libdrift
    itself, with no drift executable to ask: as DriftWarning, not on
    standard error."""
    monkeypatch.setenv("DRIFT_BIN", "/nonexistent/drift")
    fit, msgs = sample_pima_warned(seed=3, chains=2, iter=30, warmup=30)
    assert fit.num_draws == 30
    assert any("ESS below 100 per chain" in m for m in msgs), msgs
    assert "ESS below" not in capfd.readouterr().err


PEAK_SCRIPT = r"""
import sys, warnings
import numpy as np
import drift

def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024

rng = np.random.default_rng(5)
n, d = 10 ** 6, 10
X = np.empty((n, d))
X[:, 0] = 1
X[:, 1:] = rng.standard_normal((n, d - 1))
y = (rng.random(n) < 0.5).astype(np.int64)
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
rss = status("VmRSS")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    drift.sample(sys.argv[1], data={"x": X, "y": y}, sampler="sgld", seed=1,
                 chains=1, iter=50, warmup=0, batch=100, set={"h": 1e-5},
                 show_progress=False, transport=sys.argv[2])
print(status("VmHWM") - rss, X.nbytes)
"""


def test_process_peak_below_x(drift_bin, libdrift):
    """A whole process's peak resident memory during drift.sample in
    process (the kernel's high-water mark, reset after the data are built)
    grows by far less than X (10^6 x 10 doubles, 76 MiB): libdrift reads X
    where it is and copies only y; through the executable, the row store
    written here alone is larger than X."""
    import subprocess
    import sys
    if not os.path.exists("/proc/self/clear_refs"):
        pytest.skip("no /proc/self/clear_refs to reset the peak")
    grown = {}
    for how in ("libdrift", "cli"):
        p = subprocess.run([sys.executable, "-c", PEAK_SCRIPT, MODEL, how],
                           capture_output=True, text=True, env=os.environ)
        assert p.returncode == 0, p.stderr
        grown[how], xbytes = map(int, p.stdout.split())
    assert grown["libdrift"] < xbytes / 2, (grown, xbytes)
    assert grown["cli"] > xbytes, (grown, xbytes)
