"""Writing drift's binary row store (.drs) from numpy arrays.

The format is drift's own (src/engine/data/rowstore.c): a header of 4096-byte
multiples (magic, version, byte order, row count, column names and types, an
FNV-1a checksum), then the rows as row-major float64.  drift memory-maps it,
so the values reach the sampler bit for bit.  One variable may be sparse (a
scipy.sparse matrix, a model's `sparse_vector` rows), written as compressed
sparse rows after the dense block.  Not a reader: `drift data info FILE`
prints a store's header.
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


def _is_sparse(value) -> bool:
    return hasattr(value, "tocsr") and hasattr(value, "nnz")


def _csr(name: str, value):
    """(indptr uint64, indices uint32, data float64, dim) of a scipy.sparse
    matrix, rows sorted and duplicates summed, as drift's store holds."""
    m = value.tocsr(copy=True)
    m.sum_duplicates()
    m.sort_indices()
    data = np.asarray(m.data, dtype=np.float64)
    if not np.all(np.isfinite(data)):
        raise ValueError(f"sparse rows variable '{name}' holds a value that "
                         "is not finite: drift's data must be finite numbers")
    n, dim = m.shape
    if dim == 0 or dim > 2 ** 32:
        raise ValueError(f"sparse rows variable '{name}' has {dim} columns; "
                         "a row store holds 1 to 2^32")
    return (np.asarray(m.indptr, dtype=np.uint64),
            np.asarray(m.indices, dtype=np.uint32), data, int(dim))


def rows_array(name: str, value, n_rows: int | None) -> np.ndarray:
    """A dense rows variable as an array whose first axis is the row,
    checked: numbers, at least one axis, and n_rows rows when n_rows (the
    other variables' count) is known."""
    a = np.asarray(value)
    if a.ndim == 0:
        raise ValueError(f"rows variable '{name}' is a scalar; it needs "
                         "one value per row")
    if a.dtype.kind not in "iubf":
        raise TypeError(f"rows variable '{name}' has dtype {a.dtype}; "
                        "expected numbers")
    if n_rows is not None and a.shape[0] != n_rows:
        raise ValueError(f"rows variable '{name}' has {a.shape[0]} rows, "
                         f"the others {n_rows}")
    return a


def check_finite(name: str, a: np.ndarray) -> None:
    """Every value finite (as the row store requires), checked a block of
    rows at a time so that no copy of the whole array is made."""
    if a.dtype.kind != "f":
        return
    step = max(1, (1 << 16) // max(1, a[0].size if a.shape[0] else 1))
    for lo in range(0, a.shape[0], step):
        block = a[lo:lo + step]
        if not np.isfinite(block).all():
            bad = np.argwhere(~np.isfinite(block.reshape(block.shape[0],
                                                         -1)))[0]
            raise ValueError(f"rows variable '{name}' holds a value that is "
                             f"not finite (row {lo + bad[0] + 1}): drift's "
                             "data must be finite numbers")


def write(path: str | os.PathLike, columns: Mapping[str, np.ndarray]) -> int:
    """Writes the rows variables in `columns` (name -> array whose first axis
    is the row) as a row store at `path`, written under a temporary name and
    renamed.  A variable of shape (N,) is one column named by it; (N, D) the
    columns name.1 ... name.D; (N, R, C) name.r.c; a scipy.sparse matrix
    (N x D; at most one) a sparse rows variable.  Every value must be
    finite.  Returns the number of rows."""
    if not columns:
        raise ValueError("a row store needs at least one column")
    names: list[str] = []
    types: list[int] = []
    blocks: list[np.ndarray] = []
    sparse = None
    n_rows = None
    for name, value in columns.items():
        if _is_sparse(value):
            if sparse is not None:
                raise ValueError(f"rows variables '{sparse[0]}' and '{name}' "
                                 "are both sparse; a row store holds one")
            sparse = (name, *_csr(name, value))
            rows_here = value.shape[0]
            if n_rows is None:
                n_rows = rows_here
            elif rows_here != n_rows:
                raise ValueError(f"rows variable '{name}' has {rows_here} "
                                 f"rows, the others {n_rows}")
            continue
        a = rows_array(name, value, n_rows)
        n_rows = a.shape[0]
        check_finite(name, a)
        flat = a.reshape(a.shape[0], -1)
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

    def entry(name: str, t: int) -> bytes:
        b = name.encode()
        if len(b) > MAX_NAME_BYTES:
            raise ValueError(f"column name '{name[:40]}...' is too long")
        return struct.pack("=II", len(b), t) + b + \
            b"\0" * (_align(len(b), 8) - len(b))

    table = bytearray()
    for name, t in zip(names, types):
        table += entry(name, t)
    if sparse is not None:
        table += entry(sparse[0], 0) + bytes(5 * 8)
    header_bytes = _align(PREFIX.size + len(table), HEADER_ALIGN)
    file_bytes = header_bytes + n_rows * len(names) * 8
    if sparse is not None:
        # Sections at 64-byte aligned offsets: row_ptr, idx, val.
        _, indptr, indices, values, dim = sparse
        rowptr_off = _align(file_bytes, 64)
        idx_off = _align(rowptr_off + indptr.nbytes, 64)
        val_off = _align(idx_off + indices.nbytes, 64)
        file_bytes = val_off + values.nbytes
        table[-5 * 8:] = struct.pack("=5Q", dim, len(values), rowptr_off,
                                     idx_off, val_off)

    def prefix(checksum: int) -> bytes:
        return PREFIX.pack(MAGIC, VERSION, ENDIAN_MARK, header_bytes, n_rows,
                           len(names), 0 if sparse is None else 1,
                           file_bytes, checksum, 0, 0, 0, 0)

    header = bytearray(header_bytes)
    header[PREFIX.size:PREFIX.size + len(table)] = table
    header[:PREFIX.size] = prefix(0)
    header[:PREFIX.size] = prefix(_fnv1a(bytes(header)))

    # One row-major float64 block: a view when a single float64 C-ordered
    # variable is given, else one copy with the variables side by side.
    if not blocks:
        rows = np.empty((n_rows, 0))
    elif len(blocks) == 1 and blocks[0].dtype == np.float64:
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
        if sparse is not None:
            for off, arr in ((rowptr_off, indptr), (idx_off, indices),
                             (val_off, values)):
                f.write(bytes(off - f.tell()))
                arr.tofile(f)
    os.replace(tmp, path)
    return int(n_rows)
