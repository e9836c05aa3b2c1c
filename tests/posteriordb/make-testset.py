#!/usr/bin/env python3
"""Regenerate the data and reference files of drift's posteriordb test set.

    python3 tests/posteriordb/make-testset.py POSTERIORDB [OUTDIR]

POSTERIORDB is a checkout or a bare git directory of
github.com/stan-dev/posteriordb (files are read with `git show HEAD:PATH`
when it is a git directory, from the working tree otherwise).  OUTDIR
defaults to the directory of this script.  For each posterior below it
writes OUTDIR/NAME/rows.csv (one line per datum, columns named as drift
binds them: `y`, `x.1` ... `x.K`; none for a model without rows, whose
data are all shared), OUTDIR/NAME/data.json (shared values,
CmdStan JSON) where the model has a data block, and OUTDIR/NAME/reference.csv
(`name,mean,sd` over all reference draws, chains pooled, sd with n - 1,
names in drift's output naming: `beta.1`, `sigma`).  The model.drift files
are written by hand and are not touched.

Transformed data of the Stan models (logs, centring, interactions, lagged
values, dummy columns) are computed here, in double precision, exactly as
the Stan programs define them, and written as columns named after Stan's
transformed-data variables.  Standard library only.
"""
import csv
import io
import json
import math
import os
import subprocess
import sys
import zipfile

DB = None


def read_bytes(path):
    """A file of posteriordb by its path in the repository."""
    full = os.path.join(DB, path)
    if os.path.exists(full):
        with open(full, 'rb') as f:
            return f.read()
    git_dir = DB if os.path.exists(os.path.join(DB, 'HEAD')) else None
    args = ['git'] + (['--git-dir=' + git_dir] if git_dir else ['-C', DB])
    return subprocess.check_output(args + ['show', 'HEAD:' + path])


def read_zip_json(path):
    z = zipfile.ZipFile(io.BytesIO(read_bytes(path)))
    return json.loads(z.read(z.namelist()[0]))


def posterior_info(name):
    return json.loads(read_bytes('posterior_database/posteriors/%s.json' % name))


def data_of(name):
    info = posterior_info(name)
    return read_zip_json('posterior_database/data/data/%s.json.zip'
                         % info['data_name'])


def reference_draws(name):
    """Pooled reference draws: {stan name: [draw, ...]} over all chains."""
    info = posterior_info(name)
    chains = read_zip_json('posterior_database/reference_posteriors/draws/'
                           'draws/%s.json.zip'
                           % info['reference_posterior_name'])
    pooled = {}
    for ch in chains:
        for k, v in ch.items():
            pooled.setdefault(k, []).extend(v)
    return pooled


def drift_name(stan_name):
    """beta[1] -> beta.1, M[1,2] -> M.1.2"""
    if '[' not in stan_name:
        return stan_name
    base, idx = stan_name[:-1].split('[', 1)
    return base + '.' + '.'.join(i.strip() for i in idx.split(','))


def mean_sd(xs):
    n = len(xs)
    m = math.fsum(xs) / n
    v = math.fsum((x - m) ** 2 for x in xs) / (n - 1)
    return m, math.sqrt(v)


def fmt(v):
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, int):
        return str(v)
    if float(v).is_integer() and abs(v) < 1e15:
        return str(int(v))
    return repr(float(v))


# ---------------------------------------------------------------- helpers

def mean(xs):
    return math.fsum(xs) / len(xs)


def sd(xs):  # Stan's sd(): the n - 1 form
    m = mean(xs)
    return math.sqrt(math.fsum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def vec(name, matrix_rows):
    """Columns name.1 ... name.K from a list of per-row lists."""
    K = len(matrix_rows[0])
    return [('%s.%d' % (name, k + 1), [r[k] for r in matrix_rows])
            for k in range(K)]


def ref_default(draws, rename=None):
    """Every reference quantity, renamed to drift's naming."""
    out = []
    for k, v in draws.items():
        out.append((rename(k) if rename else drift_name(k), v))
    return out


# ---------------------------------------------------------------- posteriors
# Each entry: rows(d) -> [(column, values)], data(d) -> dict or None,
# ref(draws) -> [(drift name, draws)].

def earnings_rows(kind):
    def rows(d):
        earn, height, male = d['earn'], d['height'], d.get('male')
        log_earn = [math.log(e) for e in earn]
        if kind == 'earn_height':
            return [('earn', earn), ('height', height)]
        if kind == 'log10earn_height':
            return [('log10_earn', [math.log10(e) for e in earn]),
                    ('height', height)]
        if kind == 'logearn_height':
            return [('log_earn', log_earn), ('height', height)]
        if kind == 'logearn_height_male':
            return [('log_earn', log_earn), ('height', height),
                    ('male', male)]
        if kind == 'logearn_interaction':
            return [('log_earn', log_earn), ('height', height),
                    ('male', male),
                    ('inter', [h * m for h, m in zip(height, male)])]
        if kind == 'logearn_interaction_z':
            mh, sh = mean(height), sd(height)
            z = [(h - mh) / sh for h in height]
            return [('log_earn', log_earn), ('z_height', z), ('male', male),
                    ('inter', [a * m for a, m in zip(z, male)])]
        if kind == 'logearn_logheight_male':
            return [('log_earn', log_earn),
                    ('log_height', [math.log(h) for h in height]),
                    ('male', male)]
        raise ValueError(kind)
    return rows


def kidiq_rows(kind):
    def rows(d):
        ks, hs, iq = d['kid_score'], d['mom_hs'], d['mom_iq']
        if kind == 'kidscore_momhs':
            return [('kid_score', ks), ('mom_hs', hs)]
        if kind == 'kidscore_momiq':
            return [('kid_score', ks), ('mom_iq', iq)]
        if kind == 'kidscore_momhsiq':
            return [('kid_score', ks), ('mom_hs', hs), ('mom_iq', iq)]
        if kind == 'kidscore_interaction':
            return [('kid_score', ks), ('mom_hs', hs), ('mom_iq', iq),
                    ('inter', [a * b for a, b in zip(hs, iq)])]
        if kind == 'kidscore_interaction_c':
            mh, mi = mean(hs), mean(iq)
            c_hs = [a - mh for a in hs]
            c_iq = [a - mi for a in iq]
            return [('kid_score', ks), ('c_mom_hs', c_hs), ('c_mom_iq', c_iq),
                    ('inter', [a * b for a, b in zip(c_hs, c_iq)])]
        if kind == 'kidscore_interaction_c2':
            c_hs = [a - 0.5 for a in hs]
            c_iq = [a - 100 for a in iq]
            return [('kid_score', ks), ('c2_mom_hs', c_hs),
                    ('c2_mom_iq', c_iq),
                    ('inter', [a * b for a, b in zip(c_hs, c_iq)])]
        if kind == 'kidscore_interaction_z':
            mh, sh, mi, si = mean(hs), sd(hs), mean(iq), sd(iq)
            z_hs = [(a - mh) / (2 * sh) for a in hs]
            z_iq = [(a - mi) / (2 * si) for a in iq]
            return [('kid_score', ks), ('z_mom_hs', z_hs), ('z_mom_iq', z_iq),
                    ('inter', [a * b for a, b in zip(z_hs, z_iq)])]
        if kind == 'kidscore_mom_work':
            w = d['mom_work']
            return [('kid_score', ks),
                    ('work2', [int(x == 2) for x in w]),
                    ('work3', [int(x == 3) for x in w]),
                    ('work4', [int(x == 4) for x in w])]
        raise ValueError(kind)
    return rows


def mesquite_rows(kind):
    def rows(d):
        L = lambda xs: [math.log(x) for x in xs]
        w, d1, d2 = d['weight'], d['diam1'], d['diam2']
        ch, th, de, g = (d['canopy_height'], d['total_height'], d['density'],
                         d['group'])
        vol = L([a * b * c for a, b, c in zip(d1, d2, ch)])
        area = L([a * b for a, b in zip(d1, d2)])
        shape = L([a / b for a, b in zip(d1, d2)])
        if kind == 'mesquite':
            return [('weight', w), ('diam1', d1), ('diam2', d2),
                    ('canopy_height', ch), ('total_height', th),
                    ('density', de), ('group', g)]
        if kind == 'logmesquite':
            return [('log_weight', L(w)), ('log_diam1', L(d1)),
                    ('log_diam2', L(d2)), ('log_canopy_height', L(ch)),
                    ('log_total_height', L(th)), ('log_density', L(de)),
                    ('group', g)]
        if kind == 'logmesquite_logvolume':
            return [('log_weight', L(w)), ('log_canopy_volume', vol)]
        if kind == 'logmesquite_logva':
            return [('log_weight', L(w)), ('log_canopy_volume', vol),
                    ('log_canopy_area', area), ('group', g)]
        if kind == 'logmesquite_logvash':
            return [('log_weight', L(w)), ('log_canopy_volume', vol),
                    ('log_canopy_area', area), ('log_canopy_shape', shape),
                    ('log_total_height', L(th)), ('group', g)]
        if kind == 'logmesquite_logvas':
            return [('log_weight', L(w)), ('log_canopy_volume', vol),
                    ('log_canopy_area', area), ('log_canopy_shape', shape),
                    ('log_total_height', L(th)), ('log_density', L(de)),
                    ('group', g)]
        raise ValueError(kind)
    return rows


def nes_rows(d):
    a = d['age_discrete']
    return [('partyid7', d['partyid7']), ('real_ideo', d['real_ideo']),
            ('race_adj', d['race_adj']),
            ('age30_44', [int(x == 2) for x in a]),
            ('age45_64', [int(x == 3) for x in a]),
            ('age65up', [int(x == 4) for x in a]),
            ('educ1', d['educ1']), ('gender', d['gender']),
            ('income', d['income'])]


def ark_rows(d):
    K, T, y = d['K'], d['T'], d['y']
    # Stan's loop runs over t = K+1 .. T (1-based): the row of t holds y[t]
    # and its K lags y[t-1] ... y[t-K].
    lags = [[y[t - 1 - k] for k in range(1, K + 1)] for t in range(K + 1, T + 1)]
    return [('y', y[K:])] + vec('ylag', lags)


def diamonds_rows(d):
    X = d['X']
    assert all(r[0] == 1 for r in X)  # the intercept column brms drops
    return [('Y', d['Y'])] + vec('x', [r[1:] for r in X])


def diamonds_data(d):
    X = d['X']
    K = d['K']
    # means_X of Stan's transformed data, in the order Stan sums (mean() of
    # a column): the model centres x with it.
    return {'means_X': [mean([r[i] for r in X]) for i in range(1, K)]}


def eight_rows(d):
    J = d['J']
    return [('school', list(range(1, J + 1))), ('y', d['y']),
            ('sigma', d['sigma'])]


def eight_ref_noncentered(draws):
    mu, tau = draws['mu'], draws['tau']
    out = []
    for j in range(1, 9):
        th = draws['theta[%d]' % j]
        out.append(('theta_trans.%d' % j,
                    [(t - m) / s for t, m, s in zip(th, mu, tau)]))
    out += [('mu', mu), ('tau', tau)]
    return out


def gauss_mix_ref(draws):
    m1, m2 = draws['mu[1]'], draws['mu[2]']
    return [('mu1', m1), ('dmu', [b - a for a, b in zip(m1, m2)]),
            ('sigma.1', draws['sigma[1]']), ('sigma.2', draws['sigma[2]']),
            ('theta', draws['theta'])]


def kilpisjarvi_data(d):
    return {k: d[k] for k in ('pmualpha', 'psalpha', 'pmubeta', 'psbeta')}


def blr_rows(d):
    return [('y', d['y'])] + vec('x', d['X'])


def accel_rows(d):
    return [('Y', d['Y'])] + vec('xgp', d['Xgp_1']) + \
        vec('xgp_sigma', d['Xgp_sigma_1'])


def accel_data(d):
    assert d['Dgp_1'] == 1 and d['Dgp_sigma_1'] == 1
    assert d['Kgp_1'] == 1 and d['Kgp_sigma_1'] == 1
    return {'slambda_1': [v[0] for v in d['slambda_1']],
            'slambda_sigma_1': [v[0] for v in d['slambda_sigma_1']]}


def accel_reference(name):
    """This posterior's draws file is stored as a large-file pointer that the
    mirror lacks; posteriordb's summary statistics of the same draws
    (mean_value, mean_squared_value over the 10 x 1000 draws) give the
    mean and sd."""
    base = 'posterior_database/reference_posteriors/summary_statistics/'
    info = posterior_info(name)
    r = info['reference_posterior_name']
    mv = json.loads(read_bytes(base + 'mean_value/mean_value/%s.json' % r))
    ms = json.loads(read_bytes(base + 'mean_squared_value/'
                               'mean_squared_value/%s.json' % r))
    assert mv['names'] == ms['names']
    n = 10000
    out = []
    for k, m, m2 in zip(mv['names'], mv['mean_value'],
                        ms['mean_squared_value']):
        var = max(m2 - m * m, 0.0) * n / (n - 1)
        out.append((drift_name(k), m, math.sqrt(var)))
    return out


POSTERIORS = {}


def add(name, rows, data=None, ref=ref_default, ref_stats=None):
    POSTERIORS[name] = dict(rows=rows, data=data, ref=ref, ref_stats=ref_stats)


add('arK-arK', ark_rows)
add('diamonds-diamonds', diamonds_rows, diamonds_data)
for k in ('earn_height', 'log10earn_height', 'logearn_height',
          'logearn_height_male', 'logearn_interaction',
          'logearn_interaction_z', 'logearn_logheight_male'):
    add('earnings-' + k, earnings_rows(k))
add('eight_schools-eight_schools_centered', eight_rows,
    lambda d: {'J': d['J']})
add('eight_schools-eight_schools_noncentered', eight_rows,
    lambda d: {'J': d['J']}, eight_ref_noncentered)
for k in ('kidscore_momhs', 'kidscore_momiq', 'kidscore_momhsiq',
          'kidscore_interaction'):
    add('kidiq-' + k, kidiq_rows(k))
for k in ('kidscore_interaction_c', 'kidscore_interaction_c2',
          'kidscore_interaction_z', 'kidscore_mom_work'):
    add('kidiq_with_mom_work-' + k, kidiq_rows(k))
add('kilpisjarvi_mod-kilpisjarvi',
    lambda d: [('x', d['x']), ('y', d['y'])], kilpisjarvi_data)
add('low_dim_gauss_mix-low_dim_gauss_mix', lambda d: [('y', d['y'])],
    None, gauss_mix_ref)
add('mcycle_gp-accel_gp', accel_rows, accel_data, ref_stats=accel_reference)
for k in ('mesquite', 'logmesquite', 'logmesquite_logvolume',
          'logmesquite_logva', 'logmesquite_logvash', 'logmesquite_logvas'):
    add('mesquite-' + k, mesquite_rows(k))
for y in (1972, 1976, 1980, 1984, 1988, 1992, 1996, 2000):
    add('nes%d-nes' % y, nes_rows)
add('sblrc-blr', blr_rows)
add('sblri-blr', blr_rows)
# The GPs: one multivariate term over all the data, so no rows (the whole
# target is the prior block); N is drift's row count, so the size is K.
add('gp_pois_regr-gp_regr', None,
    lambda d: {'x': d['x'], 'y': d['y']})
add('gp_pois_regr-gp_pois_regr', None,
    lambda d: {'x': d['x'], 'k': d['k']})


def write_rows(path, cols):
    n = len(cols[0][1])
    assert all(len(v) == n for _, v in cols), path
    with open(path, 'w', newline='') as f:
        w = csv.writer(f, lineterminator='\n')
        w.writerow([c for c, _ in cols])
        for i in range(n):
            w.writerow([fmt(v[i]) for _, v in cols])


def main():
    global DB
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    DB = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else \
        os.path.dirname(os.path.abspath(__file__))
    only = sys.argv[3:]
    for name, spec in POSTERIORS.items():
        if only and name not in only:
            continue
        d = data_of(name)
        dest = os.path.join(out, name)
        os.makedirs(dest, exist_ok=True)
        if spec['rows']:
            write_rows(os.path.join(dest, 'rows.csv'), spec['rows'](d))
        if spec['data']:
            with open(os.path.join(dest, 'data.json'), 'w') as f:
                json.dump(spec['data'](d), f, indent=1)
                f.write('\n')
        if spec['ref_stats']:
            stats = spec['ref_stats'](name)
        else:
            stats = [(k,) + mean_sd(v) for k, v in spec['ref'](reference_draws(name))]
        with open(os.path.join(dest, 'reference.csv'), 'w', newline='') as f:
            w = csv.writer(f, lineterminator='\n')
            w.writerow(['name', 'mean', 'sd'])
            for k, m, s in stats:
                w.writerow([k, repr(m), repr(s)])
        nrows = len(spec['rows'](d)[0][1]) if spec['rows'] else 0
        print('%-45s %5d rows, %3d params' % (name, nrows, len(stats)))


if __name__ == '__main__':
    main()
