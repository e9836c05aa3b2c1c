# gen.py KIND SEED: data of the two shapes where a chain's warmup used to
# be lost, written to KIND_SEED.csv in the current directory.
#   offset: Poisson regression with an offset, 150 rows: a raw count
#           predictor x in 0..450, a binary z, an exposure e in 5..200;
#           y ~ Poisson(e exp(-3 + 0.004 x + 0.3 z)).
#   dose:   over-dispersed Poisson (the shape of the Ames assay): doses
#           0, 10, 33, 100, 333, 1000, three plates each, y ~ Poisson(
#           exp(2.2 + 0.3 log(x + 10) - 0.001 x + plate effect N(0, 0.25))).
#   roach:  the shape of the roaches data (Gelman and Hill): 262 rows, a
#           raw count predictor x (35 % zeros, else log-normal, capped at
#           450), binary t and s, an exposure e (mostly 1); y over-
#           dispersed (gamma-mixed Poisson) around e exp(2.5 + 0.007 x
#           - 0.5 t - 0.4 s).
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

def roach(seed, n=262):
    # Over-dispersed counts (a gamma-mixed Poisson) fitted by a Poisson
    # regression: the misfit makes the posterior sharper still.
    rng = random.Random(seed)
    with open(f"roach_{seed}.csv", "w") as f:
        f.write("y,x,t,s,e\n")
        for _ in range(n):
            x = 0.0 if rng.random() < 0.35 else min(450.0, round(rng.lognormvariate(3.0, 1.5), 2))
            t, s = int(rng.random() < 0.6), int(rng.random() < 0.3)
            e = 1.0 if rng.random() < 0.8 else round(rng.uniform(0.2, 4.3), 3)
            mu = e * math.exp(2.5 + 0.007 * x - 0.5 * t - 0.4 * s)
            f.write(f"{poisson(rng, mu * rng.gammavariate(0.3, 1 / 0.3))},{x},{t},{s},{e}\n")

{"offset": offset, "dose": dose, "roach": roach}[sys.argv[1]](int(sys.argv[2]))
