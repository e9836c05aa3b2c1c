#!/usr/bin/env python3
"""Check that each drift model of the set has Stan's log density, up to a
constant: at three points per posterior (the reference mean and two points
about one reference sd away from it on either side), drift's log density
(lp__ of a one-draw MALA run started at the point with a step size of
1e-30, so the draw is the point) minus Stan's (rstan's log_prob with the
Jacobian, on posteriordb's own Stan program and data) must be the same
number at every point.

    python3 tests/posteriordb/validate/stan-vs-drift.py POSTERIORDB DRIFT \
        WORKDIR [NAME...]

Needs rstan (Debian: r-cran-rstan, r-cran-bh).  Debian's rstan is Stan
2.21, which predates the `array[N] real x` syntax, so the programs are
rewritten to the older `real x[N]` declarations first (declarations only).
"""
import json
import math
import os
import random
import re
import subprocess
import sys
import zipfile
import io

HERE = os.path.dirname(os.path.abspath(__file__))
SET = os.path.dirname(HERE)


def git_show(db, path):
    return subprocess.check_output(['git', '--git-dir=' + db, 'show',
                                    'HEAD:' + path])


def old_syntax(code):
    """array[A] T<..>[..] x  ->  T<..>[..] x[A]   (Stan 2.21 declarations)"""
    code = re.sub(r'array\[\]\s+(vector|real|int)', r'\1[]', code)
    pat = re.compile(r'array\[([^\]]*)\]\s+(\w+(?:<[^>]*>)?(?:\[[^\]]*\])?)'
                     r'\s+(\w+)')
    return pat.sub(lambda m: '%s %s[%s]' % (m.group(2), m.group(3),
                                           m.group(1)), code)


def read_ref(name):
    rows = []
    with open(os.path.join(SET, name, 'reference.csv')) as f:
        next(f)
        for line in f:
            k, m, s = line.strip().split(',')
            rows.append((k, float(m), float(s)))
    return rows


def positive(name, posterior=''):
    if posterior.startswith('gp_pois_regr-') and name in ('rho', 'alpha'):
        return True
    return name.split('.')[0] in ('sigma', 'tau', 'dmu', 'sdgp_1',
                                  'lscale_1', 'sdgp_sigma_1',
                                  'lscale_sigma_1')


# Quantities of a reference that are derived values in drift (Stan's
# transformed parameters): checked by run.sh, but not part of a point.
DERIVED = {'gp_pois_regr-gp_pois_regr': ('f',)}


def extra_params(name, rng):
    """Parameters that the reference lacks (it has the transformed
    parameter instead): any value is a point of the density."""
    if name == 'gp_pois_regr-gp_pois_regr':
        return {'f_tilde.%d' % k: rng.gauss(0, 1) for k in range(1, 12)}
    return {}


def points(ref, rng, name=''):
    skip = DERIVED.get(name, ())
    ref = [r for r in ref if r[0].split('.')[0] not in skip]
    pts = [{k: m for k, m, s in ref}]
    pts[0].update(extra_params(name, rng))
    for scale in (0.8, -1.1):
        p = extra_params(name, rng)
        for k, m, s in ref:
            v = m + scale * s * rng.choice((1, -1)) * rng.uniform(0.5, 1.5)
            if positive(k, name) and v <= 0:
                v = m * 0.5
            if k == 'theta' and not 0 < v < 1:
                v = m
            p[k] = v
        pts.append(p)
    return pts


def nest(flat):
    """{'beta.1': a, 'beta.2': b, 'sigma': s} -> {'beta': [a, b], 'sigma': s}"""
    out = {}
    for k, v in flat.items():
        if '.' in k:
            base, i = k.split('.')
            out.setdefault(base, {})[int(i)] = v
        else:
            out[k] = v
    for k, v in out.items():
        if isinstance(v, dict):
            out[k] = [v[i] for i in sorted(v)]
    return out


def stan_point(name, flat):
    if name.startswith('low_dim_gauss_mix'):
        return {'mu': [flat['mu1'], flat['mu1'] + flat['dmu']],
                'sigma': [flat['sigma.1'], flat['sigma.2']],
                'theta': flat['theta']}
    return nest(flat)


def drift_lp(drift, name, point, work):
    d = os.path.join(SET, name)
    init = os.path.join(work, name + '.init.json')
    with open(init, 'w') as f:
        json.dump(nest(point), f)
    out = os.path.join(work, name + '.draw.csv')
    args = [drift, 'sample', os.path.join(d, 'model.drift')]
    if os.path.exists(os.path.join(d, 'rows.csv')):
        args += ['--data', os.path.join(d, 'rows.csv')]
    if os.path.exists(os.path.join(d, 'data.json')):
        args += ['--data', os.path.join(d, 'data.json')]
    args += ['--sampler', 'mala', '--set', 'h=1e-30', '--init', init,
             '--warmup', '0', '--iter', '1', '--seed', '1', '--quiet',
             '--chains', '1',
             '--out', out]
    subprocess.check_call(args)
    with open(out) as f:
        lines = [l for l in f if not l.startswith('#')]
    hdr = lines[0].strip().split(',')
    row = dict(zip(hdr, lines[1].strip().split(',')))
    for k, v in point.items():  # the draw is the point (to 10 digits)
        assert abs(float(row[k]) - v) <= 1e-8 * max(1, abs(v)), (k, row[k], v)
    return float(row['lp__'])


def main():
    db, drift, work = sys.argv[1:4]
    drift = os.path.abspath(drift)
    names = sys.argv[4:] or [l.split()[0] for l in
                             open(os.path.join(SET, 'posteriors.txt'))
                             if l.strip() and not l.startswith('#')]
    os.makedirs(work, exist_ok=True)
    bad = 0
    for name in names:
        info = json.loads(git_show(db, 'posterior_database/posteriors/%s.json'
                                   % name))
        model, data = info['model_name'], info['data_name']
        stan = os.path.join(work, model + '.stan')
        code = old_syntax(git_show(db, 'posterior_database/models/stan/%s.stan'
                                   % model).decode())
        if not os.path.exists(stan) or open(stan).read() != code:
            with open(stan, 'w') as f:
                f.write(code)
        djson = os.path.join(work, data + '.json')
        z = zipfile.ZipFile(io.BytesIO(git_show(
            db, 'posterior_database/data/data/%s.json.zip' % data)))
        with open(djson, 'wb') as f:
            f.write(z.read(z.namelist()[0]))
        rng = random.Random(name)
        pts = points(read_ref(name), rng, name)
        pfile = os.path.join(work, name + '.points.json')
        with open(pfile, 'w') as f:
            json.dump([stan_point(name, p) for p in pts], f)
        ofile = os.path.join(work, name + '.stan-lp.txt')
        subprocess.check_call(['Rscript', os.path.join(HERE, 'stan-logprob.R'),
                               stan, djson, pfile, ofile],
                              stdout=subprocess.DEVNULL)
        slp = [float(x) for x in open(ofile).read().split()]
        dlp = [drift_lp(drift, name, p, work) for p in pts]
        diffs = [a - b for a, b in zip(dlp, slp)]
        spread = max(diffs) - min(diffs)
        # drift writes lp__ and the point to 10 significant digits
        tol = 1e-6 + 1e-8 * max(abs(x) for x in dlp)
        ok = spread <= tol
        bad += not ok
        print('%-45s drift - stan = %.8g (spread %.2g over 3 points, '
              'lp from %.6g to %.6g)  %s'
              % (name, diffs[0], spread, min(dlp), max(dlp),
                 'same density' if ok else 'DIFFERENT'), flush=True)
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    main()
