/* nuts.c: the No-U-Turn sampler as Stan runs it today (Hoffman and Gelman
 * 2014; Betancourt 2017): multinomial sampling over the trajectory, biased
 * progressive sampling between its doublings, the generalised no-U-turn
 * criterion on summed momenta with the extra checks across merged subtrees,
 * divergences (energy error above 1000) counted, never fatal.  The step size
 * and the metric are adapted in warmup on the engine's adaptation services;
 * a chain far out on a steep slope, where NUTS crawls, is first moved down
 * by line searches (see descend).
 *
 * Not for minibatches: every leapfrog step is one grad_full call. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include <drift/sampler.h>

/* LAPACK's divide-and-conquer symmetric eigensolver, as OpenBLAS exports
 * it (no hidden string lengths), for metric=nutpie_lowrank: with
 * eigenvectors it is several times faster than dsyev's QR iteration,
 * whose rotations took a third of a run at d = 100. */
void dsyevd_(const char *jobz, const char *uplo, const blasint *n, double *a,
             const blasint *lda, double *w, double *work,
             const blasint *lwork, blasint *iwork, const blasint *liwork,
             blasint *info);

DRIFT_PLUGIN_LICENSE("MIT");

/* Stan's threshold on H(z) - H(z0) beyond which a trajectory diverged. */
#define NUTS_MAX_DELTA_H 1000.0
/* The step-size search gives up beyond this (Stan's bound). */
#define NUTS_EPS_MAX 1e7
/* The approach to the posterior (see descend): at most this many
 * gradient steps, each a backtracking line search of at most this many
 * halvings from a move of length one. */
#define NUTS_DESCENT_STEPS 200
#define NUTS_DESCENT_HALVINGS 60
/* The metric hyperparameter's values beyond the first three (which are
 * drift_metric_kind's). */
#define NUTS_METRIC_GRAD 3
#define NUTS_METRIC_NUTPIE 4
#define NUTS_METRIC_NUTPIE_LOWRANK 5
#define NUTS_METRIC_AUTO 6
/* metric=nutpie's schedule (nutpie's defaults): the share of warmup in
 * its early phase, the share at its end where only the step size adapts,
 * the windows of the early phase, the first window after it and the
 * factor each later window grows by. */
#define NUTS_NP_EARLY_SHARE 0.3
#define NUTS_NP_FINAL_SHARE 0.15
#define NUTS_NP_EARLY_WINDOW 10
#define NUTS_NP_WINDOW 80
#define NUTS_NP_GROWTH 1.5
/* The bounds of metric=nutpie's start, 1/|grad U| (the engine's). */
#define NUTS_NP_START_MIN 1e-10
#define NUTS_NP_START_MAX 1e10
/* metric=nutpie_lowrank (nutpie's defaults): the regularisation of the
 * two scatter matrices (S / gamma + I) and the eigenvalues kept, those
 * above this cutoff or below its inverse. */
#define NUTS_NP_GAMMA 1e-5
#define NUTS_NP_CUTOFF 2.0
/* metric=nutpie_lowrank estimates again, at O(d^3), only when its
 * foreground has grown by this share since the last estimate, and by at
 * least d/20 draws (or has switched): an estimate each iteration cost four
 * times the sampling at d = 100, and a tenth more draws move the estimate
 * little. */
#define NUTS_NP_REESTIMATE 0.1
/* metric=auto: nutpie_lowrank up to this many parameters, Stan's diag
 * beyond, where the dense metric's O(d^2) a leapfrog step and its
 * estimates' O(d^3) outweigh what it saves. */
#define NUTS_AUTO_LOWRANK_MAX_D 100
/* metric=auto leaves nutpie_lowrank for the draws' variance (Stan's
 * diagonal estimate, on nutpie's windows) once this many transitions
 * after nutpie's early phase have diverged: its long steps, right for a
 * Gaussian-like posterior, then cross regions of high curvature they
 * cannot enter (a GP's funnel), and its draws come out too narrow; on
 * regressions the low-rank metric has none. */
#define NUTS_AUTO_DIVERGENCES 3

/* A point the trajectory may return: position, gradient of U and U there,
 * and the Hamiltonian with the momentum it had (for energy__). */
typedef struct nuts_point {
    double *q, *g;
    double U, H;
} nuts_point;

/* The state the integrator moves: a point with its momentum. */
typedef struct nuts_state {
    double *q, *p, *g;
    double U;
} nuts_state;

/* Scratch of one level of the tree's recursion (one frame per depth is
 * live at a time, so depth k always uses level k). */
typedef struct nuts_level {
    double *ps_init_end, *p_init_end, *rho_init;
    double *ps_final_beg, *p_final_beg, *rho_final;
    nuts_point *prop;       /* the final subtree's proposal */
    nuts_point slot;        /* the storage prop first points to */
} nuts_level;

typedef struct nuts {
    size_t d;
    /* hyperparameters */
    double delta, eps0, jitter, gamma, kappa, t0;
    int max_depth, metric;
    int grad_metric;        /* metric=grad: a diagonal metric estimated
                               from draws and gradients */
    const drift_metric_services *mx; /* its observe_grad (metric=grad
                                        and nutpie), set_diag and
                                        set_dense (nutpie and
                                        nutpie_lowrank) */
    /* metric=nutpie: two overlapping estimators, the foreground (the
     * metric is set from it after every warmup iteration) and the
     * background (started afresh at each switch, when it becomes the
     * foreground); each holds the mean and the sums of squared
     * deviations of the draws, then the same of the gradients of U
     * there (see np_part).  np_n the points each holds, np_window the
     * length of the current window after the early phase, np_set
     * whether the metric has been set from draws since warmup
     * (re)started. */
    int nutpie, np_lowrank;  /* metric=nutpie or nutpie_lowrank; the
                                latter's estimators hold the scatter
                                matrices (d x d) instead of their
                                diagonals */
    size_t np_size;         /* doubles of one estimator */
    double *np_fg, *np_bg;
    double *np_tmp;         /* scratch: M^-1 and what computes it */
    int np_lwork, np_liwork; /* dsyevd's workspaces (nutpie_lowrank) */
    blasint *np_iwork;
    uint64_t np_n[2], np_window;
    uint64_t np_est_n;      /* the foreground's points at the last
                               nutpie_lowrank estimate */
    int np_auto;            /* nutpie_lowrank chosen by metric=auto */
    int np_diag;            /* ... which has left it for the draws'
                               variance (NUTS_AUTO_DIVERGENCES) */
    uint64_t np_div;        /* divergences counted towards that */
    int np_set;
    /* step size: nominal (adapted) and the one the transition used */
    double eps, eps_used;
    drift_dual_avg da;
    int adapting;
    int pending;            /* an error from a phase callback, returned by
                               the next step */
    /* the chain's current point */
    double *q, *g;
    double U;
    /* trajectory ends (moved in place by the integrator) */
    nuts_state fwd, bck;
    /* momenta and sharp momenta (M^{-1} p) at the ends of the subtrees
     * either side of the last doubling */
    double *p_ff, *ps_ff, *p_fb, *ps_fb, *p_bf, *ps_bf, *p_bb, *ps_bb;
    double *rho, *rho_fwd, *rho_bck, *rho_ext, *rho_sub;
    nuts_point *sample, *propose;
    nuts_point sample_slot, propose_slot;
    nuts_level *lv;         /* max_depth levels, allocated on first use */
    /* warmup's own check (see window_lost): the energies of the
     * current window (at most warmup of them), the window's iterations
     * that did not move (the first leapfrog step already diverged) and
     * those that hit the maximum depth; the slow windows ended since
     * warmup (re)started; restarts made so far */
    double *win_E;
    uint64_t win_cap, win_n, win_stuck, win_full;
    int windows, restarts;
    /* per transition */
    double H0;
    uint64_t n_leapfrog;
    double sum_metro;
    int divergent;
} nuts;

/* ---- adaptation (the engine's services) --------------------------------- */

/* Restarts the step-size adaptation around h0 with this sampler's
 * constants. */
static void da_restart(nuts *s, const drift_services *svc, drift_chain *c,
                       double h0)
{
    svc->da_restart(c, &s->da, h0, s->delta);
    s->da.gamma = s->gamma;
    s->da.kappa = s->kappa;
    s->da.t0 = s->t0;
}

/* ---- the integrator ------------------------------------------------------ */

static double dot(const double *a, const double *b, size_t d)
{
    double r = 0;
    for (size_t k = 0; k < d; k++)
        r += a[k] * b[k];
    return r;
}

/* log(exp(a) + exp(b)), exact for -inf arguments. */
static double log_sum_exp(double a, double b)
{
    if (a == -INFINITY)
        return b;
    if (b == -INFINITY)
        return a;
    return a > b ? a + log1p(exp(b - a)) : b + log1p(exp(a - b));
}

/* One leapfrog step of size h from z, in place; ps gets M^{-1} p at the
 * end.  Returns DRIFT_OK with z->U = +inf where the density or gradient is
 * not finite (the caller sees a divergence), or a real error. */
static int leapfrog(nuts *s, const drift_services *svc, drift_chain *c,
                    nuts_state *z, double h, double *ps)
{
    size_t d = s->d;
    for (size_t k = 0; k < d; k++)
        z->p[k] -= 0.5 * h * z->g[k];
    svc->metric_inv_mul(c, z->p, ps);
    for (size_t k = 0; k < d; k++)
        z->q[k] += h * ps[k];
    int rc = svc->grad_full(c, z->q, z->g, &z->U);
    if (rc == DRIFT_ENONFINITE || (rc == DRIFT_OK && !isfinite(z->U))) {
        z->U = INFINITY;
        /* The momentum is meaningless now; keep it finite so the sums the
         * criterion reads stay numbers (the subtree is dropped anyway). */
        svc->metric_inv_mul(c, z->p, ps);
        return DRIFT_OK;
    }
    if (rc)
        return rc;
    for (size_t k = 0; k < d; k++)
        z->p[k] -= 0.5 * h * z->g[k];
    svc->metric_inv_mul(c, z->p, ps);
    return DRIFT_OK;
}

/* Hamiltonian at z whose sharp momentum is ps; NaN counts as +inf. */
static double hamiltonian(const nuts *s, const nuts_state *z, const double *ps)
{
    double H = z->U + 0.5 * dot(z->p, ps, s->d);
    return isnan(H) ? INFINITY : H;
}

/* ---- the tree ------------------------------------------------------------ */

static int compute_criterion(const nuts *s, const double *ps_minus,
                             const double *ps_plus, const double *rho)
{
    return dot(ps_plus, rho, s->d) > 0 && dot(ps_minus, rho, s->d) > 0;
}

static void copy(double *to, const double *from, size_t d)
{
    memcpy(to, from, d * sizeof *to);
}

static void swap_points(nuts_point **a, nuts_point **b)
{
    nuts_point *t = *a;
    *a = *b;
    *b = t;
}

/* The storage of level k of the recursion, allocated when first reached
 * (a tree rarely gets deep, and d may be large). */
static int level_ready(nuts *s, const drift_services *svc, drift_chain *c,
                       int k)
{
    nuts_level *L = &s->lv[k];
    if (L->prop)
        return DRIFT_OK;
    double *m = svc->alloc(c, 8 * s->d * sizeof(double));
    if (!m)
        return DRIFT_ENOMEM;
    size_t d = s->d;
    L->ps_init_end = m;
    L->p_init_end = m + d;
    L->rho_init = m + 2 * d;
    L->ps_final_beg = m + 3 * d;
    L->p_final_beg = m + 4 * d;
    L->rho_final = m + 5 * d;
    L->slot.q = m + 6 * d;
    L->slot.g = m + 7 * d;
    L->prop = &L->slot;
    return DRIFT_OK;
}

/* Builds a subtree of 2^depth leapfrog steps from z in direction sign,
 * moving z to its far end.  *propose gets the subtree's multinomial draw;
 * ps_beg/p_beg and ps_end/p_end the (sharp) momenta at its two ends; rho
 * and *log_w accumulate the summed momentum and the log sum of weights.
 * *valid is 0 when the subtree diverged or turned on itself. */
static int build_tree(nuts *s, const drift_services *svc, drift_chain *c,
                      int depth, nuts_state *z, nuts_point **propose,
                      double *ps_beg, double *ps_end, double *rho,
                      double *p_beg, double *p_end, double sign,
                      double *log_w, int *valid)
{
    size_t d = s->d;
    int rc;
    if (depth == 0) {
        if ((rc = leapfrog(s, svc, c, z, sign * s->eps_used, ps_beg)))
            return rc;
        s->n_leapfrog++;
        double h = hamiltonian(s, z, ps_beg);
        if (h - s->H0 > NUTS_MAX_DELTA_H)
            s->divergent = 1;
        double dH = s->H0 - h;
        *log_w = log_sum_exp(*log_w, dH);
        s->sum_metro += dH > 0 ? 1.0 : exp(dH);
        nuts_point *pr = *propose;
        copy(pr->q, z->q, d);
        copy(pr->g, z->g, d);
        pr->U = z->U;
        pr->H = h;
        copy(ps_end, ps_beg, d);
        for (size_t k = 0; k < d; k++)
            rho[k] += z->p[k];
        copy(p_beg, z->p, d);
        copy(p_end, z->p, d);
        *valid = !s->divergent;
        return DRIFT_OK;
    }
    if ((rc = level_ready(s, svc, c, depth)))
        return rc;
    nuts_level *L = &s->lv[depth];

    /* The initial half. */
    double log_w_init = -INFINITY;
    memset(L->rho_init, 0, d * sizeof(double));
    rc = build_tree(s, svc, c, depth - 1, z, propose, ps_beg, L->ps_init_end,
                    L->rho_init, p_beg, L->p_init_end, sign, &log_w_init,
                    valid);
    if (rc || !*valid)
        return rc;

    /* The final half. */
    double log_w_final = -INFINITY;
    memset(L->rho_final, 0, d * sizeof(double));
    rc = build_tree(s, svc, c, depth - 1, z, &L->prop, L->ps_final_beg,
                    ps_end, L->rho_final, L->p_final_beg, p_end, sign,
                    &log_w_final, valid);
    if (rc || !*valid)
        return rc;

    /* Multinomial choice between the halves, unbiased within a subtree. */
    double log_w_sub = log_sum_exp(log_w_init, log_w_final);
    *log_w = log_sum_exp(*log_w, log_w_sub);
    if (log_w_final > log_w_sub ||
        svc->uniform(c) < exp(log_w_final - log_w_sub))
        swap_points(propose, &L->prop);

    /* The criterion over the merged subtree, and across its halves: the
     * initial half with the first point of the final one, and the final
     * half with the last point of the initial one. */
    double *rs = s->rho_sub;
    for (size_t k = 0; k < d; k++) {
        rs[k] = L->rho_init[k] + L->rho_final[k];
        rho[k] += rs[k];
    }
    int ok = compute_criterion(s, ps_beg, ps_end, rs);
    for (size_t k = 0; k < d; k++)
        rs[k] = L->rho_init[k] + L->p_final_beg[k];
    ok = ok && compute_criterion(s, ps_beg, L->ps_final_beg, rs);
    for (size_t k = 0; k < d; k++)
        rs[k] = L->rho_final[k] + L->p_init_end[k];
    ok = ok && compute_criterion(s, L->ps_init_end, ps_end, rs);
    *valid = ok;
    return DRIFT_OK;
}

/* One NUTS transition from the chain's point (s->q, s->g, s->U); leaves the
 * draw there and *accept_stat, *energy set. */
static int transition(nuts *s, const drift_services *svc, drift_chain *c,
                      double *accept_stat, double *energy, int *depth_out)
{
    size_t d = s->d;
    int rc;
    s->eps_used = s->eps;
    if (s->jitter > 0)
        s->eps_used *= 1.0 + s->jitter * (2.0 * svc->uniform(c) - 1.0);

    /* Both ends start at the current point with a fresh momentum. */
    copy(s->fwd.q, s->q, d);
    copy(s->fwd.g, s->g, d);
    s->fwd.U = s->U;
    svc->metric_draw(c, s->fwd.p);
    svc->metric_inv_mul(c, s->fwd.p, s->ps_ff);
    s->H0 = hamiltonian(s, &s->fwd, s->ps_ff);
    copy(s->bck.q, s->q, d);
    copy(s->bck.g, s->g, d);
    copy(s->bck.p, s->fwd.p, d);
    s->bck.U = s->U;
    copy(s->ps_fb, s->ps_ff, d);
    copy(s->ps_bf, s->ps_ff, d);
    copy(s->ps_bb, s->ps_ff, d);
    copy(s->p_ff, s->fwd.p, d);
    copy(s->p_fb, s->fwd.p, d);
    copy(s->p_bf, s->fwd.p, d);
    copy(s->p_bb, s->fwd.p, d);
    copy(s->rho, s->fwd.p, d);

    nuts_point *smp = s->sample;
    copy(smp->q, s->q, d);
    copy(smp->g, s->g, d);
    smp->U = s->U;
    smp->H = s->H0;

    double log_w = 0; /* log sum of exp(H0 - H) over the trajectory */
    s->n_leapfrog = 0;
    s->sum_metro = 0;
    s->divergent = 0;
    int depth = 0;
    while (depth < s->max_depth) {
        memset(s->rho_fwd, 0, d * sizeof(double));
        memset(s->rho_bck, 0, d * sizeof(double));
        double log_w_sub = -INFINITY;
        int valid = 0;
        if (svc->uniform(c) > 0.5) {
            /* Forward: the old trajectory becomes the backward part. */
            copy(s->rho_bck, s->rho, d);
            copy(s->p_bf, s->p_ff, d);
            copy(s->ps_bf, s->ps_ff, d);
            rc = build_tree(s, svc, c, depth, &s->fwd, &s->propose, s->ps_fb,
                            s->ps_ff, s->rho_fwd, s->p_fb, s->p_ff, 1.0,
                            &log_w_sub, &valid);
        } else {
            copy(s->rho_fwd, s->rho, d);
            copy(s->p_fb, s->p_bb, d);
            copy(s->ps_fb, s->ps_bb, d);
            rc = build_tree(s, svc, c, depth, &s->bck, &s->propose, s->ps_bf,
                            s->ps_bb, s->rho_bck, s->p_bf, s->p_bb, -1.0,
                            &log_w_sub, &valid);
        }
        if (rc)
            return rc;
        if (!valid)
            break;
        depth++;
        /* Biased progressive sampling: favour the new subtree. */
        if (log_w_sub > log_w || svc->uniform(c) < exp(log_w_sub - log_w))
            swap_points(&s->sample, &s->propose);
        log_w = log_sum_exp(log_w, log_w_sub);

        for (size_t k = 0; k < d; k++)
            s->rho[k] = s->rho_bck[k] + s->rho_fwd[k];
        int ok = compute_criterion(s, s->ps_bb, s->ps_ff, s->rho);
        for (size_t k = 0; k < d; k++)
            s->rho_ext[k] = s->rho_bck[k] + s->p_fb[k];
        ok = ok && compute_criterion(s, s->ps_bb, s->ps_fb, s->rho_ext);
        for (size_t k = 0; k < d; k++)
            s->rho_ext[k] = s->rho_fwd[k] + s->p_bf[k];
        ok = ok && compute_criterion(s, s->ps_bf, s->ps_ff, s->rho_ext);
        if (!ok)
            break;
    }
    smp = s->sample;
    copy(s->q, smp->q, d);
    copy(s->g, smp->g, d);
    s->U = smp->U;
    *energy = smp->H;
    *accept_stat = s->n_leapfrog ? s->sum_metro / (double)s->n_leapfrog : 0;
    *depth_out = depth;
    return DRIFT_OK;
}

/* ---- step-size heuristic ------------------------------------------------- */

/* One trial leapfrog step of size h from the chain's point with a fresh
 * momentum: H0 - H after it (-inf where it blew up). */
static int trial_step(nuts *s, const drift_services *svc, drift_chain *c,
                      double h, double *dH)
{
    size_t d = s->d;
    nuts_state *z = &s->fwd;
    copy(z->q, s->q, d);
    copy(z->g, s->g, d);
    z->U = s->U;
    svc->metric_draw(c, z->p);
    svc->metric_inv_mul(c, z->p, s->ps_ff);
    double H0 = hamiltonian(s, z, s->ps_ff);
    int rc = leapfrog(s, svc, c, z, h, s->ps_ff);
    if (rc)
        return rc;
    *dH = H0 - hamiltonian(s, z, s->ps_ff);
    return DRIFT_OK;
}

/* Stan's initial step size: from s->eps, double while one leapfrog step
 * keeps the acceptance probability above 0.8, or halve until it does. */
static int init_stepsize(nuts *s, const drift_services *svc, drift_chain *c)
{
    if (s->d == 0 || !(s->eps > 0) || s->eps > NUTS_EPS_MAX)
        return DRIFT_OK;
    const double target = log(0.8);
    double dH;
    int rc = trial_step(s, svc, c, s->eps, &dH);
    if (rc)
        return rc;
    int dir = dH > target ? 1 : -1;
    for (;;) {
        if ((rc = trial_step(s, svc, c, s->eps, &dH)))
            return rc;
        if (dir == 1 && !(dH > target))
            break;
        if (dir == -1 && !(dH < target))
            break;
        s->eps = dir == 1 ? 2.0 * s->eps : 0.5 * s->eps;
        if (s->eps > NUTS_EPS_MAX) {
            svc->warn(c, "nuts: the step-size search passed 1e7 without "
                         "losing accuracy: the posterior looks improper "
                         "(flat in some direction); give every parameter "
                         "a proper prior");
            s->eps = NUTS_EPS_MAX;
            break;
        }
        if (s->eps == 0)
            return svc->fail(c, "nuts: no step size is small enough for "
                                "one leapfrog step to stay accurate at this "
                                "point: is the log density continuous?");
    }
    return DRIFT_OK;
}

/* ---- the approach to the posterior --------------------------------------- */

/* The drop in U, by one move of length at most one, that says a point is
 * far outside the posterior's bulk.  A point of the typical set lies
 * about d/2 above the potential's floor (give or take sqrt(d/2) for a
 * Gaussian posterior), so no move from there gains this much; the
 * starts that lose a chain lie 1e13 to 1e285 above it. */
static double descent_gain(size_t d)
{
    return 1000.0 + 100.0 * (double)d;
}

/* Moves the chain's point down the potential while a gradient step lowers
 * U by more than descent_gain(d): steepest descent with a backtracking
 * line search (Armijo's condition, from a move of length one in the
 * unconstrained space, halved while the potential there is not finite or
 * not low enough).  NUTS from rest on a slope as steep as exp(450 b)
 * (a raw count predictor's coefficient started at U(-2, 2)) builds
 * trajectories that turn on themselves after a few steps, so a chain
 * descends a little per iteration with a step size dual averaging keeps
 * collapsing, and can spend all of warmup there; a few line searches
 * cover the same ground.  Near the typical set a step gains less than the
 * threshold and the point is left where it is: what warmup sees there
 * is what Stan's would.  *steps gets the number of moves made, *gain the
 * first move's drop in U (0 when none). */
static int descend(nuts *s, const drift_services *svc, drift_chain *c,
                   int *steps, double *gain)
{
    size_t d = s->d;
    double *q = s->fwd.q, *g = s->fwd.g, need = descent_gain(d);
    *steps = 0;
    *gain = 0;
    for (int it = 0; it < NUTS_DESCENT_STEPS; it++) {
        /* |g|, scaled first: far out its square overflows. */
        double big = 0, ss = 0;
        for (size_t k = 0; k < d; k++)
            big = fmax(big, fabs(s->g[k]));
        if (!(big > 0) || !isfinite(big))
            return DRIFT_OK;
        for (size_t k = 0; k < d; k++)
            ss += (s->g[k] / big) * (s->g[k] / big);
        double gn = big * sqrt(ss);
        double t = 1.0, U = INFINITY;
        int found = 0;
        for (int h = 0; h < NUTS_DESCENT_HALVINGS; h++, t *= 0.5) {
            for (size_t k = 0; k < d; k++)
                q[k] = s->q[k] - t * (s->g[k] / big) / sqrt(ss);
            int rc = svc->grad_full(c, q, g, &U);
            if (rc == DRIFT_ENONFINITE)
                continue;
            if (rc)
                return rc;
            if (isfinite(U) && U <= s->U - 1e-4 * t * gn) {
                found = 1;
                break;
            }
        }
        if (!found || !(s->U - U > need))
            return DRIFT_OK;
        if (it == 0)
            *gain = s->U - U;
        copy(s->q, q, d);
        copy(s->g, g, d);
        s->U = U;
        (*steps)++;
    }
    return DRIFT_OK;
}

/* The descent at the start of warmup or at the end of a slow window, and
 * the one line that says it moved the chain. */
static int approach(nuts *s, const drift_services *svc, drift_chain *c,
                    const char *when)
{
    int steps;
    double gain;
    int rc = descend(s, svc, c, &steps, &gain);
    if (rc || steps == 0)
        return rc;
    char msg[320];
    snprintf(msg, sizeof msg,
             "nuts: %s the chain was far outside the posterior (one "
             "gradient step lowered -log p by %.3g): moved it down by %d "
             "line search%s before adapting there",
             when, gain, steps, steps == 1 ? "" : "es");
    /* A note, not a warning: the chain is in the bulk before adaptation,
     * and the draws are as right as any other start's. */
    const drift_report_services *rep =
        svc->table(c, DRIFT_TABLE_REPORT, 1u);
    if (rep)
        rep->note(c, msg);
    else
        svc->warn(c, msg);
    return DRIFT_OK;
}

/* ---- warmup's own check -------------------------------------------------- */

/* Restarts of one chain's warmup at most (one per slow window at most). */
#define NUTS_MAX_RESTARTS 3
/* A window says the chain is lost when at least this share of its
 * iterations did not move. */
#define NUTS_STUCK_SHARE 0.9
/* ... or when its energy still fell by this many times descent_gain over
 * the window's second half.  A chain that the approach left just short of
 * that gain per line search can still be on its way in at the second
 * window's end, falling by 2000 to 5000 there in a 4-parameter
 * regression, and gets there; the crawling chains measured fell by 1e38
 * to 1e255 over such a stretch. */
#define NUTS_LOST_DROP 10.0
/* The fewest iterations a window's verdict rests on, and the most it
 * keeps (a longer window is judged on its first ones). */
#define NUTS_CHECK_MIN 20
#define NUTS_CHECK_CAP 65536

/* Notes one warmup iteration for the check at the window's end. */
static void window_record(nuts *s, double energy, int depth)
{
    if (s->win_n >= s->win_cap)
        return;
    s->win_E[s->win_n++] = energy;
    if (depth == 0)
        s->win_stuck++;
    if (depth >= s->max_depth)
        s->win_full++;
}

static void window_clear(nuts *s)
{
    s->win_n = s->win_stuck = s->win_full = 0;
}

/* Whether the window that just ended shows a chain that warmup has lost,
 * judged from this chain's own draws (its siblings may not have started:
 * chains beyond the cores are queued); the reason into why.  Two
 * signatures, never seen in a chain that has reached the posterior:
 * - stuck: nearly every trajectory diverged at its first step, so the
 *   chain did not move (far out on a slope whose gradient overflows any
 *   step the adaptation tries);
 * - still descending (judged from the second slow window after warmup
 *   started, and in a window's second half: until then the chain may
 *   still be on its way in from the initial point, as every chain from a
 *   random start is): the energy fell by more than ten times
 *   descent_gain, which no chain in the typical set loses over any
 *   stretch (its energy varies by about sqrt(d/2) about a fixed level):
 *   NUTS crawling down a steep slope with a step size that dual averaging
 *   keeps tiny there (the chain would end warmup with its E-BFMI near
 *   0.005 and its step 1e-20 of its siblings'). */
static int window_lost(const nuts *s, char *why, size_t n_why)
{
    uint64_t n = s->win_n;
    if (n < NUTS_CHECK_MIN)
        return 0;
    if ((double)s->win_stuck >= NUTS_STUCK_SHARE * (double)n) {
        snprintf(why, n_why, "%llu of its last %llu iterations did not "
                             "move: every trajectory diverged at its first "
                             "step",
                 (unsigned long long)s->win_stuck, (unsigned long long)n);
        return 1;
    }
    uint64_t h = n / 2;
    double drop = s->win_E[h] - s->win_E[n - 1];
    if (s->windows > 0 && drop > NUTS_LOST_DROP * descent_gain(s->d)) {
        snprintf(why, n_why, "its energy still fell by %.3g over its last "
                             "%llu iterations%s: it has not reached the "
                             "posterior",
                 drop, (unsigned long long)(n - h),
                 s->win_full == n ? ", all at the maximum tree depth" : "");
        return 1;
    }
    return 0;
}

/* Starts the chain's warmup again from a new random point, as Stan draws
 * one (uniform in (-2, 2) on the unconstrained scale, drawn again up to
 * 100 times where the density or its gradient is not finite), from this
 * chain's own random stream: moved down first if it is far out, the step
 * size found afresh from the user's, its adaptation restarted there.
 * The metric the engine set from the lost window is left to the next
 * window, which estimates it from the new draws alone; the heuristic's
 * step makes up for its scale meanwhile. */
static int restart_warmup(nuts *s, const drift_services *svc, drift_chain *c,
                          const char *why)
{
    size_t d = s->d;
    int found = 0;
    for (int t = 0; t < 100 && !found; t++) {
        for (size_t k = 0; k < d; k++)
            s->fwd.q[k] = 4.0 * svc->uniform(c) - 2.0;
        double U;
        int rc = svc->grad_full(c, s->fwd.q, s->fwd.g, &U);
        if (rc && rc != DRIFT_ENONFINITE)
            return rc;
        if (rc == DRIFT_OK && isfinite(U)) {
            copy(s->q, s->fwd.q, d);
            copy(s->g, s->fwd.g, d);
            s->U = U;
            found = 1;
        }
    }
    char msg[400];
    if (!found) {
        snprintf(msg, sizeof msg,
                 "nuts: warmup lost the chain by iteration %llu (%s); no new "
                 "initial point with a finite density in 100 draws, so it "
                 "goes on from where it is",
                 (unsigned long long)svc->iteration(c), why);
        svc->warn(c, msg);
        return DRIFT_OK;
    }
    snprintf(msg, sizeof msg,
             "nuts: warmup lost the chain by iteration %llu (%s): restarted "
             "its warmup from a new random initial point",
             (unsigned long long)svc->iteration(c), why);
    svc->warn(c, msg);
    s->restarts++;
    s->windows = -1; /* the window end that restarted counts as none */
    int rc = approach(s, svc, c, "at the new initial point");
    s->eps = s->eps0;
    return rc;
}

/* ---- metric=nutpie ------------------------------------------------------ */

/* metric=nutpie adapts a diagonal metric the way nutpie (Seyboldt's
 * nuts-rs) does: M^-1 starts at 1/|grad U| at the point warmup starts
 * from and is then set, after every warmup iteration, to
 * sqrt(var(theta) / var(grad U)) per coordinate over the draws of the
 * foreground window; for a Gaussian target with diagonal covariance that
 * is the variance exactly, from any points, however little they have
 * spread (it minimises the Fisher divergence between the target and a
 * Gaussian of diagonal covariance).  The windows overlap: every draw that
 * moved goes to the foreground and to the background estimator; when the
 * background holds a window's worth, it becomes the foreground and a new
 * background starts.  Windows are 10 draws in the early phase (the first
 * 30% of warmup), then 80 growing by half at each switch; no switch is
 * made that the next window could not complete before the last 15% of
 * warmup, where the metric is fixed and the step size alone adapts.
 * The step size is found afresh and its dual averaging restarted when the
 * metric is first set from draws, as nutpie does; otherwise it adapts
 * throughout. */

/* metric=nutpie_lowrank is nutpie's low-rank modified mass matrix on the
 * same schedule: the estimators keep the scatter matrices of the draws
 * and of the gradients; with D = diag(sigma_k), sigma_k^2 the diagonal
 * estimate above, the draws scaled by D^-1 and the gradients by D have
 * scatter matrices Sx and Sg, and the covariance C solving
 * C (Sg/gamma + I) C = Sx/gamma + I (their geometric mean, for a Gaussian
 * target its covariance exactly in the span of the draws) is taken
 * along its eigenvectors whose eigenvalues lie beyond [1/2, 2], as the
 * identity elsewhere: M^-1 = D (I + sum_k (lambda_k - 1) u_k u_k') D,
 * kept as a dense metric.  Each update costs O(d^3): a model of a few
 * hundred parameters at most. */

/* Where the parts of an estimator w lie: the draws' mean and scatter
 * (d, and d or d x d), then the gradients'. */
static double *np_part(const nuts *s, double *w, int grad, int scatter)
{
    size_t m = s->np_lowrank ? s->d * s->d : s->d;
    return w + (size_t)grad * (s->d + m) + (size_t)scatter * s->d;
}

/* Adds one point and its gradient to the estimator w that holds n points
 * before the call (Welford's updates; a scatter matrix gains
 * n/(n+1) delta delta'). */
static void np_add(nuts *s, double *w, uint64_t n)
{
    size_t d = s->d;
    double inv_n = 1.0 / (double)(n + 1), f = (double)n * inv_n;
    const double *v[2] = {s->q, s->g};
    for (int j = 0; j < 2; j++) {
        double *mean = np_part(s, w, j, 0), *m2 = np_part(s, w, j, 1);
        double *delta = s->np_tmp;
        for (size_t k = 0; k < d; k++) {
            delta[k] = v[j][k] - mean[k];
            mean[k] += delta[k] * inv_n;
        }
        if (!s->np_lowrank) {
            for (size_t k = 0; k < d; k++)
                m2[k] += delta[k] * (v[j][k] - mean[k]);
            continue;
        }
        for (size_t i = 0; i < d; i++)
            for (size_t k = 0; k < d; k++)
                m2[i * d + k] += f * delta[i] * delta[k];
    }
}

/* Empties both estimators and puts the chain's point in them: the start
 * of metric=nutpie's adaptation, at init and when warmup restarts. */
static void np_begin(nuts *s)
{
    memset(s->np_fg, 0, 2 * s->np_size * sizeof *s->np_fg);
    np_add(s, s->np_fg, 0);
    np_add(s, s->np_bg, 0);
    s->np_n[0] = s->np_n[1] = 1;
    s->np_window = NUTS_NP_WINDOW;
    s->np_est_n = 0;
    s->np_set = 0;
}

/* Sets the engine's metric to out (d values, or d x d). */
static int np_set_metric(nuts *s, drift_chain *c, const double *out)
{
    if (!s->np_lowrank)
        return s->mx->set_diag(c, out);
    int rc = s->mx->set_dense(c, out);
    return rc == 1 ? DRIFT_OK : rc; /* not positive definite: kept */
}

/* Starts the metric again at 1/|grad U| at the chain's point (bounded;
 * a zero or non-finite gradient keeps the coordinate's value, or under
 * nutpie_lowrank takes 1). */
static int np_restart_metric(nuts *s, drift_chain *c)
{
    size_t d = s->d;
    double *out = s->np_tmp;
    if (s->np_lowrank)
        memset(out, 0, d * d * sizeof *out);
    for (size_t k = 0; k < d; k++) {
        double a = fabs(s->g[k]);
        double v = a > 0 && isfinite(a)
                       ? fmin(fmax(1.0 / a, NUTS_NP_START_MIN),
                              NUTS_NP_START_MAX)
                       : s->np_lowrank ? 1.0 : NAN;
        out[s->np_lowrank ? k * d + k : k] = v;
    }
    return np_set_metric(s, c, out);
}

/* The eigendecomposition of the symmetric d x d a, in place: row k of a
 * becomes the unit eigenvector of w[k].  -1 when LAPACK fails. */
static int sym_eig(nuts *s, double *a, double *w)
{
    blasint n = (blasint)s->d, lwork = s->np_lwork, liwork = s->np_liwork;
    blasint info = 0;
    dsyevd_("V", "U", &n, a, &n, w, s->np_tmp + 6 * s->d * s->d + 2 * s->d,
            &lwork, s->np_iwork, &liwork, &info);
    return info ? -1 : 0;
}

/* out = V' diag(f) V for the eigenvectors V (rows) of sym_eig; tmp d x d. */
static void sym_fn(size_t d, const double *v, const double *f, double *tmp,
                   double *out)
{
    for (size_t k = 0; k < d; k++)
        for (size_t j = 0; j < d; j++)
            tmp[k * d + j] = f[k] * v[k * d + j];
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)d, (int)d,
                (int)d, 1.0, v, (int)d, tmp, (int)d, 0.0, out, (int)d);
}

/* out = a b a (d x d each, row-major); tmp d x d. */
static void sandwich(size_t d, const double *a, const double *b, double *tmp,
                     double *out)
{
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)d, (int)d,
                (int)d, 1.0, a, (int)d, b, (int)d, 0.0, tmp, (int)d);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)d, (int)d,
                (int)d, 1.0, tmp, (int)d, a, (int)d, 0.0, out, (int)d);
}

/* metric=nutpie_lowrank's M^-1 from the foreground into out (the first
 * d x d of np_tmp); -1 when the window gives none (no spread in some
 * coordinate, or LAPACK failed): the metric is then kept. */
static int np_lowrank_estimate(nuts *s)
{
    size_t d = s->d, dd = d * d;
    double *out = s->np_tmp, *cx = out + dd, *cg = cx + dd, *v = cg + dd;
    double *ga = v + dd, *gb = ga + dd, *sd = gb + dd, *e = sd + d;
    const double *sx = np_part(s, s->np_fg, 0, 1);
    const double *sg = np_part(s, s->np_fg, 1, 1);
    for (size_t k = 0; k < d; k++) {
        double v2 = sqrt(sx[k * d + k] / sg[k * d + k]);
        if (!(v2 > 0 && isfinite(v2)))
            return -1;
        sd[k] = sqrt(fmin(fmax(v2, 1e-20), 1e20));
    }
    for (size_t i = 0; i < d; i++)
        for (size_t k = 0; k < d; k++) {
            double id = i == k ? 1.0 : 0.0;
            cx[i * d + k] = sx[i * d + k] / (sd[i] * sd[k]) / NUTS_NP_GAMMA + id;
            cg[i * d + k] = sg[i * d + k] * sd[i] * sd[k] / NUTS_NP_GAMMA + id;
        }
    /* Cg^(1/2) into ga, Cg^(-1/2) into gb. */
    if (sym_eig(s, cg, e))
        return -1;
    for (size_t k = 0; k < d; k++) {
        if (!(e[k] > 0))
            return -1;
        e[k] = sqrt(e[k]);
    }
    sym_fn(d, cg, e, v, ga);
    for (size_t k = 0; k < d; k++)
        e[k] = 1.0 / e[k];
    sym_fn(d, cg, e, v, gb);
    /* (Cg^(1/2) Cx Cg^(1/2))^(1/2) into cx, then C = Cg^(-1/2) (.) Cg^(-1/2)
     * into cg. */
    sandwich(d, ga, cx, v, cg);
    if (sym_eig(s, cg, e))
        return -1;
    for (size_t k = 0; k < d; k++)
        e[k] = sqrt(fmax(e[k], 0.0));
    sym_fn(d, cg, e, v, cx);
    sandwich(d, gb, cx, v, cg);
    /* C's eigenvalues beyond [1/2, 2], the identity elsewhere. */
    for (size_t i = 0; i < d; i++)
        for (size_t k = 0; k < i; k++)
            cg[i * d + k] = cg[k * d + i] =
                0.5 * (cg[i * d + k] + cg[k * d + i]);
    if (sym_eig(s, cg, e))
        return -1;
    for (size_t k = 0; k < d; k++)
        e[k] = e[k] > NUTS_NP_CUTOFF || e[k] < 1.0 / NUTS_NP_CUTOFF
                   ? e[k] - 1.0
                   : 0.0;
    sym_fn(d, cg, e, v, out);
    for (size_t i = 0; i < d; i++)
        for (size_t k = 0; k <= i; k++) {
            double a = 0.5 * (out[i * d + k] + out[k * d + i]);
            a = (a + (i == k ? 1.0 : 0.0)) * sd[i] * sd[k];
            out[i * d + k] = out[k * d + i] = a;
        }
    return 0;
}

/* metric=auto's fallback: the foreground draws' variance, regularised
 * towards 1e-3 as Stan regularises its diagonal estimate, as a diagonal
 * dense metric into np_tmp; -1 when a coordinate has no spread. */
static int np_diag_estimate(nuts *s)
{
    size_t d = s->d;
    double n = (double)s->np_n[0], *out = s->np_tmp;
    const double *sx = np_part(s, s->np_fg, 0, 1);
    memset(out, 0, d * d * sizeof *out);
    for (size_t k = 0; k < d; k++) {
        double v = sx[k * d + k] / (n - 1.0);
        v = n / (n + 5.0) * v + 1e-3 * 5.0 / (n + 5.0);
        if (!(v > 0) || !isfinite(v))
            return -1;
        out[k * d + k] = v;
    }
    return 0;
}

/* One warmup iteration of metric=nutpie, after the transition: the new
 * draw (when it moved) into both estimators, a switch when one is due,
 * and the metric from the foreground. */
static int np_adapt(nuts *s, const drift_services *svc, drift_chain *c,
                    int moved)
{
    size_t d = s->d;
    uint64_t it = svc->iteration(c), w = svc->run_info(c)->warmup;
    uint64_t early_end = (uint64_t)(NUTS_NP_EARLY_SHARE * (double)w);
    uint64_t final = w - (uint64_t)(NUTS_NP_FINAL_SHARE * (double)w);
    if (it >= final) {
        /* A chain that took auto's way out ends its warmup as Stan's
         * does: the step size's averaging started afresh for the
         * final stretch, whose short average keeps the step on the
         * careful side (Stan's accept_stat ends near 0.9 at delta 0.8). */
        if (it == final && s->np_diag)
            da_restart(s, svc, c, s->eps);
        return DRIFT_OK;
    }
    int early = it < early_end;
    if (s->np_auto && !s->np_diag && !early && s->divergent &&
        ++s->np_div >= NUTS_AUTO_DIVERGENCES) {
        char msg[300];
        snprintf(msg, sizeof msg,
                 "nuts: metric=auto: %d transitions diverged in warmup by "
                 "iteration %llu: the draws' variance, not the low-rank "
                 "metric, sets the metric from here on",
                 NUTS_AUTO_DIVERGENCES, (unsigned long long)it);
        const drift_report_services *rep =
            svc->table(c, DRIFT_TABLE_REPORT, 1u);
        if (rep)
            rep->note(c, msg);
        s->np_diag = 1;
        s->np_set = 0; /* the step size is found afresh for it */
    }
    /* The first later window is at least what the background holds. */
    if (!early && it == early_end && s->np_n[1] > s->np_window)
        s->np_window = s->np_n[1];
    if (moved) {
        np_add(s, s->np_fg, s->np_n[0]++);
        np_add(s, s->np_bg, s->np_n[1]++);
    }
    uint64_t len = early ? NUTS_NP_EARLY_WINDOW : s->np_window;
    uint64_t next = NUTS_NP_EARLY_WINDOW;
    if (!early) {
        next = (uint64_t)llround((double)s->np_window * NUTS_NP_GROWTH);
        if (next <= s->np_window)
            next = s->np_window + 1;
    }
    if (s->np_n[1] >= len && it + next <= final) {
        copy(s->np_fg, s->np_bg, s->np_size);
        memset(s->np_bg, 0, s->np_size * sizeof *s->np_bg);
        s->np_n[0] = s->np_n[1];
        s->np_n[1] = 0;
        if (!early)
            s->np_window = next;
    }
    if (s->np_n[0] < 3)
        return DRIFT_OK;
    if (s->np_diag) {
        if (np_diag_estimate(s))
            return DRIFT_OK;
    } else if (s->np_lowrank) {
        uint64_t n = s->np_n[0], last = s->np_est_n;
        uint64_t grow = (uint64_t)(NUTS_NP_REESTIMATE * (double)last);
        if (grow < s->d / 20)
            grow = s->d / 20;
        if (n >= last && n - last < (grow > 0 ? grow : 1))
            return DRIFT_OK;
        s->np_est_n = n;
        if (np_lowrank_estimate(s))
            return DRIFT_OK;
    } else {
        /* sqrt(var theta / var grad): the two variances share n - 1. */
        const double *sx = np_part(s, s->np_fg, 0, 1);
        const double *sg = np_part(s, s->np_fg, 1, 1);
        for (size_t k = 0; k < d; k++)
            s->np_tmp[k] = sqrt(sx[k] / sg[k]);
    }
    int rc = np_set_metric(s, c, s->np_tmp);
    if (rc || s->np_set)
        return rc;
    s->np_set = 1;
    if ((rc = init_stepsize(s, svc, c)))
        return rc;
    da_restart(s, svc, c, s->eps);
    return DRIFT_OK;
}

/* Whether OpenBLAS's level-3 routines, which nutpie_lowrank's estimates
 * and the engine's dense metric call, can have the work buffer of 128 MiB
 * and a little they reserve at their first call: under an address-space
 * limit (ulimit -v) that cannot hold it they retry for ever, so
 * metric=auto takes diag there (the engine refuses a dense metric asked
 * for by name, with that reason). */
static int blas_fits(void)
{
    void *p = malloc((size_t)136 << 20);
    free(p);
    return p != NULL;
}

/* ---- the plugin's entry points ------------------------------------------- */

static int nuts_init(void *state, const drift_services *svc, drift_chain *c,
                     const double *hp, double *theta)
{
    nuts *s = state;
    s->delta = hp[0];
    s->max_depth = (int)hp[1];
    s->metric = (int)hp[2];
    if (s->metric == NUTS_METRIC_AUTO) {
        s->metric = svc->dim(c) <= NUTS_AUTO_LOWRANK_MAX_D && blas_fits()
                        ? NUTS_METRIC_NUTPIE_LOWRANK
                        : DRIFT_METRIC_DIAG;
        s->np_auto = s->metric == NUTS_METRIC_NUTPIE_LOWRANK;
    }
    /* grad is a diagonal metric whose windows also see gradients. */
    s->grad_metric = s->metric == NUTS_METRIC_GRAD;
    if (s->grad_metric) {
        s->metric = DRIFT_METRIC_DIAG;
        DRIFT_NEED_TABLE(s->mx, drift_metric_services, svc, c,
                         DRIFT_TABLE_METRIC, 1, "nuts metric=grad");
    }
    /* nutpie's are a diagonal or a dense metric that nuts sets
     * itself. */
    s->np_lowrank = s->metric == NUTS_METRIC_NUTPIE_LOWRANK;
    s->nutpie = s->metric == NUTS_METRIC_NUTPIE || s->np_lowrank;
    if (s->nutpie) {
        s->metric = s->np_lowrank ? DRIFT_METRIC_DENSE : DRIFT_METRIC_DIAG;
        DRIFT_NEED_TABLE(s->mx, drift_metric_services, svc, c,
                         DRIFT_TABLE_METRIC, 2, "nuts metric=nutpie");
    }
    s->eps0 = hp[3];
    s->jitter = hp[4];
    s->gamma = hp[5];
    s->kappa = hp[6];
    s->t0 = hp[7];
    size_t d = s->d = svc->dim(c);
    /* 17 vectors of d: the point, both ends (q, p, g), 8 end momenta,
     * 5 momentum sums, 2 proposals (q, g). */
    double *m = svc->alloc(c, (2 + 9 + 8 + 5 + 4) * (d ? d : 1) *
                                  sizeof(double));
    s->lv = svc->alloc(c, (size_t)(s->max_depth + 1) * sizeof(nuts_level));
    if (!m || !s->lv)
        return DRIFT_ENOMEM;
    double **v[] = {&s->q, &s->g, &s->fwd.q, &s->fwd.p, &s->fwd.g, &s->bck.q,
                    &s->bck.p, &s->bck.g, &s->p_ff, &s->ps_ff, &s->p_fb,
                    &s->ps_fb, &s->p_bf, &s->ps_bf, &s->p_bb, &s->ps_bb,
                    &s->rho, &s->rho_fwd, &s->rho_bck, &s->rho_ext,
                    &s->rho_sub, &s->sample_slot.q, &s->sample_slot.g,
                    &s->propose_slot.q, &s->propose_slot.g};
    for (size_t k = 0; k < sizeof v / sizeof v[0]; k++)
        *v[k] = m + k * d;
    s->sample = &s->sample_slot;
    s->propose = &s->propose_slot;
    if (s->nutpie && d > 0) {
        size_t m = s->np_lowrank ? d * d : d, tmp = d;
        s->np_size = 2 * d + 2 * m;
        if (s->np_lowrank) {
            /* dsyevd's workspaces for d x d with eigenvectors: its own
             * answer, or LAPACK's documented minimum. */
            blasint n = (blasint)d, q = -1, iopt = 0, info = 0;
            double opt = 0, e = 0, a = 0;
            size_t lmin = 1 + 6 * d + 2 * d * d, imin = 3 + 5 * d;
            dsyevd_("V", "U", &n, &a, &n, &e, &opt, &q, &iopt, &q, &info);
            s->np_lwork = info == 0 && opt >= (double)lmin ? (int)opt
                                                           : (int)lmin;
            s->np_liwork = info == 0 && (size_t)iopt >= imin ? (int)iopt
                                                             : (int)imin;
            s->np_iwork = svc->alloc(c, (size_t)s->np_liwork *
                                            sizeof *s->np_iwork);
            if (!s->np_iwork)
                return DRIFT_ENOMEM;
            tmp = 6 * d * d + 2 * d + (size_t)s->np_lwork;
        }
        s->np_fg = svc->alloc(c, (2 * s->np_size + tmp) * sizeof(double));
        if (!s->np_fg)
            return DRIFT_ENOMEM;
        s->np_bg = s->np_fg + s->np_size;
        s->np_tmp = s->np_bg + s->np_size;
    }

    copy(s->q, theta, d);
    int rc = svc->grad_full(c, s->q, s->g, &s->U);
    if (rc == DRIFT_OK && !isfinite(s->U))
        rc = DRIFT_ENONFINITE;
    if (rc)
        return rc == DRIFT_ENONFINITE
                   ? svc->fail(c, "nuts: the log density or its gradient is "
                                  "not finite at the initial point")
                   : rc;
    if ((rc = svc->metric_use(c, (drift_metric_kind)s->metric)))
        return rc;
    if (svc->run_info(c)->warmup == 0)
        svc->warn(c, "nuts: no warmup (--warmup 0), so no adaptation: the "
                     "step size is the initial heuristic's and the metric "
                     "the identity; give --warmup 1000 (the default) unless "
                     "you know both are right");
    if (svc->run_info(c)->warmup > 0) {
        uint64_t w = svc->run_info(c)->warmup;
        s->win_cap = w < NUTS_CHECK_CAP ? w : NUTS_CHECK_CAP;
        s->win_E = svc->alloc(c, (size_t)s->win_cap * sizeof *s->win_E);
        if (!s->win_E)
            return DRIFT_ENOMEM;
        if ((rc = approach(s, svc, c, "at the initial point")))
            return rc;
        copy(theta, s->q, d);
        /* metric=grad and nutpie start from the gradient where warmup
         * starts. */
        if (s->grad_metric || (s->nutpie && !s->np_lowrank))
            s->mx->observe_grad(c, s->q, s->g);
        if (s->nutpie && d > 0) {
            np_begin(s);
            if (s->np_lowrank && (rc = np_restart_metric(s, c)))
                return rc;
        }
    }
    s->eps = s->eps0;
    if ((rc = init_stepsize(s, svc, c)))
        return rc;
    /* The step-size adaptation is centred on ten times the heuristic's
     * step, as Stan centres it after each window.  Stan centres the first
     * stretch on ten times the step the user gave instead (1), which costs
     * a chain whose initial step must be 1e-10 of that the first hundred
     * iterations: dual averaging shrinks the step by about e^-2.4 per
     * rejected iteration, every one of them a divergence. */
    da_restart(s, svc, c, s->eps);
    return DRIFT_OK;
}

static int nuts_step(void *state, const drift_services *svc, drift_chain *c,
                     double *theta)
{
    nuts *s = state;
    if (s->pending)
        return s->pending;
    double diag[6] = {0};
    double accept = 1, energy = -s->U;
    int depth = 0;
    int moved = 0;
    if (s->d > 0) {
        int rc = transition(s, svc, c, &accept, &energy, &depth);
        if (rc)
            return rc;
        moved = memcmp(theta, s->q, s->d * sizeof *theta) != 0;
        copy(theta, s->q, s->d);
    } else {
        energy = s->U;
    }
    diag[0] = accept;
    diag[1] = s->d ? s->eps_used : NAN;
    diag[2] = depth;
    diag[3] = (double)s->n_leapfrog;
    diag[4] = s->divergent;
    diag[5] = energy;
    if (s->adapting && s->d > 0) {
        window_record(s, energy, depth);
        s->eps = svc->da_update(c, &s->da, accept);
        if (s->nutpie) {
            int rc = np_adapt(s, svc, c, moved);
            if (rc)
                return rc;
        } else if (s->grad_metric) {
            s->mx->observe_grad(c, theta, s->g);
        } else {
            svc->metric_observe(c, theta);
        }
    }
    return svc->emit_draw(c, theta, -s->U, diag);
}

/* Stan's windowed warmup: the step size adapts from the first warmup step;
 * after each slow window (the engine has just set the metric from it) the
 * step size is found afresh for the new metric and its adaptation
 * restarts around it; at the end the averaged step size is kept. */
static void nuts_phase(void *state, const drift_services *svc, drift_chain *c,
                       drift_phase phase)
{
    nuts *s = state;
    if (s->d == 0)
        return;
    switch (phase) {
    case DRIFT_PHASE_WARMUP_START:
        s->adapting = 1;
        window_clear(s);
        s->windows = 0;
        break;
    case DRIFT_PHASE_WINDOW_END: {
        /* A chain the window shows lost starts warmup again, while slow
         * windows remain to adapt the metric to its new draws. */
        const drift_run_info *ri = svc->run_info(c);
        int last = svc->iteration(c) + ri->term_buffer >= ri->warmup;
        char why[200];
        int restarts = s->restarts;
        double U = s->U;
        if (!s->pending && !last && s->restarts < NUTS_MAX_RESTARTS &&
            window_lost(s, why, sizeof why))
            s->pending = restart_warmup(s, svc, c, why);
        window_clear(s);
        s->windows++;
        /* A chain still far out (on a slope where NUTS crawls) is moved
         * down before the next window adapts to where it is. */
        if (!s->pending) {
            char when[64];
            snprintf(when, sizeof when, "at warmup iteration %llu",
                     (unsigned long long)svc->iteration(c));
            s->pending = approach(s, svc, c, when);
        }
        /* metric=nutpie starts its adaptation again where a restarted
         * chain now is. */
        if (!s->pending && s->nutpie && s->restarts != restarts) {
            np_begin(s);
            s->pending = np_restart_metric(s, c);
        }
        /* metric=nutpie keeps adapting its step size across Stan's
         * window ends, unless the chain was moved. */
        if (s->nutpie && s->restarts == restarts && s->U == U)
            break;
        if (!s->pending)
            s->pending = init_stepsize(s, svc, c);
        da_restart(s, svc, c, s->eps);
        break;
    }
    case DRIFT_PHASE_WARMUP_END:
        s->adapting = 0;
        s->eps = svc->da_final(c, &s->da);
        svc->set_adapted(c, s->eps);
        break;
    default:
        break;
    }
}

/* The step size and its adaptation (eps, da, adapting, pending: set in
 * steps and phases), the chain's point q with g and U there, which the
 * next transition starts from (theta is the engine's copy of q), and
 * warmup's check: the restarts made and the current window's record.  The
 * trajectory's ends, momenta, proposals and tree levels are rewritten by
 * every transition before they are read. */
static int nuts_checkpoint(void *state, const drift_services *svc,
                           drift_chain *c)
{
    nuts *s = state;
    int rc = svc->ckpt_bytes(c, &s->eps, sizeof s->eps);
    if (!rc)
        rc = svc->ckpt_bytes(c, &s->da, sizeof s->da);
    if (!rc)
        rc = svc->ckpt_bytes(c, &s->adapting, sizeof s->adapting);
    if (!rc)
        rc = svc->ckpt_bytes(c, &s->pending, sizeof s->pending);
    if (!rc)
        rc = svc->ckpt_bytes(c, &s->U, sizeof s->U);
    if (!rc)
        rc = svc->ckpt_bytes(c, s->q, s->d * sizeof *s->q);
    if (!rc)
        rc = svc->ckpt_bytes(c, s->g, s->d * sizeof *s->g);
    if (!rc)
        rc = svc->ckpt_bytes(c, &s->restarts, sizeof s->restarts);
    if (!rc)
        rc = svc->ckpt_bytes(c, &s->windows, sizeof s->windows);
    uint64_t counts[3] = {s->win_n, s->win_stuck, s->win_full};
    if (!rc)
        rc = svc->ckpt_bytes(c, counts, sizeof counts);
    s->win_n = counts[0] < s->win_cap ? counts[0] : s->win_cap;
    s->win_stuck = counts[1];
    s->win_full = counts[2];
    if (!rc && s->win_n)
        rc = svc->ckpt_bytes(c, s->win_E, s->win_n * sizeof *s->win_E);
    /* metric=nutpie's estimators and schedule (the metric itself is the
     * engine's, in the engine's part of the checkpoint). */
    if (!rc && s->nutpie)
        rc = svc->ckpt_bytes(c, s->np_fg, 2 * s->np_size * sizeof *s->np_fg);
    if (!rc && s->nutpie)
        rc = svc->ckpt_bytes(c, s->np_n, sizeof s->np_n);
    if (!rc && s->nutpie)
        rc = svc->ckpt_bytes(c, &s->np_window, sizeof s->np_window);
    if (!rc && s->nutpie)
        rc = svc->ckpt_bytes(c, &s->np_set, sizeof s->np_set);
    if (!rc && s->np_lowrank)
        rc = svc->ckpt_bytes(c, &s->np_est_n, sizeof s->np_est_n);
    if (!rc && s->np_auto)
        rc = svc->ckpt_bytes(c, &s->np_diag, sizeof s->np_diag);
    if (!rc && s->np_auto)
        rc = svc->ckpt_bytes(c, &s->np_div, sizeof s->np_div);
    return rc;
}

static const drift_hparam nuts_hparams[] = {
    {"delta", DRIFT_HP_REAL, 0.8, 0, 1, DRIFT_HP_OPEN_LO | DRIFT_HP_OPEN_HI,
     NULL, "target acceptance statistic of the step-size adaptation "
           "(CmdStan's adapt delta)"},
    {"max_depth", DRIFT_HP_INT, 10, 1, 30, 0, NULL,
     "maximum tree depth: at most 2^max_depth - 1 leapfrog steps per "
     "iteration"},
    {"metric", DRIFT_HP_ENUM, 6, 0, 0, 0,
     "unit|diag|dense|grad|nutpie|nutpie_lowrank|auto",
     "metric (inverse mass matrix) adapted in warmup: unit, diag (Stan's: "
     "the draws' variance), dense (their covariance), grad (diagonal, "
     "after nutpie: started at 1/|gradient|, then sqrt(var(draws) / "
     "var(gradients)) from each slow window but the last, which takes the "
     "draws' variance) or nutpie (nutpie's: that estimate on nutpie's "
     "schedule, set after every iteration from overlapping windows of 10 "
     "draws, then 80 growing by half, fixed over the last 15% of warmup) "
     "or nutpie_lowrank (the same corrected along the eigenvectors of the "
     "draws' and gradients' covariances: nutpie's low-rank modified mass "
     "matrix, dense, O(d^3) an update) or auto (nutpie_lowrank up to 100 "
     "parameters, left for the draws' variance once 3 transitions diverge "
     "between 30% and 85% of warmup; diag beyond)"},
    {"stepsize", DRIFT_HP_REAL, 1, 0, INFINITY, DRIFT_HP_OPEN_LO, NULL,
     "initial step size, refined by Stan's doubling/halving heuristic"},
    {"jitter", DRIFT_HP_REAL, 0, 0, 1, DRIFT_HP_OPEN_HI, NULL,
     "step size drawn uniformly in stepsize * (1 +- jitter) each iteration"},
    {"gamma", DRIFT_HP_REAL, 0.05, 0, INFINITY, DRIFT_HP_OPEN_LO, NULL,
     "dual-averaging regularisation scale (Stan's gamma)"},
    {"kappa", DRIFT_HP_REAL, 0.75, 0, 1, DRIFT_HP_OPEN_LO, NULL,
     "dual-averaging relaxation exponent (Stan's kappa)"},
    {"t0", DRIFT_HP_REAL, 10, 0, INFINITY, DRIFT_HP_OPEN_LO, NULL,
     "dual-averaging iteration offset (Stan's t0)"},
};

static const char *const nuts_columns[] = {
    "accept_stat__", "stepsize__", "treedepth__",
    "n_leapfrog__",  "divergent__", "energy__"};

static const drift_sampler samplers[] = {
    {
        .name = "nuts",
        .summary = "No-U-Turn sampler (Stan's: multinomial, windowed "
                   "adaptation of step size and metric; exact, full data)",
        .hparams = nuts_hparams,
        .n_hparams = sizeof nuts_hparams / sizeof nuts_hparams[0],
        .columns = nuts_columns,
        .n_columns = sizeof nuts_columns / sizeof nuts_columns[0],
        .state_size = sizeof(nuts),
        .flags = DRIFT_SAMPLER_FULL_DATA,
        .init = nuts_init,
        .step = nuts_step,
        .phase = nuts_phase,
        .checkpoint = nuts_checkpoint,
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
