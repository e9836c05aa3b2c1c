#!/usr/bin/env python3
"""gen.py: the synthetic data of bench/classes (fixed seeds), as CSV:
pois.csv   Poisson regression, N = 10^5, 10 predictors N(0, 0.25)
lin.csv    linear regression, N = 10^5, 10 predictors, noise sd 2
badlr.csv  logistic regression, N = 10^5, 8 correlated predictors on raw
           scales from 0.01 to 1000 (coefficients from 3e-4 to 30)
rob.csv    Student-t regression (nu = 4, scale 1.5), N = 20,000, 5
           predictors; also rob.json for the Stan program rob.stan."""
import json
import numpy as np


def write(path, X, y, int_y):
    D = X.shape[1]
    with open(path, 'w') as f:
        f.write(','.join([f'x.{k + 1}' for k in range(D)] + ['y']) + '\n')
        fmt = ['%.10g'] * D + ['%d' if int_y else '%.10g']
        np.savetxt(f, np.column_stack([X, y]), delimiter=',', fmt=fmt)


r = np.random.default_rng(7)
N, D = 100000, 10
X = r.normal(size=(N, D)) * 0.5
w = r.normal(size=D) * 0.3
write('pois.csv', X, r.poisson(np.exp(0.5 + X @ w)), True)
b = r.normal(size=D)
write('lin.csv', X, X @ b + 1.0 + r.normal(size=N) * 2.0, False)

r = np.random.default_rng(11)
N, D = 100000, 8
X = r.normal(size=(N, D)) @ (np.eye(D) + 0.6 * np.tri(D, D, -1)).T
X = X * np.array([100, 0.01, 1, 10, 1, 0.1, 1000, 1.0])
w = np.array([0.005, 30, 0.3, -0.05, 0.2, -2, 0.0003, 0.1])
p = 1 / (1 + np.exp(-(X @ w - 0.5)))
write('badlr.csv', X, (r.random(N) < p).astype(int), True)

r = np.random.default_rng(5)
N, D = 20000, 5
X = r.normal(size=(N, D))
y = 0.3 + X @ r.normal(size=D) + 1.5 * r.standard_t(4, size=N)
write('rob.csv', X, y, False)
with open('rob.json', 'w') as f:
    json.dump({"N": N, "D": D, "X": X.tolist(), "y": y.tolist()}, f)
