/* bps.c: the bouncy particle sampler (Bouchard-Cote, Vollmer and Doucet,
 * JASA 2018) with full gradients: a particle moves in straight lines at
 * unit speed, bounces off the level sets of U at the events of a Poisson
 * process of rate [v . grad U(x + v t)]+, and takes a fresh direction at
 * the events of an independent process of rate `refresh`.  Not for data
 * sets too large for a full gradient per event: that is sbps.
 *
 * Events are simulated by thinning (the engine's thin service).  The bound:
 *
 *   grid (default)  over a horizon of length H from the current point, the
 *                   rate is evaluated at grid+1 evenly spaced times t_j (the
 *                   one at t_0 is usually known already); on [t_j, t_j+1]
 *                   the bound is safety * max(rate(t_j), rate(t_j+1)), a step
 *                   function.  Past the horizon the particle stops there and
 *                   a new grid is built.  H adapts: halved after an event in
 *                   the first cell, doubled after a horizon with no event.
 *                   The bound is exact whenever the rate is monotone on each
 *                   cell, in particular for every log-concave target, where
 *                   v . grad U(x + v t) is nondecreasing in t; otherwise a
 *                   peak inside a cell may exceed it, and such proposals are
 *                   counted in bound_violations__ (the event is then
 *                   accepted, a small bias).
 *   lipschitz = L   the user vouches that grad U is L-Lipschitz (|v|^2 L
 *                   bounds v . Hessian . v): the line rate(0) + L t is an
 *                   exact bound.  With gradient noise whose directional size
 *                   |u . (g~ - grad U)| is at most noise_bound for unit u,
 *                   the line rate~(0) + 2 noise_bound + L t bounds every
 *                   noisy rate (the paper's Theorem 1 setting).
 *
 * A bounce reflects v in the hyperplane normal to the gradient evaluated at
 * the accepted proposal: v - 2 (v . g) g / |g|^2.  A refresh draws v
 * uniformly on the unit sphere (the velocity law is uniform on the sphere
 * throughout, so trajectory time is distance travelled).
 *
 * One iteration is one segment: up to a bounce, a refresh or a horizon's
 * end.  Each rate evaluation is one full gradient (N per-datum
 * evaluations); lp__ is NaN (no value is known along a segment). */
#include <math.h>
#include <string.h>

#include <drift/sampler.h>

DRIFT_PLUGIN_LICENSE("MIT");

enum { HP_REFRESH, HP_HORIZON, HP_GRID, HP_SAFETY, HP_LIPSCHITZ,
       HP_NOISE_BOUND };

typedef struct bps {
    size_t d;
    double refresh, horizon, safety, lipschitz, noise_bound;
    size_t grid;
    double *x, *v;        /* position and velocity */
    double *g;            /* grad U at x, when have_g */
    int have_g;
    double *xt, *gt;      /* a proposal point and its gradient */
    double *gend;         /* gradient at the grid's last point */
    double *rates;        /* grid + 1 rate values */
    double *kt, *kr;      /* 2 grid knots */
    uint64_t bounces;
    drift_thin_stats st;
    const drift_services *svc;
    drift_chain *c;
} bps;

static double dot(const double *a, const double *b, size_t n)
{
    double s = 0;
    for (size_t k = 0; k < n; k++)
        s += a[k] * b[k];
    return s;
}

/* v uniform on the unit sphere. */
static void draw_direction(bps *s)
{
    double n2;
    do {
        s->svc->normal_fill(s->c, s->d, s->v);
        n2 = dot(s->v, s->v, s->d);
    } while (!(n2 > 0));
    double inv = 1.0 / sqrt(n2);
    for (size_t k = 0; k < s->d; k++)
        s->v[k] *= inv;
}

/* The rate v . grad U at x + v t, leaving the gradient in gt. */
static int rate_at(void *user, double t, double *rate)
{
    bps *s = user;
    for (size_t k = 0; k < s->d; k++)
        s->xt[k] = s->x[k] + s->v[k] * t;
    int rc = s->svc->grad_full(s->c, s->xt, s->gt, NULL);
    if (rc)
        return rc;
    *rate = dot(s->v, s->gt, s->d);
    return DRIFT_OK;
}

static int init(void *state, const drift_services *svc, drift_chain *c,
                const double *hp, double *theta)
{
    bps *s = state;
    s->svc = svc;
    s->c = c;
    s->d = svc->dim(c);
    s->refresh = hp[HP_REFRESH];
    s->horizon = hp[HP_HORIZON];
    s->grid = (size_t)hp[HP_GRID];
    s->safety = hp[HP_SAFETY];
    s->lipschitz = hp[HP_LIPSCHITZ];
    s->noise_bound = hp[HP_NOISE_BOUND];
    if (isnan(s->lipschitz) && s->noise_bound > 0)
        svc->warn(c, "bps: noise_bound is only used with lipschitz (the "
                     "exact linear bound); it is ignored");
    size_t d = s->d, vec = d * sizeof(double);
    s->x = svc->alloc(c, vec);
    s->v = svc->alloc(c, vec);
    s->g = svc->alloc(c, vec);
    s->xt = svc->alloc(c, vec);
    s->gt = svc->alloc(c, vec);
    s->gend = svc->alloc(c, vec);
    s->rates = svc->alloc(c, (s->grid + 1) * sizeof(double));
    s->kt = svc->alloc(c, 2 * s->grid * sizeof(double));
    s->kr = svc->alloc(c, 2 * s->grid * sizeof(double));
    if (!s->x || !s->v || !s->g || !s->xt || !s->gt || !s->gend ||
        !s->rates || !s->kt || !s->kr)
        return DRIFT_ENOMEM;
    memcpy(s->x, theta, vec);
    draw_direction(s);
    return DRIFT_OK;
}

/* The grid bound over [0, T] from the current point, into *b. */
static int grid_bound(bps *s, double T, drift_rate_bound *b)
{
    size_t n = s->grid;
    int rc;
    if (s->have_g) {
        s->rates[0] = dot(s->v, s->g, s->d);
    } else if ((rc = rate_at(s, 0, &s->rates[0]))) {
        return rc;
    }
    for (size_t j = 1; j <= n; j++)
        if ((rc = rate_at(s, T * (double)j / (double)n, &s->rates[j])))
            return rc;
    memcpy(s->gend, s->gt, s->d * sizeof(double));
    for (size_t j = 0; j < n; j++) {
        double lo = s->rates[j] > 0 ? s->rates[j] : 0;
        double hi = s->rates[j + 1] > 0 ? s->rates[j + 1] : 0;
        double top = s->safety * (lo > hi ? lo : hi);
        s->kt[2 * j] = T * (double)j / (double)n;
        s->kt[2 * j + 1] = T * (double)(j + 1) / (double)n;
        s->kr[2 * j] = s->kr[2 * j + 1] = top;
    }
    s->kt[2 * n - 1] = T; /* exactly, whatever the rounding above */
    *b = (drift_rate_bound){0, 0, 2 * n, s->kt, s->kr, T};
    return DRIFT_OK;
}

static void move(bps *s, double t)
{
    for (size_t k = 0; k < s->d; k++)
        s->x[k] += s->v[k] * t;
}

static int emit(bps *s, double duration)
{
    double diag[3] = {(double)s->bounces, (double)s->st.proposals,
                      (double)s->st.violations};
    return s->svc->emit_segment(s->c, s->x, s->v, duration, NAN, diag);
}

static int step(void *state, const drift_services *svc, drift_chain *c,
                double *theta)
{
    bps *s = state;
    (void)c;
    int rc;
    double t_ref = s->refresh > 0 ? svc->exponential(s->c) / s->refresh
                                  : INFINITY;
    drift_rate_bound b;
    double T; /* where the bound ends */
    int exact = !isnan(s->lipschitz);
    if (exact) {
        if (!s->have_g) {
            if ((rc = svc->grad_full(s->c, s->x, s->g, NULL)))
                return rc;
            s->have_g = 1;
        }
        double a = dot(s->v, s->g, s->d) + 2 * s->noise_bound;
        b = (drift_rate_bound){a, s->lipschitz, 0, NULL, NULL, t_ref};
        T = t_ref;
    } else {
        T = s->horizon < t_ref ? s->horizon : t_ref;
        if ((rc = grid_bound(s, T, &b)))
            return rc;
    }
    double te;
    if ((rc = svc->thin(s->c, &b, rate_at, s, &te, NULL, &s->st)))
        return rc;
    if (isfinite(te)) {
        /* A bounce at te, off the gradient the proposal computed there. */
        s->bounces++;
        if ((rc = emit(s, te)))
            return rc;
        move(s, te);
        double vg = dot(s->v, s->gt, s->d), gg = dot(s->gt, s->gt, s->d);
        if (gg > 0)
            for (size_t k = 0; k < s->d; k++)
                s->v[k] -= 2 * vg / gg * s->gt[k];
        memcpy(s->g, s->gt, s->d * sizeof(double));
        s->have_g = 1;
        if (!exact && te < T / (double)s->grid && s->horizon > 1e-12)
            s->horizon *= 0.5;
    } else {
        if (!isfinite(T))
            return svc->fail(s->c, "bps: no bounce will ever come along "
                                   "this direction and refresh = 0: the "
                                   "target is improper along a ray; set "
                                   "refresh > 0");
        if ((rc = emit(s, T)))
            return rc;
        move(s, T);
        if (exact) {
            s->have_g = 0;
        } else {
            /* The grid's last point is where the particle now is. */
            memcpy(s->g, s->gend, s->d * sizeof(double));
            s->have_g = 1;
        }
        if (T == t_ref)
            draw_direction(s);
        else if (s->horizon < 1e12)
            s->horizon *= 2;
    }
    memcpy(theta, s->x, s->d * sizeof(double));
    return DRIFT_OK;
}

/* The particle (x, v), the gradient at x and whether it is known, the
 * adapted horizon and the counters the columns report.  xt, gt, gend,
 * rates and the knots are rewritten by every step before they are read;
 * svc and c are set again by init. */
static int checkpoint(void *state, const drift_services *svc, drift_chain *c)
{
    bps *s = state;
    size_t vec = s->d * sizeof(double);
    int rc = svc->ckpt_bytes(c, s->x, vec);
    if (!rc)
        rc = svc->ckpt_bytes(c, s->v, vec);
    if (!rc)
        rc = svc->ckpt_bytes(c, s->g, vec);
    if (!rc)
        rc = svc->ckpt_bytes(c, &s->have_g, sizeof s->have_g);
    if (!rc)
        rc = svc->ckpt_bytes(c, &s->horizon, sizeof s->horizon);
    if (!rc)
        rc = svc->ckpt_bytes(c, &s->bounces, sizeof s->bounces);
    if (!rc)
        rc = svc->ckpt_bytes(c, &s->st, sizeof s->st);
    return rc;
}

static const drift_hparam hparams[] = {
    [HP_REFRESH] = {"refresh", DRIFT_HP_REAL, 1.0, 0, INFINITY, 0, NULL,
                    "refresh rate: v ~ uniform on the unit sphere at rate "
                    "refresh (0: never; BPS then may not be ergodic)"},
    [HP_HORIZON] = {"horizon", DRIFT_HP_REAL, 1.0, 0, INFINITY,
                    DRIFT_HP_OPEN_LO, NULL,
                    "first length of the grid bound's horizon (then "
                    "adapted: halved/doubled)"},
    [HP_GRID] = {"grid", DRIFT_HP_INT, 5, 1, 1000, 0, NULL,
                 "grid cells per horizon: full gradients per bound"},
    [HP_SAFETY] = {"safety", DRIFT_HP_REAL, 1.1, 1, INFINITY, 0, NULL,
                   "factor on the grid maximum of each cell"},
    [HP_LIPSCHITZ] = {"lipschitz", DRIFT_HP_REAL, NAN, 0, INFINITY,
                      DRIFT_HP_OPEN_LO, NULL,
                      "L with |v.H.v| <= L|v|^2: exact linear bound "
                      "instead of the grid (auto: grid)"},
    [HP_NOISE_BOUND] = {"noise_bound", DRIFT_HP_REAL, 0, 0, INFINITY, 0,
                        NULL,
                        "with lipschitz: bound on |u.(noisy - true "
                        "gradient)|, |u| = 1"},
};

static const char *const columns[] = {"bounces__", "proposals__",
                                      "bound_violations__"};

static const drift_sampler samplers[] = {{
    .name = "bps",
    .summary = "bouncy particle sampler, full gradients, thinning against "
               "a grid or Lipschitz bound (Bouchard-Cote et al. 2018)",
    .hparams = hparams,
    .n_hparams = sizeof hparams / sizeof hparams[0],
    .columns = columns,
    .n_columns = sizeof columns / sizeof columns[0],
    .state_size = sizeof(bps),
    .flags = DRIFT_SAMPLER_CONTINUOUS | DRIFT_SAMPLER_FULL_DATA,
    .init = init,
    .step = step,
    .checkpoint = checkpoint,
}};

static const drift_sampler_plugin plugin = {
    DRIFT_SAMPLER_PLUGIN_HEADER,
    sizeof samplers / sizeof samplers[0],
    samplers,
};

DRIFT_EXPORT const drift_sampler_plugin *drift_sampler_entry(void)
{
    return &plugin;
}
