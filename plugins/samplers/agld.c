/* agld.c: aggregated-gradient Langevin dynamics (Zhang, Xie, Shen, Zhao,
 * Zhou and Qian, AAAI 2020), the whole family as Langevin steps over the
 * engine's gradient estimators:
 *
 *     g_k     = grad U_prior(x_k) + sum_i alpha_i
 *               + (N/n) sum_{i in S_k} (grad U_i(x_k) - alpha_i)
 *     x_{k+1} = x_k - eta g_k + sqrt(2 eta) xi_k,     xi_k ~ N(0, I),
 *
 * where S_k is the next minibatch of the engine's access stream (random
 * access, random reshuffle or cyclic: --access, or fixed by the sampler's
 * name) and the snapshots alpha_i are kept by one of three strategies,
 * each an estimator of the engine (drift/sampler.h,
 * drift_estimator_services), which any minibatch integrator can use with
 * --gradient (sghmc --gradient saga, ...):
 *   ptu  periodic total update (SVRG-LD): --gradient svrg, every D
 *        estimates alpha_i = grad U_i(x_k) for all i;
 *   ppu  per-iteration partial update (SAGA-LD): --gradient saga, after
 *        each step alpha_i = grad U_i(x_k) for the rows of S_k;
 *   tmu  time-based mixture update: --gradient tmu, both.
 * Also svrg-ld+ (Zou, Xu and Gu, UAI 2018): ptu whose snapshot gradient is
 * estimated from B rows instead of N.  This plugin is the step and the
 * names: svrg-ld is `sgld --gradient svrg --access ra` with the paper's
 * parameter names (eta for sgld's h) and the age__ column.
 *
 * D defaults to ceil(N/n), one data pass; the paper's Theorem 3 takes
 * D = N, which --set D=0 gives (or D = the number of rows).
 *
 * Iteration 0 (and every D-th for ptu, tmu, svrg-ld+) is a renewal: the
 * snapshots are taken at x_k, so the minibatch correction is exactly zero
 * and the engine draws no minibatch; the step uses the renewed sum.  The
 * paper's Algorithm 1 draws S_k on these iterations too; drift does not,
 * on purpose: with every alpha_i = grad U_i(x_k) the correction is zero
 * for any S_k, so the draw changes nothing in the step.  Its only effect
 * would be on the access stream: under rr and ca it would use up n rows of
 * the pass in a step where they contribute nothing (under ca with D = N/n,
 * N a multiple of n, always rows 0..n-1, which would then never enter a
 * correction); under ra the draws are independent, so skipping one
 * changes no law.  The stream therefore advances on ordinary iterations
 * only, and under rr and ca every row is drawn by an ordinary iteration
 * once per pass (tests/samplers/test_agld.c checks the rows drawn).  Every
 * per-datum evaluation, renewals included, goes through the engine's
 * counted oracles.  Not an exact sampler: its bias grows with eta.
 *
 * Where the run has a mode (the engine's plan for these samplers at their
 * defaults finds one), the step is preconditioned by the engine's
 * preconditioner of kind mode, the inverse diagonal curvature there,
 *     x_{k+1} = x_k - eta P g_k + sqrt(2 eta) P^(1/2) xi_k,
 * which leaves the same target invariant as eta -> 0 (P is constant) and
 * lets one eta suit parameters whose posterior sds differ by orders of
 * magnitude. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <drift/sampler.h>

DRIFT_PLUGIN_LICENSE("MIT");

enum { SNAP_PTU = 0, SNAP_PPU = 1, SNAP_TMU = 2, SNAP_PLUS = 3 };
enum { ACCESS_AUTO = -1 };

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
    int snap;
    double eta, noise;
    size_t d, n;
    const drift_precond_services *pre;
    const drift_estimator_services *est;
    double *g, *xi, *Pg, *Pxi;
} agld;

static int per_datum(int snap)
{
    return snap == SNAP_PPU || snap == SNAP_TMU;
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
    size_t N = svc->n_rows(c);
    s->n = svc->batch(c);
    if (N == 0) {
        snprintf(msg, sizeof msg,
                 "sampler %s needs a model with data rows (its snapshots are "
                 "per datum); this model has none",
                 v->name);
        return svc->fail(c, msg);
    }
    if (s->n == 0 || s->n > N)
        s->n = N;
    DRIFT_NEED_TABLE(s->pre, drift_precond_services, svc, c,
                     DRIFT_TABLE_PRECOND, 1, "agld");
    DRIFT_NEED_TABLE(s->est, drift_estimator_services, svc, c,
                     DRIFT_TABLE_ESTIMATOR, 1, "agld");
    int rc = fix_access(v, svc, c);
    if (rc)
        return rc;
    drift_estimator_request r = {DRIFT_GRADIENT_SVRG, 0, 0, 0};
    r.kind = v->snap == SNAP_PPU   ? DRIFT_GRADIENT_SAGA
             : v->snap == SNAP_TMU ? DRIFT_GRADIENT_TMU
                                   : DRIFT_GRADIENT_SVRG;
    /* D unset: one data pass (the engine's default); D = 0: N, Theorem
     * 3's choice. */
    if (!isnan(v->D))
        r.period = v->D == 0 ? (uint64_t)N : (uint64_t)v->D;
    if (v->snap == SNAP_PLUS) {
        size_t B;
        if (isnan(v->B)) {
            B = (N + 9) / 10;
            B = B < s->n ? s->n : B;
        } else {
            B = (size_t)v->B;
        }
        if (B > N) {
            snprintf(msg, sizeof msg,
                     "sampler %s: B = %zu is more than the %zu data rows; "
                     "give B <= %zu",
                     v->name, B, N, N);
            return svc->fail(c, msg);
        }
        /* B = N is svrg-ld's exact snapshot; below it, estimated. */
        r.snapshot_rows = B;
    }
    r.track_age = v->check_age && per_datum(v->snap);
    /* The step's vectors first and the table last, so that a refusal
     * under --max-memory names the whole size. */
    size_t bytes = s->d * sizeof(double);
    s->g = svc->alloc(c, bytes);
    s->xi = svc->alloc(c, bytes);
    s->Pg = svc->alloc(c, bytes);
    s->Pxi = svc->alloc(c, bytes);
    if (!s->g || !s->xi || !s->Pg || !s->Pxi)
        return DRIFT_ENOMEM;
    if ((rc = s->est->use(c, &r)))
        return rc;
    /* The mode's diagonal curvature where the run found a mode (the
     * plan's), else none. */
    int mode = svc->mode(c, NULL, NULL) == DRIFT_OK;
    return s->pre->use(c, mode ? DRIFT_PRECOND_MODE : DRIFT_PRECOND_UNIT,
                       s->eta);
}

static int step(void *state, const drift_services *svc, drift_chain *c,
                double *x)
{
    agld *s = state;
    double U;
    int rc = svc->grad_batch(c, x, s->n, s->g, &U, NULL);
    if (rc)
        return rc;
    double age = s->est->age(c);
    svc->normal_fill(c, s->d, s->xi);
    s->pre->mul(c, s->g, s->Pg);
    s->pre->sqrt_mul(c, s->xi, s->Pxi);
    for (size_t j = 0; j < s->d; j++) {
        x[j] += -s->eta * s->Pg[j] + s->noise * s->Pxi[j];
        if (!isfinite(x[j])) {
            char msg[256];
            snprintf(msg, sizeof msg,
                     "%s: the state became non-finite at iteration %llu "
                     "(coordinate %zu); the step size eta = %g is too large "
                     "for this target",
                     snap_name(s->snap),
                     (unsigned long long)svc->iteration(c), j + 1, s->eta);
            return svc->fail(c, msg);
        }
    }
    /* lp__ is the estimate at the point the step started from. */
    return svc->emit_draw(c, x, -U, &age);
}

/* A step reads only x (the engine's); the snapshots, the table and the
 * preconditioner are the engine's, saved in its part of the checkpoint. */
static int checkpoint(void *state, const drift_services *svc, drift_chain *c)
{
    (void)state;
    (void)svc;
    (void)c;
    return DRIFT_OK;
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
     .flags = DRIFT_SAMPLER_PICKS_ESTIMATOR,
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
     .flags = DRIFT_SAMPLER_PICKS_ESTIMATOR,
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
     .flags = DRIFT_SAMPLER_PICKS_ESTIMATOR,
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
     .flags = DRIFT_SAMPLER_PICKS_ESTIMATOR,
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
     .flags = DRIFT_SAMPLER_PICKS_ESTIMATOR,
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
     .flags = DRIFT_SAMPLER_PICKS_ESTIMATOR,
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
     .flags = DRIFT_SAMPLER_PICKS_ESTIMATOR,
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
     .flags = DRIFT_SAMPLER_PICKS_ESTIMATOR,
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
     .flags = DRIFT_SAMPLER_PICKS_ESTIMATOR,
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
     .flags = DRIFT_SAMPLER_PICKS_ESTIMATOR,
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
     .flags = DRIFT_SAMPLER_PICKS_ESTIMATOR,
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
     .flags = DRIFT_SAMPLER_PICKS_ESTIMATOR,
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
     .flags = DRIFT_SAMPLER_PICKS_ESTIMATOR,
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
