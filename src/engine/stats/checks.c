/* checks.c: the warnings after a run (see checks.h).  Reads only the
 * columns and header lines Stan's samplers and drift's write (divergent__,
 * treedepth__ with max_depth, energy__, accept_stat__ with delta or
 * adapt_delta), so CmdStan's files get the same checks.  Not for the
 * summary table (summary.c) or printing (the CLI). */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "checks.h"

static int add(drift_checks *out, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static int add(drift_checks *out, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char **p = drift_realloc(out->lines, (out->n + 1) * sizeof *p);
    if (!p)
        return DRIFT_ENOMEM;
    out->lines = p;
    if (!(p[out->n] = drift_strdup(buf)))
        return DRIFT_ENOMEM;
    out->n++;
    return DRIFT_OK;
}

void drift_checks_free(drift_checks *c)
{
    for (size_t k = 0; k < c->n; k++)
        drift_free(c->lines[k]);
    drift_free(c->lines);
    c->lines = NULL;
    c->n = 0;
}

double drift_checks_ebfmi(const double *x, size_t n)
{
    if (n < 2)
        return NAN;
    double mean = 0, num = 0, den = 0;
    for (size_t i = 0; i < n; i++)
        mean += x[i];
    mean /= (double)n;
    for (size_t i = 0; i < n; i++) {
        den += (x[i] - mean) * (x[i] - mean);
        if (i)
            num += (x[i] - x[i - 1]) * (x[i] - x[i - 1]);
    }
    if (!(den > 0))
        return NAN;
    return (num / (double)(n - 1)) / (den / (double)(n - 1));
}

/* Draw i after warmup of column c in chain f. */
static double at(const drift_stancsv *f, size_t i, size_t c)
{
    return f->values[(f->n_warmup + i) * f->n_cols + c];
}

static size_t kept(const drift_stancsv *f)
{
    return f->n_rows - f->n_warmup;
}

static int meta_double(const drift_stancsv *f, const char *key, double *v)
{
    const char *s = drift_stancsv_meta(f, key);
    return s && !drift_parse_double(s, v);
}

/* Appends " (chain 1: 3, chain 2: 9)" for the chains with a count. */
static void per_chain(char *buf, size_t cap, const drift_stancsv *const *ch,
                      const size_t *count, size_t C)
{
    size_t used = 0;
    buf[0] = '\0';
    if (C < 2)
        return;
    int first = 1;
    for (size_t k = 0; k < C && used + 40 < cap; k++) {
        if (!count[k])
            continue;
        const char *id = drift_stancsv_meta(ch[k], "chain_id");
        if (!id)
            id = drift_stancsv_meta(ch[k], "id");
        char idb[24];
        if (!id) {
            snprintf(idb, sizeof idb, "%zu", k + 1);
            id = idb;
        }
        used += (size_t)snprintf(buf + used, cap - used, "%schain %s: %zu",
                                 first ? " (" : ", ", id, count[k]);
        first = 0;
    }
    if (!first && used + 2 < cap)
        snprintf(buf + used, cap - used, ")");
}

static const char *chain_label(const drift_stancsv *f, size_t k, char *buf,
                               size_t cap)
{
    const char *id = drift_stancsv_meta(f, "chain_id");
    if (!id)
        id = drift_stancsv_meta(f, "id");
    if (id)
        snprintf(buf, cap, "chain %s", id);
    else
        snprintf(buf, cap, "chain %zu", k + 1);
    return buf;
}

static int is_sampler_col(const char *name)
{
    size_t n = strlen(name);
    return n > 2 && !strcmp(name + n - 2, "__") && strcmp(name, "lp__");
}

/* Divergences and tree depth saturation: counts per chain. */
static int check_counts(const drift_stancsv *const *ch, size_t C,
                        size_t *count, drift_checks *out)
{
    const drift_stancsv *f0 = ch[0];
    size_t total = 0, all = 0;
    char tail[512];
    long c = drift_stancsv_column(f0, "divergent__");
    if (c >= 0) {
        for (size_t k = 0; k < C; k++) {
            count[k] = 0;
            for (size_t i = 0; i < kept(ch[k]); i++)
                count[k] += at(ch[k], i, (size_t)c) > 0;
            total += count[k];
            all += kept(ch[k]);
        }
        per_chain(tail, sizeof tail, ch, count, C);
        if (total &&
            add(out, "%zu of %zu transitions (%.3g%%) ended with a "
                     "divergence%s: the draws may be biased where the "
                     "posterior's curvature changes sharply; raise the "
                     "target acceptance (--set delta=0.95) or "
                     "reparameterise the model (e.g. non-centred)",
                total, all, 100.0 * (double)total / (double)all, tail))
            return DRIFT_ENOMEM;
    }
    double max_depth;
    c = drift_stancsv_column(f0, "treedepth__");
    if (c >= 0 && meta_double(f0, "max_depth", &max_depth)) {
        total = all = 0;
        for (size_t k = 0; k < C; k++) {
            count[k] = 0;
            for (size_t i = 0; i < kept(ch[k]); i++)
                count[k] += at(ch[k], i, (size_t)c) >= max_depth;
            total += count[k];
            all += kept(ch[k]);
        }
        per_chain(tail, sizeof tail, ch, count, C);
        if (total &&
            add(out, "%zu of %zu transitions (%.3g%%) hit the maximum tree "
                     "depth %.0f%s: not biased, but slow; a parameter the "
                     "data and prior leave (nearly) unconstrained does "
                     "this: give it a proper prior, or raise the limit "
                     "(--set max_depth=%.0f)",
                total, all, 100.0 * (double)total / (double)all, max_depth,
                tail, max_depth + 2))
            return DRIFT_ENOMEM;
    }
    return DRIFT_OK;
}

/* Per chain: E-BFMI, acceptance against its target, a chain that never
 * moved. */
static int check_chains(const drift_stancsv *const *ch, size_t C,
                        drift_checks *out)
{
    const drift_stancsv *f0 = ch[0];
    long ce = drift_stancsv_column(f0, "energy__");
    long ca = drift_stancsv_column(f0, "accept_stat__");
    double target = NAN, warmup = 0;
    if (!meta_double(f0, "delta", &target))
        meta_double(f0, "adapt_delta", &target);
    if (!meta_double(f0, "warmup", &warmup))
        meta_double(f0, "num_warmup", &warmup);
    for (size_t k = 0; k < C; k++) {
        const drift_stancsv *f = ch[k];
        size_t n = kept(f);
        char who[64];
        chain_label(f, k, who, sizeof who);
        /* A continuous-time sampler keeps draws on a grid of trajectory
         * times (--thin T): a grid coarse for the trajectory's length
         * leaves a handful of draws (1 in a default sbps run at
         * Covertype's size, whose posterior sds are 0.003), too few for
         * ESS and R-hat, though the footer's trajectory moments stay
         * exact. */
        double dt, T;
        const char *ts = drift_stancsv_footer(f, "trajectory_time");
        if (n < DRIFT_CHECKS_GRID_DRAWS && meta_double(f, "thin_time", &dt) &&
            dt > 0 && ts && !drift_parse_double(ts, &T) && T > 0 &&
            add(out, "%s: %zu draws kept on the grid of trajectory times "
                     "0, %g, %g, ... (--thin %g) along a trajectory %.3g "
                     "long: too few for ESS and R-hat (the footer's "
                     "trajectory_mean and trajectory_var are exact all the "
                     "same); give --thin %.2g for about 1000 draws",
                who, n, dt, 2 * dt, dt, T, T / 1000))
            return DRIFT_ENOMEM;
        if (n < 2)
            continue;
        if (ce >= 0) {
            double *e = drift_malloc_array(n, sizeof *e);
            if (!e)
                return DRIFT_ENOMEM;
            for (size_t i = 0; i < n; i++)
                e[i] = at(f, i, (size_t)ce);
            double b = drift_checks_ebfmi(e, n);
            drift_free(e);
            if (b < DRIFT_CHECKS_EBFMI &&
                add(out, "%s: E-BFMI %.3g is below %.1f: the sampler "
                         "explores the energy slowly (heavy tails, or a "
                         "funnel between a scale parameter and what it "
                         "scales); reparameterise the model (e.g. "
                         "non-centred)",
                    who, b, DRIFT_CHECKS_EBFMI))
                return DRIFT_ENOMEM;
        }
        if (ca >= 0 && target > 0 && warmup > 0) {
            double m = 0;
            for (size_t i = 0; i < n; i++)
                m += at(f, i, (size_t)ca);
            m /= (double)n;
            /* Only below the target: a mean above it is what Stan's own
             * NUTS gives on many posteriors (0.93 on posteriordb's arK,
             * 0.85 on a 100-D normal at delta 0.8), costs only
             * efficiency, and a longer warmup does not change it. */
            if (target - m > DRIFT_CHECKS_ACCEPT_GAP &&
                add(out, "%s: mean acceptance %.3g is far below its "
                         "target %.3g: the step size did not settle in "
                         "warmup; run a longer warmup (--warmup %.0f), "
                         "and look for divergences or a non-finite "
                         "density",
                    who, m, target, 2 * warmup))
                return DRIFT_ENOMEM;
        }
        /* Never moved: every quantity the same in every draw. */
        int moved = 0;
        for (size_t c = 0; c < f->n_cols && !moved; c++) {
            if (is_sampler_col(f->names[c]))
                continue;
            double x0 = at(f, 0, c);
            for (size_t i = 1; i < n && !moved; i++) {
                double x = at(f, i, c);
                moved = x != x0 && !(isnan(x) && isnan(x0));
            }
        }
        if (!moved &&
            add(out, "%s never moved: all its %zu draws are the same point; "
                     "the sampler rejected every proposal (step size far "
                     "too large, or a non-finite density around the "
                     "initial point): try a warmup (--warmup 1000), other "
                     "initial values (--init), or another sampler",
                who, n))
            return DRIFT_ENOMEM;
    }
    return DRIFT_OK;
}

/* R-hat and ESS over the model's quantities (lp__ included) that keep
 * selects (all when NULL). */
static int check_mixing(const drift_stancsv *const *ch, size_t C, size_t n,
                        const drift_summary_stats *stats,
                        const unsigned char *keep, drift_checks *out,
                        drift_err *e)
{
    const drift_stancsv *f0 = ch[0];
    size_t nc = f0->n_cols, rows = 0, n_rhat = 0, n_ess = 0;
    char rhat_names[256] = "", ess_names[256] = "";
    double worst_rhat = 0, worst_ess = INFINITY;
    double *x = drift_malloc_array(C * n > 0 ? C * n : 1, sizeof *x);
    if (!x)
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    int rc = DRIFT_OK;
    for (size_t c = 0; c < nc && !rc; c++) {
        const char *name = f0->names[c];
        if (is_sampler_col(name) || (keep && !keep[c]))
            continue;
        drift_summary_stats s;
        if (stats)
            s = stats[c];
        else {
            for (size_t k = 0; k < C; k++)
                for (size_t i = 0; i < n; i++)
                    x[k * n + i] = at(ch[k], i, c);
            if ((rc = drift_summary_compute(x, n, C, &s, e)))
                break;
        }
        rows++;
        if (s.rhat > DRIFT_CHECKS_RHAT) {
            if (n_rhat < 5)
                snprintf(rhat_names + strlen(rhat_names),
                         sizeof rhat_names - strlen(rhat_names), "%s%s",
                         n_rhat ? ", " : "", name);
            n_rhat++;
            if (s.rhat > worst_rhat)
                worst_rhat = s.rhat;
        }
        double ess = fmin(s.ess_bulk, s.ess_tail);
        if (ess < DRIFT_CHECKS_ESS_PER_CHAIN * (double)C) {
            if (n_ess < 5)
                snprintf(ess_names + strlen(ess_names),
                         sizeof ess_names - strlen(ess_names), "%s%s",
                         n_ess ? ", " : "", name);
            n_ess++;
            if (ess < worst_ess)
                worst_ess = ess;
        }
    }
    drift_free(x);
    if (rc)
        return rc;
    if (n_rhat &&
        add(out, "R-hat above %.2f for %zu of %zu quantities (%s%s; worst "
                 "%.3g): %s",
            DRIFT_CHECKS_RHAT, n_rhat, rows, rhat_names,
            n_rhat > 5 ? ", ..." : "", worst_rhat,
            /* split R-hat: with one chain, its two halves */
            C > 1 ? "the chains disagree; run longer, or look for chains "
                    "stuck in different modes"
                  : "the chain's two halves disagree (it has not settled); "
                    "run longer, and run several chains (--chains 4)"))
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    if (n_ess &&
        add(out, "bulk or tail ESS below %.0f per chain for %zu of %zu "
                 "quantities (%s%s; lowest %.0f): their estimates are not "
                 "yet reliable; run longer (--iter)",
            DRIFT_CHECKS_ESS_PER_CHAIN, n_ess, rows, ess_names,
            n_ess > 5 ? ", ..." : "", worst_ess))
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    return DRIFT_OK;
}

int drift_checks_run(const drift_stancsv *const *chains, size_t C, size_t n,
                     const drift_summary_stats *stats, drift_checks *out,
                     drift_err *e)
{
    return drift_checks_run_selected(chains, C, n, stats, NULL, out, e);
}

int drift_checks_run_selected(const drift_stancsv *const *chains, size_t C,
                              size_t n, const drift_summary_stats *stats,
                              const unsigned char *keep, drift_checks *out,
                              drift_err *e)
{
    memset(out, 0, sizeof *out);
    if (C == 0 || n == 0)
        return DRIFT_OK;
    size_t *count = drift_calloc(C, sizeof *count);
    if (!count)
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    int rc = check_counts(chains, C, count, out);
    drift_free(count);
    if (!rc)
        rc = check_chains(chains, C, out);
    if (rc)
        return drift_err_set(e, rc, "out of memory");
    return check_mixing(chains, C, n, stats, keep, out, e);
}

void drift_checks_files(const char *const *paths, size_t K, FILE *out)
{
    drift_stancsv **f = drift_calloc(K ? K : 1, sizeof *f);
    size_t C = 0, n = SIZE_MAX;
    if (!f)
        return;
    for (size_t k = 0; k < K; k++) {
        drift_err e = {{0}};
        if (drift_stancsv_read(paths[k], &f[C], &e)) {
            fprintf(out, "drift: warning: cannot check %s: %s\n", paths[k],
                    e.msg);
            continue;
        }
        if (C && f[C]->n_cols != f[0]->n_cols) {
            drift_stancsv_free(f[C]);
            continue;
        }
        size_t kept = f[C]->n_rows - f[C]->n_warmup;
        if (kept < n)
            n = kept;
        C++;
    }
    drift_checks chk = {0};
    drift_err e = {{0}};
    if (C && n && n != SIZE_MAX &&
        !drift_checks_run((const drift_stancsv *const *)f, C, n, NULL, &chk,
                          &e)) {
        for (size_t k = 0; k < chk.n; k++)
            fprintf(out, "drift: warning: %s\n", chk.lines[k]);
        drift_checks_free(&chk);
    }
    for (size_t k = 0; k < C; k++)
        drift_stancsv_free(f[k]);
    drift_free(f);
}
