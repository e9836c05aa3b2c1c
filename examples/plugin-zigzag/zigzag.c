/* zigzag.c: the Zig-Zag process with subsampling (Bierkens, Fearnhead and
 * Roberts, "The Zig-Zag process and super-efficient sampling for Bayesian
 * analysis of big data", Annals of Statistics 2019), as a drift sampler
 * plugin built out of tree against drift's installed headers alone.  Not
 * for data-free models (it subsamples rows; use bps).
 *
 * The process.  A particle at x in R^d moves with velocity theta in
 * {-1, +1}^d; coordinate i's velocity flips at the events of a Poisson
 * process of rate lambda_i = E_B [theta_i E_i^B(x)]+ + refresh, where E^B
 * is an unbiased minibatch estimate of grad U (B a fresh minibatch of
 * --batch rows at every evaluation).  Since lambda_i(x, theta) -
 * lambda_i(x, F_i theta) = theta_i d_i U(x), the process keeps exp(-U)
 * (times the uniform law of theta) invariant whatever the estimate's
 * variance: subsampling costs mixing, never exactness.
 *
 * Estimates, with U^j = U_prior / N + U_j the share of datum j and x* a
 * reference point where grad U(x*) is known:
 *   cv = 1 (ZZ-CV, default)  E_i = d_i U(x*) + d_i U_prior(x) - d_i U_prior(x*)
 *                                  + (N/n) sum_{j in B} [d_i U_j(x) - d_i U_j(x*)]
 *   cv = 0 (ZZ-SS)           E_i = d_i U_prior(x) + (N/n) sum_{j in B} d_i U_j(x)
 * The per-row partial derivatives d_i U_j are the engine's directional
 * derivatives along e_i (jvp_rows), each counted as one per-datum
 * evaluation; ZZ-CV evaluates each row at x and at x* (2n per proposal).
 *
 * The bound.  Suppose every share's partial derivatives are L-Lipschitz in
 * the sup norm, |d_i U^j(x) - d_i U^j(y)| <= L |x - y|_inf (for the
 * Gaussian model L = 1/sigma^2; for logistic regression L = max_j,i
 * |x_ji| |x_j|_1 / 4 + 1/(s^2 N)).  Along x + theta t the sup-norm distance
 * to x* grows at most like r + t (r = |x - x*|_inf), so
 *   cv = 1:  [theta_i E_i]+ <= [theta_i d_i U(x*)]+ + N L (r + t)
 *   cv = 0:  [theta_i E_i]+ <= max_j |N d_i U^j(x*)| + N L (r + t)
 * for every minibatch: linear bounds a_i + b t, exact, with b = N L.
 * Events are proposed from the sum of the d bounds, a single line A + B t,
 * through the engine's thin service; at a proposal at time t, coordinate i
 * is chosen with probability (a_i + b t) / (A + B t) and the rate handed
 * to thin is lambda_i (A + B t) / (a_i + b t), so that thin's acceptance
 * probability is lambda_i / (a_i + b t), the Zig-Zag's.
 *
 *   lipschitz = L     the bound above with the user's L: exact; any
 *                     proposal above it is a bound violation (counted in
 *                     bound_violations__), which with a valid L never
 *                     happens.
 *   lipschitz unset   a statistical bound: L is replaced by safety * L^,
 *                     L^ the smallest constant that covers every minibatch
 *                     row seen so far (the ratio of each row's deviation
 *                     to the distance from x*; started by a pilot
 *                     difference at x*).  Each proposal updates L^ and
 *                     revises the bound for later times (adaptive
 *                     thinning).  Rows the bound fails to cover are bound
 *                     violations: the event is then accepted with
 *                     probability 1, a bias that safety controls and the
 *                     column reports, as sbps does.  Used because drift
 *                     cannot know a model's Lipschitz constant; for the
 *                     Gaussian model the ratio is exactly 1/sigma^2 and
 *                     the bound is exact from the first proposal.
 *
 * The reference point x* is the initial point; with recentre = 1 (the
 * default) it moves, during warmup only, to the time average of the
 * trajectory since its last move, at warmup iterations 16, 32, 64, ...
 * and once when warmup ends (one data pass each: grad U(x*), or every
 * row's partial derivatives for cv = 0).  ZZ-CV is efficient only when x*
 * is near the mode, at distance O(N^-1/2): give --warmup.
 *
 * One iteration is one segment, up to a switch.  Draws come from the
 * engine's segment path (emit_segment, as bps): --thin is a time step, or
 * --emit segments writes the trajectory.  lp__ is NaN.  Columns:
 * switches__, proposals__, bound_violations__, and lipschitz__, the
 * constant the bound used (L, or safety * L^). */
#include <math.h>
#include <string.h>

#include <drift/sampler.h>

DRIFT_PLUGIN_LICENSE("MIT");

enum { HP_LIPSCHITZ, HP_SAFETY, HP_CV, HP_REFRESH, HP_RECENTRE };

#define FIRST_RECENTRE 16   /* warmup iteration of the first move of x* */
#define PASS_CHUNK 256      /* rows per call in a full per-row pass */

typedef struct zigzag {
    const drift_services *svc;
    drift_chain *c;
    size_t d, N, n;
    int cv, recentre, exact;
    double L_user, safety, refresh;
    double L_hat;           /* statistical mode: the smallest L seen */
    double *x, *th;         /* position and velocity (+-1) */
    double *xs;             /* reference point x* */
    double *gs, *gps;       /* grad U(x*), grad U_prior(x*) */
    double *ms;             /* cv = 0: max_j |N d_i U^j(x*)| */
    double *a;              /* per-coordinate bound intercepts */
    double b;               /* their common slope N L */
    double r0;              /* |x - x*|_inf at the segment's start */
    drift_rate_bound bound; /* sum of the d bounds, in the call's time */
    double *xt, *gp, *e;    /* a proposal's point, prior gradient, e_i */
    size_t *rows;           /* a minibatch (or a chunk of a full pass) */
    double *q, *qs;         /* partials at xt and at x* */
    double *chunk;          /* PASS_CHUNK x d per-row gradients */
    size_t i_prop;          /* coordinate of the last proposal */
    /* warmup: the trajectory's time integral since x* last moved */
    double *xsum;
    double tsum;
    uint64_t next_recentre;
    int warm;
    uint64_t switches;
    drift_thin_stats st;
} zigzag;

static double sup_dist(const double *u, const double *v, size_t d)
{
    double m = 0;
    for (size_t k = 0; k < d; k++) {
        double z = fabs(u[k] - v[k]);
        if (z > m)
            m = z;
    }
    return m;
}

/* The Lipschitz constant the bound uses. */
static double bound_L(const zigzag *s)
{
    return s->exact ? s->L_user : s->safety * s->L_hat;
}

/* What x* needs: grad U_prior(x*), and grad U(x*) (cv) or the largest
 * |N d_i U^j(x*)| over all rows (cv = 0).  One data pass. */
static int reference(zigzag *s)
{
    const drift_services *svc = s->svc;
    int rc = svc->grad_prior(s->c, s->xs, s->gps, NULL);
    if (rc)
        return rc;
    if (s->cv)
        return svc->grad_full(s->c, s->xs, s->gs, NULL);
    size_t d = s->d;
    double N = (double)s->N;
    memset(s->ms, 0, d * sizeof(double));
    for (size_t first = 0; first < s->N; first += PASS_CHUNK) {
        size_t m = s->N - first < PASS_CHUNK ? s->N - first : PASS_CHUNK;
        for (size_t k = 0; k < m; k++)
            s->rows[k] = first + k;
        if ((rc = svc->grad_rows(s->c, s->xs, s->rows, m, s->chunk, NULL)))
            return rc;
        for (size_t k = 0; k < m; k++)
            for (size_t i = 0; i < d; i++) {
                double v = fabs(s->gps[i] + N * s->chunk[k * d + i]);
                if (v > s->ms[i])
                    s->ms[i] = v;
            }
    }
    return DRIFT_OK;
}

/* Statistical mode: a first L^ from per-row gradients at x* and at a
 * point a small step away (2 x rows evaluations). */
static int pilot(zigzag *s)
{
    const drift_services *svc = s->svc;
    size_t d = s->d, m = s->n > PASS_CHUNK ? PASS_CHUNK : s->n;
    if (m < 16)
        m = 16;
    double big = 0, N = (double)s->N;
    for (size_t k = 0; k < d; k++)
        big = fmax(big, fabs(s->xs[k]));
    double h = 1e-4 * (1 + big);
    for (size_t k = 0; k < d; k++)
        s->xt[k] = s->xs[k] + (svc->uniform(s->c) < 0.5 ? -h : h);
    int rc;
    if ((rc = svc->next_batch(s->c, m, s->rows)) ||
        (rc = svc->grad_rows(s->c, s->xs, s->rows, m, s->chunk, NULL)) ||
        (rc = svc->grad_prior(s->c, s->xt, s->gp, NULL)))
        return rc;
    /* chunk holds the rows at x*; q (m <= PASS_CHUNK) gets one coordinate
     * at a time of the rows at xt, so the two never share storage. */
    for (size_t i = 0; i < d; i++) {
        memset(s->e, 0, d * sizeof(double));
        s->e[i] = 1;
        if ((rc = svc->jvp_rows(s->c, s->xt, s->e, s->rows, m, s->q)))
            return rc;
        for (size_t k = 0; k < m; k++) {
            double dev = fabs((s->gp[i] - s->gps[i]) / N + s->q[k] -
                              s->chunk[k * d + i]);
            if (dev / h > s->L_hat)
                s->L_hat = dev / h;
        }
    }
    memset(s->e, 0, d * sizeof(double));
    return DRIFT_OK;
}

/* The per-coordinate bounds a_i + b t for a segment that started at
 * sup-norm distance r0 from x*, t its time, and their sum as the thinning
 * bound.  Valid for every t >= 0, so that a revision during a thinning
 * call (a larger L) replaces the whole line. */
static void make_bound(zigzag *s)
{
    /* The bound is attained (the sup-norm coordinate moving away from x*
     * with theta_i d_i U(x*) >= 0), so a rate equal to it must not read
     * as a violation after rounding: a relative margin of 1e-9. */
    double L = bound_L(s) * (1 + 1e-9), N = (double)s->N;
    s->b = N * L;
    double A = 0;
    for (size_t i = 0; i < s->d; i++) {
        double base = s->cv ? fmax(0, s->th[i] * s->gs[i]) : s->ms[i];
        s->a[i] = (base + N * L * s->r0 + s->refresh) * (1 + 1e-9);
        A += s->a[i];
    }
    s->bound = (drift_rate_bound){A, (double)s->d * s->b, 0, NULL, NULL,
                                  INFINITY};
}

/* The thinning callback: a proposal at call time t. */
static int rate_at(void *user, double t, double *rate)
{
    zigzag *s = user;
    const drift_services *svc = s->svc;
    size_t d = s->d, n = s->n;
    double N = (double)s->N;
    /* Coordinate i with probability (a_i + b t) / (A + B t). */
    double M = s->bound.a + s->bound.b * t;
    double u = svc->uniform(s->c) * M, acc = 0;
    size_t i = d - 1;
    for (size_t k = 0; k < d; k++) {
        acc += s->a[k] + s->b * t;
        if (u < acc) {
            i = k;
            break;
        }
    }
    double Mi = s->a[i] + s->b * t;
    s->i_prop = i;
    for (size_t k = 0; k < d; k++)
        s->xt[k] = s->x[k] + s->th[k] * t;
    memset(s->e, 0, d * sizeof(double));
    s->e[i] = 1;
    int rc;
    if ((rc = svc->next_batch(s->c, n, s->rows)) ||
        (rc = svc->jvp_rows(s->c, s->xt, s->e, s->rows, n, s->q)) ||
        (rc = svc->grad_prior(s->c, s->xt, s->gp, NULL)))
        return rc;
    if (s->cv && (rc = svc->jvp_rows(s->c, s->xs, s->e, s->rows, n, s->qs)))
        return rc;
    double sum = 0;
    for (size_t k = 0; k < n; k++)
        sum += s->cv ? s->q[k] - s->qs[k] : s->q[k];
    double E = s->cv ? s->gs[i] + s->gp[i] - s->gps[i] + N / (double)n * sum
                     : s->gp[i] + N / (double)n * sum;
    double lambda = fmax(0, s->th[i] * E) + s->refresh;
    *rate = lambda * M / Mi;
    if (!s->exact) {
        /* The smallest L that would have covered each row here. */
        double r = sup_dist(s->xt, s->xs, d), grown = s->L_hat;
        if (r > 0)
            for (size_t k = 0; k < n; k++) {
                double need;
                if (s->cv)
                    need = fabs((s->gp[i] - s->gps[i]) / N + s->q[k] -
                                s->qs[k]) / r;
                else
                    need = fmax(0, fabs(s->gp[i] + N * s->q[k]) - s->ms[i]) /
                           (N * r);
                if (need > grown)
                    grown = need;
            }
        if (grown > s->L_hat) {
            /* Revise the bound for the rest of the call: the segment's
             * line with the larger constant, as a function of call time. */
            s->L_hat = grown;
            make_bound(s);
        }
    }
    return DRIFT_OK;
}

static int move_reference(zigzag *s)
{
    for (size_t k = 0; k < s->d; k++)
        s->xs[k] = s->xsum[k] / s->tsum;
    memset(s->xsum, 0, s->d * sizeof(double));
    s->tsum = 0;
    return reference(s);
}

static int init(void *state, const drift_services *svc, drift_chain *c,
                const double *hp, double *theta)
{
    zigzag *s = state;
    s->svc = svc;
    s->c = c;
    s->d = svc->dim(c);
    s->N = svc->n_rows(c);
    s->n = svc->batch(c);
    s->L_user = hp[HP_LIPSCHITZ];
    s->exact = !isnan(s->L_user);
    s->safety = hp[HP_SAFETY];
    s->cv = hp[HP_CV] != 0;
    s->refresh = hp[HP_REFRESH];
    s->recentre = hp[HP_RECENTRE] != 0;
    if (s->N == 0)
        return svc->fail(c, "zigzag: the model has no data rows to "
                            "subsample; use bps for a data-free target");
    if (svc->access(c) == DRIFT_ACCESS_CA)
        svc->warn(c, "zigzag: --access ca makes successive minibatches "
                     "dependent; the switching rates assume independent "
                     "uniform minibatches (--access ra)");
    size_t d = s->d, vec = d * sizeof(double);
    size_t nrows = s->n > PASS_CHUNK ? s->n : PASS_CHUNK;
    s->x = svc->alloc(c, vec);
    s->th = svc->alloc(c, vec);
    s->xs = svc->alloc(c, vec);
    s->gs = svc->alloc(c, vec);
    s->gps = svc->alloc(c, vec);
    s->ms = svc->alloc(c, vec);
    s->a = svc->alloc(c, vec);
    s->xt = svc->alloc(c, vec);
    s->gp = svc->alloc(c, vec);
    s->e = svc->alloc(c, vec);
    s->xsum = svc->alloc(c, vec);
    s->rows = svc->alloc(c, nrows * sizeof(size_t));
    s->q = svc->alloc(c, nrows * sizeof(double));
    s->qs = svc->alloc(c, nrows * sizeof(double));
    s->chunk = svc->alloc(c, PASS_CHUNK * vec);
    if (!s->x || !s->th || !s->xs || !s->gs || !s->gps || !s->ms || !s->a ||
        !s->xt || !s->gp || !s->e || !s->xsum || !s->rows || !s->q ||
        !s->qs || !s->chunk)
        return DRIFT_ENOMEM;
    memcpy(s->x, theta, vec);
    memcpy(s->xs, theta, vec);
    for (size_t k = 0; k < d; k++)
        s->th[k] = svc->uniform(c) < 0.5 ? -1.0 : 1.0;
    s->next_recentre = FIRST_RECENTRE;
    s->warm = svc->in_warmup(c);
    int rc = reference(s);
    if (rc)
        return rc;
    if (!s->exact && (rc = pilot(s)))
        return rc;
    return DRIFT_OK;
}

static int emit(zigzag *s, double duration)
{
    double diag[4] = {(double)s->switches, (double)s->st.proposals,
                      (double)s->st.violations, bound_L(s)};
    return s->svc->emit_segment(s->c, s->x, s->th, duration, NAN, diag);
}

static int step(void *state, const drift_services *svc, drift_chain *c,
                double *theta)
{
    zigzag *s = state;
    (void)c;
    int rc;
    /* x* moves during warmup only, so the kept trajectory is one
     * time-homogeneous process. */
    int warm = svc->in_warmup(s->c);
    if (s->recentre && s->warm && s->tsum > 0 &&
        (!warm || svc->iteration(s->c) >= s->next_recentre)) {
        if ((rc = move_reference(s)))
            return rc;
        s->next_recentre *= 2;
    }
    s->warm = warm;
    s->r0 = sup_dist(s->x, s->xs, s->d);
    make_bound(s);
    double te;
    if ((rc = svc->thin(s->c, &s->bound, rate_at, s, &te, NULL, &s->st)))
        return rc;
    if (!isfinite(te))
        return svc->fail(s->c, "zigzag: the switching bound is zero along "
                               "this direction, so no switch would ever "
                               "come (the target is improper here, or "
                               "lipschitz = 0); set refresh > 0 or a "
                               "positive lipschitz");
    if ((rc = emit(s, te)))
        return rc;
    if (s->warm) {
        for (size_t k = 0; k < s->d; k++)
            s->xsum[k] += s->x[k] * te + 0.5 * s->th[k] * te * te;
        s->tsum += te;
    }
    for (size_t k = 0; k < s->d; k++)
        s->x[k] += s->th[k] * te;
    s->th[s->i_prop] = -s->th[s->i_prop];
    s->switches++;
    memcpy(theta, s->x, s->d * sizeof(double));
    return DRIFT_OK;
}

/* The particle (x, th), the reference point x* and what was computed
 * there (gs, gps, ms), the estimated L^, the warmup average and the
 * recentring schedule (warm too: init reads in_warmup before the engine
 * has restored the iteration), and the counters.  The bound (a, b, r0,
 * bound), i_prop and the proposal buffers are rewritten by every step
 * before they are read; svc and c are set again by init. */
static int checkpoint(void *state, const drift_services *svc, drift_chain *c)
{
    zigzag *s = state;
    double *vecs[] = {s->x, s->th, s->xs, s->gs, s->gps, s->ms, s->xsum};
    int rc = DRIFT_OK;
    for (size_t k = 0; !rc && k < sizeof vecs / sizeof vecs[0]; k++)
        rc = svc->ckpt_bytes(c, vecs[k], s->d * sizeof(double));
    if (!rc)
        rc = svc->ckpt_bytes(c, &s->L_hat, sizeof s->L_hat);
    if (!rc)
        rc = svc->ckpt_bytes(c, &s->tsum, sizeof s->tsum);
    if (!rc)
        rc = svc->ckpt_bytes(c, &s->next_recentre, sizeof s->next_recentre);
    if (!rc)
        rc = svc->ckpt_bytes(c, &s->warm, sizeof s->warm);
    if (!rc)
        rc = svc->ckpt_bytes(c, &s->switches, sizeof s->switches);
    if (!rc)
        rc = svc->ckpt_bytes(c, &s->st, sizeof s->st);
    return rc;
}

static const drift_hparam hparams[] = {
    [HP_LIPSCHITZ] = {"lipschitz", DRIFT_HP_REAL, NAN, 0, INFINITY, 0, NULL,
                      "L: every |d_i U^j(x) - d_i U^j(y)| <= L |x - y|_inf "
                      "gives an exact bound (auto: estimated, statistical)"},
    [HP_SAFETY] = {"safety", DRIFT_HP_REAL, 2.0, 1, INFINITY, 0, NULL,
                   "factor on the estimated L (only without lipschitz)"},
    [HP_CV] = {"cv", DRIFT_HP_BOOL, 1, 0, 1, 0, NULL,
               "control variates at the reference point (ZZ-CV); false: "
               "plain subsampling (ZZ-SS)"},
    [HP_REFRESH] = {"refresh", DRIFT_HP_REAL, 0.0, 0, INFINITY, 0, NULL,
                    "excess switching rate added to every coordinate"},
    [HP_RECENTRE] = {"recentre", DRIFT_HP_BOOL, 1, 0, 1, 0, NULL,
                     "during warmup, move the reference point to the "
                     "trajectory's mean (one data pass each)"},
};

static const char *const columns[] = {"switches__", "proposals__",
                                      "bound_violations__", "lipschitz__"};

static const drift_sampler samplers[] = {{
    .name = "zigzag",
    .summary = "Zig-Zag process with subsampling and control variates "
               "(Bierkens, Fearnhead and Roberts 2019)",
    .hparams = hparams,
    .n_hparams = sizeof hparams / sizeof hparams[0],
    .columns = columns,
    .n_columns = sizeof columns / sizeof columns[0],
    .state_size = sizeof(zigzag),
    .default_batch = 1,
    .flags = DRIFT_SAMPLER_CONTINUOUS | DRIFT_SAMPLER_OWN_ESTIMATES,
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
