/* ewsg.c: exponentially weighted stochastic gradients (EWSG; Li, Wang, Zha
 * and Tao, "Improving sampling accuracy of stochastic gradient MCMC methods
 * via non-uniform subsampling of gradients", Algorithm 1) on the
 * Euler-Maruyama underdamped Langevin step of sghmc:
 *
 *     theta_{k+1} = theta_k + h r_k,
 *     r_{k+1}     = r_k - h gamma r_k - h g_I(theta_k) + sigma sqrt(h) xi_k,
 *
 * where g_I = grad U_prior + (N/b) sum_{i in I} grad U_i is the gradient of
 * a minibatch I of b rows (b = --batch; b = 1 is the paper's single index)
 * chosen not uniformly but by a short Metropolis chain over minibatches:
 * start from a minibatch I drawn from the access stream, then M times
 * propose a fresh one J and move to it with probability
 *
 *     min(1, exp(|x + a_J|^2 / 2 - |x + a_I|^2 / 2)),
 *     a_I = sqrt(h) g_I(theta_k) / sigma   (the paper's n a_i when b = 1).
 *
 * The weights exp(|x + a_I|^2 / 2) are the ratio of the full-gradient
 * transition density of r_{k+1} to the minibatch one, both evaluated at a
 * guess of r_{k+1} written in the standardised form
 * x = (r_{k+1} - r_k + h gamma r_k) / (sigma sqrt(h)).  The choices of x:
 *   r_next_r  r_{k+1} ~ r_k, x = sqrt(h) gamma r_k / sigma (the paper's);
 *   0, 1      x = 0 or the vector of ones, for study;
 *   r_next_0  r_{k+1} ~ 0, x = (h gamma - 1) r_k / (sigma sqrt(h)).
 * This acceptance is the paper's eq. (5) exactly.  With the default x the
 * selection correlates the gradient with r_k, which acts as extra friction
 * matched to the minibatch noise; to first order in h it raises, not
 * lowers, the chosen gradient's variance given (theta, r) against uniform
 * subsampling (derivation in examples/langevin/README.md).
 * Minibatches come from the engine's access stream (--access ra, the
 * default, gives the paper's uniform proposals); --grad-noise does not
 * reach them (per-row gradients stay exact).
 * Every gradient of the index chain is counted: (M + 1) b rows per step.
 * Columns: index_accept__ (the fraction of the M proposals accepted in the
 * step; its mean is the index chain's acceptance rate) and kinetic__ =
 * r'r / (2d).  Not for data-free models (no rows to choose from).
 *
 * Where the run has a mode (the engine's plan for this sampler at its
 * defaults finds one), the minibatch gradients are control variates
 * centred there (Baker, Fearnhead, Fox and Nemeth 2019), as the engine's
 * --gradient cv makes them for grad_batch:
 *
 *     g_I = grad U_prior + grad L(theta-hat)
 *           + (N/b) sum_{i in I} (grad U_i(theta) - grad U_i(theta-hat)),
 *
 * grad L the likelihood part of grad U summed over all rows (one data
 * pass per chain, at init); the index weights are computed from these
 * estimates, and each index costs 2b rows.  The chain then also runs in
 * the coordinates the mode's diagonal curvature whitens, theta = theta-hat
 * + S z with S = diag(sqrt(M^-1)) (the engine's DIAG metric, which starts
 * there): the same algorithm on the target of z, whose gradient is S g,
 * so that one step size and a unit friction suit every coordinate
 * (with raw scales a posterior sd of 0.007 needs steps a hundred times
 * smaller than one of 1, and the minibatch noise swamps them). */
#include <math.h>
#include <stdio.h>

#include <drift/sampler.h>

DRIFT_PLUGIN_LICENSE("MIT");

enum { X_R_NEXT_R = 0, X_ZERO = 1, X_ONE = 2, X_R_NEXT_0 = 3 };

typedef struct ewsg {
    double h, gamma, sigma;
    unsigned long M;
    int xmode;
    size_t d, b, N;
    double *r, *x, *gp, *gi, *gj, *sum, *xi;
    size_t *rows;
    /* control variates at the mode (NULL: plain minibatch gradients) */
    double *mode, *Lgrad, *sum0;
    double Lsum;
    double *S;              /* the whitening scales (NULL: none) */
} ewsg;

static int init(void *state, const drift_services *svc, drift_chain *c,
                const double *hp, double *theta)
{
    (void)theta;
    ewsg *s = state;
    s->h = hp[0];
    s->gamma = hp[1];
    s->sigma = isnan(hp[2]) ? sqrt(2.0 * s->gamma) : hp[2];
    s->M = (unsigned long)hp[3];
    s->xmode = (int)hp[4];
    s->d = svc->dim(c);
    s->b = svc->batch(c);
    s->N = svc->n_rows(c);
    if (s->N == 0)
        return svc->fail(c, "ewsg: the model has no data rows, so there is "
                            "no index to choose; use sghmc for a data-free "
                            "target");
    if (!(s->sigma > 0))
        return svc->fail(c, "ewsg: sigma must be positive (the index "
                            "weights divide by it); with gamma = 0 give "
                            "sigma explicitly");
    s->r = svc->alloc(c, s->d * sizeof(double));
    s->x = svc->alloc(c, s->d * sizeof(double));
    s->gp = svc->alloc(c, s->d * sizeof(double));
    s->gi = svc->alloc(c, s->d * sizeof(double));
    s->gj = svc->alloc(c, s->d * sizeof(double));
    s->sum = svc->alloc(c, s->d * sizeof(double));
    s->xi = svc->alloc(c, s->d * sizeof(double));
    s->rows = svc->alloc(c, s->b * sizeof(size_t));
    if (!s->r || !s->x || !s->gp || !s->gi || !s->gj || !s->sum || !s->xi ||
        !s->rows)
        return DRIFT_ENOMEM;
    svc->normal_fill(c, s->d, s->r);
    if (svc->mode(c, NULL, NULL) == DRIFT_OK) {
        s->mode = svc->alloc(c, s->d * sizeof(double));
        s->Lgrad = svc->alloc(c, s->d * sizeof(double));
        s->sum0 = svc->alloc(c, s->d * sizeof(double));
        if (!s->mode || !s->Lgrad || !s->sum0)
            return DRIFT_ENOMEM;
        double U, U0;
        int rc = svc->mode(c, s->mode, NULL);
        if (!rc)
            rc = svc->grad_full(c, s->mode, s->Lgrad, &U);
        if (!rc)
            rc = svc->grad_prior(c, s->mode, s->sum0, &U0);
        if (rc)
            return rc;
        for (size_t k = 0; k < s->d; k++)
            s->Lgrad[k] -= s->sum0[k];
        s->Lsum = U - U0;
        s->S = svc->alloc(c, s->d * sizeof(double));
        if (!s->S)
            return DRIFT_ENOMEM;
        if ((rc = svc->metric_use(c, DRIFT_METRIC_DIAG)))
            return rc;
        svc->metric_get(c, s->S);
        for (size_t k = 0; k < s->d; k++)
            s->S[k] = s->S[k] > 0 && isfinite(s->S[k]) ? sqrt(s->S[k]) : 1;
    }
    return DRIFT_OK;
}

/* The gradient estimate g (d) of the next minibatch of the access stream,
 * the matching estimate *U of U, and its weight exponent
 * *f = |x + sqrt(h) g / sigma|^2 / 2.  Counts b rows. */
static int minibatch(ewsg *s, const drift_services *svc, drift_chain *c,
                     const double *theta, double U0, double *g, double *U,
                     double *f)
{
    int rc = svc->next_batch(c, s->b, s->rows);
    if (rc)
        return rc;
    double Usum, Usum0 = 0;
    if ((rc = svc->grad_sum(c, theta, s->rows, s->b, s->sum, &Usum)))
        return rc;
    double scale = (double)s->N / (double)s->b, a = sqrt(s->h) / s->sigma;
    if (s->mode) {
        /* the same rows at the mode: the control variate */
        if ((rc = svc->grad_sum(c, s->mode, s->rows, s->b, s->sum0,
                                &Usum0)))
            return rc;
        for (size_t k = 0; k < s->d; k++)
            s->sum[k] -= s->sum0[k];
    }
    double ff = 0;
    for (size_t k = 0; k < s->d; k++) {
        g[k] = s->gp[k] + scale * s->sum[k] + (s->mode ? s->Lgrad[k] : 0);
        if (s->S) /* the gradient of the whitened target */
            g[k] *= s->S[k];
        double v = s->x[k] + a * g[k];
        ff += v * v;
    }
    *U = U0 + scale * (Usum - Usum0) + (s->mode ? s->Lsum : 0);
    *f = 0.5 * ff;
    return DRIFT_OK;
}

static int step(void *state, const drift_services *svc, drift_chain *c,
                double *theta)
{
    ewsg *s = state;
    double h = s->h, sh = sqrt(h);
    for (size_t k = 0; k < s->d; k++)
        switch (s->xmode) {
        case X_R_NEXT_R: s->x[k] = sh * s->gamma * s->r[k] / s->sigma; break;
        case X_ZERO: s->x[k] = 0; break;
        case X_ONE: s->x[k] = 1; break;
        default: s->x[k] = (h * s->gamma - 1) * s->r[k] / (s->sigma * sh);
        }
    double U0, Ui, Uj, fi, fj;
    int rc = svc->grad_prior(c, theta, s->gp, &U0);
    if (rc)
        return rc;
    if ((rc = minibatch(s, svc, c, theta, U0, s->gi, &Ui, &fi)))
        return rc;
    unsigned long accepted = 0;
    for (unsigned long m = 0; m < s->M; m++) {
        if ((rc = minibatch(s, svc, c, theta, U0, s->gj, &Uj, &fj)))
            return rc;
        /* Accept when log u < fj - fi; an overflowing fj accepts. */
        if (fj - fi >= 0 || log(svc->uniform(c)) < fj - fi) {
            double *t = s->gi;
            s->gi = s->gj;
            s->gj = t;
            Ui = Uj;
            fi = fj;
            accepted++;
        }
    }
    svc->normal_fill(c, s->d, s->xi);
    double noise = s->sigma * sh, decay = 1.0 - h * s->gamma, rr = 0;
    for (size_t k = 0; k < s->d; k++) {
        theta[k] += h * (s->S ? s->S[k] : 1.0) * s->r[k];
        s->r[k] = decay * s->r[k] - h * s->gi[k] + noise * s->xi[k];
        rr += s->r[k] * s->r[k];
    }
    double diag[2] = {s->M ? (double)accepted / (double)s->M : 0.0,
                      rr / (2.0 * (double)s->d)};
    return svc->emit_draw(c, theta, -Ui, diag);
}

/* The momentum r; x, the gradients, rows and xi are rewritten by every
 * step before they are read. */
static int checkpoint(void *state, const drift_services *svc, drift_chain *c)
{
    ewsg *s = state;
    return svc->ckpt_bytes(c, s->r, s->d * sizeof *s->r);
}

static const drift_hparam hparams[] = {
    {"h", DRIFT_HP_REAL, 1e-3, 0, INFINITY,
     DRIFT_HP_OPEN_LO | DRIFT_HP_STEP_SIZE, NULL,
     "step size: theta += h r; r += -h gamma r - h g_I + sigma sqrt(h) "
     "N(0, I)"},
    {"gamma", DRIFT_HP_REAL, 1.0, 0, INFINITY, 0, NULL,
     "friction gamma of dr = -gamma r dt - grad U dt + sigma dW"},
    {"sigma", DRIFT_HP_REAL, NAN, 0, INFINITY, DRIFT_HP_OPEN_LO, NULL,
     "noise amplitude; default (auto) sqrt(2 gamma), which makes exp(-U) "
     "invariant"},
    {"M", DRIFT_HP_INT, 1, 0, 1e6, 0, NULL,
     "length of the Metropolis chain over indices (minibatches) per step; "
     "each proposal costs b gradients; 0 is uniform subsampling"},
    {"x", DRIFT_HP_ENUM, 0, 0, 0, 0, "r_next_r|0|1|r_next_0",
     "the x of the index weights exp(|x + a_I|^2/2): r_next_r is "
     "sqrt(h) gamma r_k / sigma (the paper's), r_next_0 uses r_{k+1} = 0"},
};

static const char *const columns[] = {"index_accept__", "kinetic__"};

static const drift_sampler samplers[] = {{
    .name = "ewsg",
    .summary = "exponentially weighted stochastic gradients on underdamped "
               "Langevin (EWSG, Li et al.)",
    .hparams = hparams,
    .n_hparams = sizeof hparams / sizeof hparams[0],
    .columns = columns,
    .n_columns = 2,
    .state_size = sizeof(ewsg),
    .flags = DRIFT_SAMPLER_OWN_ESTIMATES,
    .default_batch = 1,
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
