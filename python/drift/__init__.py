"""drift from Python: run drift's samplers on models and numpy data, get
the draws back as numpy arrays or ArviZ InferenceData.

    import drift
    fit = drift.sample("logistic.drift", data={"x": X, "y": y}, seed=1)
    fit.summary()
    idata = fit.to_inference_data()

drift.sample runs in this process through libdrift when it is found
(drift.transport() says "libdrift"), else through the drift program (found
from drift_bin=, DRIFT_BIN or PATH), which the other commands use; see
python/README.md.
"""

from ._cli import (DriftError, DriftNotFoundError, DriftWarning, find_drift,
                   set_drift_path)
from .api import (check, diagnose, generate, laplace, log_prob, optimize,
                  pathfinder, sample, summary, translate, transport,
                  variational)
from .fit import Fit, from_csv
from . import rowstore

__version__ = "0.1.0"

__all__ = ["sample", "optimize", "laplace", "pathfinder", "variational",
           "generate", "log_prob", "summary", "check", "diagnose",
           "translate", "transport", "Fit",
           "from_csv", "rowstore", "find_drift", "set_drift_path",
           "DriftError", "DriftNotFoundError", "DriftWarning"]
