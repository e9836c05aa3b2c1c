"""Writing drift's binary row store (.drs) from numpy arrays.

The format is drift's own (src/engine/data/rowstore.c): a header of 4096-byte
multiples (magic, version, byte order, row count, column names and types, an
FNV-1a checksum), then the rows as row-major float64.  drift memory-maps it,
so the values reach the sampler bit for bit.  Dense columns only; sparse rows
are written by `drift data convert` from LIBSVM.  Not a reader: `drift data
info FILE` prints a store's header.
"""

from __future__ import annotations

import os
import struct
from typing import Mapping, Sequence

import numpy as np

MAGIC = b"DRIFTRS\x1a"
VERSION = 1
ENDIAN_MARK = 0x01020304
HEADER_ALIGN = 4096
PREFIX = struct.Struct("=8sIIQQQQQQ4Q")  # 96 bytes, as drift_rowstore_prefix
MAX_DENSE_COLS = 1_000_000
MAX_NAME_BYTES = 4096


def _fnv1a(buf: bytes) -> int:
    h = 0xCBF29CE484222325
    for b in buf:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def _align(x: int, a: int) -> int:
    return (x + a - 1) // a * a


def _is_integral(col: np.ndarray) -> bool:
    if col.dtype.kind in "iub":
        return True
    return bool(np.all(np.floor(col) == col))


def column_names(name: str, shape: Sequence[int]) -> list[str]:
    """Stan's names for the elements of a rows variable of one row's shape
    `shape` (() for a scalar): y; x.1 ... x.D; M.1.1, M.1.2, ... in row-major
    order, as the row store's columns are laid out."""
    if not shape:
        return [name]
    idx = np.indices(shape).reshape(len(shape), -1).T + 1
    return [name + "." + ".".join(str(i) for i in row) for row in idx]


def write(path: str | os.PathLike, columns: Mapping[str, np.ndarray]) -> int:
    """Writes the rows variables in `columns` (name -> array whose first axis
    is the row) as a row store at `path`, written under a temporary name and
    renamed.  A variable of shape (N,) is one column named by it; (N, D) the
    columns name.1 ... name.D; (N, R, C) name.r.c.  Every value must be
    finite.  Returns the number of rows."""
    if not columns:
        raise ValueError("a row store needs at least one column")
    names: list[str] = []
    types: list[int] = []
    blocks: list[np.ndarray] = []
    n_rows = None
    for name, value in columns.items():
        a = np.asarray(value)
        if a.ndim == 0:
            raise ValueError(f"rows variable '{name}' is a scalar; it needs "
                             "one value per row")
        if a.dtype.kind not in "iubf":
            raise TypeError(f"rows variable '{name}' has dtype {a.dtype}; "
                            "expected numbers")
        if n_rows is None:
            n_rows = a.shape[0]
        elif a.shape[0] != n_rows:
            raise ValueError(f"rows variable '{name}' has {a.shape[0]} rows, "
                             f"the others {n_rows}")
        flat = a.reshape(a.shape[0], -1)
        if flat.dtype.kind == "f" and not np.all(np.isfinite(flat)):
            bad = np.argwhere(~np.isfinite(flat))[0]
            raise ValueError(f"rows variable '{name}' holds a value that is "
                             f"not finite (row {bad[0] + 1}): drift's data "
                             "must be finite numbers")
        names.extend(column_names(name, a.shape[1:]))
        integral = flat.dtype.kind in "iub"
        for j in range(flat.shape[1]):
            types.append(1 if integral or _is_integral(flat[:, j]) else 0)
        blocks.append(flat)
    assert n_rows is not None
    if n_rows == 0:
        raise ValueError("a row store needs at least one row")
    if len(names) > MAX_DENSE_COLS:
        raise ValueError(f"{len(names)} columns; a row store holds at most "
                         f"{MAX_DENSE_COLS}")

    table = bytearray()
    for name, t in zip(names, types):
        b = name.encode()
        if len(b) > MAX_NAME_BYTES:
            raise ValueError(f"column name '{name[:40]}...' is too long")
        table += struct.pack("=II", len(b), t) + b
        table += b"\0" * (_align(len(b), 8) - len(b))
    header_bytes = _align(PREFIX.size + len(table), HEADER_ALIGN)
    file_bytes = header_bytes + n_rows * len(names) * 8

    def prefix(checksum: int) -> bytes:
        return PREFIX.pack(MAGIC, VERSION, ENDIAN_MARK, header_bytes, n_rows,
                           len(names), 0, file_bytes, checksum, 0, 0, 0, 0)

    header = bytearray(header_bytes)
    header[PREFIX.size:PREFIX.size + len(table)] = table
    header[:PREFIX.size] = prefix(0)
    header[:PREFIX.size] = prefix(_fnv1a(bytes(header)))

    # One row-major float64 block: a view when a single float64 C-ordered
    # variable is given, else one copy with the variables side by side.
    if len(blocks) == 1 and blocks[0].dtype == np.float64:
        rows = np.ascontiguousarray(blocks[0])
    else:
        rows = np.empty((n_rows, len(names)), dtype=np.float64)
        j = 0
        for b in blocks:
            rows[:, j:j + b.shape[1]] = b
            j += b.shape[1]

    path = os.fspath(path)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(header)
        rows.tofile(f)
    os.replace(tmp, path)
    return int(n_rows)
