"""approx_judge.py: for approx_check.sh.
  fit REF.csv FIT.csv  one line: the largest |mean - reference mean| in
                       reference sds, the draws' sd ratios, k, the shift
  table LINES          counts of fits off/right and warned/silent"""
import re
import sys

import numpy as np


def fit(ref_path, path):
    ref = {}
    for line in open(ref_path).read().split('\n')[1:]:
        if line:
            n, m, s = line.split(',')
            ref[n] = (float(m), float(s))
    rows = [l for l in open(path) if not l.startswith('#')]
    hdr = rows[0].strip().split(',')
    X = np.array([[float(v) for v in r.split(',')] for r in rows[1:]])
    if 'lp__' in hdr and 'log_g__' in hdr:
        X = X[1:]  # variational: the first row is the mean
    worst, wn, sdr = 0.0, '', []
    for n, (m, s) in ref.items():
        if n not in hdr:
            continue
        x = X[:, hdr.index(n)]
        z = abs(x.mean() - m) / s
        sdr.append(x.std() / s)
        if z > worst:
            worst, wn = z, n
    com = open(path).read()
    k = re.search(r'# Pareto k = (\S+)', com)
    sh = re.search(r'# importance-weighted mean shift = (\S+)', com)
    print("err %.2f (%s) sdratio %.2f-%.2f k %s shift %s" % (
        worst, wn, min(sdr), max(sdr), k.group(1) if k else '-',
        sh.group(1) if sh else '-'))


def table(path):
    rows = []
    for line in open(path):
        m = re.match(r'(\S+) (\S+) (\d) rc=(\d+) warn=(\d+) \[(.*?)\] '
                     r'err (\S+) \((\S+)\)', line)
        if m:
            p, meth, s, rc, w, wt, err, _ = m.groups()
            rows.append((p, meth, s, int(w) > 0, wt.strip(), float(err)))
    print("posteriors %d, fits %d (fits that wrote no draws left out)" % (
        len(set(r[0] for r in rows)), len(rows)))
    for off in (True, False):
        for warned in (True, False):
            sel = [r for r in rows if (r[5] > 0.5) == off and r[3] == warned]
            print("%s, %s: %d" % ("off (> 0.5 ref sds)" if off else "right",
                                  "warned" if warned else "silent", len(sel)))
            if off and not warned:
                for r in sel:
                    print("   ", r[0], r[1], "seed", r[2], "err %.2f" % r[5])
    sw = [r for r in rows if r[4].startswith('weighting')]
    print("warned by the shift (k <= 0.7): %d, of them off: %d" % (
        len(sw), sum(r[5] > 0.5 for r in sw)))


if __name__ == '__main__':
    if sys.argv[1] == 'fit':
        fit(sys.argv[2], sys.argv[3])
    else:
        table(sys.argv[2])
