/* agld.c: aggregated-gradient Langevin dynamics (Zhang, Xie, Shen, Zhao,
 * Zhou and Qian, AAAI 2020), one plugin for the whole family:
 *
 *     g_k     = grad U_prior(x_k) + sum_i alpha_i
 *               + (N/n) sum_{i in S_k} (grad U_i(x_k) - alpha_i)
 *     x_{k+1} = x_k - eta g_k + sqrt(2 eta) xi_k,     xi_k ~ N(0, I),
 *
 * where S_k is the next minibatch of the engine's access stream (random
 * access, random reshuffle or cyclic: --access, or fixed by the sampler)
 * and the snapshots alpha_i are kept by one of three strategies:
 *   ptu  periodic total update (SVRG-LD): every D iterations alpha_i =
 *        grad U_i(x_k) for all i; only the snapshot point and the sum of
 *        its gradients are stored, and grad U_i at the snapshot point is
 *        recomputed for the rows of each minibatch (2n evaluations a step);
 *   ppu  per-iteration partial update (SAGA-LD): after each step alpha_i =
 *        grad U_i(x_k) for the rows of S_k; one stored snapshot per datum;
 *   tmu  time-based mixture update: both, the partial update every step and
 *        the total one every D iterations.
 * Per-datum snapshots are one number per datum when the model is in
 * generalised linear form (grad U_i = s_i x_i: s_i is stored and the sums
 * of x_i weighted by differences of s_i are read back from the data by the
 * engine's glm_design_sum, which never forms a dense design row, so that
 * sparse data of a million columns costs its nonzeros), else d numbers.
 * Also svrg-ld+ (Zou, Xu and Gu, UAI 2018): ptu whose snapshot gradient is
 * estimated from B rows instead of N.
 *
 * D defaults to ceil(N/n), one data pass; the paper's Theorem 3 takes
 * D = N, which --set D=0 gives (or D = the number of rows).
 *
 * Iteration 0 (and every D-th for ptu, tmu, svrg-ld+) is a refresh: the
 * snapshots are taken at x_k, so the minibatch correction is exactly zero
 * and no minibatch is drawn; the step uses the refreshed sum.  The paper's
 * Algorithm 1 draws S_k on these iterations too; drift does not, on
 * purpose: with every alpha_i = grad U_i(x_k) the correction is zero for
 * any S_k, so the draw changes nothing in the step (and Algorithm 1's
 * gradients for it would be wasted evaluations).  Its only effect would be
 * on the access stream: under rr and ca it would use up n rows of the pass
 * in a step where they contribute nothing (under ca with D = N/n, N a
 * multiple of n, always rows 0..n-1, which would then never enter a correction); under
 * ra the draws are independent, so skipping one changes no law.  drift's
 * stream therefore advances on ordinary iterations only, and under rr and
 * ca every row is drawn by an ordinary iteration once per pass
 * (tests/test_agld.c checks the rows drawn).  Every
 * per-datum evaluation, refreshes included, goes through the engine's
 * counted oracles.  Not an exact sampler: its bias grows with eta.
 *
 * Where the run has a mode (the engine's plan for these samplers at their
 * defaults finds one), the step is preconditioned by the engine's DIAG
 * metric, which starts from the mode's diagonal curvature, P = M^-1:
 *     x_{k+1} = x_k - eta P g_k + sqrt(2 eta) P^(1/2) xi_k,
 * which leaves the same target invariant as eta -> 0 (P is constant) and
 * lets one eta suit parameters whose posterior sds differ by orders of
 * magnitude. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <drift/sampler.h>

DRIFT_PLUGIN_LICENSE("MIT");

enum { SNAP_PTU = 0, SNAP_PPU = 1, SNAP_TMU = 2, SNAP_PLUS = 3 };
enum { ACCESS_AUTO = -1 };

/* Rows per oracle call while refreshing every snapshot. */
#define CHUNK 256

/* What a sampler name stands for, with its hyperparameters decoded. */
typedef struct variant {
    const char *name;
    int snap;           /* SNAP_* */
    int access;         /* drift_access, or ACCESS_AUTO: the run's --access */
    double eta;
    double D;           /* NaN: derived, ceil(N/n) */
    double B;           /* svrg-ld+ only; NaN: derived */
    int check_age;
} variant;

typedef struct agld {
    int snap, glm, check_age;
    double eta, noise;
    size_t d, N, n, D, B, ch;
    uint64_t k, k_refresh;
    double U_snap;          /* sum of U_i at the snapshot point (ptu, +) */
    double *g, *gp, *xi, *acc, *tmp;
    double *x_snap;         /* ptu, svrg-ld+: the snapshot point */
    double *G;              /* sum_i alpha_i (for svrg-ld+ its estimate) */
    double *alpha;          /* ppu, tmu: N scalars (glm) or N x d */
    double *grow;           /* ch x d: per-row gradients (general path) */
    double *srow, *wrow;    /* ch: per-row scalars and weights (glm path) */
    size_t *rows;           /* ch indices */
    uint64_t *stamp;        /* check_age, ppu/tmu: iteration of alpha_i */
    double *P;              /* the preconditioner's diagonal (NULL: I) */
} agld;

static int per_datum(const agld *s)
{
    return s->snap == SNAP_PPU || s->snap == SNAP_TMU;
}

static const char *snap_name(int snap)
{
    static const char *names[] = {"ptu", "ppu", "tmu", "svrg-ld+"};
    return names[snap];
}

static const char *access_name(int a)
{
    return a == DRIFT_ACCESS_RR ? "rr" : a == DRIFT_ACCESS_CA ? "ca" : "ra";
}

/* Applies the variant's access strategy through the engine's stream.  The
 * engine's default --access is ra, so a run whose --access is rr or ca and
 * differs from a fixed strategy was asked for something else: refused. */
static int fix_access(const variant *v, const drift_services *svc,
                      drift_chain *c)
{
    if (v->access == ACCESS_AUTO)
        return DRIFT_OK;
    drift_access run = svc->access(c);
    if (run != DRIFT_ACCESS_RA && (int)run != v->access) {
        char msg[320];
        if (strcmp(v->name, "agld") == 0)
            snprintf(msg, sizeof msg,
                     "sampler agld: --set access=%s conflicts with --access "
                     "%s; give one of them (access=auto follows --access)",
                     access_name(v->access), access_name((int)run));
        else
            snprintf(msg, sizeof msg,
                     "sampler %s uses %s access by definition, but --access "
                     "%s was given; use --sampler %s-%s, or agld with --set "
                     "snapshot=%s",
                     v->name, access_name(v->access), access_name((int)run),
                     snap_name(v->snap), access_name((int)run),
                     snap_name(v->snap));
        return svc->fail(c, msg);
    }
    return svc->set_access(c, (drift_access)v->access);
}

static int start(const variant *v, void *state, const drift_services *svc,
                 drift_chain *c)
{
    agld *s = state;
    char msg[320];
    memset(s, 0, sizeof *s);
    s->snap = v->snap;
    s->eta = v->eta;
    s->noise = sqrt(2.0 * v->eta);
    s->d = svc->dim(c);
    s->N = svc->n_rows(c);
    s->n = svc->batch(c);
    if (s->N == 0) {
        snprintf(msg, sizeof msg,
                 "sampler %s needs a model with data rows (its snapshots are "
                 "per datum); this model has none",
                 v->name);
        return svc->fail(c, msg);
    }
    if (s->n == 0 || s->n > s->N)
        s->n = s->N;
    int rc = fix_access(v, svc, c);
    if (rc)
        return rc;
    /* D unset: one data pass, ceil(N/n); D = 0: N, Theorem 3's choice. */
    s->D = isnan(v->D)  ? (s->N + s->n - 1) / s->n
           : v->D == 0 ? s->N
                       : (size_t)v->D;
    if (s->snap == SNAP_PLUS) {
        if (isnan(v->B)) {
            size_t b = (s->N + 9) / 10;
            s->B = b < s->n ? s->n : b;
        } else {
            s->B = (size_t)v->B;
        }
        if (s->B > s->N) {
            snprintf(msg, sizeof msg,
                     "sampler %s: B = %zu is more than the %zu data rows; "
                     "give B <= %zu",
                     v->name, s->B, s->N, s->N);
            return svc->fail(c, msg);
        }
    }
    s->glm = per_datum(s) && svc->is_glm(c);
    s->check_age = v->check_age && per_datum(s);
    s->ch = s->n > CHUNK ? s->n : CHUNK;

    /* One allocation, so that a --max-memory refusal states the whole
     * size needed.  Every piece holds 8-byte items. */
    size_t d = s->d, N = s->N, ch = s->ch;
    size_t n_dbl = 7 * d; /* g gp xi acc tmp x_snap G */
    if (per_datum(s)) {
        if (!s->glm && d && N > SIZE_MAX / 16 / d) {
            snprintf(msg, sizeof msg,
                     "sampler %s: per-datum snapshots of %zu rows x %zu "
                     "parameters exceed the address space",
                     v->name, N, d);
            return svc->fail(c, msg);
        }
        n_dbl += s->glm ? N + 2 * ch : N * d + ch * d;
    }
    size_t n_idx = ch + (s->check_age ? N : 0);
    if (n_dbl > SIZE_MAX / 16 - n_idx)
        return svc->fail(c, "agld: the snapshot memory exceeds the address "
                            "space");
    char *mem = svc->alloc(c, 8 * (n_dbl + n_idx));
    if (!mem)
        return DRIFT_ENOMEM;
    double *p = (double *)mem;
    s->g = p, p += d;
    s->gp = p, p += d;
    s->xi = p, p += d;
    s->acc = p, p += d;
    s->tmp = p, p += d;
    s->x_snap = p, p += d;
    s->G = p, p += d;
    if (per_datum(s)) {
        if (s->glm) {
            s->alpha = p, p += N;
            s->srow = p, p += ch;
            s->wrow = p, p += ch;
        } else {
            s->alpha = p, p += N * d;
            s->grow = p, p += ch * d;
        }
    }
    s->rows = (size_t *)p;
    if (s->check_age)
        s->stamp = (uint64_t *)(s->rows + ch);
    if (svc->mode(c, NULL, NULL) == DRIFT_OK) {
        if (!(s->P = svc->alloc(c, d * sizeof(double))))
            return DRIFT_ENOMEM;
        if ((rc = svc->metric_use(c, DRIFT_METRIC_DIAG)))
            return rc;
        svc->metric_get(c, s->P);
        for (size_t j = 0; j < d; j++)
            if (!(s->P[j] > 0) || !isfinite(s->P[j]))
                s->P[j] = 1;
    }
    return DRIFT_OK;
}

/* ---- refreshes (iteration k == 0, and every D-th for ptu, tmu, +) ---- */

/* Every per-datum snapshot taken at x (ppu, tmu). */
static int refresh_rows(agld *s, const drift_services *svc, drift_chain *c,
                        const double *x)
{
    size_t d = s->d;
    int rc;
    memset(s->G, 0, d * sizeof *s->G);
    for (size_t i0 = 0; i0 < s->N; i0 += CHUNK) {
        size_t m = s->N - i0 < CHUNK ? s->N - i0 : CHUNK;
        for (size_t t = 0; t < m; t++)
            s->rows[t] = i0 + t;
        if (s->glm) {
            if ((rc = svc->glm_scalars(c, x, s->rows, m, s->alpha + i0)) ||
                (rc = svc->glm_design_sum(c, s->rows, m, s->alpha + i0,
                                          s->G)))
                return rc;
        } else {
            double *a = s->alpha + i0 * d;
            if ((rc = svc->grad_rows(c, x, s->rows, m, a, NULL)))
                return rc;
            for (size_t t = 0; t < m; t++)
                for (size_t j = 0; j < d; j++)
                    s->G[j] += a[t * d + j];
        }
    }
    if (s->stamp)
        for (size_t i = 0; i < s->N; i++)
            s->stamp[i] = s->k;
    return DRIFT_OK;
}

/* The snapshot point x and the (estimated) sum of its gradients (ptu,
 * svrg-ld+).  Writes g, the refresh step's gradient, and *lp. */
static int refresh_point(agld *s, const drift_services *svc, drift_chain *c,
                         const double *x, double U0, double *lp)
{
    size_t d = s->d;
    int rc;
    memcpy(s->x_snap, x, d * sizeof *x);
    if (s->snap == SNAP_PTU) {
        double U;
        if ((rc = svc->grad_full(c, x, s->g, &U)))
            return rc;
        for (size_t j = 0; j < d; j++)
            s->G[j] = s->g[j] - s->gp[j];
        s->U_snap = U - U0;
        *lp = -U;
        return DRIFT_OK;
    }
    /* svrg-ld+: (N/B) sum over B rows of the access stream. */
    double Usum = 0, scale = (double)s->N / (double)s->B;
    memset(s->G, 0, d * sizeof *s->G);
    for (size_t done = 0; done < s->B; done += CHUNK) {
        size_t m = s->B - done < CHUNK ? s->B - done : CHUNK;
        double u;
        if ((rc = svc->next_batch(c, m, s->rows)) ||
            (rc = svc->grad_sum(c, x, s->rows, m, s->tmp, &u)))
            return rc;
        for (size_t j = 0; j < d; j++)
            s->G[j] += s->tmp[j];
        Usum += u;
    }
    for (size_t j = 0; j < d; j++) {
        s->G[j] *= scale;
        s->g[j] = s->gp[j] + s->G[j];
    }
    s->U_snap = scale * Usum;
    *lp = -(U0 + s->U_snap);
    return DRIFT_OK;
}

/* ---- ordinary iterations ---------------------------------------------- */

/* ptu, svrg-ld+: grad U_i at x and at the snapshot point, both for S_k. */
static int step_point(agld *s, const drift_services *svc, drift_chain *c,
                      const double *x, double U0, double *lp)
{
    size_t d = s->d;
    double Ua, Ub, scale = (double)s->N / (double)s->n;
    int rc;
    if ((rc = svc->next_batch(c, s->n, s->rows)) ||
        (rc = svc->grad_sum(c, x, s->rows, s->n, s->acc, &Ua)) ||
        (rc = svc->grad_sum(c, s->x_snap, s->rows, s->n, s->tmp, &Ub)))
        return rc;
    for (size_t j = 0; j < d; j++)
        s->g[j] = s->gp[j] + (s->G[j] + scale * (s->acc[j] - s->tmp[j]));
    *lp = -(U0 + s->U_snap + scale * (Ua - Ub));
    return DRIFT_OK;
}

/* ppu, tmu: the aggregated gradient from S_k, then the partial update.
 * Rows drawn twice (random access) enter the estimate twice against the
 * same alpha_i; the update, done in order, changes alpha_i once. */
static int step_rows(agld *s, const drift_services *svc, drift_chain *c,
                     const double *x)
{
    size_t d = s->d, n = s->n;
    double scale = (double)s->N / (double)n;
    int rc;
    if ((rc = svc->next_batch(c, n, s->rows)))
        return rc;
    memset(s->acc, 0, d * sizeof *s->acc);
    if (s->glm) {
        /* grad U_i - alpha_i = (s_i - alpha_i) x_i: weights of x_i. */
        if ((rc = svc->glm_scalars(c, x, s->rows, n, s->srow)))
            return rc;
        for (size_t t = 0; t < n; t++)
            s->wrow[t] = s->srow[t] - s->alpha[s->rows[t]];
        if ((rc = svc->glm_design_sum(c, s->rows, n, s->wrow, s->acc)))
            return rc;
        for (size_t j = 0; j < d; j++)
            s->g[j] = s->gp[j] + (s->G[j] + scale * s->acc[j]);
        for (size_t t = 0; t < n; t++) {
            size_t i = s->rows[t];
            s->wrow[t] = s->srow[t] - s->alpha[i];
            s->alpha[i] = s->srow[t];
        }
        return svc->glm_design_sum(c, s->rows, n, s->wrow, s->G);
    }
    if ((rc = svc->grad_rows(c, x, s->rows, n, s->grow, NULL)))
        return rc;
    for (size_t t = 0; t < n; t++)
        for (size_t j = 0; j < d; j++)
            s->acc[j] += s->grow[t * d + j] - s->alpha[s->rows[t] * d + j];
    for (size_t j = 0; j < d; j++)
        s->g[j] = s->gp[j] + (s->G[j] + scale * s->acc[j]);
    for (size_t t = 0; t < n; t++) {
        double *a = s->alpha + s->rows[t] * d;
        for (size_t j = 0; j < d; j++)
            s->G[j] += s->grow[t * d + j] - a[j];
        memcpy(a, s->grow + t * d, d * sizeof(double));
    }
    return DRIFT_OK;
}

/* Age in iterations of the oldest snapshot used by this iteration's g
 * (Requirement 2 of the paper asks for at most D); NaN when unknown. */
static double oldest_age(const agld *s)
{
    if (!per_datum(s))
        return (double)(s->k - s->k_refresh);
    if (!s->stamp)
        return -1; /* not kept: -1, not NaN, which Stan CSV readers
                      (rstan, bayesplot) refuse or warn about */
    uint64_t oldest = s->k;
    for (size_t i = 0; i < s->N; i++)
        if (s->stamp[i] < oldest)
            oldest = s->stamp[i];
    return (double)(s->k - oldest);
}

static int step(void *state, const drift_services *svc, drift_chain *c,
                double *x)
{
    agld *s = state;
    size_t d = s->d;
    double U0, lp = NAN, age = NAN;
    int rc;
    int refresh = s->k == 0 || (s->snap != SNAP_PPU && s->k % s->D == 0);
    if ((rc = svc->grad_prior(c, x, s->gp, &U0)))
        return rc;
    if (refresh) {
        s->k_refresh = s->k;
        if (per_datum(s)) {
            if ((rc = refresh_rows(s, svc, c, x)))
                return rc;
            for (size_t j = 0; j < d; j++)
                s->g[j] = s->gp[j] + s->G[j];
        } else if ((rc = refresh_point(s, svc, c, x, U0, &lp))) {
            return rc;
        }
        age = oldest_age(s);
    } else if (per_datum(s)) {
        /* The age of the snapshots the estimate is about to use. */
        age = oldest_age(s);
        if ((rc = step_rows(s, svc, c, x)))
            return rc;
        if (s->stamp)
            for (size_t t = 0; t < s->n; t++)
                s->stamp[s->rows[t]] = s->k;
    } else {
        age = oldest_age(s);
        if ((rc = step_point(s, svc, c, x, U0, &lp)))
            return rc;
    }
    svc->normal_fill(c, d, s->xi);
    for (size_t j = 0; j < d; j++) {
        if (s->P)
            x[j] += -s->eta * s->P[j] * s->g[j] +
                    s->noise * sqrt(s->P[j]) * s->xi[j];
        else
            x[j] += -s->eta * s->g[j] + s->noise * s->xi[j];
        if (!isfinite(x[j])) {
            char msg[256];
            snprintf(msg, sizeof msg,
                     "%s: the state became non-finite at iteration %llu "
                "(coordinate %zu); the step size eta = %g is too large "
                     "for this target",
                     snap_name(s->snap), (unsigned long long)s->k, j + 1,
                     s->eta);
            return svc->fail(c, msg);
        }
    }
    s->k++;
    return svc->emit_draw(c, x, lp, &age);
}

/* The iteration counters (k drives the refresh schedule), the snapshot
 * point with its U and gradient sum, and for ppu and tmu the per-datum
 * snapshots alpha (N, or N x d) and, with check_age, their iterations.
 * g, gp, xi, acc, tmp and the per-row buffers are rewritten by every step
 * before they are read. */
static int checkpoint(void *state, const drift_services *svc, drift_chain *c)
{
    agld *s = state;
    size_t d = s->d;
    int rc = svc->ckpt_bytes(c, &s->k, sizeof s->k);
    if (!rc)
        rc = svc->ckpt_bytes(c, &s->k_refresh, sizeof s->k_refresh);
    if (!rc)
        rc = svc->ckpt_bytes(c, &s->U_snap, sizeof s->U_snap);
    if (!rc)
        rc = svc->ckpt_bytes(c, s->x_snap, d * sizeof *s->x_snap);
    if (!rc)
        rc = svc->ckpt_bytes(c, s->G, d * sizeof *s->G);
    if (!rc && s->alpha)
        rc = svc->ckpt_bytes(c, s->alpha,
                             (s->glm ? s->N : s->N * d) * sizeof *s->alpha);
    if (!rc && s->stamp)
        rc = svc->ckpt_bytes(c, s->stamp, s->N * sizeof *s->stamp);
    return rc;
}

/* ---- the samplers ------------------------------------------------------- */

/* Hyperparameters are read by position; each table's layout is fixed. */
static int init_agld(void *st, const drift_services *svc, drift_chain *c,
                     const double *hp, double *theta)
{
    (void)theta;
    variant v = {"agld", (int)hp[0], (int)hp[1] - 1, hp[2], hp[3], NAN,
                 hp[4] != 0};
    return start(&v, st, svc, c);
}

/* ptu-* and tmu-*: eta, D, check_age; ppu-*: eta, check_age. */
static int init_grid(const char *name, int snap, int access, void *st,
                     const drift_services *svc, drift_chain *c,
                     const double *hp)
{
    variant v = {name, snap, access, hp[0], NAN, NAN, 0};
    if (snap == SNAP_PPU) {
        v.check_age = hp[1] != 0;
    } else {
        v.D = hp[1];
        v.check_age = hp[2] != 0;
    }
    return start(&v, st, svc, c);
}

static int init_svrg_ld(void *st, const drift_services *svc, drift_chain *c,
                        const double *hp, double *theta)
{
    (void)theta;
    return init_grid("svrg-ld", SNAP_PTU, DRIFT_ACCESS_RA, st, svc, c, hp);
}
static int init_saga_ld(void *st, const drift_services *svc, drift_chain *c,
                        const double *hp, double *theta)
{
    (void)theta;
    return init_grid("saga-ld", SNAP_PPU, DRIFT_ACCESS_RA, st, svc, c, hp);
}
static int init_ptu_ra(void *st, const drift_services *svc, drift_chain *c,
                       const double *hp, double *theta)
{
    (void)theta;
    return init_grid("ptu-ra", SNAP_PTU, DRIFT_ACCESS_RA, st, svc, c, hp);
}
static int init_ptu_rr(void *st, const drift_services *svc, drift_chain *c,
                       const double *hp, double *theta)
{
    (void)theta;
    return init_grid("ptu-rr", SNAP_PTU, DRIFT_ACCESS_RR, st, svc, c, hp);
}
static int init_ptu_ca(void *st, const drift_services *svc, drift_chain *c,
                       const double *hp, double *theta)
{
    (void)theta;
    return init_grid("ptu-ca", SNAP_PTU, DRIFT_ACCESS_CA, st, svc, c, hp);
}
static int init_ppu_ra(void *st, const drift_services *svc, drift_chain *c,
                       const double *hp, double *theta)
{
    (void)theta;
    return init_grid("ppu-ra", SNAP_PPU, DRIFT_ACCESS_RA, st, svc, c, hp);
}
static int init_ppu_rr(void *st, const drift_services *svc, drift_chain *c,
                       const double *hp, double *theta)
{
    (void)theta;
    return init_grid("ppu-rr", SNAP_PPU, DRIFT_ACCESS_RR, st, svc, c, hp);
}
static int init_ppu_ca(void *st, const drift_services *svc, drift_chain *c,
                       const double *hp, double *theta)
{
    (void)theta;
    return init_grid("ppu-ca", SNAP_PPU, DRIFT_ACCESS_CA, st, svc, c, hp);
}
static int init_tmu_ra(void *st, const drift_services *svc, drift_chain *c,
                       const double *hp, double *theta)
{
    (void)theta;
    return init_grid("tmu-ra", SNAP_TMU, DRIFT_ACCESS_RA, st, svc, c, hp);
}
static int init_tmu_rr(void *st, const drift_services *svc, drift_chain *c,
                       const double *hp, double *theta)
{
    (void)theta;
    return init_grid("tmu-rr", SNAP_TMU, DRIFT_ACCESS_RR, st, svc, c, hp);
}
static int init_tmu_ca(void *st, const drift_services *svc, drift_chain *c,
                       const double *hp, double *theta)
{
    (void)theta;
    return init_grid("tmu-ca", SNAP_TMU, DRIFT_ACCESS_CA, st, svc, c, hp);
}
static int init_svrg_plus(void *st, const drift_services *svc, drift_chain *c,
                          const double *hp, double *theta)
{
    (void)theta;
    variant v = {"svrg-ld+", SNAP_PLUS, ACCESS_AUTO, hp[0], hp[1], hp[2], 0};
    return start(&v, st, svc, c);
}

#define ETA_DOC "step size: x += -eta g + sqrt(2 eta) N(0, I)"
#define D_DOC                                                                \
    "iterations between total snapshot refreshes (ptu, tmu); default "      \
    "ceil(N/n), one data pass; 0: N, the paper's Theorem 3"
#define AGE_DOC                                                              \
    "diagnostic: keep each datum's snapshot iteration (8 bytes a datum) "   \
    "and report the oldest snapshot's age in age__ (-1 without it for "    \
    "ppu, tmu)"

static const drift_hparam agld_hp[] = {
    {"snapshot", DRIFT_HP_ENUM, 2, 0, 0, 0, "ptu|ppu|tmu",
     "snapshot update: periodic total (SVRG-LD), per-iteration partial "
     "(SAGA-LD), or both (TMU)"},
    {"access", DRIFT_HP_ENUM, 0, 0, 0, 0, "auto|ra|rr|ca",
     "data access: auto follows --access; ra, rr or ca fix it"},
    {"eta", DRIFT_HP_REAL, 1e-4, 0, INFINITY,
     DRIFT_HP_OPEN_LO | DRIFT_HP_STEP_SIZE, NULL, ETA_DOC},
    {"D", DRIFT_HP_INT, NAN, 0, 1e15, 0, NULL, D_DOC},
    {"check_age", DRIFT_HP_BOOL, 0, 0, 1, 0, NULL, AGE_DOC},
};

static const drift_hparam periodic_hp[] = {
    {"eta", DRIFT_HP_REAL, 1e-4, 0, INFINITY,
     DRIFT_HP_OPEN_LO | DRIFT_HP_STEP_SIZE, NULL, ETA_DOC},
    {"D", DRIFT_HP_INT, NAN, 0, 1e15, 0, NULL, D_DOC},
    {"check_age", DRIFT_HP_BOOL, 0, 0, 1, 0, NULL, AGE_DOC},
};

static const drift_hparam ppu_hp[] = {
    {"eta", DRIFT_HP_REAL, 1e-4, 0, INFINITY,
     DRIFT_HP_OPEN_LO | DRIFT_HP_STEP_SIZE, NULL, ETA_DOC},
    {"check_age", DRIFT_HP_BOOL, 0, 0, 1, 0, NULL, AGE_DOC},
};

static const drift_hparam plus_hp[] = {
    {"eta", DRIFT_HP_REAL, 1e-4, 0, INFINITY,
     DRIFT_HP_OPEN_LO | DRIFT_HP_STEP_SIZE, NULL, ETA_DOC},
    {"D", DRIFT_HP_INT, NAN, 0, 1e15, 0, NULL,
     "iterations between snapshot refreshes; default ceil(N/n); 0: N"},
    {"B", DRIFT_HP_INT, NAN, 1, 1e15, 0, NULL,
     "rows of the access stream estimating each snapshot gradient; default "
     "max(n, ceil(N/10))"},
};

static const char *const columns[] = {"age__"};

static const drift_sampler samplers[] = {
    {.name = "agld",
     .summary = "aggregated-gradient Langevin, ptu|ppu|tmu snapshots "
                "(Zhang et al. 2020)",
     .hparams = agld_hp,
     .n_hparams = sizeof agld_hp / sizeof agld_hp[0],
     .columns = columns,
     .n_columns = 1,
     .state_size = sizeof(agld),
     .flags = DRIFT_SAMPLER_OWN_ESTIMATES,
     .init = init_agld,
     .step = step,
     .checkpoint = checkpoint},
    {.name = "svrg-ld",
     .summary = "SVRG Langevin: agld, ptu snapshots, random access "
                "(Dubey et al. 2016)",
     .hparams = periodic_hp,
     .n_hparams = sizeof periodic_hp / sizeof periodic_hp[0],
     .columns = columns,
     .n_columns = 1,
     .state_size = sizeof(agld),
     .flags = DRIFT_SAMPLER_OWN_ESTIMATES,
     .init = init_svrg_ld,
     .step = step,
     .checkpoint = checkpoint},
    {.name = "saga-ld",
     .summary = "SAGA Langevin: agld, ppu snapshots, random access "
                "(Dubey et al. 2016)",
     .hparams = ppu_hp,
     .n_hparams = sizeof ppu_hp / sizeof ppu_hp[0],
     .columns = columns,
     .n_columns = 1,
     .state_size = sizeof(agld),
     .flags = DRIFT_SAMPLER_OWN_ESTIMATES,
     .init = init_saga_ld,
     .step = step,
     .checkpoint = checkpoint},
    {.name = "ptu-ra",
     .summary = "agld: periodic total update, random access",
     .hparams = periodic_hp,
     .n_hparams = sizeof periodic_hp / sizeof periodic_hp[0],
     .columns = columns,
     .n_columns = 1,
     .state_size = sizeof(agld),
     .flags = DRIFT_SAMPLER_OWN_ESTIMATES,
     .init = init_ptu_ra,
     .step = step,
     .checkpoint = checkpoint},
    {.name = "ptu-rr",
     .summary = "agld: periodic total update, random reshuffle",
     .hparams = periodic_hp,
     .n_hparams = sizeof periodic_hp / sizeof periodic_hp[0],
     .columns = columns,
     .n_columns = 1,
     .state_size = sizeof(agld),
     .flags = DRIFT_SAMPLER_OWN_ESTIMATES,
     .init = init_ptu_rr,
     .step = step,
     .checkpoint = checkpoint},
    {.name = "ptu-ca",
     .summary = "agld: periodic total update, cyclic access",
     .hparams = periodic_hp,
     .n_hparams = sizeof periodic_hp / sizeof periodic_hp[0],
     .columns = columns,
     .n_columns = 1,
     .state_size = sizeof(agld),
     .flags = DRIFT_SAMPLER_OWN_ESTIMATES,
     .init = init_ptu_ca,
     .step = step,
     .checkpoint = checkpoint},
    {.name = "ppu-ra",
     .summary = "agld: per-iteration partial update, random access",
     .hparams = ppu_hp,
     .n_hparams = sizeof ppu_hp / sizeof ppu_hp[0],
     .columns = columns,
     .n_columns = 1,
     .state_size = sizeof(agld),
     .flags = DRIFT_SAMPLER_OWN_ESTIMATES,
     .init = init_ppu_ra,
     .step = step,
     .checkpoint = checkpoint},
    {.name = "ppu-rr",
     .summary = "agld: per-iteration partial update, random reshuffle",
     .hparams = ppu_hp,
     .n_hparams = sizeof ppu_hp / sizeof ppu_hp[0],
     .columns = columns,
     .n_columns = 1,
     .state_size = sizeof(agld),
     .flags = DRIFT_SAMPLER_OWN_ESTIMATES,
     .init = init_ppu_rr,
     .step = step,
     .checkpoint = checkpoint},
    {.name = "ppu-ca",
     .summary = "agld: per-iteration partial update, cyclic access",
     .hparams = ppu_hp,
     .n_hparams = sizeof ppu_hp / sizeof ppu_hp[0],
     .columns = columns,
     .n_columns = 1,
     .state_size = sizeof(agld),
     .flags = DRIFT_SAMPLER_OWN_ESTIMATES,
     .init = init_ppu_ca,
     .step = step,
     .checkpoint = checkpoint},
    {.name = "tmu-ra",
     .summary = "agld: time-based mixture update, random access",
     .hparams = periodic_hp,
     .n_hparams = sizeof periodic_hp / sizeof periodic_hp[0],
     .columns = columns,
     .n_columns = 1,
     .state_size = sizeof(agld),
     .flags = DRIFT_SAMPLER_OWN_ESTIMATES,
     .init = init_tmu_ra,
     .step = step,
     .checkpoint = checkpoint},
    {.name = "tmu-rr",
     .summary = "agld: time-based mixture update, random reshuffle",
     .hparams = periodic_hp,
     .n_hparams = sizeof periodic_hp / sizeof periodic_hp[0],
     .columns = columns,
     .n_columns = 1,
     .state_size = sizeof(agld),
     .flags = DRIFT_SAMPLER_OWN_ESTIMATES,
     .init = init_tmu_rr,
     .step = step,
     .checkpoint = checkpoint},
    {.name = "tmu-ca",
     .summary = "agld: time-based mixture update, cyclic access",
     .hparams = periodic_hp,
     .n_hparams = sizeof periodic_hp / sizeof periodic_hp[0],
     .columns = columns,
     .n_columns = 1,
     .state_size = sizeof(agld),
     .flags = DRIFT_SAMPLER_OWN_ESTIMATES,
     .init = init_tmu_ca,
     .step = step,
     .checkpoint = checkpoint},
    {.name = "svrg-ld+",
     .summary = "SVRG Langevin with subsampled snapshot gradients "
                "(Zou, Xu & Gu 2018)",
     .hparams = plus_hp,
     .n_hparams = sizeof plus_hp / sizeof plus_hp[0],
     .columns = columns,
     .n_columns = 1,
     .state_size = sizeof(agld),
     .flags = DRIFT_SAMPLER_OWN_ESTIMATES,
     .init = init_svrg_plus,
     .step = step,
     .checkpoint = checkpoint},
};

static const drift_sampler_plugin plugin = {
    DRIFT_SAMPLER_PLUGIN_HEADER,
    sizeof samplers / sizeof samplers[0],
    samplers,
};

DRIFT_EXPORT const drift_sampler_plugin *drift_sampler_entry(void)
{
    return &plugin;
}
