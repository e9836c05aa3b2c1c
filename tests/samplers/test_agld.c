/* test_agld.c: the aggregated-gradient Langevin family (plugins/samplers/
 * agld.c) on Bayesian ridge regression (tests/plugins/ridge.c), whose
 * posterior N(m, A^-1) is known in closed form:
 *   - each of the nine snapshot x access variants (and svrg-ld+ reduced to
 *     svrg-ld) recovers the posterior mean and covariance, and the W2
 *     distance between the draws' Gaussian fit and the posterior is below a
 *     bound derived from the Monte Carlo error and the exact discretisation
 *     bias of Langevin steps on a Gaussian;
 *   - Requirement 2 of Zhang et al. (every snapshot refreshed within the
 *     last D iterations), reconstructed from the rows the model was asked
 *     to evaluate, independently of the sampler's own age__ column, which
 *     must agree with the reconstruction;
 *   - the rows each variant draws through next_batch: every row once per
 *     pass under RR and CA, also through aliases that fix the strategy;
 *   - every evaluation the model performed is counted in grads__;
 *   - D = 0 refreshes every N iterations (Theorem 3's D = N);
 *   - generalised-linear and full per-datum snapshots give identical
 *     chains;
 *   - --max-memory refuses a run before it starts, naming the size needed,
 *     and the header records the snapshot memory;
 *   - conflicting access settings are refused with a message. */
#include "config.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/run/hparam.h"
#include "engine/run/rng.h"
#include "harness.h"

/* ---- data and the exact posterior --------------------------------------- */

enum { D2 = 2 };

typedef struct posterior {
    double m[D2];
    double A[D2][D2];   /* precision */
    double V[D2][D2];   /* covariance A^-1 */
} posterior;

/* N rows of y = x . (1, -0.5) + N(0, 1), x ~ N(0, [[1, .3], [.3, 1]]);
 * with sigma = 1, tau = 10 (the model's defaults) the posterior is
 * A = X'X + I/100, m = A^-1 X'y. */
static char *ridge_data(size_t N, uint64_t seed, posterior *post)
{
    double *v = malloc(N * 3 * sizeof *v);
    assert_non_null(v);
    drift_rng r;
    drift_rng_seed(&r, seed, 0);
    double c = 0.3, s = sqrt(1 - c * c);
    double XtX[2][2] = {{0.01, 0}, {0, 0.01}}, Xty[2] = {0, 0};
    for (size_t i = 0; i < N; i++) {
        double z1 = drift_rng_normal(&r), z2 = drift_rng_normal(&r);
        double x1 = z1, x2 = c * z1 + s * z2;
        double y = x1 - 0.5 * x2 + drift_rng_normal(&r);
        v[i * 3] = y;
        v[i * 3 + 1] = x1;
        v[i * 3 + 2] = x2;
        double x[2] = {x1, x2};
        for (int a = 0; a < 2; a++) {
            Xty[a] += x[a] * y;
            for (int b = 0; b < 2; b++)
                XtX[a][b] += x[a] * x[b];
        }
    }
    if (post) {
        memcpy(post->A, XtX, sizeof XtX);
        double det = XtX[0][0] * XtX[1][1] - XtX[0][1] * XtX[1][0];
        post->V[0][0] = XtX[1][1] / det;
        post->V[1][1] = XtX[0][0] / det;
        post->V[0][1] = post->V[1][0] = -XtX[0][1] / det;
        for (int a = 0; a < 2; a++)
            post->m[a] = post->V[a][0] * Xty[0] + post->V[a][1] * Xty[1];
    }
    const char *names[] = {"y", "x.1", "x.2"};
    char *path = th_write_csv(names, 3, v, N);
    free(v);
    return path;
}

/* A design with d predictors (x ~ N(0, I)) for the memory tests. */
static char *wide_data(size_t N, size_t d)
{
    size_t cols = d + 1;
    double *v = malloc(N * cols * sizeof *v);
    char **names = malloc(cols * sizeof *names);
    assert_true(v && names);
    drift_rng r;
    drift_rng_seed(&r, 5, 0);
    for (size_t i = 0; i < N * cols; i++)
        v[i] = drift_rng_normal(&r);
    names[0] = strdup("y");
    for (size_t j = 1; j < cols; j++) {
        char b[32];
        snprintf(b, sizeof b, "x.%zu", j);
        names[j] = strdup(b);
    }
    char *path = th_write_csv((const char *const *)names, cols, v, N);
    for (size_t j = 0; j < cols; j++)
        free(names[j]);
    free(names);
    free(v);
    return path;
}

/* ---- 2 x 2 linear algebra for W2 ---------------------------------------- */

/* Square root of a symmetric positive definite 2 x 2 matrix:
 * sqrt(M) = (M + sqrt(det M) I) / sqrt(tr M + 2 sqrt(det M)). */
static void sqrtm2(const double (*M)[2], double (*R)[2])
{
    double sd = sqrt(M[0][0] * M[1][1] - M[0][1] * M[1][0]);
    double t = sqrt(M[0][0] + M[1][1] + 2 * sd);
    R[0][0] = (M[0][0] + sd) / t;
    R[1][1] = (M[1][1] + sd) / t;
    R[0][1] = M[0][1] / t;
    R[1][0] = M[1][0] / t;
}

static void mul2(const double (*P)[2], const double (*Q)[2], double (*R)[2])
{
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++)
            R[a][b] = P[a][0] * Q[0][b] + P[a][1] * Q[1][b];
}

/* W2 between N(m1, S1) and N(m2, S2):
 * |m1 - m2|^2 + tr(S1 + S2 - 2 (S2^1/2 S1 S2^1/2)^1/2). */
static double w2_gauss(const double *m1, const double (*S1)[2],
                       const double *m2, const double (*S2)[2])
{
    double r2[2][2], t[2][2], u[2][2], cross[2][2];
    sqrtm2(S2, r2);
    mul2(r2, S1, t);
    mul2(t, r2, u);
    sqrtm2(u, cross);
    double dm = (m1[0] - m2[0]) * (m1[0] - m2[0]) +
                (m1[1] - m2[1]) * (m1[1] - m2[1]);
    double tr = S1[0][0] + S1[1][1] + S2[0][0] + S2[1][1] -
                2 * (cross[0][0] + cross[1][1]);
    return sqrt(dm + (tr > 0 ? tr : 0));
}

/* ---- statistical recovery -------------------------------------------------- */

/* The stationary covariance of exact-gradient Langevin steps with step eta
 * on N(m, A^-1) is (A - eta A^2 / 2)^-1 (from V = (I - eta A) V (I - eta A)
 * + 2 eta I): the reference is the exact posterior plus this closed-form
 * bias.  What the aggregated estimators add on top:
 *   - under random access the estimate is conditionally unbiased and its
 *     noise grows with the distance to the snapshots; for this design and
 *     step it is below 0.2% of the posterior variance (eta Q / 2a, Q the
 *     estimator's variance at a D-step diffusion distance);
 *   - under RR and CA it is not: snapshots up to N/n steps old feed recent
 *     noise back into the drift and shrink the stationary variance.  The
 *     shrinkage is at most the noise injected over the average age, a
 *     relative eta a_max (N/n) / 2, which the tolerance allows for those
 *     variants (7.8% here). */
static void lmc_cov(const posterior *p, double eta, double (*W)[2])
{
    double A2[2][2], M[2][2];
    mul2(p->A, p->A, A2);
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++)
            M[a][b] = p->A[a][b] - 0.5 * eta * A2[a][b];
    double det = M[0][0] * M[1][1] - M[0][1] * M[1][0];
    W[0][0] = M[1][1] / det;
    W[1][1] = M[0][0] / det;
    W[0][1] = W[1][0] = -M[0][1] / det;
}

typedef struct stat_case {
    const char *sampler;
    const char *set[4];
    size_t n_set;
    drift_access access;
    int access_ordered;     /* the variant uses RR or CA */
} stat_case;

static void check_recovery(const stat_case *sc, th_problem *tp,
                           const posterior *post)
{
    const double eta = 3e-4;
    const size_t batch = 25, N = 100;
    const uint64_t iters = 300000, thin = 3;
    char eta_s[32];
    snprintf(eta_s, sizeof eta_s, "eta=%.17g", eta);
    char *sets[6];
    size_t ns = 0;
    sets[ns++] = eta_s;
    for (size_t k = 0; k < sc->n_set; k++)
        sets[ns++] = (char *)sc->set[k];
    /* Warmup: 20 relaxation times of the slowest direction (the
     * initial point's pull falls below e^-20). */
    double a_min = 0.5 * (post->A[0][0] + post->A[1][1]) -
                   sqrt(0.25 * pow(post->A[0][0] - post->A[1][1], 2) +
                        post->A[0][1] * post->A[0][1]);
    th_run r = {.sampler = sc->sampler, .set = sets, .n_set = ns,
                .batch = batch, .access = sc->access, .iters = iters,
                .thin = thin, .seed = 2020,
                .warmup = (uint64_t)ceil(20 / (eta * a_min))};
    th_draws dr;
    drift_chain_result res;
    int rc = th_sample(tp, &r, &dr, &res);
    if (rc)
        fail_msg("%s: %s", sc->sampler, res.message);
    size_t c0 = 3; /* lp__, grads__, age__ */
    double m[2], S[2][2], ess[2];
    for (int a = 0; a < 2; a++) {
        m[a] = th_mean(&dr, c0 + a, 0);
        ess[a] = th_ess(&dr, c0 + a, 0);
        for (int b = 0; b < 2; b++)
            S[a][b] = th_cov(&dr, c0 + a, c0 + b, 0);
    }
    double W[2][2];
    lmc_cov(post, eta, W);
    double ess_min = ess[0] < ess[1] ? ess[0] : ess[1];
    double a_max = post->A[0][0] + post->A[1][1] - a_min;
    double stale = sc->access_ordered ? 0.5 * eta * a_max * (double)N /
                                            (double)batch
                                      : 0;
    for (int a = 0; a < 2; a++) {
        double se = sqrt(post->V[a][a] / ess[a]);
        print_message("%-8s %-24s w.%d mean %.5f (exact %.5f, se %.2g) "
                      "ess %.0f\n",
                      sc->sampler, sc->n_set ? sc->set[0] : "", a + 1, m[a],
                      post->m[a], se, ess[a]);
        assert_true(fabs(m[a] - post->m[a]) < 4.5 * se);
    }
    for (int a = 0; a < 2; a++)
        for (int b = a; b < 2; b++) {
            /* SE of a sample covariance: sqrt((V_aa V_bb + V_ab^2) / ESS). */
            double se = sqrt((post->V[a][a] * post->V[b][b] +
                              post->V[a][b] * post->V[a][b]) /
                             ess_min);
            double bias = fabs(W[a][b] - post->V[a][b]);
            double allow = stale * sqrt(post->V[a][a] * post->V[b][b]);
            print_message("         cov[%d][%d] %.6g (exact %.6g, se %.2g, "
                          "step bias %.2g, staleness allowance %.2g)\n",
                          a, b, S[a][b], post->V[a][b], se, bias, allow);
            assert_true(fabs(S[a][b] - post->V[a][b]) <
                        4.5 * se + bias + allow);
            assert_true(bias < 0.05 * fabs(post->V[a][a])); /* honest */
        }
    /* W2 of the fit: its Monte Carlo part has E W2^2 ~ 1.5 tr(V) / ESS
     * (tr V / ESS from the mean, half that from the square roots of the
     * variances), a chi-like variable with 5 degrees of freedom, so 3 of
     * its root-mean-squares is exceeded with probability < 1e-6; the
     * step's own bias adds W2(N(m, W), N(m, V)) by the triangle
     * inequality, and a relative variance shrinkage s at most
     * (s / 2) sqrt(tr V). */
    double trV = post->V[0][0] + post->V[1][1];
    double w2 = w2_gauss(m, S, post->m, post->V);
    double w2_bias = w2_gauss(post->m, W, post->m, post->V) +
                     0.5 * stale * sqrt(trV);
    double bound = w2_bias + 3 * sqrt(1.5 * trV / ess_min);
    print_message("         W2 %.4g (bound %.4g, of which step bias "
                  "%.2g)\n",
                  w2, bound, w2_bias);
    assert_true(w2 < bound);
    th_draws_free(&dr);
}

static void test_nine_variants(void **state)
{
    (void)state;
    posterior post;
    char *csv = ridge_data(100, 11, &post);
    th_problem tp;
    th_open(&tp, "ridge", csv, NULL, 0);
    const stat_case cases[] = {
        {"svrg-ld", {0}, 0, DRIFT_ACCESS_RA, 0},            /* ptu-ra */
        {"ptu-rr", {0}, 0, DRIFT_ACCESS_RA, 1},
        {"agld", {"snapshot=ptu", "access=ca"}, 2, DRIFT_ACCESS_RA, 1},
        {"saga-ld", {0}, 0, DRIFT_ACCESS_RA, 0},            /* ppu-ra */
        {"agld", {"snapshot=ppu"}, 1, DRIFT_ACCESS_RR, 1},  /* auto: rr */
        {"ppu-ca", {0}, 0, DRIFT_ACCESS_RA, 1},
        {"tmu-ra", {0}, 0, DRIFT_ACCESS_RA, 0},
        {"tmu-rr", {0}, 0, DRIFT_ACCESS_RA, 1},
        {"tmu-ca", {0}, 0, DRIFT_ACCESS_CA, 1},
        /* svrg-ld+ with B = N rows of cyclic access: each snapshot gradient
         * is the full one, so it must match the posterior too. */
        {"svrg-ld+", {"B=100"}, 1, DRIFT_ACCESS_CA, 1},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        check_recovery(&cases[k], &tp, &post);
    th_close(&tp);
    unlink(csv);
    free(csv);
}

/* ---- instrumented runs: rows, Requirement 2, counting -------------------- */

typedef void (*trace_set_fn)(int);
typedef size_t (*trace_get_fn)(size_t **, size_t **, size_t **, int **,
                               size_t **);

static void trace_fns(trace_set_fn *set, trace_get_fn *get)
{
    const char *dir = getenv("DRIFT_TEST_PLUGIN_DIR");
    assert_non_null(dir);
    char path[4096];
    snprintf(path, sizeof path, "%s/ridge.so", dir);
    /* The registry has it open already; this finds the same copy. */
    void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (!h)
        fail_msg("ridge.so is not loaded: %s", dlerror());
    *set = (trace_set_fn)dlsym(h, "ridge_trace_set");
    *get = (trace_get_fn)dlsym(h, "ridge_trace_get");
    assert_true(*set && *get);
    dlclose(h);
}

typedef struct trace_case {
    const char *sampler;
    const char *set[4];
    size_t n_set;
    drift_access run_access;    /* the run's --access */
    drift_access expect;        /* what the draws must show */
    int ptu;                    /* minibatches evaluated twice */
    int requirement;            /* 1: age <= D always; 2: <= 2D; -1: some
                                   age > D (the check can fail) */
} trace_case;

enum { TN = 300, TB = 7, TD = (TN + TB - 1) / TB, TK = 600 };

static void check_trace(const trace_case *tc, th_problem *tp,
                        trace_set_fn tset, trace_get_fn tget)
{
    char *sets[4];
    for (size_t k = 0; k < tc->n_set; k++)
        sets[k] = (char *)tc->set[k];
    th_run r = {.sampler = tc->sampler, .set = sets, .n_set = tc->n_set,
                .batch = TB, .access = tc->run_access, .iters = TK,
                .seed = 9};
    th_draws dr;
    drift_chain_result res;
    tset(1);
    int rc = th_sample(tp, &r, &dr, &res);
    tset(0);
    if (rc)
        fail_msg("%s: %s", tc->sampler, res.message);
    assert_int_equal(dr.n, TK);
    size_t *first, *n, *rfirst, *rows;
    int *is_range;
    size_t nc = tget(&first, &n, &rfirst, &is_range, &rows);
    assert_true(nc > 0);

    /* Walk the calls: a refresh is a run of calls that are not minibatch
     * sized and cover rows 0..N-1 in order; an ordinary iteration is one
     * minibatch call (two identical ones for ptu). */
    uint64_t stamp[TN];
    size_t *seq = malloc(TK * TB * sizeof *seq), n_seq = 0;
    assert_non_null(seq);
    uint64_t total = 0, max_age = 0;
    size_t call = 0;
    for (size_t k = 0; k < TK; k++) {
        assert_true(call < nc);
        double age_col = dr.v[k * dr.cols + 2];
        if (n[call] != TB) {
            size_t covered = 0;
            while (call < nc && n[call] != TB && covered < TN) {
                for (size_t t = 0; t < n[call]; t++) {
                    size_t row = is_range[call] ? rfirst[call] + t
                                                : rows[first[call] + t];
                    assert_int_equal(row, covered + t);
                }
                covered += n[call];
                total += n[call];
                call++;
            }
            assert_int_equal(covered, TN);
            for (size_t i = 0; i < TN; i++)
                stamp[i] = k;
            assert_true(age_col == 0);
            continue;
        }
        assert_false(is_range[call]);
        const size_t *b = rows + first[call];
        uint64_t oldest = k;
        for (size_t i = 0; i < TN; i++)
            if (stamp[i] < oldest)
                oldest = stamp[i];
        uint64_t age = k - oldest;
        if (age > max_age)
            max_age = age;
        /* The sampler's own account must match the reconstruction. */
        if (!(age_col == (double)age))
            fail_msg("%s: iteration %zu: age__ %g, reconstructed %llu",
                     tc->sampler, k, age_col, (unsigned long long)age);
        if (tc->requirement == 1 && age > TD)
            fail_msg("%s: iteration %zu: a snapshot is %llu iterations "
                     "old, more than D = %d (Requirement 2)",
                     tc->sampler, k, (unsigned long long)age, TD);
        if (tc->requirement == 2)
            assert_true(age <= 2 * TD);
        memcpy(seq + n_seq, b, TB * sizeof *b);
        n_seq += TB;
        total += TB;
        call++;
        if (tc->ptu) {
            /* The same rows again, at the snapshot point. */
            assert_true(call < nc && n[call] == TB && !is_range[call]);
            assert_memory_equal(rows + first[call], b, TB * sizeof *b);
            total += TB;
            call++;
        } else {
            for (size_t t = 0; t < TB; t++)
                stamp[b[t]] = k;
        }
    }
    assert_int_equal(call, nc);
    /* Every evaluation the model did is in grads__. */
    assert_true(dr.v[(TK - 1) * dr.cols + 1] == (double)total);
    if (tc->requirement == -1)
        assert_true(max_age > TD);
    print_message("%-8s %-14s oldest snapshot %llu iterations (D = %d), "
                  "%zu minibatch rows, grads %llu\n",
                  tc->sampler, tc->n_set ? tc->set[0] : "",
                  (unsigned long long)max_age, TD, n_seq,
                  (unsigned long long)total);

    /* The minibatch rows, concatenated, are the access stream. */
    assert_true(n_seq >= 3 * TN);
    for (size_t p = 0; (p + 1) * TN <= n_seq; p++) {
        unsigned char seen[TN] = {0};
        for (size_t t = 0; t < TN; t++) {
            size_t row = seq[p * TN + t];
            assert_true(row < TN);
            if (tc->expect == DRIFT_ACCESS_CA)
                assert_int_equal(row, t);
            if (tc->expect != DRIFT_ACCESS_RA) {
                assert_false(seen[row]);
                seen[row] = 1;
            }
        }
    }
    if (tc->expect == DRIFT_ACCESS_RA) {
        /* With replacement: a pass of N draws repeats some row. */
        unsigned char seen[TN] = {0};
        int repeat = 0;
        for (size_t t = 0; t < TN; t++) {
            repeat |= seen[seq[t]];
            seen[seq[t]] = 1;
        }
        assert_true(repeat);
    }
    free(first);
    free(n);
    free(rfirst);
    free(is_range);
    free(rows);
    free(seq);
    th_draws_free(&dr);
}

static void test_requirement_and_access(void **state)
{
    (void)state;
    char *csv = ridge_data(TN, 12, NULL);
    trace_set_fn tset;
    trace_get_fn tget;
    const drift_access RA = DRIFT_ACCESS_RA, RR = DRIFT_ACCESS_RR,
                       CA = DRIFT_ACCESS_CA;
    const trace_case cases[] = {
        {"svrg-ld", {"eta=1e-4"}, 1, RA, RA, 1, 1},
        {"ptu-rr", {"eta=1e-4"}, 1, RA, RR, 1, 1},
        {"ptu-ca", {"eta=1e-4"}, 1, RA, CA, 1, 1},
        {"saga-ld", {"check_age=true", "eta=1e-4"}, 2, RA, RA, 0, -1},
        {"ppu-rr", {"check_age=true", "eta=1e-4"}, 2, RA, RR, 0, 2},
        {"ppu-ca", {"check_age=true", "eta=1e-4"}, 2, RA, CA, 0, 1},
        {"tmu-ra", {"check_age=true", "eta=1e-4"}, 2, RA, RA, 0, 1},
        {"tmu-rr", {"check_age=true", "eta=1e-4"}, 2, RA, RR, 0, 1},
        {"tmu-ca", {"check_age=true", "eta=1e-4"}, 2, RA, CA, 0, 1},
        /* agld with access=auto follows the run's --access. */
        {"agld", {"check_age=true", "snapshot=tmu", "eta=1e-4"}, 3, RR, RR, 0, 1},
        {"agld", {"check_age=true", "snapshot=ppu", "access=ca", "eta=1e-4"},
         4, RA, CA, 0, 1},
    };
    /* Both snapshot layouts. */
    for (int glm = 1; glm >= 0; glm--) {
        char *mset[] = {glm ? "glm=true" : "glm=false"};
        th_problem tp;
        th_open(&tp, "ridge", csv, mset, 1);
        trace_fns(&tset, &tget);
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
            check_trace(&cases[k], &tp, tset, tget);
        th_close(&tp);
    }
    unlink(csv);
    free(csv);
}

/* ---- the two snapshot layouts -------------------------------------------- */

static void test_glm_equals_full(void **state)
{
    (void)state;
    char *csv = ridge_data(150, 13, NULL);
    th_problem tg, tf;
    char *glm[] = {"glm=true"}, *full[] = {"glm=false"};
    th_open(&tg, "ridge", csv, glm, 1);
    th_open(&tf, "ridge", csv, full, 1);
    const char *names[] = {"saga-ld", "ppu-rr", "ppu-ca", "tmu-ra", "tmu-rr",
                           "tmu-ca", "svrg-ld"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        char *sets[] = {"eta=2e-4", "D=9"};
        th_run r = {.sampler = names[k], .set = sets,
                    .n_set = strcmp(names[k], "saga-ld") &&
                                     strncmp(names[k], "ppu", 3)
                                 ? 2
                                 : 1,
                    .batch = 6, .iters = 3000, .seed = 31};
        th_draws a, b;
        assert_int_equal(th_sample(&tg, &r, &a, NULL), DRIFT_OK);
        assert_int_equal(th_sample(&tf, &r, &b, NULL), DRIFT_OK);
        assert_int_equal(a.n, b.n);
        assert_int_equal(a.cols, b.cols);
        /* The same draws up to rounding: the GLM layout weights x_i by
         * s_i - alpha_i where the full one subtracts s_i x_i - alpha_i x_i,
         * and this target contracts, so the difference stays at rounding
         * level instead of growing over the 3000 steps.  NaN columns
         * match. */
        double worst = 0;
        for (size_t i = 0; i < a.n * a.cols; i++) {
            if (isnan(b.v[i])) {
                assert_true(isnan(a.v[i]));
                continue;
            }
            double err = fabs(a.v[i] - b.v[i]) / (1 + fabs(b.v[i]));
            worst = err > worst ? err : worst;
        }
        assert_true(worst < 1e-10);
        print_message("%-8s GLM and full snapshots: %zu draws, largest "
                      "relative difference %.1e, last w = (%.6f, %.6f)\n",
                      names[k], a.n, worst, a.v[(a.n - 1) * a.cols + 3],
                      a.v[(a.n - 1) * a.cols + 4]);
        th_draws_free(&a);
        th_draws_free(&b);
    }
    th_close(&tg);
    th_close(&tf);
    unlink(csv);
    free(csv);
}

/* ---- memory ------------------------------------------------------------- */

static size_t header_bytes(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[512];
    size_t bytes = 0;
    int found = 0;
    while (fgets(line, sizeof line, f) && line[0] == '#')
        if (sscanf(line, "# sampler_memory_bytes = %zu", &bytes) == 1)
            found = 1;
    fclose(f);
    assert_true(found);
    return bytes;
}

static void test_memory(void **state)
{
    (void)state;
    enum { N = 2000, D = 20 };
    char *csv = wide_data(N, D);
    char out[] = "/tmp/drift-agld-XXXXXX";
    int fd = mkstemp(out);
    assert_true(fd >= 0);
    close(fd);
    size_t bytes[3];
    for (int glm = 0; glm < 2; glm++) {
        char *mset[] = {glm ? "glm=true" : "glm=false"};
        th_problem tp;
        th_open(&tp, "ridge", csv, mset, 1);
        char *eta[] = {"eta=1e-4"};
        th_run r = {.sampler = "tmu-ra", .set = eta, .n_set = 1, .batch = 10,
                    .iters = 5, .seed = 1, .out_path = out};
        assert_int_equal(th_sample(&tp, &r, NULL, NULL), DRIFT_OK);
        bytes[glm] = header_bytes(out);
        if (glm == 0) {
            r.sampler = "svrg-ld";
            assert_int_equal(th_sample(&tp, &r, NULL, NULL), DRIFT_OK);
            bytes[2] = header_bytes(out);
        }
        /* A bound between the two layouts' needs: the general layout
         * (N x d numbers) is refused before its first step, the GLM one
         * (N numbers) runs. */
        r.sampler = "tmu-ra";
        r.out_path = NULL;
        r.max_memory = 8 * (size_t)N * D / 2;
        drift_chain_result res;
        int rc = th_sample(&tp, &r, NULL, &res);
        if (glm) {
            assert_int_equal(rc, DRIFT_OK);
        } else {
            assert_int_equal(rc, DRIFT_ENOMEM);
            assert_false(res.started);
            assert_int_equal(res.iterations, 0);
            assert_int_equal(res.grads, 0);
            size_t need = 0;
            const char *p = strstr(res.message, "needs ");
            assert_non_null(p);
            assert_int_equal(sscanf(p, "needs %zu", &need), 1);
            assert_int_equal(need, bytes[0]);
            print_message("refused: %s\n", res.message);
        }
        th_close(&tp);
    }
    print_message("snapshot memory: full %zu bytes, GLM %zu, ptu %zu "
                  "(N = %d, d = %d)\n",
                  bytes[0], bytes[1], bytes[2], N, D);
    assert_true(bytes[0] >= 8 * (size_t)N * D);
    assert_true(bytes[1] >= 8 * (size_t)N);
    assert_true(bytes[1] < 8 * (size_t)N * D / 4);
    assert_true(bytes[2] < 8 * (size_t)N);
    unlink(out);
    unlink(csv);
    free(csv);
}

/* TMU on sparse rows of a wide model (D = 200,000, 6 nonzeros a row):
 * its per-datum snapshots are N scalars and its design sums cost the
 * nonzeros, so it runs under a --max-memory below one dense block of
 * design rows (256 x D doubles, 410 MB, which it held before
 * glm_design_sum existed).  The C plugin and the .drift model, two
 * implementations of the sums, give the same draws. */
static void test_sparse_wide(void **state)
{
    (void)state;
    enum { N = 300, NNZ = 6 };
    const size_t D = 200000;
    size_t cap = (size_t)N * (NNZ * 20 + 8) + 64, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    drift_rng r;
    drift_rng_seed(&r, 9, 0);
    for (size_t i = 0; i < N; i++) {
        /* Increasing indices: an intercept, NNZ - 1 spread over the
         * columns, and the last row ends at column D, which fixes D. */
        len += (size_t)snprintf(text + len, cap - len, "%d 1:1",
                                drift_rng_uniform(&r) < 0.4 ? 1 : 0);
        size_t j = 1, step = (D - 1) / (NNZ - 1);
        for (int k = 1; k < NNZ; k++) {
            j = j + 1 + (size_t)drift_rng_below(&r, step - 1);
            if (i == N - 1 && k == NNZ - 1)
                j = D;
            len += (size_t)snprintf(text + len, cap - len, " %zu:%.3f", j,
                                    0.5 + drift_rng_uniform(&r));
        }
        len += (size_t)snprintf(text + len, cap - len, "\n");
    }
    char *svm = th_write_text(text, ".libsvm");
    char *model = th_write_text(
        "rows  { x : sparse_vector[D]  y : int }\n"
        "param { w : vector[D] }\n"
        "prior { w ~ normal(0, sqrt(10)) }\n"
        "datum { y ~ bernoulli_logit(dot(x, w)) }\n",
        ".drift");
    th_problem pc, pl;
    th_open(&pc, "logistic", svm, NULL, 0);
    th_open(&pl, model, svm, NULL, 0);
    assert_int_equal(pc.p.model.dim, D);
    assert_int_equal(pl.p.model.dim, D);
    char *sets[] = {"eta=1e-3"};
    th_run run = {.sampler = "tmu-ca", .set = sets, .n_set = 1, .batch = 10,
                  .iters = 12, .seed = 5, .max_memory = (size_t)128 << 20};
    th_draws dc, dl;
    drift_chain_result res;
    int rc = th_sample(&pc, &run, &dc, &res);
    if (rc)
        fail_msg("C plugin: %s", res.message);
    rc = th_sample(&pl, &run, &dl, &res);
    if (rc)
        fail_msg(".drift model: %s", res.message);
    assert_int_equal(dc.n, dl.n);
    assert_int_equal(dc.cols, dl.cols);
    double worst = 0;
    for (size_t k = 0; k < dc.n * dc.cols; k++) {
        if (isnan(dc.v[k]) && isnan(dl.v[k]))
            continue;
        double err = fabs(dc.v[k] - dl.v[k]) / (1 + fabs(dc.v[k]));
        worst = err > worst ? err : worst;
    }
    print_message("tmu-ca at D = %zu under --max-memory 128 MB: %zu draws, "
                  "C plugin and .drift within %.1e\n",
                  D, dc.n, worst);
    assert_true(worst < 1e-9);
    th_draws_free(&dc);
    th_draws_free(&dl);
    th_close(&pc);
    th_close(&pl);
    unlink(svm), unlink(model);
    free(svm), free(model), free(text);
}

/* ---- names, options, refusals -------------------------------------------- */

static void test_names_and_refusals(void **state)
{
    (void)state;
    drift_registry *reg = th_registry();
    const char *names[] = {"agld", "svrg-ld", "saga-ld", "ptu-ra", "ptu-rr",
                           "ptu-ca", "ppu-ra", "ppu-rr", "ppu-ca", "tmu-ra",
                           "tmu-rr", "tmu-ca", "svrg-ld+"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        const drift_sampler_entry *se;
        drift_err e;
        if (drift_registry_sampler(reg, names[k], &se, &e))
            fail_msg("%s: %s", names[k], e.msg);
        assert_string_equal(se->s.name, names[k]);
        assert_true(drift_hparams_find(se->s.hparams, se->s.n_hparams,
                                       "eta") >= 0);
    }
    drift_registry_free(reg);

    char *csv = ridge_data(50, 14, NULL);
    th_problem tp;
    th_open(&tp, "ridge", csv, NULL, 0);
    drift_chain_result res;
    /* An alias that fixes cyclic access against --access rr. */
    th_run r = {.sampler = "tmu-ca", .access = DRIFT_ACCESS_RR, .iters = 5,
                .seed = 1};
    assert_int_not_equal(th_sample(&tp, &r, NULL, &res), DRIFT_OK);
    assert_false(res.started);
    assert_non_null(strstr(res.message, "--access rr"));
    assert_non_null(strstr(res.message, "tmu-rr"));
    /* the sampler's refusal as it is, not as a failure of the step-size
     * search whose pilot met it first */
    assert_null(strstr(res.message, "step size"));
    print_message("refused: %s\n", res.message);
    /* agld's own access setting against --access. */
    char *sets[] = {"access=rr"};
    th_run r2 = {.sampler = "agld", .set = sets, .n_set = 1,
                 .access = DRIFT_ACCESS_CA, .iters = 5, .seed = 1};
    assert_int_not_equal(th_sample(&tp, &r2, NULL, &res), DRIFT_OK);
    assert_non_null(strstr(res.message, "access=rr"));
    print_message("refused: %s\n", res.message);
    /* svrg-ld+ with more snapshot rows than data. */
    char *sets3[] = {"B=51"};
    th_run r3 = {.sampler = "svrg-ld+", .set = sets3, .n_set = 1, .iters = 5,
                 .seed = 1};
    assert_int_not_equal(th_sample(&tp, &r3, NULL, &res), DRIFT_OK);
    assert_non_null(strstr(res.message, "B = 51"));
    /* A step far too large is reported, not written as inf. */
    char *sets4[] = {"eta=10"};
    th_run r4 = {.sampler = "saga-ld", .set = sets4, .n_set = 1,
                 .iters = 2000, .seed = 1};
    assert_int_not_equal(th_sample(&tp, &r4, NULL, &res), DRIFT_OK);
    /* The engine's oracles or the sampler's own check, whichever sees the
     * divergence first, say so and name the iteration. */
    print_message("diverged: %s\n", res.message);
    assert_true(strstr(res.message, "non-finite") ||
                strstr(res.message, "diverged"));
    assert_non_null(strstr(res.message, "iteration"));
    print_message("refused: %s\n", res.message);
    th_close(&tp);
    unlink(csv);
    free(csv);
}

/* PTU with D = 1 refreshes at every step: exact-gradient Langevin (LMC),
 * N evaluations a step, its lp__ the exact log density. */
static void test_ptu_d1_is_lmc(void **state)
{
    (void)state;
    char *csv = ridge_data(40, 15, NULL);
    th_problem tp;
    th_open(&tp, "ridge", csv, NULL, 0);
    char *sets[] = {"snapshot=ptu", "D=1", "eta=1e-3"};
    th_run r = {.sampler = "agld", .set = sets, .n_set = 3, .batch = 5,
                .iters = 50, .seed = 4};
    th_draws dr;
    assert_int_equal(th_sample(&tp, &r, &dr, NULL), DRIFT_OK);
    for (size_t k = 0; k < dr.n; k++) {
        assert_true(dr.v[k * dr.cols + 1] == 40.0 * (double)(k + 1));
        assert_true(dr.v[k * dr.cols + 2] == 0); /* age */
        assert_true(isfinite(dr.v[k * dr.cols]));
    }
    th_draws_free(&dr);
    th_close(&tp);
    unlink(csv);
    free(csv);
}

/* D = 0 is the paper's Theorem 3 choice D = N: a refresh (N evaluations)
 * at iterations 0, N, 2N, ..., two minibatch evaluations (2n) at every
 * other iteration; the default D = ceil(N/n) would refresh at 8, 16, .... */
static void test_ptu_d0_is_n(void **state)
{
    (void)state;
    char *csv = ridge_data(40, 15, NULL);
    th_problem tp;
    th_open(&tp, "ridge", csv, NULL, 0);
    char *sets[] = {"snapshot=ptu", "D=0", "eta=1e-3"};
    th_run r = {.sampler = "agld", .set = sets, .n_set = 3, .batch = 5,
                .iters = 100, .seed = 4};
    th_draws dr;
    assert_int_equal(th_sample(&tp, &r, &dr, NULL), DRIFT_OK);
    double grads = 0;
    for (size_t k = 0; k < dr.n; k++) {
        grads += k % 40 == 0 ? 40.0 : 10.0;
        assert_true(dr.v[k * dr.cols + 1] == grads);
    }
    th_draws_free(&dr);
    th_close(&tp);
    unlink(csv);
    free(csv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_and_refusals),
        cmocka_unit_test(test_ptu_d1_is_lmc),
        cmocka_unit_test(test_ptu_d0_is_n),
        cmocka_unit_test(test_glm_equals_full),
        cmocka_unit_test(test_sparse_wide),
        cmocka_unit_test(test_requirement_and_access),
        cmocka_unit_test(test_memory),
        cmocka_unit_test(test_nine_variants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
