"""The in-process transport: libdrift (include/drift/drift.h) through ctypes.

A run is a drift_spec made from Python values, run in a worker thread of
this process; numpy arrays reach drift as drift_columns by pointer, read
in place.  The draws are written as Stan CSV files to the run's output
directory, exactly as `drift sample` writes them, so fit.py reads them as
it reads the CLI transport's; progress and warnings come from the spec's
message callback.  Found by library() (None when libdrift is not there,
or is not of API version 2: the package then uses _cli alone).  Needs no
compiler: ctypes is in the standard library.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import queue
import shutil
import threading
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from . import rowstore

API_VERSION = 2

COLUMN_DOUBLE, COLUMN_INT, COLUMN_INT64 = 0, 1, 2
DRAW_WARMUP = 1
MESSAGE_PROGRESS, MESSAGE_NOTE, MESSAGE_WARNING = 0, 1, 2
LAUNCH_IN_PROCESS = 0
OK, ESTOP = 0, 7


class _Column(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("type", ctypes.c_int),
                ("values", ctypes.c_void_p), ("stride", ctypes.c_size_t)]


class _Option(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("value", ctypes.c_char_p)]


_DRAW_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint,
                            ctypes.c_uint, ctypes.POINTER(ctypes.c_double),
                            ctypes.c_size_t)
_MESSAGE_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int,
                               ctypes.c_char_p)


class _Spec(ctypes.Structure):
    _fields_ = [("method", ctypes.c_char_p), ("model", ctypes.c_char_p),
                ("data", ctypes.POINTER(ctypes.c_char_p)),
                ("n_data", ctypes.c_size_t),
                ("columns", ctypes.POINTER(_Column)),
                ("n_columns", ctypes.c_size_t), ("n_rows", ctypes.c_size_t),
                ("sampler", ctypes.c_char_p),
                ("options", ctypes.POINTER(_Option)),
                ("n_options", ctypes.c_size_t),
                ("on_draw", _DRAW_FN), ("on_draw_user", ctypes.c_void_p),
                ("on_message", _MESSAGE_FN),
                ("on_message_user", ctypes.c_void_p)]


class _Err(ctypes.Structure):
    _fields_ = [("msg", ctypes.c_char * 512)]


_lib = None
_lib_tried = False
_lib_path: str | None = None


def _candidates() -> list[str]:
    """Where libdrift may be: $DRIFT_LIB, the build tree of $DRIFT_BIN
    (.libs/libdrift.so beside it), the system's (find_library), the lib
    directory beside an installed drift on PATH."""
    out = []
    env = os.environ.get("DRIFT_LIB")
    if env:
        return [env]
    exe = os.environ.get("DRIFT_BIN")
    if exe:
        out.append(os.path.join(os.path.dirname(os.path.abspath(exe)),
                                ".libs", "libdrift.so"))
    found = ctypes.util.find_library("drift")
    if found:
        out.append(found)
    # an installed drift's own: PREFIX/lib beside PREFIX/bin/drift (found
    # whether or not ldconfig has run since make install)
    installed = shutil.which("drift")
    if installed:
        lib = os.path.join(os.path.dirname(os.path.dirname(
            os.path.realpath(installed))), "lib")
        out += [os.path.join(lib, "libdrift.so.2"),
                os.path.join(lib, "libdrift.so")]
    return out


def library():
    """libdrift, loaded and of API version 2, or None (found once)."""
    global _lib, _lib_tried, _lib_path
    if _lib_tried:
        return _lib
    _lib_tried = True
    for path in _candidates():
        if os.path.sep in path and not os.path.isfile(path):
            continue
        try:
            lib = ctypes.CDLL(path)
            lib.drift_api_version.restype = ctypes.c_uint
            if lib.drift_api_version() != API_VERSION:
                continue
        except (OSError, AttributeError):
            continue
        lib.drift_plan_new.argtypes = [ctypes.POINTER(_Spec),
                                       ctypes.POINTER(ctypes.c_void_p),
                                       ctypes.POINTER(_Err)]
        lib.drift_plan_new.restype = ctypes.c_int
        lib.drift_plan_run.argtypes = [ctypes.c_void_p, ctypes.c_int,
                                       ctypes.POINTER(_Err)]
        lib.drift_plan_run.restype = ctypes.c_int
        lib.drift_plan_free.argtypes = [ctypes.c_void_p]
        lib.drift_plan_free.restype = None
        lib.drift_plan_chains.argtypes = [ctypes.c_void_p]
        lib.drift_plan_chains.restype = ctypes.c_uint
        lib.drift_request_stop.argtypes = []
        lib.drift_request_stop.restype = None
        lib.drift_version.restype = ctypes.c_char_p
        _lib, _lib_path = lib, path
        return lib
    return None


def library_path() -> str | None:
    """The file libdrift was loaded from (None: not loaded)."""
    library()
    return _lib_path


# ---- data ---------------------------------------------------------------

@dataclass
class Columns:
    """Rows variables as drift_columns: the ctypes array, the row count,
    and every numpy array the columns point into (kept until the run
    ends: ctypes holds no reference), with the names of the variables
    that had to be converted (copied) on the way."""
    array: object = None
    n: int = 0
    n_rows: int = 0
    keep: list = field(default_factory=list)
    converted: list = field(default_factory=list)


def columns(rows: Mapping[str, object]) -> Columns:
    """rows (name -> array whose first axis is the row) as drift_columns
    named as the row store names them (y; x.1 ... x.D; M.r.c).  float64,
    int64 and int32 arrays are handed over in place, whatever their
    strides (a column of a C-ordered 2-D array with the row's stride; a
    C-ordered float64 array is then the very table libdrift reads, see
    drift.h); other dtypes (bool, float32, int8/16, unsigned) are
    converted to int64 or float64 first, which copies them, as does a
    negative or odd stride.  Raises TypeError for what a drift_column
    cannot hold (a sparse matrix)."""
    out = Columns()
    cols = []
    n_rows = None
    for name, value in rows.items():
        if hasattr(value, "tocsr") and hasattr(value, "nnz"):
            raise TypeError(f"rows variable '{name}' is sparse")
        a = rowstore.rows_array(name, value, n_rows)
        n_rows = a.shape[0]
        if a.dtype == np.float64 or a.dtype == np.int64:
            pass
        elif a.dtype == np.int32 and ctypes.sizeof(ctypes.c_int) == 4:
            pass
        elif a.dtype.kind == "f":
            a = a.astype(np.float64)
            out.converted.append(name)
        else:
            a = a.astype(np.int64)
            out.converted.append(name)
        if any(s < 0 or s % a.itemsize for s in a.strides):
            a = np.ascontiguousarray(a)
            out.converted.append(name)
        rowstore.check_finite(name, a)
        kind = (COLUMN_DOUBLE if a.dtype.kind == "f" else
                COLUMN_INT64 if a.dtype == np.int64 else COLUMN_INT)
        out.keep.append(a)
        base = a.ctypes.data
        stride = a.strides[0] // a.itemsize if a.shape[0] > 1 else 1
        inner = a.shape[1:]
        names = rowstore.column_names(name, inner)
        offsets = (np.zeros(1, dtype=np.int64) if not inner else
                   (np.indices(inner).reshape(len(inner), -1).T *
                    np.array(a.strides[1:], dtype=np.int64)).sum(axis=1))
        for cname, off in zip(names, offsets.tolist()):
            cols.append((cname.encode(), kind, base + int(off), stride))
    if not cols:
        return out
    arr = (_Column * len(cols))()
    for k, (cname, kind, ptr, stride) in enumerate(cols):
        arr[k].name = cname
        arr[k].type = kind
        arr[k].values = ptr
        arr[k].stride = stride
    out.keep.extend(c[0] for c in cols)
    out.array, out.n, out.n_rows = arr, len(cols), n_rows or 0
    return out


# ---- sampling -----------------------------------------------------------

def spec_options(sampler_opts: Mapping[str, object]) -> list[tuple]:
    """drift sample's options by name (underscores for dashes) as the
    spec's (name, value) pairs: True a flag, False and None nothing, set,
    data_set and model_set dicts one pair per entry."""
    out: list[tuple] = []
    for k, v in sampler_opts.items():
        name = k.replace("_", "-")
        if k in ("set", "data_set", "model_set"):
            if not isinstance(v, Mapping):
                raise TypeError(f"{k} takes a dict of name -> value, "
                                f"got {type(v).__name__}")
            for key, val in v.items():
                val = repr(val) if isinstance(val, float) else str(val)
                out.append((name, f"{key}={val}"))
        elif v is True:
            out.append((name, None))
        elif v is False or v is None:
            continue
        else:
            out.append((name, repr(v) if isinstance(v, float) else str(v)))
    return out


@dataclass
class Run:
    """What a run left: its status (OK, ESTOP, or an error with message),
    whether KeyboardInterrupt stopped it, and its message lines."""
    rc: int
    message: str
    interrupted: bool
    lines: list
    warnings: list


def sample(model: str, data_files: Sequence[str], cols: Columns,
           sampler: str, chains: int, seed: int | None, out: str,
           options: Sequence[tuple], on_progress=None) -> Run:
    """Runs the plan of these settings in a worker thread: the draws to
    out (Stan CSV, CmdStan's names), each progress line to on_progress
    (called in this thread), the other lines kept.  KeyboardInterrupt
    here asks the chains to stop (drift_request_stop) and waits for them:
    the draws so far are written, and the run is marked interrupted; a
    second one is taken the same way (the chains end after their step)."""
    lib = library()
    assert lib is not None
    opts = [("chains", str(chains)), ("out", out)]
    if seed is not None:
        opts.append(("seed", str(seed)))
    opts += list(options)
    enc = [(n.encode(), None if v is None else v.encode()) for n, v in opts]
    opt_arr = (_Option * len(enc))(*[_Option(n, v) for n, v in enc])
    data_enc = [os.fsencode(f) for f in data_files]
    data_arr = (ctypes.c_char_p * max(1, len(data_enc)))(*data_enc)
    lines: queue.SimpleQueue = queue.SimpleQueue()

    def on_message(user, kind, line):
        lines.put((kind, line.decode("utf-8", "replace")))

    msg_fn = _MESSAGE_FN(on_message)
    spec = _Spec()
    spec.model = os.fsencode(model)
    spec.data = data_arr
    spec.n_data = len(data_enc)
    if cols.n:
        spec.columns = ctypes.cast(cols.array, ctypes.POINTER(_Column))
        spec.n_columns = cols.n
        spec.n_rows = cols.n_rows
    spec.sampler = sampler.encode()
    spec.options = opt_arr
    spec.n_options = len(enc)
    spec.on_message = msg_fn
    result = {}

    done = threading.Event()

    def work():
        try:
            err = _Err()
            plan = ctypes.c_void_p()
            rc = lib.drift_plan_new(ctypes.byref(spec), ctypes.byref(plan),
                                    ctypes.byref(err))
            if rc == OK:
                rc = lib.drift_plan_run(plan, LAUNCH_IN_PROCESS,
                                        ctypes.byref(err))
                lib.drift_plan_free(plan)
            result["rc"] = rc
            result["msg"] = err.msg.decode("utf-8", "replace")
        finally:
            done.set()

    kept: list = []
    warns: list = []

    def drain():
        while True:
            try:
                kind, line = lines.get_nowait()
            except queue.Empty:
                return
            if kind == MESSAGE_PROGRESS:
                if on_progress is not None:
                    on_progress(line)
                continue
            kept.append(line)
            if kind == MESSAGE_WARNING:
                warns.append(line)

    worker = threading.Thread(target=work, name="drift-run", daemon=True)
    interrupted = False
    worker.start()
    # Waited on in slices (an Event's wait, which a KeyboardInterrupt
    # leaves consistent, unlike Thread.join's), so that Ctrl-C reaches
    # this thread while the chains run.
    while not done.is_set():
        try:
            done.wait(0.1)
            drain()
        except KeyboardInterrupt:
            interrupted = True
        if interrupted:
            # asked again until the run ends: a stop asked before the
            # plan began to run would not reach it
            lib.drift_request_stop()
    worker.join()
    drain()
    # msg_fn, spec and the arrays it points to lived until here (ctypes
    # keeps no reference for the library)
    return Run(result.get("rc", -1), result.get("msg", ""), interrupted,
               kept, warns)
