"""The result of drift.sample: the draws of every chain as numpy arrays,
drift's summary, and ArviZ InferenceData.  Reads the run's Stan CSV files;
knows nothing of how they were made.
"""

from __future__ import annotations

import os
import warnings
from typing import Mapping, Sequence

import numpy as np

from . import stancsv

# Stan's sampler columns as ArviZ names them in sample_stats
# (arviz.from_cmdstan): the trailing '__' dropped, then these renamed.
STAT_NAMES = {
    "divergent": "diverging",
    "n_leapfrog": "n_steps",
    "treedepth": "tree_depth",
    "stepsize": "step_size",
    "accept_stat": "acceptance_rate",
}
STAT_DTYPES = {"diverging": bool, "n_steps": np.int64, "tree_depth": np.int64}


def _stat_name(column: str) -> str:
    name = column[:-2] if column.endswith("__") else column
    return STAT_NAMES.get(name, name)


class Fit:
    """Draws from drift.sample (or drift.from_csv).

    fit.draws() gives each variable as an array (chain, draw, *shape);
    fit["w"] one of them; fit.summary() drift's summary table;
    fit.to_inference_data() ArviZ InferenceData.  fit.csv_files are the
    Stan CSV files (one per chain), which ArviZ, CmdStanPy and R read too;
    fit.interrupted says whether the run was stopped (KeyboardInterrupt)
    and holds the draws up to then."""

    def __init__(self, csv_files: Sequence[str],
                 data: Mapping[str, object] | None = None,
                 interrupted: bool = False, messages: str = "",
                 drift_bin: str | None = None):
        self.csv_files = [os.fspath(f) for f in csv_files]
        self.interrupted = interrupted
        self.messages = messages
        self._data = dict(data) if data else {}
        self._drift_bin = drift_bin
        self._chains = [stancsv.read(f) for f in self.csv_files]
        if self._chains:
            cols = self._chains[0].columns
            for c in self._chains[1:]:
                if c.columns != cols:
                    raise ValueError(f"{c.path}: its columns differ from "
                                     f"those of {self._chains[0].path}")
        self.column_names: list[str] = (self._chains[0].columns
                                        if self._chains else [])
        self._vars = stancsv.variables(self.column_names)

    # ---- facts about the run -------------------------------------------
    @property
    def chains(self) -> int:
        return len(self._chains)

    @property
    def num_draws(self) -> int:
        return min((c.draws.shape[0] for c in self._chains), default=0)

    @property
    def num_warmup_draws(self) -> int:
        return min((c.warmup.shape[0] for c in self._chains), default=0)

    @property
    def config(self) -> dict[str, str]:
        """The first chain's header settings (sampler, seed, ...), as text."""
        return dict(self._chains[0].config) if self._chains else {}

    @property
    def parameter_names(self) -> list[str]:
        """The variables that are not sampler columns (no '__')."""
        return [v for v in self._vars if not v.endswith("__")]

    def __repr__(self) -> str:
        s = (f"<drift.Fit: {self.chains} chains x {self.num_draws} draws"
             f" of {', '.join(self.parameter_names[:6])}")
        if len(self.parameter_names) > 6:
            s += ", ..."
        return s + (" (interrupted)>" if self.interrupted else ">")

    # ---- draws -----------------------------------------------------------
    def _matrix(self, warmup: bool) -> np.ndarray:
        """(chain, draw, column), every chain cut to the shortest."""
        n = self.num_warmup_draws if warmup else self.num_draws
        if not self._chains:
            return np.empty((0, 0, 0))
        lens = {(c.warmup if warmup else c.draws).shape[0]
                for c in self._chains}
        if len(lens) > 1:
            warnings.warn(f"chains hold {sorted(lens)} draws; all are cut "
                          f"to {n}", stacklevel=3)
        return np.stack([(c.warmup if warmup else c.draws)[:n]
                         for c in self._chains])

    def draws(self, variables: Sequence[str] | None = None,
              inc_warmup: bool = False) -> dict[str, np.ndarray]:
        """Each variable as an array (chain, draw, *shape), sampler columns
        (lp__, accept_stat__, ...) included under their own names.  With
        inc_warmup, saved warmup draws (--save-warmup) come first."""
        m = self._matrix(False)
        if inc_warmup:
            m = np.concatenate([self._matrix(True), m], axis=1)
        names = list(self._vars) if variables is None else list(variables)
        out = {}
        for name in names:
            if name not in self._vars:
                raise KeyError(f"no variable '{name}'; the fit has "
                               f"{', '.join(self._vars)}")
            cols, shape = self._vars[name]
            out[name] = m[:, :, cols].reshape(m.shape[:2] + shape)
        return out

    def __getitem__(self, name: str) -> np.ndarray:
        return self.draws([name])[name]

    def stan_variable(self, name: str) -> np.ndarray:
        """As CmdStanPy: the chains' draws of name stacked, (draw, *shape)."""
        a = self[name]
        return a.reshape((-1,) + a.shape[2:])

    # ---- summary ---------------------------------------------------------
    def summary(self, percentiles: Sequence[float] | None = None,
                variables: Sequence[str] | None = None):
        """drift summary's table (mean, mcse, sd, quantiles, ess_bulk,
        ess_tail, rhat per column): a pandas DataFrame indexed by name
        when pandas imports, else a dict name -> dict of floats."""
        from .api import summary
        return summary(self, percentiles=percentiles, variables=variables,
                       drift_bin=self._drift_bin)

    # ---- ArviZ -----------------------------------------------------------
    def _split(self, d: dict[str, np.ndarray]):
        post, stats, loglik = {}, {}, {}
        for name, a in d.items():
            if name.endswith("__"):
                stats[_stat_name(name)] = a.astype(
                    STAT_DTYPES.get(_stat_name(name), a.dtype))
            elif name == "log_lik":
                loglik[name] = a
            else:
                post[name] = a
        return post, stats, loglik

    def to_inference_data(self, log_likelihood: str | None = "log_lik"):
        """ArviZ InferenceData: posterior, sample_stats (Stan's names
        mapped as arviz.from_cmdstan maps them: lp, acceptance_rate,
        step_size, tree_depth, n_steps, diverging, energy), warmup groups
        when warmup was saved, log_likelihood from the variable named
        log_likelihood when the model writes it, and observed_data from the
        data given to drift.sample."""
        try:
            import arviz as az
        except ImportError as e:
            raise ImportError(
                "Fit.to_inference_data needs ArviZ (pip install arviz, or "
                "put a copy on PYTHONPATH; it needs xarray and pandas); "
                "fit.draws() gives the same draws as numpy arrays without "
                f"it ({e})") from e
        post, stats, loglik = self._split(self.draws())
        if log_likelihood != "log_lik" and log_likelihood in post:
            loglik = {log_likelihood: post.pop(log_likelihood)}
        elif log_likelihood is None:
            post.update(loglik)
            loglik = {}
        kw = {}
        if self.num_warmup_draws:
            wd = {name: a[:, :self.num_warmup_draws]
                  for name, a in self.draws(inc_warmup=True).items()}
            wpost, wstats, wll = self._split(wd)
            kw = dict(warmup_posterior=wpost, warmup_sample_stats=wstats,
                      save_warmup=True)
            if loglik:
                kw["warmup_log_likelihood"] = {k: wll.get(k, wpost.get(k))
                                               for k in loglik}
        observed = {k: np.asarray(v) for k, v in self._data.items()
                    if np.asarray(v).dtype.kind in "iufb"}
        attrs = {"inference_library": "drift"}
        for key in ("drift_version", "sampler", "seed"):
            if key in self.config:
                attrs[key] = self.config[key]
        return az.from_dict(posterior=post, sample_stats=stats,
                            log_likelihood=loglik or None,
                            observed_data=observed or None,
                            attrs=attrs, **kw)


def from_csv(files: str | os.PathLike | Sequence[str | os.PathLike]) -> Fit:
    """A Fit of existing Stan CSV files (one per chain), drift's or
    CmdStan's."""
    if isinstance(files, (str, os.PathLike)):
        p = os.fspath(files)
        if os.path.isdir(p):
            files = sorted(os.path.join(p, f) for f in os.listdir(p)
                           if f.endswith(".csv"))
        else:
            files = [p]
    return Fit(list(files))
