"""The transport: running the `drift` executable, as CmdStanPy runs CmdStan.

Everything that knows drift is a separate program lives here: finding the
executable, writing data files it reads, building its command lines, reading
its progress and warnings from standard error, and stopping it on
KeyboardInterrupt.  The rest of the package hands this module numpy arrays
and option values and gets back file paths and text, so an in-process
transport can replace it without changing the Python API.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import warnings
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from . import rowstore


class DriftError(RuntimeError):
    """drift refused a command or failed; the message is drift's own."""


class DriftNotFoundError(DriftError, FileNotFoundError):
    """The drift executable was not found."""


class DriftWarning(UserWarning):
    """A warning drift printed (a line with 'warning:')."""


_drift_bin: str | None = None


def set_drift_path(path: str | os.PathLike) -> None:
    """Uses the drift executable at path for every later call."""
    global _drift_bin
    p = os.fspath(path)
    if not (os.path.isfile(p) and os.access(p, os.X_OK)):
        raise DriftNotFoundError(f"{p}: not an executable file")
    _drift_bin = p


def find_drift(path: str | os.PathLike | None = None) -> str:
    """The drift executable: path if given, else the one set by
    set_drift_path, else $DRIFT_BIN, else the first `drift` on PATH."""
    for cand, what in ((path, "the argument drift_bin"),
                       (_drift_bin, "set_drift_path"),
                       (os.environ.get("DRIFT_BIN"), "DRIFT_BIN")):
        if cand:
            p = os.fspath(cand)
            if os.path.isfile(p) and os.access(p, os.X_OK):
                return p
            raise DriftNotFoundError(
                f"{p} (from {what}) is not an executable file; point it at "
                "the drift program (a build tree's ./drift, or the "
                "installed one)")
    found = shutil.which("drift")
    if found:
        return found
    raise DriftNotFoundError(
        "the drift executable was not found: install drift (make install) "
        "so that it is on PATH, or set the environment variable DRIFT_BIN "
        "to its path, or call drift.set_drift_path(PATH), or pass "
        "drift_bin=PATH")


def run(args: Sequence[str], drift_bin: str | None = None,
        check: bool = True) -> subprocess.CompletedProcess:
    """Runs `drift ARGS...` to completion; returns its output.  With check,
    a non-zero exit raises DriftError with drift's message."""
    exe = find_drift(drift_bin)
    p = subprocess.run([exe, *args], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if check and p.returncode != 0:
        raise DriftError(_message(p.stderr, p.stdout, p.returncode, args))
    return p


def _message(stderr: str, stdout: str, rc: int, args: Sequence[str]) -> str:
    text = (stderr.strip() or stdout.strip() or
            f"drift {' '.join(args[:1])} exited with status {rc}")
    return text


# ---- data ---------------------------------------------------------------

_ROWS_LINE = re.compile(r"^\s+(\w+)\s+(.*?)\s+\(one per row\)")


def rows_variables(model_path: str, drift_bin: str | None = None
                   ) -> dict[str, str]:
    """The rows variables of a .drift model (name -> declared type), from
    `drift check MODEL` (which needs no data)."""
    p = run(["check", model_path], drift_bin)
    out: dict[str, str] = {}
    for line in p.stdout.splitlines():
        m = _ROWS_LINE.match(line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def _json_value(name: str, v):
    a = np.asarray(v)
    if a.dtype.kind == "b":
        a = a.astype(np.int64)
    if a.dtype.kind not in "iuf":
        raise TypeError(f"data '{name}' has dtype {a.dtype}; expected numbers")
    if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
        raise ValueError(f"data '{name}' holds a value that is not finite: "
                         "drift's data must be finite numbers")
    # tolist gives Python ints and floats; json writes floats by repr, the
    # shortest text that reads back to the same double.
    return a.tolist()


def write_json(path: str, data: Mapping[str, object]) -> None:
    """Writes data (name -> number or array) as CmdStan JSON, exactly."""
    obj = {k: _json_value(k, v) for k, v in data.items()}
    with open(path, "w") as f:
        json.dump(obj, f, allow_nan=False)


def write_data(data: Mapping[str, object], rows: Sequence[str],
               out_dir: str, stem: str = "data") -> list[str]:
    """Writes data for drift: the entries named in rows to a row store
    (binary, exact, memory-mapped by drift), the rest to CmdStan JSON.
    Returns the files to pass as --data."""
    files = []
    row_part = {k: v for k, v in data.items() if k in rows}
    rest = {k: v for k, v in data.items() if k not in rows}
    if row_part:
        path = os.path.join(out_dir, stem + ".drs")
        rowstore.write(path, row_part)
        files.append(path)
    if rest:
        path = os.path.join(out_dir, stem + ".json")
        write_json(path, rest)
        files.append(path)
    return files


# ---- sampling -----------------------------------------------------------

# drift's periodic lines when standard error is not a terminal:
#   Chain 1 Iteration:  200 / 2000 [ 10%]  (Warmup)          (--iter)
#   Chain 1 Iteration: 1757, 150 / 300 data passes [ 50%]  (Sampling)
#   Chain 1 Iteration: 3154 [ 15%]  (Sampling)              (--seconds)
_PROGRESS = re.compile(
    r"^Chain\s+(\d+)\s+Iteration:\s*(\d+)(?:\s*/\s*(\d+))?\s*(,[^[]*)?"
    r"\[\s*(\d+)%\]\s*(?:\((\w+)\))?")


def _option(name: str, value) -> list[str]:
    flag = "--" + name.replace("_", "-")
    if value is True:
        return [flag]
    if value is False or value is None:
        return []
    if isinstance(value, float):
        return [flag, repr(value)]
    return [flag, str(value)]


def sample_args(model_path: str, is_plugin: bool, data_files: Sequence[str],
                sampler: str, chains: int, seed: int | None, out: str,
                options: Mapping[str, object]) -> list[str]:
    """The command line of `drift sample` for these settings: model_path a
    .drift or .stan file, or (is_plugin) a C model plugin's name or path.
    options map to drift's options by name (iter, warmup, batch ...;
    underscores for dashes); set (a dict) gives --set K=V, data_set
    --data-set and model_set --model-set; True gives a flag alone, False
    and None nothing."""
    args = ["sample"]
    args += ["--model", model_path] if is_plugin else [model_path]
    for f in data_files:
        args += ["--data", f]
    args += ["--sampler", sampler, "--chains", str(chains), "--out", out]
    if seed is not None:
        args += ["--seed", str(seed)]
    for k, v in options.items():
        if k in ("set", "data_set", "model_set"):
            flag = "--" + k.replace("_", "-")
            if not isinstance(v, Mapping):
                raise TypeError(f"{k} takes a dict of name -> value, "
                                f"got {type(v).__name__}")
            for name, val in v.items():
                val = repr(val) if isinstance(val, float) else str(val)
                args += [flag, f"{name}={val}"]
        else:
            args += _option(k, v)
    return args


@dataclass
class SampleRun:
    """What a `drift sample` process left: its files, its exit status,
    whether a signal stopped it (by_keyboard: a KeyboardInterrupt here),
    and its standard error."""
    csv_files: list[str]
    returncode: int
    interrupted: bool
    stderr: str
    args: list[str] = field(default_factory=list)
    by_keyboard: bool = False


class _Progress:
    """One tqdm bar per chain, fed from drift's progress lines."""

    def __init__(self, enabled: bool):
        self.bars: dict[int, object] = {}
        self.tqdm = None
        if enabled:
            try:
                from tqdm.auto import tqdm
                self.tqdm = tqdm
            except ImportError:
                self.tqdm = None

    def update(self, m: re.Match):
        """Moves a chain's bar to a progress line's place: in iterations
        when the budget is one, else in percent of the budget."""
        if self.tqdm is None:
            return
        chain, it = int(m.group(1)), int(m.group(2))
        if m.group(3):
            n, total, unit, note = it, int(m.group(3)), "it", ""
        else:
            n, total, unit = int(m.group(5)), 100, "%"
            note = f"{it} it" + (m.group(4) or "").rstrip()
        bar = self.bars.get(chain)
        if bar is None:
            bar = self.tqdm(total=total, desc=f"chain {chain}",
                            position=len(self.bars), unit=unit,
                            leave=True, dynamic_ncols=True)
            self.bars[chain] = bar
        if bar.total != total:
            bar.total = total
        bar.n = n
        phase = (m.group(6) or "").lower()
        bar.set_postfix_str(", ".join(x for x in (note, phase) if x),
                            refresh=False)
        bar.refresh()

    def close(self):
        for bar in self.bars.values():
            bar.close()


def output_files(out: str, chains: int) -> list[str]:
    """The draws files drift writes for --out out and chains (CmdStan's
    names: out itself for one chain, STEM_1.csv ... for more)."""
    if chains == 1:
        return [out]
    stem, ext = os.path.splitext(out)
    return [f"{stem}_{k}{ext}" for k in range(1, chains + 1)]


def sample(args: list[str], out: str, chains: int, show_progress: bool,
           drift_bin: str | None = None) -> SampleRun:
    """Runs `drift ARGS`, showing progress and turning drift's warnings
    into DriftWarning.  On KeyboardInterrupt drift gets one SIGINT (it
    stops every chain after its current step and completes the files,
    marked interrupted) and the files are returned with interrupted set;
    a second KeyboardInterrupt kills drift and propagates."""
    exe = find_drift(drift_bin)
    # Its own session: a terminal's Ctrl-C reaches Python alone, which
    # forwards exactly one SIGINT (drift takes a second one as "kill now").
    proc = subprocess.Popen([exe, *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, bufsize=1,
                            start_new_session=True)
    progress = _Progress(show_progress)
    lines: list[str] = []

    def read():
        assert proc.stderr is not None
        for line in proc.stderr:
            line = line.rstrip("\n")
            m = _PROGRESS.match(line)
            if m:
                progress.update(m)
                continue
            lines.append(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    interrupted = False
    try:
        try:
            proc.wait()
        except KeyboardInterrupt:
            interrupted = True
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait()
            except KeyboardInterrupt:
                proc.kill()
                proc.wait()
                raise
        reader.join()
    finally:
        progress.close()
        if proc.stderr is not None:
            proc.stderr.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    stderr = "\n".join(lines)
    for line in lines:
        if "warning:" in line:
            text = line.split("warning:", 1)[1].strip()
            warnings.warn(text, DriftWarning, stacklevel=3)
    files = [f for f in output_files(out, chains) if os.path.isfile(f)]
    # A signal from elsewhere (kill, a batch system's SIGTERM) stops drift
    # as Ctrl-C does, with 128 + the signal's number as its status.
    by_signal = proc.returncode in (128 + signal.SIGINT, 128 + signal.SIGTERM,
                                    128 + signal.SIGHUP)
    return SampleRun(files, proc.returncode, interrupted or by_signal,
                     stderr, args, by_keyboard=interrupted)


def new_output_dir(parent: str | None = None) -> str:
    """A fresh directory for one run's files (data and draws)."""
    return tempfile.mkdtemp(prefix="drift-", dir=parent)

