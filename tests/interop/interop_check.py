# interop_check.py: the draws ArviZ and CmdStanPy return from drift's files
# equal the rows of the files themselves (tests/interop/test_interop.sh runs it).
#
#   /usr/bin/python3 interop_check.py SETS
#
# SETS names one run a line: "LABEL FILE..." (one file per chain).  For each
# run the files are parsed here, independently of any reader: the column
# row, the rows before CmdStan's "# Adaptation terminated" comment (saved
# warmup draws) and the rows after it (the draws).  Then every reader must
# return the draws (and, asked for, the warmup draws): as many chains,
# draws and variables, and the same values.  Prints "ok LABEL ..." or
# "FAIL LABEL: why" per run; exit status 1 when one failed.
import sys
import warnings
import logging

import numpy as np


def parse(path):
    names, warm, post, seen_marker = None, [], [], False
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            if line.startswith("#"):
                if names is not None and line == "# Adaptation terminated":
                    seen_marker = True
                continue
            if names is None:
                names = line.split(",")
                continue
            (post if seen_marker else warm).append([float(v) for v in line.split(",")])
    if not seen_marker:
        raise ValueError("%s: no '# Adaptation terminated' line" % path)
    n = len(names)
    return (names, np.array(warm, dtype=float).reshape(-1, n),
            np.array(post, dtype=float).reshape(-1, n))


def fixed_param(path):
    with open(path) as f:
        return any(line.strip() == "#     algorithm = fixed_param" for line in f
                   if line.startswith("#"))


def same(a, b):
    return a.shape == b.shape and np.allclose(a, b, rtol=1e-12, atol=0, equal_nan=True)


def check(label, files):
    refs = [parse(f) for f in files]
    names = refs[0][0]
    K = len(files)
    for r in refs[1:]:
        if r[0] != names or r[1].shape != refs[0][1].shape or r[2].shape != refs[0][2].shape:
            return "the chains' files differ in columns or row counts"
    W, S = refs[0][1].shape[0], refs[0][2].shape[0]
    warm = np.stack([r[1] for r in refs], axis=1)  # (W, K, n)
    post = np.stack([r[2] for r in refs], axis=1)  # (S, K, n)
    if not np.all(np.isfinite(post)):
        return "a draw is not finite (bayesplot refuses NaN)"
    model_cols = [j for j, c in enumerate(names) if not c.endswith("__")]
    if not np.all(np.isfinite(warm[:, :, model_cols])):
        return "a saved warmup draw is not finite (readers take them as draws)"
    n_model = sum(1 for c in names if not c.endswith("__"))

    import arviz as az
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        idata = az.from_cmdstan(posterior=files if K > 1 else files[0], save_warmup=True)
        az.summary(idata)
    # fixed_param's parameter columns are constant, and their R-hat is
    # 0/0 in ArviZ's summary, as for CmdStan's own fixed_param files.
    if fixed_param(files[0]):
        caught = [w for w in caught
                  if "invalid value encountered" not in str(w.message)]
    if caught:
        return "arviz warned: %s" % caught[0].message
    p = idata.posterior
    if p.sizes["chain"] != K or p.sizes["draw"] != S:
        return "arviz: %d chains x %d draws, the files hold %d x %d" % (
            p.sizes["chain"], p.sizes["draw"], K, S)
    # ArviZ moves a log_lik variable (the generated pointwise
    # log-likelihood) to its own group.
    groups = idata.groups()
    ll = idata.log_likelihood if "log_likelihood" in groups else None
    size = sum(int(np.prod(p[v].shape[2:])) for v in p.data_vars)
    if ll is not None:
        size += sum(int(np.prod(ll[v].shape[2:])) for v in ll.data_vars)
    if size != n_model:
        return "arviz: %d posterior values per draw, the files %d" % (size, n_model)
    rename = {"divergent": "diverging", "n_leapfrog": "n_steps", "treedepth": "tree_depth",
              "stepsize": "step_size", "accept_stat": "acceptance_rate"}
    for j, name in enumerate(names):
        if name.endswith("__"):
            base = name[:-2]
            arr = idata.sample_stats[rename.get(base, base)].values
            arrw = idata.warmup_sample_stats[rename.get(base, base)].values if W else None
        else:
            base, *idx = name.split(".")
            sel = (slice(None), slice(None)) + tuple(int(i) - 1 for i in idx)
            if base not in p and ll is not None and base in ll:
                arr = ll[base].values[sel]
                arrw = idata.warmup_log_likelihood[base].values[sel] if W else None
            else:
                arr = p[base].values[sel]
                arrw = idata.warmup_posterior[base].values[sel] if W else None
        if not same(np.asarray(arr, dtype=float), post[:, :, j].T):
            return "arviz: column %s differs from the file" % name
        if W and not same(np.asarray(arrw, dtype=float), warm[:, :, j].T):
            return "arviz: warmup of column %s differs from the file" % name
    if not W and "warmup_posterior" in idata.groups() and idata.warmup_posterior.sizes.get("draw", 0):
        return "arviz: warmup draws in a file without saved warmup"

    import cmdstanpy
    logging.getLogger("cmdstanpy").setLevel(logging.ERROR)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = cmdstanpy.from_csv(files)
        d = fit.draws()
        dw = fit.draws(inc_warmup=True) if W else None
    if caught:
        return "cmdstanpy warned: %s" % caught[0].message
    if d.shape != (S, K, len(names)):
        return "cmdstanpy: draws %s, the files hold %s" % (d.shape, (S, K, len(names)))
    if not same(d, post):
        return "cmdstanpy: draws differ from the files"
    if W and not (dw.shape[0] == W + S and same(dw[:W], warm)):
        return "cmdstanpy: warmup draws differ from the files"
    if len(fit.metadata.stan_vars) + 0 == 0 and n_model:
        return "cmdstanpy: no model variables"
    return "ok %s: %d chains x %d draws (+%d warmup), %d columns" % (label, K, S, W, len(names))


def main():
    bad = 0
    with open(sys.argv[1]) as f:
        runs = [line.split() for line in f if line.strip()]
    for label, *files in runs:
        try:
            msg = check(label, files)
        except Exception as e:  # a reader's refusal, or a parse error
            msg = "%s: %s" % (type(e).__name__, e)
        if msg.startswith("ok "):
            print(msg)
        else:
            bad = 1
            print("FAIL %s: %s" % (label, str(msg).replace("\n", " ")[:400]))
    sys.exit(bad)


main()
