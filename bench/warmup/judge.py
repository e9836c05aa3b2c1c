# judge.py DIR STEM KIND DSEED NSEEDS: drift's runs DIR/STEM_KIND_sS_K.csv
# (seeds 1..NSEEDS, chains 1..4) against the rstan reference
# DIR/ref_KIND_DSEED.csv: per chain, the worst |mean - ref| / ref_sd over
# the parameters and the worst sd ratio (max of r and 1/r).  A chain is
# lost when |z| > 0.5 or the ratio exceeds 1.6: a right chain of 1000
# draws is within about 0.1 sd and 10% (its Monte Carlo error); a lost
# one is tens to thousands of sds off, or has an sd 1e-5 of the right one.
import math, sys
d, stem, kind, dseed, nseeds = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
ref = {}
for line in open(f"{d}/ref_{kind}_{dseed}.csv").read().splitlines()[1:]:
    n, m, s, _ = [x.strip('"') for x in line.split(',')]
    ref[n] = (float(m), float(s))

def read(path):
    rows = [r for r in open(path) if not r.startswith('#')]
    h = rows[0].strip().split(',')
    return h, [list(map(float, r.strip().split(','))) for r in rows[1:] if r.strip()]

lost_runs = lost_chains = runs = 0
for s in range(1, nseeds + 1):
    worst = []
    for k in range(1, 5):
        h, rows = read(f"{d}/{stem}_{kind}_s{s}_{k}.csv")
        col = {x: i for i, x in enumerate(h)}
        wz, wr = 0.0, 1.0
        for p, (m, sd) in ref.items():
            v = [r[col[p]] for r in rows]
            cm = sum(v) / len(v)
            cs = math.sqrt(sum((x - cm) ** 2 for x in v) / (len(v) - 1))
            wz = max(wz, abs(cm - m) / sd)
            wr = max(wr, cs / sd, sd / cs if cs > 0 else math.inf)
        worst.append((wz, wr))
    runs += 1
    lost = sum(1 for z, r in worst if z > 0.5 or r > 1.6)
    lost_chains += lost
    lost_runs += lost > 0
    print(f"{stem} {kind} seed {s:2d}: " +
          "  ".join(f"|z| {z:8.3g} sd-ratio {r:8.3g}" for z, r in worst) +
          (f"   LOST {lost}" if lost else ""))
print(f"{stem} {kind}: {runs} runs, {lost_runs} with a lost chain, "
      f"{lost_chains} of {4 * runs} chains lost")
