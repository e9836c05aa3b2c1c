"""Finds the drift program and its plugins as the C tests do: DRIFT_BIN
and DRIFT_PLUGIN_PATH when set, else the build tree this file sits in
(../../drift and its plugins' .libs), and the source tree from $srcdir.
libdrift likewise: DRIFT_LIB, else the build tree's .libs/libdrift.so.
The fixture `transport` runs a test once through each of drift.sample's
transports (libdrift in process, the drift executable)."""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))

SRC = os.environ.get("srcdir") or TOP
if not os.environ.get("DRIFT_BIN") and os.path.isfile(os.path.join(TOP, "drift")):
    os.environ["DRIFT_BIN"] = os.path.join(TOP, "drift")
if not os.environ.get("DRIFT_LIB") and \
        os.path.isfile(os.path.join(TOP, ".libs", "libdrift.so")):
    os.environ["DRIFT_LIB"] = os.path.join(TOP, ".libs", "libdrift.so")
if "DRIFT_PLUGIN_PATH" not in os.environ and \
        "DRIFT_PLUGIN_DIR" not in os.environ:
    os.environ["DRIFT_PLUGIN_PATH"] = ":".join(
        os.path.join(TOP, d, ".libs")
        for d in ("plugins/samplers", "plugins/models"))


def example(*parts: str) -> str:
    return os.path.join(SRC, "examples", *parts)


@pytest.fixture(scope="session")
def drift_bin() -> str:
    import drift
    try:
        return drift.find_drift()
    except drift.DriftNotFoundError as e:
        pytest.skip(str(e))


@pytest.fixture(scope="session")
def pima():
    """The Pima training set: X (200 x 8, an intercept first), y."""
    import numpy as np
    d = np.loadtxt(example("logistic", "pima-train.csv"), delimiter=",",
                   skiprows=1)
    return d[:, 1:], d[:, 0].astype(np.int64)


@pytest.fixture(params=["libdrift", "cli"])
def transport(request, monkeypatch) -> str:
    """Each of drift.sample's transports in turn, chosen by
    DRIFT_TRANSPORT (libdrift skipped when the library is not found)."""
    import drift
    monkeypatch.setenv("DRIFT_TRANSPORT", request.param)
    try:
        assert drift.transport() == request.param
    except drift.DriftNotFoundError as e:
        pytest.skip(str(e))
    return request.param
