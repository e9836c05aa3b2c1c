# gen.py KIND SEED: data of the two shapes where a chain's warmup used to
# be lost, written to KIND_SEED.csv in the current directory.
#   offset: Poisson regression with an offset, 150 rows: a raw count
#           predictor x in 0..450, a binary z, an exposure e in 5..200;
#           y ~ Poisson(e exp(-3 + 0.004 x + 0.3 z)).
#   dose:   over-dispersed Poisson (the shape of the Ames assay): doses
#           0, 10, 33, 100, 333, 1000, three plates each, y ~ Poisson(
#           exp(2.2 + 0.3 log(x + 10) - 0.001 x + plate effect N(0, 0.25))).
import math, random, sys

def poisson(rng, lam):
    if lam < 30:
        limit, k, p = math.exp(-lam), 0, 1.0
        while True:
            p *= rng.random()
            if p <= limit:
                return k
            k += 1
    return max(0, int(round(rng.gauss(lam, math.sqrt(lam)))))

def offset(seed, n=150):
    rng = random.Random(seed)
    with open(f"offset_{seed}.csv", "w") as f:
        f.write("y,x,z,e\n")
        for _ in range(n):
            x, z, e = rng.randint(0, 450), rng.randint(0, 1), rng.uniform(5, 200)
            eta = math.log(e) - 3.0 + 0.004 * x + 0.3 * z
            f.write(f"{poisson(rng, math.exp(eta))},{x},{z},{e:.4f}\n")

def dose(seed):
    rng = random.Random(seed)
    with open(f"dose_{seed}.csv", "w") as f:
        f.write("y,x,p\n")
        p = 0
        for d in [0, 10, 33, 100, 333, 1000]:
            for _ in range(3):
                p += 1
                eta = 2.2 + 0.3 * math.log(d + 10) - 0.001 * d + rng.gauss(0, 0.25)
                f.write(f"{poisson(rng, math.exp(eta))},{d},{p}\n")

{"offset": offset, "dose": dose}[sys.argv[1]](int(sys.argv[2]))
