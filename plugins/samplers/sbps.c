/* sbps.c: the stochastic bouncy particle sampler and its preconditioned
 * variant (Pakman, Gilboa, Carlson and Paninski, ICML 2017).  BPS driven
 * by minibatches: the bounce rate [v . grad U]+ is only ever observed with
 * noise, and the thinning bound is a band predicted from those noisy
 * observations.  Not exact: the band can fall below the rate (counted in
 * bound_violations__), a bias k controls.  Full-gradient BPS is bps.
 *
 * The algorithm, one trajectory piece at a time:
 *  - At a point x + u t (u the velocity), an observation takes a fresh
 *    minibatch B of n rows (--batch, the engine's access stream) and forms
 *      G = u . grad U~ = u . grad U_prior + (N/n) sum_{j in B} u . grad U_j
 *    and its noise variance from the minibatch's own spread,
 *      c^2 = N^2 f s^2 / n,  s^2 the sample variance of the u . grad U_j.
 *    f = 1 - n/N, the finite-population correction, under --access rr or
 *    ca, whose minibatches are drawn without replacement (the authors' code
 *    reshuffles); f = 1 under the default --access ra, whose n indices are
 *    drawn with replacement, so that G stays noisy even at n = N.
 *  - G is regressed on t, the time since the last bounce, by Bayesian
 *    linear regression with observation variances c_i^2, a flat prior on
 *    the intercept and N(prior_mean, prior_var) on the slope.  Its
 *    predictive band beta1 t + beta0 + k rho(t), rho^2(t) = (1, t) Sigma
 *    (1, t)' + c_last^2 (Sigma the posterior covariance of (beta0, beta1),
 *    c_last^2 the latest noise variance), is the bound.
 *  - Proposals come from the positive part of the band's piecewise-linear
 *    interpolation (16 pieces over a window; the band is convex in t, so
 *    the interpolation lies above it), through the engine's thin service.
 *    Each proposal is an observation: it is added to the regression and
 *    the band refit before the next proposal (adaptive thinning), and it
 *    is accepted with probability min(1, [G]+ / lambda), lambda the
 *    interpolated band where the proposal was made.
 *  - On acceptance the particle bounces off the minibatch gradient,
 *    v <- v - 2 (v . g) g / |g|^2, and the regression restarts from the
 *    single observation (G', c'), the directional derivative of the same
 *    minibatch along the new velocity and its noise variance.
 *  - Refreshes (rate `refresh`, default 0 as in the paper, or 1 for sbps
 *    in the mode's whitened coordinates, below) draw v uniformly on the
 *    unit sphere and restart the regression from a fresh observation
 *    there.
 *  - A window covers about three expected events of the band (from its
 *    linear approximation at the window's start), and at most four times
 *    the typical time between proposals (a running mean); when it passes
 *    without a proposal, the particle stops at its end, takes an
 *    observation there (not a proposal: it cannot bounce) and a new window
 *    begins.  The authors' code instead caps a piece at a fixed length and
 *    forces a proposal there.  The observation keeps a band whose fitted
 *    slope is falling (the line is a poor model far from the last bounce,
 *    and with little noise the band has no margin) from carrying the
 *    particle far past the region where the rate has risen, at the price
 *    of a minibatch.
 *  - prior_mean NaN (default) takes the running mean of the fitted slopes
 *    at every observation so far (0 before the first), as the authors'
 *    code does; prior_var defaults to their 1e5.
 *
 * psbps adds the diagonal preconditioner of the paper's section 5: the
 * particle moves along u = P v, v on the unit sphere, with
 *   a <- beta a + (1 - beta) g * g   (elementwise, every minibatch gradient)
 *   P = diag(1 / (sqrt(a) + eps)), scaled so that mean(P_ii) = 1,
 * and bounces reflect v off P g (BPS in the coordinates z = P^-1 x).  A new
 * P takes effect at bounces and refreshes only, so that every observation
 * the regression uses was made along one straight line.  A P that keeps
 * following a depends on where the particle has been, and the chain then
 * leaves its target (on a logistic regression the draws were 1.4-1.7 times
 * too wide): by default (adapt=warmup) P follows a during warmup only and
 * is fixed after it, which BPS keeps the target for; adapt=always is the
 * paper's.
 *
 * Where the run has a mode (the engine's plan for these samplers at their
 * defaults finds one), every minibatch quantity is a control variate
 * centred there (Baker, Fearnhead, Fox and Nemeth 2019): the per-row
 * gradients are grad U_j(x) - grad U_j(x-hat), and grad L(x-hat), the
 * likelihood's gradient over all rows (one data pass per chain, at init),
 * joins the prior's, so G, its noise c^2 (from the spread of the
 * differences, small near the mode) and the bounce gradient are the
 * control-variate ones; each observation costs 2n rows.  sbps then also
 * moves in the coordinates the mode's diagonal curvature whitens, u = S v
 * with S = diag(sqrt(M^-1)) (the engine's DIAG metric, which starts
 * there), bouncing off S g: BPS in z = S^-1 x, whose target's sds are
 * about 1 in every coordinate.  psbps keeps its own proportions between
 * coordinates (from a) but scales P to the mean of S, so that it too moves
 * about one posterior sd per unit time; both then refresh at rate 1 by
 * default (without refreshes BPS is not ergodic on a Gaussian target, and
 * psbps's draws were 1.7 times too wide on a logistic regression).
 *
 * Where this differs from the paper (besides the window's end above, the
 * preconditioner fixed after warmup and the control variates):
 *  - The slope's prior: its mean (the running mean of fitted slopes) and
 *    its variance (1e5) are the authors' code's, not set by the paper's
 *    ascent of the marginal likelihood.
 *  - The directional derivatives u . grad U_j of an observation are formed
 *    from the minibatch's full per-row gradients (grad_rows, n x d numbers),
 *    not from a forward-mode pass (jvp_rows); at large d this is the cost
 *    of an observation (13 times sgld's cost per data pass on a
 *    79,510-parameter network).
 *  - psbps's update a <- beta a + (1 - beta) g * g weights the old a by
 *    beta (0.99 by default, a slow running average), the reverse of the
 *    literal text of the paper's eq. (17).
 *
 * One iteration is one segment (to a bounce, a refresh or a window's end).
 * lp__ is NaN; bounces__, proposals__ and bound_violations__ count. */
#include <math.h>
#include <string.h>

#include <drift/sampler.h>

DRIFT_PLUGIN_LICENSE("MIT");

#define KNOTS 17        /* knots per window: 16 linear pieces */
#define WINDOW_MASS 3.0 /* expected proposals a window is sized for */

enum { HP_K, HP_REFRESH, HP_PRIOR_MEAN, HP_PRIOR_VAR, HP_BETA, HP_EPS,
       HP_ADAPT };
enum { ADAPT_WARMUP = 0, ADAPT_ALWAYS = 1 };

typedef struct sbps {
    const drift_services *svc;
    drift_chain *c;
    size_t d, n, N;
    int precond;
    int adapt_always;     /* psbps: P follows a after warmup too (the
                             paper's; not invariant) */
    int wor;              /* minibatches without replacement (rr, ca) */
    double k, refresh, prior_mean, prior_var, beta, eps;
    double *x, *v, *u;    /* position, unit velocity, x-velocity P v */
    double *P, *a;        /* preconditioner and running mean of g^2 */
    int set_once;         /* psbps: P was set from a */
    double pmean;         /* psbps: the mean P is scaled to (1; under a
                             mode the mean sd of the engine's metric) */
    double *xt;           /* an observation's point */
    size_t *rows;         /* its minibatch */
    double *grows;        /* n x d per-row gradients of the last minibatch */
    double *g, *gp;       /* minibatch gradient estimate, prior gradient */
    double *q, *Pg;       /* n directional derivatives; P g */
    /* control variates at the mode (NULL: plain minibatches) */
    double *mode, *Lgrad, *grows0;
    /* regression of G on t since the last bounce: weighted sums */
    double Sw, St, Stt, Sg, Stg, c2_last;
    double b0, b1, V00, V01, V11;   /* fit: mean and covariance */
    double t_reg;         /* regression time at the start of this segment */
    double t_last_obs;    /* regression time of the last observation */
    double tau;           /* typical time between observations */
    double slope_sum;     /* for the adaptive prior mean */
    uint64_t slope_n;
    /* the current window, in the thinning call's time */
    double kt[KNOTS], kr[KNOTS];
    drift_rate_bound bound;
    double s_ref;         /* refresh time in the call's time */
    uint64_t bounces;
    drift_thin_stats st;
} sbps;

static double dot(const double *a, const double *b, size_t n)
{
    double s = 0;
    for (size_t k = 0; k < n; k++)
        s += a[k] * b[k];
    return s;
}

static void draw_direction(sbps *s)
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

/* P from the running mean a (psbps), normalised to mean pmean. */
static void update_preconditioner(sbps *s)
{
    if (!s->precond ||
        (!s->adapt_always && s->set_once && !s->svc->in_warmup(s->c)))
        return;
    s->set_once = 1;
    double sum = 0;
    for (size_t k = 0; k < s->d; k++) {
        s->P[k] = 1.0 / (sqrt(s->a[k]) + s->eps);
        sum += s->P[k];
    }
    double scale = s->pmean * (double)s->d / sum;
    for (size_t k = 0; k < s->d; k++)
        s->P[k] *= scale;
}

static void set_velocity(sbps *s)
{
    for (size_t k = 0; k < s->d; k++)
        s->u[k] = s->P[k] * s->v[k];
}

/* G and c^2 along direction u from the minibatch already in grows/gp. */
static void directional(sbps *s, const double *u, double *G, double *c2)
{
    size_t n = s->n, d = s->d;
    double mean = 0;
    for (size_t j = 0; j < n; j++) {
        s->q[j] = dot(u, s->grows + j * d, d);
        mean += s->q[j];
    }
    mean /= (double)n;
    double ss = 0;
    for (size_t j = 0; j < n; j++)
        ss += (s->q[j] - mean) * (s->q[j] - mean);
    double s2 = ss / (double)(n - 1);
    double N = (double)s->N;
    /* The finite-population correction holds only for a minibatch drawn
     * without replacement; random access draws with replacement, where the
     * mean of n draws has variance s^2 / n however large n is. */
    double fpc = s->wor ? 1.0 - (double)n / N : 1.0;
    *G = dot(u, s->gp, d) + N * mean;
    double var = N * N * fpc * s2 / (double)n;
    /* An exact G (n = N, or rows that agree) still needs a finite weight. */
    double floor = 1e-12 * (1.0 + *G * *G);
    *c2 = var > floor ? var : floor;
}

/* An observation at x: a fresh minibatch, its gradient estimate g, G and
 * c^2 along the current x-velocity u. */
static int observe(sbps *s, const double *x, double *G, double *c2)
{
    const drift_services *svc = s->svc;
    int rc;
    if ((rc = svc->next_batch(s->c, s->n, s->rows)) ||
        (rc = svc->grad_rows(s->c, x, s->rows, s->n, s->grows, NULL)) ||
        (rc = svc->grad_prior(s->c, x, s->gp, NULL)))
        return rc;
    if (s->mode) {
        /* the same rows at the mode: the control variates */
        if ((rc = svc->grad_rows(s->c, s->mode, s->rows, s->n, s->grows0,
                                 NULL)))
            return rc;
        for (size_t j = 0; j < s->n * s->d; j++)
            s->grows[j] -= s->grows0[j];
        for (size_t k = 0; k < s->d; k++)
            s->gp[k] += s->Lgrad[k];
    }
    double scale = (double)s->N / (double)s->n;
    memcpy(s->g, s->gp, s->d * sizeof(double));
    for (size_t j = 0; j < s->n; j++) {
        const double *gj = s->grows + j * s->d;
        for (size_t k = 0; k < s->d; k++)
            s->g[k] += scale * gj[k];
    }
    for (size_t k = 0; k < s->d; k++)
        if (!isfinite(s->g[k]))
            return svc->fail(s->c, "sbps: the minibatch gradient is not "
                                   "finite; the particle left the region "
                                   "where the model is defined");
    if (s->precond)
        for (size_t k = 0; k < s->d; k++)
            s->a[k] = s->beta * s->a[k] + (1 - s->beta) * s->g[k] * s->g[k];
    directional(s, s->u, G, c2);
    return DRIFT_OK;
}

/* The posterior of (beta0, beta1) from the sums and the slope's prior. */
static void fit(sbps *s)
{
    double mu = isnan(s->prior_mean)
                    ? (s->slope_n ? s->slope_sum / (double)s->slope_n : 0)
                    : s->prior_mean;
    double L00 = s->Sw, L01 = s->St, L11 = s->Stt + 1.0 / s->prior_var;
    double r0 = s->Sg, r1 = s->Stg + mu / s->prior_var;
    double det = L00 * L11 - L01 * L01;
    s->V00 = L11 / det;
    s->V01 = -L01 / det;
    s->V11 = L00 / det;
    s->b0 = s->V00 * r0 + s->V01 * r1;
    s->b1 = s->V01 * r0 + s->V11 * r1;
}

static void reset_regression(sbps *s, double G, double c2)
{
    double w = 1.0 / c2;
    s->Sw = w;
    s->St = s->Stt = s->Stg = 0;
    s->Sg = w * G;
    s->c2_last = c2;
    s->t_reg = s->t_last_obs = 0;
    fit(s);
}

/* Adds an observation at regression time t; a proposal's gap since the
 * last observation also updates the typical gap tau (a window's end does
 * not: those gaps are tau-sized by construction). */
static void add_observation(sbps *s, double t, double G, double c2,
                            int proposal)
{
    double w = 1.0 / c2;
    s->Sw += w;
    s->St += w * t;
    s->Stt += w * t * t;
    s->Sg += w * G;
    s->Stg += w * t * G;
    s->c2_last = c2;
    double gap = t - s->t_last_obs;
    if (proposal && gap > 0)
        s->tau = 0.9 * s->tau + 0.1 * gap;
    s->t_last_obs = t;
    fit(s);
    s->slope_sum += s->b1;
    s->slope_n++;
}

/* The band at regression time t, and its slope there. */
static double band(const sbps *s, double t, double *slope)
{
    double q = s->V00 + 2 * s->V01 * t + s->V11 * t * t + s->c2_last;
    double rho = sqrt(q > 0 ? q : 0);
    if (slope)
        *slope = s->b1 + (rho > 0 ? s->k * (s->V01 + s->V11 * t) / rho : 0);
    return s->b0 + s->b1 * t + s->k * rho;
}

/* Time for the integral of max(0, a + b t) to reach m; INFINITY if never. */
static double linear_time(double a, double b, double m)
{
    if (b == 0)
        return a > 0 ? m / a : INFINITY;
    if (b > 0) {
        double t0 = a < 0 ? -a / b : 0, a0 = a < 0 ? 0 : a;
        return t0 + 2 * m / (a0 + sqrt(a0 * a0 + 2 * b * m));
    }
    if (a <= 0 || a * a / (-2 * b) < m)
        return INFINITY;
    return 2 * m / (a + sqrt(a * a + 2 * b * m));
}

/* A new window from call time s0 (regression time t_reg + s0): knots of
 * the band's interpolation up to the window's end, never past the refresh
 * time. */
static void make_window(sbps *s, double s0)
{
    double t0 = s->t_reg + s0, slope;
    double a = band(s, t0, &slope);
    double H = linear_time(a, slope, WINDOW_MASS);
    if (!(H < 4 * s->tau))
        H = 4 * s->tau;
    double floor = 1e-12 * (1 + fabs(t0));
    if (!(H > floor))
        H = floor;
    double end = s0 + H;
    if (end > s->s_ref)
        end = s->s_ref;
    for (int j = 0; j < KNOTS; j++) {
        double sj = s0 + (end - s0) * j / (KNOTS - 1);
        s->kt[j] = sj;
        s->kr[j] = band(s, s->t_reg + sj, NULL);
    }
    s->kt[KNOTS - 1] = end;
    s->bound = (drift_rate_bound){0, 0, KNOTS, s->kt, s->kr, end};
}

/* The thinning callback: an observation at call time t, added to the
 * regression, and the window refit from t on. */
static int rate_at(void *user, double t, double *rate)
{
    sbps *s = user;
    for (size_t k = 0; k < s->d; k++)
        s->xt[k] = s->x[k] + s->u[k] * t;
    double G, c2;
    int rc = observe(s, s->xt, &G, &c2);
    if (rc)
        return rc;
    add_observation(s, s->t_reg + t, G, c2, 1);
    make_window(s, t);
    *rate = G;
    return DRIFT_OK;
}

static const char *const columns[] = {"bounces__", "proposals__",
                                      "bound_violations__"};

static int init_common(sbps *s, const drift_services *svc, drift_chain *c,
                       const double *hp, double *theta, int precond)
{
    s->svc = svc;
    s->c = c;
    s->precond = precond;
    s->d = svc->dim(c);
    s->N = svc->n_rows(c);
    s->n = svc->batch(c);
    s->wor = svc->access(c) != DRIFT_ACCESS_RA;
    s->k = hp[HP_K];
    s->refresh = hp[HP_REFRESH];
    s->prior_mean = hp[HP_PRIOR_MEAN];
    s->prior_var = hp[HP_PRIOR_VAR];
    s->beta = precond ? hp[HP_BETA] : 0;
    s->eps = precond ? hp[HP_EPS] : 0;
    s->adapt_always = precond && (int)hp[HP_ADAPT] == ADAPT_ALWAYS;
    if (s->N == 0)
        return svc->fail(c, "sbps: the model has no data rows, so there are "
                            "no minibatches; use bps for a data-free target");
    if (s->n < 2)
        return svc->fail(c, "sbps: --batch must be at least 2: the noise of "
                            "each observation is estimated from the "
                            "minibatch's sample variance");
    size_t d = s->d, vec = d * sizeof(double);
    s->x = svc->alloc(c, vec);
    s->v = svc->alloc(c, vec);
    s->u = svc->alloc(c, vec);
    s->P = svc->alloc(c, vec);
    s->a = svc->alloc(c, vec);
    s->xt = svc->alloc(c, vec);
    s->g = svc->alloc(c, vec);
    s->gp = svc->alloc(c, vec);
    s->Pg = svc->alloc(c, vec);
    s->rows = svc->alloc(c, s->n * sizeof(size_t));
    s->grows = svc->alloc(c, s->n * vec);
    s->q = svc->alloc(c, s->n * sizeof(double));
    if (!s->x || !s->v || !s->u || !s->P || !s->a || !s->xt || !s->g ||
        !s->gp || !s->Pg || !s->rows || !s->grows || !s->q)
        return DRIFT_ENOMEM;
    memcpy(s->x, theta, vec);
    for (size_t k = 0; k < d; k++)
        s->P[k] = 1;
    s->pmean = 1;
    int rc;
    if (svc->mode(c, NULL, NULL) == DRIFT_OK) {
        s->mode = svc->alloc(c, vec);
        s->Lgrad = svc->alloc(c, vec);
        s->grows0 = svc->alloc(c, s->n * vec);
        if (!s->mode || !s->Lgrad || !s->grows0)
            return DRIFT_ENOMEM;
        if ((rc = svc->mode(c, s->mode, NULL)) ||
            (rc = svc->grad_full(c, s->mode, s->Lgrad, NULL)) ||
            (rc = svc->grad_prior(c, s->mode, s->g, NULL)))
            return rc;
        for (size_t k = 0; k < d; k++)
            s->Lgrad[k] -= s->g[k];
        if ((rc = svc->metric_use(c, DRIFT_METRIC_DIAG)))
            return rc;
        svc->metric_get(c, s->P);
        double mean_sd = 0;
        for (size_t k = 0; k < d; k++) {
            s->P[k] = s->P[k] > 0 && isfinite(s->P[k]) ? sqrt(s->P[k]) : 1;
            mean_sd += s->P[k] / (double)d;
        }
        /* psbps keeps its own proportions between coordinates, at the
         * scale of the posterior's sds. */
        if (precond)
            s->pmean = mean_sd;
        /* Without refreshes BPS need not be ergodic (on a Gaussian it is
         * not), and at these speeds a rate of 1 renews the direction about
         * once per posterior sd travelled. */
        if (isnan(s->refresh))
            s->refresh = 1.0;
    }
    if (isnan(s->refresh))
        s->refresh = 0.0;
    draw_direction(s);
    double G, c2;
    if (precond) {
        /* The first minibatch sets a, and P from it, before moving. */
        set_velocity(s);
        if ((rc = observe(s, s->x, &G, &c2)))
            return rc;
        update_preconditioner(s);
        set_velocity(s);
        directional(s, s->u, &G, &c2);
    } else {
        set_velocity(s);
        if ((rc = observe(s, s->x, &G, &c2)))
            return rc;
    }
    reset_regression(s, G, c2);
    s->tau = 1.0 / (fabs(G) + s->k * sqrt(c2) + 1e-300);
    return DRIFT_OK;
}

static int init_sbps(void *state, const drift_services *svc, drift_chain *c,
                     const double *hp, double *theta)
{
    return init_common(state, svc, c, hp, theta, 0);
}

static int init_psbps(void *state, const drift_services *svc, drift_chain *c,
                      const double *hp, double *theta)
{
    return init_common(state, svc, c, hp, theta, 1);
}

static int emit(sbps *s, double duration)
{
    double diag[3] = {(double)s->bounces, (double)s->st.proposals,
                      (double)s->st.violations};
    return s->svc->emit_segment(s->c, s->x, s->u, duration, NAN, diag);
}

static void move(sbps *s, double t)
{
    for (size_t k = 0; k < s->d; k++)
        s->x[k] += s->u[k] * t;
}

static int step(void *state, const drift_services *svc, drift_chain *c,
                double *theta)
{
    sbps *s = state;
    (void)c;
    int rc;
    s->s_ref = s->refresh > 0 ? svc->exponential(s->c) / s->refresh
                              : INFINITY;
    make_window(s, 0);
    double te;
    if ((rc = svc->thin(s->c, &s->bound, rate_at, s, &te, NULL, &s->st)))
        return rc;
    double G, c2;
    if (isfinite(te)) {
        /* Bounce off the minibatch gradient of the accepted proposal, in
         * the coordinates where the velocity is v (z = P^-1 x). */
        s->bounces++;
        if ((rc = emit(s, te)))
            return rc;
        move(s, te);
        for (size_t k = 0; k < s->d; k++)
            s->Pg[k] = s->P[k] * s->g[k];
        double vg = dot(s->v, s->Pg, s->d), gg = dot(s->Pg, s->Pg, s->d);
        if (gg > 0)
            for (size_t k = 0; k < s->d; k++)
                s->v[k] -= 2 * vg / gg * s->Pg[k];
        update_preconditioner(s);
        set_velocity(s);
        directional(s, s->u, &G, &c2);
        reset_regression(s, G, c2);
    } else {
        double end = s->bound.t[s->bound.n_knots - 1];
        if ((rc = emit(s, end)))
            return rc;
        move(s, end);
        if (end >= s->s_ref) {
            draw_direction(s);
            update_preconditioner(s);
            set_velocity(s);
            if ((rc = observe(s, s->x, &G, &c2)))
                return rc;
            reset_regression(s, G, c2);
        } else {
            /* The window passed without a proposal: look again here. */
            s->t_reg += end;
            if ((rc = observe(s, s->x, &G, &c2)))
                return rc;
            add_observation(s, s->t_reg, G, c2, 0);
        }
    }
    memcpy(theta, s->x, s->d * sizeof(double));
    return DRIFT_OK;
}

/* The particle (x, v, u = P v), the preconditioner P and the running mean
 * a it is built from (P changes only at bounces and refreshes, so it is
 * not a function of a), the regression (its sums, fit, times, tau and the
 * slope average) and the counters.  The minibatch buffers (rows, grows,
 * g, gp, q, Pg, xt), the window (kt, kr, bound) and s_ref are rewritten
 * by every step before they are read; svc and c are set again by init. */
static int checkpoint(void *state, const drift_services *svc, drift_chain *c)
{
    sbps *s = state;
    double *vecs[] = {s->x, s->v, s->u, s->P, s->a};
    double *reg[] = {&s->Sw, &s->St, &s->Stt, &s->Sg, &s->Stg, &s->c2_last,
                     &s->b0, &s->b1, &s->V00, &s->V01, &s->V11, &s->t_reg,
                     &s->t_last_obs, &s->tau, &s->slope_sum};
    int rc = DRIFT_OK;
    for (size_t k = 0; !rc && k < sizeof vecs / sizeof vecs[0]; k++)
        rc = svc->ckpt_bytes(c, vecs[k], s->d * sizeof(double));
    for (size_t k = 0; !rc && k < sizeof reg / sizeof reg[0]; k++)
        rc = svc->ckpt_bytes(c, reg[k], sizeof *reg[k]);
    if (!rc)
        rc = svc->ckpt_bytes(c, &s->slope_n, sizeof s->slope_n);
    if (!rc)
        rc = svc->ckpt_bytes(c, &s->bounces, sizeof s->bounces);
    if (!rc)
        rc = svc->ckpt_bytes(c, &s->st, sizeof s->st);
    return rc;
}

/* sbps reads the first four; psbps all six (same order). */
static const drift_hparam hparams[] = {
    [HP_K] = {"k", DRIFT_HP_REAL, 3.0, 0, INFINITY, 0, NULL,
              "band width: proposals from the predictive mean + k sd"},
    [HP_REFRESH] = {"refresh", DRIFT_HP_REAL, NAN, 0, INFINITY, 0, NULL,
                    "refresh rate: v ~ uniform on the unit sphere; auto: 0 "
                    "(the paper's), or 1 where the run has a mode (moving "
                    "at about one posterior sd per unit time, where 1 is "
                    "one refresh per sd travelled)"},
    [HP_PRIOR_MEAN] = {"prior_mean", DRIFT_HP_REAL, NAN, -INFINITY, INFINITY,
                       0, NULL,
                       "prior mean of the slope of G in t (auto: running "
                       "mean of fitted slopes)"},
    [HP_PRIOR_VAR] = {"prior_var", DRIFT_HP_REAL, 1e5, 0, INFINITY,
                      DRIFT_HP_OPEN_LO, NULL,
                      "prior variance of the slope of G in t"},
    [HP_BETA] = {"beta", DRIFT_HP_REAL, 0.99, 0, 1,
                 DRIFT_HP_OPEN_HI, NULL,
                 "preconditioner: weight of the old mean of g^2"},
    [HP_EPS] = {"eps", DRIFT_HP_REAL, 1e-4, 0, INFINITY, DRIFT_HP_OPEN_LO,
                NULL, "preconditioner: P = 1/(sqrt(a) + eps)"},
    [HP_ADAPT] = {"adapt", DRIFT_HP_ENUM, ADAPT_WARMUP, 0, 0, 0,
                  "warmup|always",
                  "preconditioner: P follows a during warmup and is then "
                  "fixed (invariant), or always (the paper's; biased)"},
};

static const drift_sampler samplers[] = {
    {
        .name = "sbps",
        .summary = "stochastic bouncy particle sampler: minibatch BPS with "
                   "a regression band bound (Pakman et al. 2017)",
        .hparams = hparams,
        .n_hparams = 4,
        .columns = columns,
        .n_columns = 3,
        .state_size = sizeof(sbps),
        .default_batch = 100,
        .flags = DRIFT_SAMPLER_CONTINUOUS | DRIFT_SAMPLER_OWN_ESTIMATES,
        .init = init_sbps,
        .step = step,
        .checkpoint = checkpoint,
    },
    {
        .name = "psbps",
        .summary = "sbps with the diagonal preconditioner of Pakman et al. "
                   "2017, section 5",
        .hparams = hparams,
        .n_hparams = 7,
        .columns = columns,
        .n_columns = 3,
        .state_size = sizeof(sbps),
        .default_batch = 100,
        .flags = DRIFT_SAMPLER_CONTINUOUS | DRIFT_SAMPLER_OWN_ESTIMATES,
        .init = init_psbps,
        .step = step,
        .checkpoint = checkpoint,
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
