"""Reading the Stan CSV files drift writes (CmdStan's format): the `#`
header's settings, the column names, the draws, warmup draws saved before
`# Adaptation terminated`, and drift's `# drift:` notes.  Only what the Fit
needs; ArviZ and CmdStanPy read the same files in full.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field

import numpy as np


@dataclass
class StanCsv:
    """One chain's file: config (header key -> value, as text), columns,
    draws (n x columns) and warmup (m x columns, saved warmup only)."""
    path: str
    config: dict[str, str]
    columns: list[str]
    draws: np.ndarray
    warmup: np.ndarray
    notes: list[str] = field(default_factory=list)


_KEY = re.compile(r"^#\s*([A-Za-z_][\w.]*)\s*=\s*(.*?)\s*(?:\(Default\))?\s*$")


def read(path: str) -> StanCsv:
    config: dict[str, str] = {}
    notes: list[str] = []
    columns: list[str] | None = None
    before: list[str] = []  # rows before '# Adaptation terminated'
    after: list[str] = []
    adapted = False
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                if columns is None:
                    m = _KEY.match(line)
                    if m and m.group(1) not in config:
                        config[m.group(1)] = m.group(2)
                elif line.startswith("# Adaptation terminated"):
                    adapted = True
                if line.startswith("# drift:"):
                    notes.append(line[8:].strip())
                continue
            if columns is None:
                if line.strip():
                    columns = line.strip().split(",")
                continue
            if line.strip():
                (after if adapted else before).append(line)
    if columns is None:
        raise ValueError(f"{path}: no column header: not a Stan CSV file")
    save_warmup = config.get("save_warmup", "0").strip() in ("1", "true")
    if save_warmup and adapted:
        warm_rows, draw_rows = before, after
    else:
        warm_rows, draw_rows = [], before + after

    def parse(rows: list[str]) -> np.ndarray:
        if not rows:
            return np.empty((0, len(columns)))
        return np.loadtxt(io.StringIO("".join(rows)), delimiter=",",
                          ndmin=2, dtype=np.float64)

    return StanCsv(path, config, columns, parse(draw_rows), parse(warm_rows),
                   notes)


def variables(columns: list[str]) -> dict[str, tuple[list[int], tuple]]:
    """Groups Stan's column names into variables: name -> (the columns'
    positions in row-major order of the element indices, the shape).
    'w.1' ... 'w.8' -> w of shape (8,); 'M.1.2' -> M[0, 1]; 'lp__' -> ()."""
    groups: dict[str, list[tuple[tuple[int, ...], int]]] = {}
    for k, c in enumerate(columns):
        parts = c.split(".")
        base, idx = parts[0], parts[1:]
        if idx and all(p.isdigit() for p in idx):
            key = tuple(int(p) for p in idx)
        else:
            base, key = c, ()
        groups.setdefault(base, []).append((key, k))
    out = {}
    for name, elems in groups.items():
        if len(elems) == 1 and elems[0][0] == ():
            out[name] = ([elems[0][1]], ())
            continue
        shape = tuple(max(e[0][d] for e in elems)
                      for d in range(len(elems[0][0])))
        flat = np.full(int(np.prod(shape)), -1)
        for key, k in elems:
            flat[np.ravel_multi_index(tuple(i - 1 for i in key), shape)] = k
        out[name] = ([int(i) for i in flat], shape)
    return out
