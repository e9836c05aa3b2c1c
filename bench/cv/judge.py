#!/usr/bin/env python3
"""judge.py REF.csv FILE...: the pooled means and sds of drift CSV files
(every row that is not a comment; all rows are draws after warmup unless
--save-warmup was given) against a reference (columns name,mean,sd):
max |mean - ref| / ref sd, the worst sd ratio, and PASS when they are
within ZTOL (0.1) and SDTOL (0.1) for every parameter."""
import csv
import math
import os
import sys

ref = {}
with open(sys.argv[1]) as f:
    for r in csv.DictReader(f):
        ref[r['name']] = (float(r['mean']), float(r['sd']))
data = {}
for path in sys.argv[2:]:
    with open(path) as f:
        lines = [l for l in f if not l.startswith('#') and l.strip()]
    hdr = lines[0].strip().split(',')
    for l in lines[1:]:
        v = l.strip().split(',')
        for k, name in enumerate(hdr):
            if name in ref:
                data.setdefault(name, []).append(float(v[k]))
zmax, worst, zname, sname, n = 0.0, 1.0, '', '', 0
for name, (m, s) in ref.items():
    x = data.get(name, [])
    n = len(x)
    if n < 2:
        print('missing', name)
        sys.exit(1)
    mu = sum(x) / n
    sd = math.sqrt(sum((t - mu) ** 2 for t in x) / (n - 1))
    if abs(mu - m) / s > zmax:
        zmax, zname = abs(mu - m) / s, name
    if abs(math.log(sd / s)) > abs(math.log(worst)):
        worst, sname = sd / s, name
ok = (zmax <= float(os.environ.get('ZTOL', '0.1')) and
      abs(worst - 1) <= float(os.environ.get('SDTOL', '0.1')))
print(f"draws {n} max|z| {zmax:.3f} ({zname}) worst sd ratio {worst:.3f} "
      f"({sname}) {'PASS' if ok else 'FAIL'}")
