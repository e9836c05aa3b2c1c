/* runprobe.c: samplers that probe what ABI 2 promises a sampler, for
 * tests/engine/run/test_run.c.  For tests only: not installed.
 *
 *   overflow  random-walk Metropolis that, every other iteration, also
 *             asks an oracle (U_full, grad_full, grad_batch in turn) about
 *             a point where the density overflows (every coordinate
 *             1e300): each must say DRIFT_ENONFINITE with U = +inf, which
 *             it counts as a rejection (column rejected__) and goes on.
 *   phases    records every phase callback (chain, phase, iteration) in a
 *             log the test reads through runprobe_log(); asks for a
 *             diagonal metric and observes the point (t, 0, ...) at
 *             iteration t, so each window's estimate is a closed form.
 *             Columns: windows__ (WINDOW_END seen), stage__ (0 before
 *             warmup, 1 in it, 2 after), minv__ (M^-1 of coordinate 1),
 *             the run_info buffers, and the metric kind.  With
 *             metric=grad it asks for a diagonal metric, hands
 *             the metric sub-table's observe_grad the gradient (2, 0, ...) at the
 *             initial point from init, and the point (t, 0, ...) with
 *             the gradient (t/4, 0, ...) at iteration t: the closed forms
 *             are then M^-1[0] = 1/2 before the first window, 4 after
 *             each but the last, and the variance after the last.
 *             With metric=set it asks for a diagonal metric, observes
 *             nothing, and at each odd warmup iteration t sets M^-1[0]
 *             to t + 1 through the metric sub-table's set_diag: the
 *             engine's window ends must leave what was set.
 *   setup     a run-level setup spending `passes` full passes at 0 and
 *             leaving U(0) in a shared block; every chain reports it
 *             (shared__).
 *   precond   asks the engine's preconditioner sub-table for P of kind
 *             `kind` (h_eff 1) and hands it the point (t, 0, ...) and the
 *             gradient (g1, 0, ...) at iteration t, so each window's P
 *             is a closed form.  Columns: tables__ (1 when the sub-table
 *             lookup answers as promised: the table at its version, NULL
 *             for a newer version and for an unknown id), kind__, p1__
 *             and p2__ (P's first two diagonal entries, by mul), s1__
 *             ((P^(1/2) e_1)_1, by sqrt_mul). */
#include <math.h>
#include <string.h>

#include <drift/sampler.h>

/* ---- overflow ----------------------------------------------------------- */

typedef struct ovf {
    size_t d;
    double U, rejected;
    double *prop, *grad;
} ovf;

static int ovf_init(void *state, const drift_services *svc, drift_chain *c,
                    const double *hp, double *theta)
{
    (void)hp;
    ovf *s = state;
    s->d = svc->dim(c);
    s->prop = svc->alloc(c, s->d * sizeof(double));
    s->grad = svc->alloc(c, s->d * sizeof(double));
    if (!s->prop || !s->grad)
        return DRIFT_ENOMEM;
    return svc->U_full(c, theta, &s->U);
}

static int ovf_step(void *state, const drift_services *svc, drift_chain *c,
                    double *theta)
{
    ovf *s = state;
    uint64_t it = svc->iteration(c);
    double Up = 0;
    int rc;
    if (it % 2 == 0) {
        for (size_t k = 0; k < s->d; k++)
            s->prop[k] = 1e300;
        switch (it / 2 % 3) {
        case 0:
            rc = svc->U_full(c, s->prop, &Up);
            break;
        case 1:
            rc = svc->grad_full(c, s->prop, s->grad, &Up);
            break;
        default:
            rc = svc->grad_batch(c, s->prop, svc->batch(c), s->grad, &Up,
                                 NULL);
        }
        if (rc != DRIFT_ENONFINITE)
            return svc->fail(c, "overflow: an oracle at 1e300 did not say "
                                "DRIFT_ENONFINITE");
        if (!(Up == INFINITY))
            return svc->fail(c, "overflow: U is not +inf where the density "
                                "is not finite");
        s->rejected += 1;
    } else {
        for (size_t k = 0; k < s->d; k++)
            s->prop[k] = theta[k] + 0.05 * svc->normal(c);
        /* Outside the target's support: rejected too, but not counted. */
        if ((rc = svc->U_full(c, s->prop, &Up)) && rc != DRIFT_ENONFINITE)
            return rc;
        if (log(svc->uniform(c)) < s->U - Up) {
            memcpy(theta, s->prop, s->d * sizeof *theta);
            s->U = Up;
        }
    }
    return svc->emit_draw(c, theta, -s->U, &s->rejected);
}

static const char *const ovf_columns[] = {"rejected__"};

/* ---- phases ------------------------------------------------------------- */

enum { LOG_CHAINS = 8, LOG_EVENTS = 64 };

/* Per chain (ids 1..8): pairs (phase, iteration) as the callbacks came. */
static long phase_log[LOG_CHAINS][2 * LOG_EVENTS];
static size_t phase_n[LOG_CHAINS];

DRIFT_EXPORT const long *runprobe_log(unsigned chain_id, size_t *n)
{
    if (chain_id < 1 || chain_id > LOG_CHAINS) {
        *n = 0;
        return NULL;
    }
    *n = phase_n[chain_id - 1];
    return phase_log[chain_id - 1];
}

typedef struct ph {
    unsigned id;
    size_t d;
    int grad;               /* metric=grad: observe gradients too */
    int set;                /* metric=set: set M^-1 through set_diag */
    const drift_metric_services *mx; /* (metric=grad and set) */
    double windows, stage;
    double *point, *minv, *diag;
} ph;

static int ph_init(void *state, const drift_services *svc, drift_chain *c,
                   const double *hp, double *theta)
{
    (void)theta;
    ph *s = state;
    s->id = svc->chain_id(c);
    if (s->id <= LOG_CHAINS)
        phase_n[s->id - 1] = 0;
    s->d = svc->dim(c);
    s->point = svc->alloc(c, 2 * s->d * sizeof(double));
    s->minv = svc->alloc(c, s->d * s->d * sizeof(double));
    s->diag = svc->alloc(c, 7 * sizeof(double));
    if (!s->point || !s->minv || !s->diag)
        return DRIFT_ENOMEM;
    /* The fourth and fifth choices, grad and set, are diagonal metrics. */
    s->grad = (int)hp[0] == 3;
    s->set = (int)hp[0] == 4;
    int rc = svc->metric_use(c, s->grad || s->set
                                    ? DRIFT_METRIC_DIAG
                                    : (drift_metric_kind)(int)hp[0]);
    if (rc || !(s->grad || s->set) || s->d == 0)
        return rc;
    s->mx = svc->table(c, DRIFT_TABLE_METRIC, s->set ? 2 : 1);
    if (!s->mx)
        return svc->fail(c, "phases probe: no metric sub-table");
    if (s->set)
        return DRIFT_OK;
    double *g = s->point + s->d;
    memset(g, 0, s->d * sizeof(double));
    g[0] = 2;
    s->mx->observe_grad(c, theta, g);
    return DRIFT_OK;
}

static void ph_phase(void *state, const drift_services *svc, drift_chain *c,
                     drift_phase phase)
{
    ph *s = state;
    if (s->id <= LOG_CHAINS && phase_n[s->id - 1] < LOG_EVENTS) {
        long *e = phase_log[s->id - 1] + 2 * phase_n[s->id - 1]++;
        e[0] = (long)phase;
        e[1] = (long)svc->iteration(c);
    }
    if (phase == DRIFT_PHASE_WARMUP_START)
        s->stage = 1;
    else if (phase == DRIFT_PHASE_WINDOW_END)
        s->windows += 1;
    else if (phase == DRIFT_PHASE_WARMUP_END) {
        s->stage = 2;
        svc->set_adapted(c, 0.25);
    }
}

static int ph_step(void *state, const drift_services *svc, drift_chain *c,
                   double *theta)
{
    ph *s = state;
    memset(s->point, 0, 2 * s->d * sizeof(double));
    s->point[0] = (double)svc->iteration(c);
    if (s->set) {
        uint64_t t = svc->iteration(c);
        if (s->d > 0 && svc->in_warmup(c) && t % 2 == 1) {
            double *inv = s->point + s->d;
            for (size_t k = 0; k < s->d; k++)
                inv[k] = 1;
            inv[0] = (double)t + 1;
            int rc = s->mx->set_diag(c, inv);
            if (rc)
                return rc;
        }
    } else if (s->grad) {
        s->point[s->d] = s->point[0] / 4;
        s->mx->observe_grad(c, s->point, s->point + s->d);
    } else {
        svc->metric_observe(c, s->point);
    }
    const drift_run_info *ri = svc->run_info(c);
    s->minv[0] = 1;
    svc->metric_get(c, s->minv);
    double *g = s->diag;
    g[0] = s->windows;
    g[1] = s->stage;
    g[2] = s->minv[0];
    g[3] = (double)ri->init_buffer;
    g[4] = (double)ri->term_buffer;
    g[5] = (double)ri->base_window;
    g[6] = (double)svc->metric_kind(c);
    return svc->emit_draw(c, theta, 0.0, g);
}

static const char *const ph_columns[] = {"windows__", "stage__", "minv__",
                                         "init_buffer__", "term_buffer__",
                                         "base_window__", "metric__"};

static const drift_hparam ph_hparams[] = {
    {"metric", DRIFT_HP_ENUM, 1, 0, 0, 0, "unit|diag|dense|grad|set",
     "the metric to ask for"},
};

/* ---- setup -------------------------------------------------------------- */

static int su_setup(const drift_services *svc, drift_chain *c,
                    const double *hp, void **shared)
{
    size_t d = svc->dim(c);
    double *block = svc->alloc(c, (d + 1) * sizeof(double));
    double *zero = svc->alloc(c, 2 * d * sizeof(double));
    if (!block || !zero)
        return DRIFT_ENOMEM;
    for (int k = 0; k < (int)hp[0]; k++) {
        int rc = svc->grad_full(c, zero, zero + d, &block[0]);
        if (rc)
            return rc;
    }
    *shared = block;
    return DRIFT_OK;
}

typedef struct su {
    double value;
} su;

static int su_init(void *state, const drift_services *svc, drift_chain *c,
                   const double *hp, double *theta)
{
    (void)hp;
    (void)theta;
    su *s = state;
    const double *block = svc->shared(c);
    if (!block)
        return svc->fail(c, "setup: no shared block");
    s->value = block[0];
    return DRIFT_OK;
}

static int su_step(void *state, const drift_services *svc, drift_chain *c,
                   double *theta)
{
    su *s = state;
    return svc->emit_draw(c, theta, -s->value, &s->value);
}

static const char *const su_columns[] = {"shared__"};

static const drift_hparam su_hparams[] = {
    {"passes", DRIFT_HP_INT, 3, 0, 100, 0, NULL,
     "full passes the run-level setup spends"},
};

/* ---- precond ------------------------------------------------------------ */

typedef struct pc {
    const drift_precond_services *pre;
    size_t d;
    double tables, g1;
    double *point, *grad, *e, *out, *diag;
} pc;

static int pc_init(void *state, const drift_services *svc, drift_chain *c,
                   const double *hp, double *theta)
{
    (void)theta;
    pc *s = state;
    s->pre = svc->table(c, DRIFT_TABLE_PRECOND, 1);
    if (!s->pre)
        return svc->fail(c, "precond probe: no preconditioner sub-table");
    s->tables =
        s->pre->header.id == DRIFT_TABLE_PRECOND &&
        s->pre->header.struct_size >= sizeof(drift_precond_services) &&
        !svc->table(c, DRIFT_TABLE_PRECOND, s->pre->header.version + 1) &&
        !svc->table(c, 0xdead, 1);
    s->g1 = hp[1];
    s->d = svc->dim(c);
    size_t bytes = s->d * sizeof(double);
    s->point = svc->alloc(c, bytes);
    s->grad = svc->alloc(c, bytes);
    s->e = svc->alloc(c, bytes);
    s->out = svc->alloc(c, bytes);
    s->diag = svc->alloc(c, 5 * sizeof(double));
    if (!s->point || !s->grad || !s->e || !s->out || !s->diag)
        return DRIFT_ENOMEM;
    return s->pre->use(c, (drift_precond_kind)(int)hp[0], 1.0);
}

/* (P e_k)_k */
static double pc_entry(pc *s, drift_chain *c, size_t k, int root)
{
    memset(s->e, 0, s->d * sizeof(double));
    s->e[k] = 1;
    if (root)
        s->pre->sqrt_mul(c, s->e, s->out);
    else
        s->pre->mul(c, s->e, s->out);
    return s->out[k];
}

static int pc_step(void *state, const drift_services *svc, drift_chain *c,
                   double *theta)
{
    pc *s = state;
    memset(s->point, 0, s->d * sizeof(double));
    memset(s->grad, 0, s->d * sizeof(double));
    s->point[0] = (double)svc->iteration(c);
    s->grad[0] = s->g1;
    s->pre->observe(c, s->point, s->grad);
    double *g = s->diag;
    g[0] = s->tables;
    g[1] = (double)s->pre->kind(c);
    g[2] = pc_entry(s, c, 0, 0);
    g[3] = s->d > 1 ? pc_entry(s, c, 1, 0) : NAN;
    g[4] = pc_entry(s, c, 0, 1);
    return svc->emit_draw(c, theta, 0.0, g);
}

static const char *const pc_columns[] = {"tables__", "kind__", "p1__",
                                         "p2__", "s1__"};

static const drift_hparam pc_hparams[] = {
    {"kind", DRIFT_HP_ENUM, 0, 0, 0, 0, "auto|unit|mode|warmup|dense",
     "the preconditioner to ask for"},
    {"g1", DRIFT_HP_REAL, 0, -INFINITY, INFINITY, 0, NULL,
     "the gradient's first coordinate handed to observe"},
};

static const drift_sampler samplers[] = {
    {
        .name = "overflow",
        .summary = "rejects proposals whose density overflows (tests)",
        .columns = ovf_columns,
        .n_columns = 1,
        .state_size = sizeof(ovf),
        .init = ovf_init,
        .step = ovf_step,
    },
    {
        .name = "phases",
        .summary = "records phase callbacks and the metric (tests)",
        .hparams = ph_hparams,
        .n_hparams = 1,
        .columns = ph_columns,
        .n_columns = sizeof ph_columns / sizeof ph_columns[0],
        .state_size = sizeof(ph),
        .init = ph_init,
        .step = ph_step,
        .phase = ph_phase,
    },
    {
        .name = "setup",
        .summary = "a run-level setup shared by every chain (tests)",
        .hparams = su_hparams,
        .n_hparams = 1,
        .columns = su_columns,
        .n_columns = 1,
        .state_size = sizeof(su),
        .init = su_init,
        .step = su_step,
        .setup = su_setup,
    },
    {
        .name = "precond",
        .summary = "the engine's preconditioner sub-table (tests)",
        .hparams = pc_hparams,
        .n_hparams = 2,
        .columns = pc_columns,
        .n_columns = sizeof pc_columns / sizeof pc_columns[0],
        .state_size = sizeof(pc),
        .init = pc_init,
        .step = pc_step,
    },
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
