"""drift's Python API: sample, summary, check, diagnose, translate.

Turns Python values (a model path or text, data as a dict of numpy arrays,
a pandas DataFrame or a path, options by name) into a run and its result.
How a run reaches drift is the transport's business: sample() runs in
process through libdrift (_lib) when it is found, else, and for every other
command, through the drift executable (_cli); transport() says which.
"""

from __future__ import annotations

import atexit
import csv
import difflib
import io
import os
import re
import shutil
import warnings
from typing import Mapping, Sequence

import numpy as np

from . import _cli, _lib, stancsv
from ._cli import DriftError
from .fit import Fit

_temp_dirs: list[str] = []


@atexit.register
def _cleanup() -> None:
    for d in _temp_dirs:
        shutil.rmtree(d, ignore_errors=True)


def _is_dataframe(x) -> bool:
    return type(x).__name__ == "DataFrame" and hasattr(x, "columns")


_STAN_BLOCK = re.compile(r"\b(parameters|model|data)\s*\{")


def _model_file(model, out_dir: str) -> tuple[str, str]:
    """(what drift is given, kind): a .drift or .stan path, model text
    written to out_dir, or a C model plugin's name."""
    if isinstance(model, os.PathLike):
        model = os.fspath(model)
    if not isinstance(model, str):
        raise TypeError(f"model must be a path, model text or a model "
                        f"plugin's name, not {type(model).__name__}")
    if "\n" in model or "{" in model:
        stan = (_STAN_BLOCK.search(model) is not None and
                not re.search(r"\b(param|prior|datum|rows)\s*\{", model))
        path = os.path.join(out_dir, "model.stan" if stan else "model.drift")
        with open(path, "w") as f:
            f.write(model)
        return path, "stan" if stan else "drift"
    if model.endswith((".drift", ".stan")):
        if not os.path.isfile(model):
            raise FileNotFoundError(f"{model}: no such model file")
        return model, "stan" if model.endswith(".stan") else "drift"
    if os.path.sep in model and not os.path.isfile(model):
        raise FileNotFoundError(f"{model}: no such model file")
    return model, "plugin"


def _data_dict(data) -> dict[str, object]:
    if _is_dataframe(data):
        return {str(c): data[c].to_numpy() for c in data.columns}
    if isinstance(data, Mapping):
        out = {}
        for k, v in data.items():
            if _is_dataframe(v):
                raise TypeError(f"data '{k}' is a DataFrame: pass the "
                                "DataFrame itself as data (its columns are "
                                "the rows' columns), or its columns as arrays")
            out[str(k)] = v
        return out
    raise TypeError(f"data must be a dict of arrays, a pandas DataFrame or a "
                    f"path, not {type(data).__name__}")


def _split_data(data, model: str, kind: str, drift_bin: str | None
                ) -> tuple[list[str], dict, list[str]]:
    """(data files given by path, the data as a dict, the names of its
    rows variables)."""
    if data is None:
        return [], {}, []
    if isinstance(data, (str, os.PathLike)):
        data = [data]
    if isinstance(data, (list, tuple)) and all(
            isinstance(d, (str, os.PathLike)) for d in data):
        files = [os.fspath(d) for d in data]
        for f in files:
            if not os.path.isfile(f):
                raise FileNotFoundError(f"{f}: no such data file")
        return files, {}, []
    d = _data_dict(data)
    if _is_dataframe(data):
        # A table: every column is a row column, as a CSV file's.
        return [], d, [] if kind == "stan" else list(d)
    if kind == "drift":
        rows = list(_cli.rows_variables(model, drift_bin))
    elif kind == "plugin":
        rows = [k for k, v in d.items()
                if hasattr(v, "tocsr") or np.ndim(v) >= 1]
    else:
        rows = []
    return [], d, [k for k in rows if k in d]


def _data_files(data, model: str, kind: str, out_dir: str,
                drift_bin: str | None) -> tuple[list[str], dict]:
    """The --data files for data, and the data as a dict (for
    observed_data; empty for files)."""
    files, d, rows = _split_data(data, model, kind, drift_bin)
    if files or not d:
        return files, d
    if _is_dataframe(data) and rows:
        d = {k: np.asarray(v) for k, v in d.items()}
    return _cli.write_data(d, rows, out_dir), d


def transport(choice: str | None = None) -> str:
    """How drift.sample reaches drift: "libdrift" (in this process, through
    the shared library: $DRIFT_LIB, else .libs/libdrift.so beside
    $DRIFT_BIN, else the system's libdrift) or "cli" (the drift
    executable, as CmdStanPy runs CmdStan).  choice (or, when None,
    the environment variable DRIFT_TRANSPORT) "cli" forces the
    executable, "libdrift" requires the library; by default the library
    when it is found with API version 2.  The other commands (summary,
    check, optimize, ...) always run the executable."""
    want = choice or os.environ.get("DRIFT_TRANSPORT") or "auto"
    if want not in ("auto", "cli", "libdrift"):
        raise ValueError(f"transport must be 'libdrift', 'cli' or None, got "
                         f"{want!r}")
    if want == "cli":
        return "cli"
    if _lib.library() is not None:
        return "libdrift"
    if want == "libdrift":
        raise _cli.DriftNotFoundError(
            "libdrift (API version 2) was not found: set DRIFT_LIB to "
            "libdrift.so's path, or install drift (make install)")
    return "cli"


_sample_options: list[str] | None = None


def _known_options(drift_bin: str | None) -> list[str]:
    """drift sample's option names (from its --help), as keyword names."""
    global _sample_options
    if _sample_options is None:
        p = _cli.run(["sample", "--help"], drift_bin, check=False)
        names = re.findall(r"^\s+--([a-z][a-z-]*)", p.stdout + p.stderr,
                           re.M)
        _sample_options = [n.replace("-", "_") for n in names
                           if n.replace("-", "_") not in _RESERVED]
    return _sample_options


_RESERVED = {"data", "sampler", "chains", "seed", "out", "model", "help",
             "transport"}


def _check_options(options: Mapping[str, object], drift_bin: str | None):
    known = _known_options(drift_bin)
    for k in options:
        if k in _RESERVED:
            raise TypeError(f"sample() option '{k}' is an argument of its "
                            "own or set by drift.sample")
        if known and k not in known:
            near = difflib.get_close_matches(k, known, n=1)
            hint = f"; did you mean {near[0]}?" if near else ""
            raise TypeError(f"sample() got an unknown option '{k}'{hint} "
                            "(options are drift sample's, by name: "
                            f"{', '.join(sorted(known))})")


def sample(model, data=None, sampler: str = "nuts", chains: int = 4,
           seed: int | None = None, *, output_dir: str | None = None,
           show_progress: bool = True, drift_bin: str | None = None,
           transport: str | None = None, **options) -> Fit:
    """Runs drift's sampler on a model and returns a Fit.

    model: a .drift or .stan file, model text (drift's language or
    Stan's), or a C model plugin's name.  data: a dict of numpy arrays
    and numbers (a .drift model's rows variables go to a binary row store,
    the rest to JSON: float64 values reach drift exactly), a pandas
    DataFrame whose columns are named as a CSV file's (y, x.1, ...), or a
    path (or list of paths) of files drift reads.  sampler: a plugin's
    name (see `drift samplers`).  options: drift sample's options by name,
    underscores for dashes (iter=2000, warmup=500, thin=2, batch=100,
    passes=50, seconds=10, gradient="cv", save_warmup=True,
    set={"h": 1e-3}, data_set={"J": 8}, ...).

    output_dir keeps the data and draws files (default: a temporary
    directory removed when Python exits).  show_progress: a tqdm bar per
    chain when tqdm is installed.  drift's warnings become DriftWarning.
    KeyboardInterrupt (Ctrl-C) stops drift, which keeps the draws so far;
    the Fit returned holds them, with fit.interrupted set and a warning (a
    second Ctrl-C kills drift and raises).  A refusal or failure of drift
    raises DriftError with drift's message.

    transport: how the run reaches drift (see drift.transport()).  In
    process (libdrift), a dict's or DataFrame's rows variables are handed
    to drift by pointer and read in place: float64, int64 and int32
    arrays as they are, a 2-D C-ordered array's columns through its row
    stride; bool, float32 and other integer dtypes are converted (copied)
    first.  The run's files are those the executable writes; a second
    Ctrl-C there cannot kill the chains (they are threads of this
    process): it waits for them to end their step, then raises."""
    if not isinstance(sampler, str) or not sampler:
        raise TypeError("sampler must be a sampler plugin's name, such as "
                        "'nuts' or 'sgld' (see `drift samplers`)")
    if not isinstance(chains, (int, np.integer)) or chains < 1:
        raise ValueError(f"chains must be a positive integer, got {chains!r}")
    if seed is not None and (not isinstance(seed, (int, np.integer))
                             or seed < 0):
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    how = _transport_of(transport)
    if how == "libdrift":
        try:
            _check_options(options, drift_bin)
        except _cli.DriftNotFoundError:
            pass  # the library checks the options it is given
    else:
        _check_options(options, drift_bin)
    out_dir = _output_dir(output_dir)
    model_arg, kind = _model_file(model, out_dir)
    out = os.path.join(out_dir, "draws.csv")
    if how == "libdrift":
        fit = _sample_libdrift(model_arg, kind, data, sampler, int(chains),
                               None if seed is None else int(seed), out,
                               out_dir, options, show_progress, drift_bin)
        if fit is not None:
            return fit
    files, given = _data_files(data, model_arg, kind, out_dir, drift_bin)
    args = _cli.sample_args(model_arg, kind == "plugin", files, sampler,
                            int(chains),
                            None if seed is None else int(seed), out, options)
    r = _cli.sample(args, out, int(chains), show_progress, drift_bin)
    if not r.interrupted and r.returncode != 0:
        err = DriftError(r.stderr.strip() or
                         f"drift sample exited with status {r.returncode}")
        err.csv_files = r.csv_files  # type: ignore[attr-defined]
        raise err
    fit = Fit(r.csv_files, given, r.interrupted, r.stderr, drift_bin)
    if r.interrupted:
        what = (f"the fit holds the {fit.num_draws} draws per chain made "
                "up to then" if fit.num_draws else
                "it stopped in warmup, before a first draw (save_warmup=True "
                "keeps warmup draws)")
        why = ("KeyboardInterrupt" if r.by_keyboard else
               f"a signal, exit status {r.returncode}")
        warnings.warn(f"drift was interrupted ({why}): {what}",
                      _cli.DriftWarning, stacklevel=2)
    return fit


def _rows_of(data, model_arg: str, kind: str, drift_bin: str | None):
    """(data files, the data as a dict, its rows variables, the rest) for
    an in-process run: a .drift model's rows variables from `drift check`
    when the executable is there, else every array of at least one
    dimension whose length is the longest's."""
    try:
        return _split_data(data, model_arg, kind, drift_bin)
    except _cli.DriftNotFoundError:
        files, d, _ = _split_data(data, model_arg, "stan", drift_bin)
        lengths = {k: len(v) for k, v in d.items()
                   if hasattr(v, "tocsr") or np.ndim(v) >= 1}
        n = max(lengths.values(), default=0)
        return files, d, [k for k, m in lengths.items() if m == n]


_transport_of = transport


def _sample_libdrift(model_arg, kind, data, sampler, chains, seed, out,
                     out_dir, options, show_progress, drift_bin):
    """drift.sample in this process; None when the data need the
    executable (a sparse rows variable: its row store)."""
    files, given, rows = _rows_of(data, model_arg, kind, drift_bin)
    if any(hasattr(given[k], "tocsr") for k in rows):
        return None
    rest = {k: v for k, v in given.items() if k not in rows}
    if rest:
        files = files + _cli.write_data(rest, [], out_dir)
    cols = _lib.columns({k: given[k] for k in rows})
    progress = _cli._Progress(show_progress)

    def on_progress(line: str) -> None:
        m = _cli._PROGRESS.match(line)
        if m:
            progress.update(m)

    try:
        r = _lib.sample(model_arg, files, cols, sampler, chains, seed, out,
                        _lib.spec_options(options), on_progress)
    finally:
        progress.close()
        del cols  # the arrays handed to drift, held until here
    stopped = r.interrupted or r.rc == _lib.ESTOP
    if r.rc not in (_lib.OK, _lib.ESTOP):
        lines = "\n".join(r.lines + [r.message])
        err = DriftError(lines.strip() or
                         f"drift sample failed (status {r.rc})")
        err.csv_files = [f for f in _cli.output_files(out, chains)
                         if os.path.isfile(f)]  # type: ignore[attr-defined]
        raise err
    for line in r.warnings:
        warnings.warn(line.split("warning:", 1)[1].strip(),
                      _cli.DriftWarning, stacklevel=3)
    csv_files = [f for f in _cli.output_files(out, chains)
                 if os.path.isfile(f)]
    # libdrift checks the files after the run (R-hat, ESS, divergences
    # ...) as drift sample does: those warnings came with the others.
    fit = Fit(csv_files, given, stopped, "\n".join(r.lines), drift_bin)
    if stopped:
        what = (f"the fit holds the {fit.num_draws} draws per chain made "
                "up to then" if fit.num_draws else
                "it stopped in warmup, before a first draw (save_warmup=True "
                "keeps warmup draws)")
        warnings.warn(f"drift was interrupted (KeyboardInterrupt): {what}",
                      _cli.DriftWarning, stacklevel=3)
    return fit


def _files_of(files_or_fit) -> list[str]:
    if isinstance(files_or_fit, Fit):
        return list(files_or_fit.csv_files)
    if isinstance(files_or_fit, (str, os.PathLike)):
        return [os.fspath(files_or_fit)]
    return [os.fspath(f) for f in files_or_fit]


def summary(files_or_fit, percentiles: Sequence[float] | None = None,
            variables: Sequence[str] | None = None,
            drift_bin: str | None = None):
    """`drift summary` of a Fit or of Stan CSV files: a pandas DataFrame
    (index: column name; mean, mcse, sd, q5, q50, q95, ess_bulk, ess_tail,
    rhat) when pandas imports, else a dict name -> dict of floats."""
    files = _files_of(files_or_fit)
    if not files:
        raise ValueError("summary needs at least one draws file")
    tmp = _cli.new_output_dir()
    try:
        path = os.path.join(tmp, "summary.csv")
        args = ["summary", "--csv", path]
        if percentiles is not None:
            args += ["-p", ",".join(repr(float(p)) for p in percentiles)]
        if variables is not None:
            args += ["--vars", ",".join(variables)]
        _cli.run(args + files, drift_bin)
        with open(path) as f:
            text = f.read()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rows = list(csv.reader(io.StringIO(text)))
    header, body = rows[0], [r for r in rows[1:] if r]

    def num(s: str) -> float:
        try:
            return float(s)
        except ValueError:
            return float("nan")

    table = {r[0]: {h: num(v) for h, v in zip(header[1:], r[1:])}
             for r in body}
    try:
        import pandas as pd
    except ImportError:
        return table
    return pd.DataFrame.from_dict(table, orient="index", columns=header[1:])


def check(model, data=None, drift_bin: str | None = None, **data_set) -> str:
    """`drift check`: parses and type-checks a .drift model (and its data,
    when given); returns drift's report, raises DriftError on a problem."""
    tmp = _cli.new_output_dir()
    try:
        path, kind = _model_file(model, tmp)
        files, _ = _data_files(data, path, kind, tmp, drift_bin)
        args = ["check", path]
        for f in files:
            args += ["--data", f]
        for k, v in data_set.items():
            args += ["--data-set", f"{k}={v}"]
        return _cli.run(args, drift_bin).stdout
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def diagnose(model, data=None, seed: int | None = None,
             epsilon: float | None = None, error: float | None = None,
             drift_bin: str | None = None) -> str:
    """`drift diagnose`: the model's gradients against finite differences;
    returns drift's report, raises DriftError when an error exceeds the
    tolerance."""
    tmp = _cli.new_output_dir()
    try:
        path, kind = _model_file(model, tmp)
        files, _ = _data_files(data, path, kind, tmp, drift_bin)
        args = ["diagnose"] + (["--model", path] if kind == "plugin"
                               else [path])
        for f in files:
            args += ["--data", f]
        for flag, v in (("--seed", seed), ("--epsilon", epsilon),
                        ("--error", error)):
            if v is not None:
                args += [flag, repr(v) if isinstance(v, float) else str(v)]
        p = _cli.run(args, drift_bin, check=False)
        if p.returncode != 0:
            raise DriftError((p.stdout + p.stderr).strip())
        return p.stdout
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def translate(stan_file, data=None, out: str | None = None,
              drift_bin: str | None = None) -> str:
    """`drift translate`: the .drift program a Stan program runs as
    (stan_file a path or Stan text); written to out when given, and
    returned as text."""
    tmp = _cli.new_output_dir()
    try:
        if isinstance(stan_file, str) and ("\n" in stan_file or
                                           "{" in stan_file):
            path = os.path.join(tmp, "model.stan")
            with open(path, "w") as f:
                f.write(stan_file)
        else:
            path = os.fspath(stan_file)
            if not os.path.isfile(path):
                raise FileNotFoundError(f"{path}: no such Stan file")
        files, _ = _data_files(data, path, "stan", tmp, drift_bin)
        args = ["translate", path]
        for f in files:
            args += ["--data", f]
        text = _cli.run(args, drift_bin).stdout
        if out is not None:
            with open(out, "w") as f:
                f.write(text)
        return text
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _output_dir(output_dir: str | None) -> str:
    """output_dir, made; or a temporary one removed when Python exits."""
    if output_dir is None:
        out_dir = _cli.new_output_dir()
        _temp_dirs.append(out_dir)
        return out_dir
    os.makedirs(output_dir, exist_ok=True)
    return output_dir


def _model_and_data(model, data, out_dir, drift_bin
                    ) -> tuple[list[str], dict]:
    """The model and data arguments of a command (files written into
    out_dir where needed), and the data as given."""
    path, kind = _model_file(model, out_dir)
    files, given = _data_files(data, path, kind, out_dir, drift_bin)
    args = ["--model", path] if kind == "plugin" else [path]
    for f in files:
        args += ["--data", f]
    return args, given


def optimize(model, data=None, seed: int | None = None,
             jacobian: bool = False, init=None,
             drift_bin: str | None = None, **options) -> dict[str, float]:
    """`drift optimize`: the posterior mode by L-BFGS, as CmdStan's
    optimize method (without the constraints' log-Jacobians unless
    jacobian=True).  Returns {column: value} for lp__, the parameters
    (Stan's flat names: "w.1", ...) and the generated quantities at the
    mode.  options: drift optimize's options by name, underscores for
    dashes (iter=, tol_rel_grad=, history_size=, ...).  init: a dict of
    initial values (written as JSON) or a file's path.  Raises DriftError
    when drift refuses or the search fails (no mode, iteration limit)."""
    tmp = _cli.new_output_dir()
    try:
        args = ["optimize"] + _model_and_data(model, data, tmp, drift_bin)[0]
        if seed is not None:
            args += ["--seed", str(int(seed))]
        if jacobian:
            args.append("--jacobian")
        args += _init_args(init, tmp) + _options_args(options)
        out = os.path.join(tmp, "optimize.csv")
        args += ["--out", out]
        _cli.run(args, drift_bin)
        table = stancsv.read(out)
        if table.draws.shape[0] != 1:
            raise DriftError(f"drift optimize wrote {table.draws.shape[0]} rows")
        return dict(zip(table.columns, table.draws[0].tolist()))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def log_prob(model, point: Mapping[str, object], data=None,
             jacobian: bool = True, drift_bin: str | None = None
             ) -> tuple[float, dict[str, float]]:
    """`drift log-prob` at one point: point maps each parameter's name to
    its constrained value (numbers or arrays).  Returns (lp, gradient):
    the log density (with the constraints' log-Jacobians unless
    jacobian=False, every normalising constant kept) and its gradient on
    the unconstrained scale by coordinate name, as CmdStan's log_prob
    method gives them."""
    tmp = _cli.new_output_dir()
    try:
        args = ["log-prob"] + _model_and_data(model, data, tmp, drift_bin)[0]
        ppath = os.path.join(tmp, "point.json")
        _cli.write_json(ppath, dict(point))
        args += ["--point", ppath]
        if not jacobian:
            args.append("--no-jacobian")
        out = os.path.join(tmp, "log_prob.csv")
        _cli.run(args + ["--out", out], drift_bin)
        table = stancsv.read(out)
        if table.draws.shape[0] != 1 or table.columns[0] != "lp__":
            raise DriftError("drift log-prob wrote an unexpected table")
        grad = {n[2:] if n.startswith("g_") else n: float(v)
                for n, v in zip(table.columns[1:], table.draws[0, 1:])}
        return float(table.draws[0, 0]), grad
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _method_setup(command: str, model, data, output_dir, drift_bin,
                  seed=None):
    """A method command's output directory (kept while Python runs, unless
    given), its first arguments (the model and the data files written
    there, the seed) and the data as given (for the Fit)."""
    out_dir = _output_dir(output_dir)
    margs, given = _model_and_data(model, data, out_dir, drift_bin)
    args = [command] + margs
    if seed is not None:
        args += ["--seed", str(int(seed))]
    return out_dir, args, given


def _init_args(init, out_dir) -> list[str]:
    """--init from a dict of initial values (written as JSON), a file's
    path or a number (a radius)."""
    if init is None:
        return []
    if isinstance(init, Mapping):
        ipath = os.path.join(out_dir, "init.json")
        _cli.write_json(ipath, init)
        return ["--init", ipath]
    if isinstance(init, (int, float)) and not isinstance(init, bool):
        return ["--init", repr(float(init))]
    return ["--init", os.fspath(init)]


def _options_args(options: Mapping[str, object]) -> list[str]:
    """A method's options by name, underscores for dashes (booleans as 0 or
    1, as the methods' 0|1 options take them)."""
    args: list[str] = []
    for k, v in options.items():
        args += _cli._option(k, int(v) if isinstance(v, bool) else v)
    return args


def _run_method(args: list[str], out: str, drift_bin) -> str:
    """Runs the method writing out; drift's warnings become DriftWarning.
    Its messages."""
    r = _cli.run(args + ["--out", out], drift_bin)
    for line in r.stderr.splitlines():
        if "warning:" in line:
            warnings.warn(line.split("warning:", 1)[1].strip(),
                          _cli.DriftWarning, stacklevel=3)
    return r.stderr


def laplace(model, data=None, mode=None, draws: int = 1000,
            seed: int | None = None, jacobian: bool = True, init=None, *,
            output_dir: str | None = None, drift_bin: str | None = None
            ) -> Fit:
    """`drift laplace`: draws from the Gaussian approximation at the
    posterior mode on the unconstrained scale, as CmdStan's laplace method
    (with the constraints' log-Jacobians unless jacobian=False).  mode: a
    dict from drift.optimize, an optimize CSV file's path, or None (found
    here by L-BFGS from init).  Returns a Fit of one chain whose columns
    are log_p__ (the log density at the draw), log_g__ (the
    approximation's, up to its constant), the parameters and the generated
    quantities."""
    if not isinstance(draws, (int, np.integer)) or draws < 1:
        raise ValueError(f"draws must be a positive integer, got {draws!r}")
    out_dir, args, given = _method_setup("laplace", model, data, output_dir,
                                         drift_bin, seed)
    args += ["--draws", str(int(draws))]
    if not jacobian:
        args.append("--no-jacobian")
    if isinstance(mode, Mapping):
        mpath = os.path.join(out_dir, "mode.csv")
        cols = list(mode)
        with open(mpath, "w", encoding="utf-8") as f:
            f.write("# method = optimize\n")
            f.write(",".join(cols) + "\n")
            f.write(",".join(repr(float(mode[c])) for c in cols) + "\n")
        args += ["--mode", mpath]
    elif mode is not None:
        args += ["--mode", os.fspath(mode)]
    args += _init_args(init, out_dir)
    out = os.path.join(out_dir, "laplace.csv")
    msgs = _run_method(args, out, drift_bin)
    return Fit([out], given, False, msgs, drift_bin)


def generate(model, fit, data=None, seed: int | None = None, *,
             output_dir: str | None = None, drift_bin: str | None = None
             ) -> Fit:
    """`drift generate`: the model's derived and generated blocks at every
    draw of an existing fit (a Fit, or a list of its Stan CSV files), as
    CmdStan's standalone generated quantities.  Returns a Fit of the new
    files: one per input chain, each the input with those columns
    recomputed."""
    files_in = _files_of(fit)
    out_dir, args, given = _method_setup("generate", model, data,
                                         output_dir, drift_bin, seed)
    out = os.path.join(out_dir, "generated.csv")
    msgs = _run_method(args + ["--draws"] + files_in, out, drift_bin)
    outs = ([out] if len(files_in) == 1 else
            [os.path.join(out_dir, f"generated_{k + 1}.csv")
             for k in range(len(files_in))])
    return Fit(outs, given, False, msgs, drift_bin)


def pathfinder(model, data=None, seed: int | None = None, init=None, *,
               output_dir: str | None = None, drift_bin: str | None = None,
               **options) -> Fit:
    """`drift pathfinder`: approximate draws by Pathfinder (single- or
    multi-path with PSIS resampling), as CmdStan's pathfinder method.
    options: drift pathfinder's options by name, underscores for dashes
    (num_paths=4, num_draws=1000, num_psis_draws=1000, history_size=5,
    psis_resample=True, ...).  init: a dict of initial values, a file's
    path or a radius.  Returns a Fit of one chain whose columns are
    lp_approx__, lp__, the parameters and the generated quantities;
    drift's Pareto k warning, when it gives one, becomes a DriftWarning."""
    out_dir, args, given = _method_setup("pathfinder", model, data,
                                         output_dir, drift_bin, seed)
    args += _init_args(init, out_dir) + _options_args(options)
    out = os.path.join(out_dir, "pathfinder.csv")
    msgs = _run_method(args, out, drift_bin)
    return Fit([out], given, False, msgs, drift_bin)


def variational(model, data=None, algorithm: str = "meanfield",
                seed: int | None = None, init=None, *,
                output_dir: str | None = None, drift_bin: str | None = None,
                **options) -> Fit:
    """`drift variational`: ADVI (meanfield or fullrank) with gradients from
    minibatches on large data, as CmdStan's variational method.  options:
    drift variational's options by name, underscores for dashes
    (output_samples=1000, tol_rel_obj=0.01, batch=..., eta=...).  Returns a
    Fit of one chain of the approximation's draws (columns lp__ = 0,
    log_p__, log_g__, the parameters and the generated quantities);
    fit.variational_mean maps each column to the approximation's mean (the
    file's first row, apart from the draws, as CmdStanPy's CmdStanVB keeps
    it).  drift's warnings (a Pareto k above 0.7) become DriftWarning."""
    if algorithm not in ("meanfield", "fullrank"):
        raise ValueError("algorithm must be 'meanfield' or 'fullrank', got "
                         f"{algorithm!r}")
    out_dir, args, given = _method_setup("variational", model, data,
                                         output_dir, drift_bin, seed)
    args += ["--algorithm", algorithm, "--quiet"]
    args += _init_args(init, out_dir) + _options_args(options)
    out = os.path.join(out_dir, "variational.csv")
    msgs = _run_method(args, out, drift_bin)
    # the draws apart from the mean's row (the first after the header)
    draws = os.path.join(out_dir, "variational-draws.csv")
    header, mean_row = None, None
    with open(out, encoding="utf-8") as fin, \
            open(draws, "w", encoding="utf-8") as fout:
        for line in fin:
            if line.startswith("#") or not line.strip():
                fout.write(line)
            elif header is None:
                header = line.strip().split(",")
                fout.write(line)
            elif mean_row is None:
                mean_row = [float(v) for v in line.strip().split(",")]
            else:
                fout.write(line)
    fit = Fit([draws], given, False, msgs, drift_bin)
    fit.variational_mean = dict(zip(header or [], mean_row or []))
    return fit
