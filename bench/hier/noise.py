#!/usr/bin/python3
"""noise.py HIER.csv REF.csv [STEPS]: why minibatch Langevin samplers are
slow on this case, measured with full gradients in numpy (independent of
drift).

The model is hier.drift's on the unconstrained scale (log tau_a, log tau_b
with their Jacobians).  At the reference means (REF.csv: name,mean,sd)
it takes the Hessian of -log p by central differences of the exact
gradient and counts its negative eigenvalues; then a full-gradient MALA
chain of STEPS steps (default 3000, h = 0.1) from there, with the metric
|H|^-1 (the Hessian's eigenvalues made positive), judged against REF as a
check of the model code.  At three of the chain's draws it measures the
noise of a control-variate minibatch gradient centred at the reference
means: the covariance of one step's gradient error, (N / n) sum_i dg_i
dg_i' (dg_i a row's gradient at the draw less at the centre), in the
whitened units of a metric, for batch sizes n.  Two metrics: |H|^-1, and
|H|^-1 rescaled to the reference's marginal sds (its correlations, REF's
scales).  drift's sgld step (theta += -h P grad U + sqrt(2h) P^(1/2) xi)
adds h^2 lambda of variance a step to a whitened direction whose noise
variance is lambda, against the 2h it injects: the draws' variance there
is about (1 + h lambda / 2) times too large, so 10 % needs
h <= 0.2 / lambda."""
import csv
import math
import sys

import numpy as np

D = np.loadtxt(sys.argv[1], delimiter=',', skiprows=1)
X, y, g = D[:, :4], D[:, 4], D[:, 5].astype(int) - 1
J, N, x1 = 100, len(y), D[:, 0]
d = 3 + 2 * J + 4
steps = int(sys.argv[3]) if len(sys.argv) > 3 else 3000
ref = list(csv.DictReader(open(sys.argv[2])))
names = [r['name'] for r in ref]
rmean = np.array([float(r['mean']) for r in ref])
rsd = np.array([float(r['sd']) for r in ref])
t0 = rmean.copy()
t0[1:3] = np.log(t0[1:3])
usd = rsd.copy()
usd[1:3] = rsd[1:3] / rmean[1:3]  # sds of log tau, to first order


def unpack(t):
    return (t[0], math.exp(t[1]), math.exp(t[2]), t[3:3 + J],
            t[3 + J:3 + 2 * J], t[3 + 2 * J:])


def residual(t):
    mu, ta, tb, za, zb, b = unpack(t)
    eta = mu + ta * za[g] + tb * zb[g] * x1 + X @ b
    return eta, y - 1 / (1 + np.exp(-eta))


def logp(t):
    """log p and its gradient (unconstrained)."""
    mu, ta, tb, za, zb, b = unpack(t)
    eta, r = residual(t)
    lp = np.sum(y * eta - np.logaddexp(0, eta))
    lp += (-mu * mu / 8 - ta * ta / 2 + t[1] - tb * tb / 2 + t[2] -
           0.5 * (za @ za + zb @ zb) - b @ b / 8)
    sa = np.bincount(g, weights=r, minlength=J)
    sb = np.bincount(g, weights=r * x1, minlength=J)
    G = np.empty(d)
    G[0] = r.sum() - mu / 4
    G[1] = ta * (sa @ za) - ta * ta + 1
    G[2] = tb * (sb @ zb) - tb * tb + 1
    G[3:3 + J] = ta * sa - za
    G[3 + J:3 + 2 * J] = tb * sb - zb
    G[3 + 2 * J:] = X.T @ r - b / 4
    return lp, G


def rows_whitened(t, c, L):
    """Rows' gradient differences at t and c times L (N x d)."""
    out = np.zeros((N, d))
    for tt, sgn in ((t, 1.0), (c, -1.0)):
        mu, ta, tb, za, zb, b = unpack(tt)
        r = residual(tt)[1] * sgn
        out += np.outer(r, L[0])
        out += np.outer(ta * r * za[g], L[1])
        out += np.outer(tb * r * zb[g] * x1, L[2])
        out += (ta * r)[:, None] * L[3 + g]
        out += (tb * r * x1)[:, None] * L[3 + J + g]
        out += (r[:, None] * X) @ L[3 + 2 * J:]
    return out


H = np.empty((d, d))
for k in range(d):
    e = np.zeros(d)
    e[k] = 1e-5
    H[:, k] = -(logp(t0 + e)[1] - logp(t0 - e)[1]) / 2e-5
H = (H + H.T) / 2
w, V = np.linalg.eigh(H)
neg = np.argsort(w)[:int((w < 0).sum())]
print(f"Hessian at the reference means: {len(neg)} negative eigenvalues "
      f"({', '.join(f'{w[k]:.3g}' for k in neg)}); smallest positive "
      f"{w[w > 0].min():.3g}, largest {w.max():.3g}")
for k in neg:
    top = np.argsort(-abs(V[:, k]))[:5]
    print("  its eigenvector:",
          ", ".join(f"{names[j]} {V[j, k]:.2f}" for j in top))
M = (V / abs(w)) @ V.T
L = np.linalg.cholesky(M)
ratio = usd / np.sqrt(np.diag(M))
print(f"reference sd / sd of |H|^-1: {ratio.min():.2f} "
      f"({names[ratio.argmin()]}) to {ratio.max():.2f}, median "
      f"{np.median(ratio):.2f}")

rng = np.random.default_rng(1)
h, t = 0.1, t0.copy()
f, G = logp(t)
acc, draws = 0, []
for i in range(steps):
    m = t + h / 2 * (M @ G)
    tp = m + math.sqrt(h) * (L @ rng.standard_normal(d))
    fp, Gp = logp(tp)
    a = np.linalg.solve(L, tp - m)
    bk = np.linalg.solve(L, t - tp - h / 2 * (M @ Gp))
    if math.log(rng.uniform()) < fp - f - (bk @ bk - a @ a) / (2 * h):
        t, f, G = tp, fp, Gp
        acc += 1
    draws.append(t.copy())
T = np.array(draws[steps // 5:])
C = T.copy()
C[:, 1:3] = np.exp(C[:, 1:3])
z = abs(C.mean(0) - rmean) / rsd
s = C.std(0) / rsd
print(f"MALA h = {h}, {steps} steps: acceptance {acc / steps:.2f}; "
      f"against REF max |z| {z.max():.2f} ({names[z.argmax()]}), sd ratio "
      f"{s.min():.2f}-{s.max():.2f} (a short chain: Monte Carlo error)")

Ds = np.diag(ratio)
metrics = [("|H|^-1", L),
           ("|H|^-1 at REF's sds", np.linalg.cholesky(Ds @ M @ Ds))]
for k in (len(T) - 1, len(T) // 2, 0):
    for label, Lm in metrics:
        B = rows_whitened(T[k], t0, Lm)
        S = B.T @ B
        ev, U = np.linalg.eigh(S)
        u = Lm @ U[:, -1]
        u /= np.linalg.norm(u)
        dist = np.linalg.norm(np.linalg.solve(Lm, T[k] - t0))
        for n in (64, 1024, 8192):
            lam = ev * N / n
            print(f"draw {k} ({dist:.1f} whitened from the centre), "
                  f"{label}, batch {n}: noise variance mean "
                  f"{lam.mean():.3g}, top {lam[-1]:.3g}, "
                  f"{lam[-2]:.3g}, {lam[-3]:.3g}: h <= "
                  f"{0.2 / lam[-1]:.2g} (top), {0.2 / lam.mean():.2g} "
                  f"(mean) for 10 %")
        print("  top noise direction:",
              ", ".join(f"{names[j]} {u[j]:.2f}"
                        for j in np.argsort(-abs(u))[:5]))
