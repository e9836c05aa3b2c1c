#!/usr/bin/env python3
"""judge.py: means and sds of draws files against a reference.

    judge.py REF.csv LABEL FILE...         one line: max |mean - ref| / ref_sd, sd ratio range
    judge.py --ref OUT.csv FILE...         write name,mean,sd of the pooled draws (a reference)

Draws files are drift's CSV (# lines skipped, columns ending in __ left
out); a variational file's first row (the approximation's mean) is left
out when its lp__ column is 0 on every row (CmdStan's variational format).
"""
import sys
import numpy as np


def read(path):
    with open(path) as f:
        lines = [l for l in f if not l.startswith("#") and l.strip()]
    head = [h.strip('"') for h in lines[0].strip().split(",")]
    x = np.array([[float(v) for v in l.strip().split(",")] for l in lines[1:]])
    if "log_g__" in head and "lp__" in head and np.all(x[:, head.index("lp__")] == 0):
        x = x[1:]  # variational: row 1 is the mean
    keep = [i for i, h in enumerate(head) if not h.endswith("__")]
    return [head[i] for i in keep], x[:, keep]


def pool(files):
    names, xs = None, []
    for p in files:
        n, x = read(p)
        names = names or n
        xs.append(x)
    return names, np.vstack(xs)


if sys.argv[1] == "--ref":
    names, x = pool(sys.argv[3:])
    with open(sys.argv[2], "w") as f:
        f.write("name,mean,sd\n")
        for i, n in enumerate(names):
            f.write("%s,%.17g,%.17g\n" % (n, x[:, i].mean(), x[:, i].std(ddof=1)))
    sys.exit(0)
ref = {}
with open(sys.argv[1]) as f:
    next(f)
    for l in f:
        n, m, s = l.strip().split(",")
        ref[n] = (float(m), float(s))
names, x = pool(sys.argv[3:])
z, r = {}, {}
for i, n in enumerate(names):
    if n in ref:
        z[n] = abs(x[:, i].mean() - ref[n][0]) / ref[n][1]
        r[n] = x[:, i].std(ddof=1) / ref[n][1]
zn = max(z, key=z.get)
print("%-34s draws %6d  max|dz| %7.3f (%s)  sd ratio min %6.3f max %6.3f  median |dz| %6.3f"
      % (sys.argv[2], x.shape[0], z[zn], zn, min(r.values()), max(r.values()),
         float(np.median(list(z.values())))))
