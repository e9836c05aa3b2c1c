"""w1.py: for pathfinder_w1.sh.
  w1.py NAME REF.json.zip DIR   one line per method: W1 of its draws
                                (DIR/METHOD_SEED.csv) to the reference
  w1.py --table LINES           the methods side by side, and how often
                                pathfinder beats each"""
import glob
import io
import json
import os
import re
import sys
import zipfile

import numpy as np
from scipy.optimize import linear_sum_assignment

METHODS = ['pathfinder', 'single', 'meanfield', 'fullrank', 'nuts_short']
N_DRAWS, REPS = 100, 20


def read_ref(path):
    z = zipfile.ZipFile(path)
    chains = json.load(io.TextIOWrapper(z.open(z.namelist()[0])))
    ref = {}
    for name in chains[0]:
        d = name.replace('[', '.').replace(']', '').replace(',', '.')
        ref[d] = np.array([float(x) for c in chains for x in c[name]])
    return ref


def read_draws(path):
    rows = [l for l in open(path) if not l.startswith('#')]
    if len(rows) < 2:
        return None
    hdr = rows[0].strip().split(',')
    X = np.array([[float(v) for v in r.split(',')] for r in rows[1:]])
    if 'lp__' in hdr and 'log_g__' in hdr:
        X = X[1:]  # variational: the first row is the mean
    return {n: X[:, i] for i, n in enumerate(hdr)}


def w1(a, b):
    cost = np.sqrt(((a[:, None, :] - b[None, :, :]) ** 2).sum(-1))
    r, c = linear_sum_assignment(cost)
    return cost[r, c].mean()


def one(name, refzip, d):
    ref = read_ref(refzip)
    rng = np.random.default_rng(1)
    out = {}
    # the parameters compared: the reference's that drift writes
    common = list(ref)
    for f in sorted(glob.glob(os.path.join(d, '*_*.csv'))):
        dr = read_draws(f)
        if dr:
            common = [n for n in ref if n in dr]
            break
    for m in METHODS + ['floor']:
        vals = []
        files = sorted(glob.glob(os.path.join(d, m + '_*.csv'))) if m != 'floor' else [None]
        for f in files:
            dr = read_draws(f) if f else None
            names = [n for n in common if (dr is None or n in dr)]
            if f and (dr is None or not names):
                continue
            mu = np.array([ref[n].mean() for n in names])
            sd = np.array([ref[n].std() for n in names])
            sd[sd == 0] = 1
            R = (np.column_stack([ref[n] for n in names]) - mu) / sd
            if dr is not None:
                A = (np.column_stack([dr[n] for n in names]) - mu) / sd
                if not np.all(np.isfinite(A)) or len(A) < N_DRAWS:
                    vals.append(np.inf)
                    continue
            acc = []
            for _ in range(REPS):
                ri = rng.choice(len(R), 2 * N_DRAWS, replace=False)
                b = R[ri[:N_DRAWS]]
                a = A[rng.choice(len(A), N_DRAWS, replace=False)] if dr is not None else R[ri[N_DRAWS:]]
                acc.append(w1(a, b))
            vals.append(float(np.mean(acc)))
        out[m] = vals
    print(name, 'd=%d' % len(common), ' '.join(
        '%s=%s' % (m, ','.join('%.3g' % v for v in out[m]) if out[m] else '-')
        for m in METHODS + ['floor']))


def table(path):
    rows = []
    for line in open(path):
        parts = line.split()
        if len(parts) < 3:
            continue
        rec = {'name': parts[0]}
        for kv in parts[2:]:
            k, v = kv.split('=')
            rec[k] = [float(x) for x in v.split(',')] if v != '-' else []
        rows.append(rec)
    print('| posterior | ' + ' | '.join(METHODS) + ' | floor |')
    print('|---|' + '---:|' * (len(METHODS) + 1))
    for r in rows:
        cells = []
        for m in METHODS + ['floor']:
            v = r.get(m, [])
            cells.append('%.2f' % np.median(v) if v else '-')
        print('| %s | %s |' % (r['name'], ' | '.join(cells)))
    print()
    for m in METHODS[1:]:
        win = tie = lose = 0
        for r in rows:
            a, b = r.get('pathfinder', []), r.get(m, [])
            if not a or not b:
                continue
            pa, pb = np.median(a), np.median(b)
            if pa < 0.8 * pb:
                win += 1
            elif pb < 0.8 * pa:
                lose += 1
            else:
                tie += 1
        print('pathfinder vs %s (medians over seeds; better = 20%% lower W1): '
              'better on %d, within 20%% on %d, worse on %d' % (m, win, tie, lose))


if __name__ == '__main__':
    if sys.argv[1] == '--table':
        table(sys.argv[2])
    else:
        one(*sys.argv[1:4])
