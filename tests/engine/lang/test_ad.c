/* test_ad.c: automatic differentiation of the likelihood graph.  Every
 * operation of the language (elementwise arithmetic with broadcasting,
 * each function, reductions, dot, matrix-vector and matrix-matrix
 * products, indexing by constants and by row data, constraint transforms)
 * appears in a small model whose derivatives go through the standard
 * battery (langtest.c): the gradient against central finite differences
 * (relative error < 1e-6) at random points, per-row gradients against
 * differences of each row's term and against the summed gradient, jvp
 * against per-row gradients.  Also: constraint Jacobians against finite
 * differences of the transform, and the generalised-linear-form
 * detection. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/data/rowstore.h"
#include "engine/lang/lang_model.h"
#include "engine/run/rng.h"
#include "harness.h"
#include "langtest.h"

/* A CSV text with header `header` and n rows whose fields come from
 * gen(row, col, rng). */
static char *csv(const char *header, size_t ncols, size_t n,
                 double (*gen)(size_t, size_t, drift_rng *), uint64_t seed)
{
    drift_rng r;
    drift_rng_seed(&r, seed, 0);
    size_t cap = 64 + strlen(header) + n * ncols * 32;
    char *buf = malloc(cap);
    assert_non_null(buf);
    size_t used = (size_t)snprintf(buf, cap, "csv:%s\n", header);
    for (size_t i = 0; i < n; i++)
        for (size_t c = 0; c < ncols; c++)
            used += (size_t)snprintf(buf + used, cap - used, "%.17g%s",
                                     gen(i, c, &r), c + 1 < ncols ? "," : "\n");
    return buf;
}

static double gen_normal(size_t i, size_t c, drift_rng *r)
{
    (void)i;
    (void)c;
    return drift_rng_normal(r);
}

static void check_model(const char *model, const char *const *data,
                        uint64_t seed, double sd)
{
    lt_model lm;
    lt_open_ok(&lm, model, data, NULL, 0);
    lt_check_derivatives(&lm.m, seed, 3, sd);
    lt_close(&lm);
}

static void test_elementwise(void **state)
{
    (void)state;
    char *d = csv("x.1,x.2,x.3,z", 4, 12, gen_normal, 1);
    const char *data[] = {d, NULL};
    check_model(
        "rows { x : vector[3]  z : real }\n"
        "param { a : vector[3]  b : vector[3]  s : real }\n"
        "prior { a ~ normal(0, 1)  b ~ normal(0, 1)  s ~ normal(0, 1) }\n"
        "datum {\n"
        "  target += sum(a + x) + sum(x - b) + sum(a .* x) * s\n"
        "  target += sum(x ./ (2 + exp(b))) + sum(a .* x)\n"
        "  target += sum((a - b) * z) + sum(s * a) - sum(a / (3 + s * s))\n"
        "  target += sum(-a) + sum(exp(a) ./ (1 + exp(b))) + sum(1 / (2 + exp(a)))\n"
        "  target += s ^ 2 * z + pow(1 + exp(s), z) + sum(pow(exp(a), 1.5))\n"
        "  target += sum(log_sum_exp(a, x)) + log_sum_exp(s, z)\n"
        "  target += sum(pow(2 + x .* x, a)) - (2 + s * s) ^ (a[1] * 0.1)\n"
        "  target += sum(s - a .* x) + sum(z - b) + sum(b + s) + sum(s / (2 + exp(b)))\n"
        "}\n",
        data, 11, 0.7);
    free(d);
}

static void test_unary(void **state)
{
    (void)state;
    char *d = csv("x.1,x.2,x.3", 3, 10, gen_normal, 2);
    const char *data[] = {d, NULL};
    check_model(
        "rows { x : vector[3] }\n"
        "param { a : vector[3] }\n"
        "prior { a ~ normal(0, 1) }\n"
        "datum {\n"
        "  target += sum(exp(a .* x)) * 0.01 + sum(log(1 + exp(a)))\n"
        "  target += sum(log1p(exp(a))) + sum(expm1(a) .* x)\n"
        "  target += sum(sqrt(1 + square(a))) + sum(fabs(a .* x))\n"
        "  target += sum(tanh(a + x)) + sum(logistic(a - x))\n"
        "  target += sum(log1p_exp(a .* x)) + sum(relu(a + x))\n"
        "  target += sum(sin(a) .* cos(x)) + sum(cos(a))\n"
        "  target += sum(log1m(logistic(a))) + sum(log_inv_logit(a + x))\n"
        "  target += sum(inv_logit(a)) + sum(softplus(a)) + sum(abs(a))\n"
        "}\n",
        data, 12, 1.0);
    free(d);
}

static void test_reductions(void **state)
{
    (void)state;
    char *d = csv("x.1,x.2,x.3,x.4", 4, 9, gen_normal, 3);
    const char *data[] = {d, NULL};
    check_model(
        "rows { x : vector[4] }\n"
        "param { a : vector[4]  M : matrix[2, 3] }\n"
        "prior { a ~ normal(0, 1)  target += -0.5 * squared_norm(M) }\n"
        "datum {\n"
        "  target += mean(a .* x) + squared_norm(a - x) * 0.1\n"
        "  target += log_sum_exp(a .* x) + sum(M) * mean(x)\n"
        "  target += log_sum_exp(M) + dot_self(a) * 0.01 + mean(M)\n"
        "}\n",
        data, 13, 1.0);
    free(d);
}

static void test_linear_algebra(void **state)
{
    (void)state;
    char *d = csv("x.1,x.2,x.3,y.1,y.2,R.1.1,R.1.2,R.2.1,R.2.2", 9, 11,
                  gen_normal, 4);
    const char *data[] = {
        d, "json:{\"A\": [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]}", NULL};
    check_model(
        "data { A : matrix[2, 3] }\n"
        "rows { x : vector[3]  y : vector[2]  R : matrix[2, 2] }\n"
        "param { W : matrix[2, 3]  v : vector[3]  B : matrix[3, 2]\n"
        "        c : vector[2] }\n"
        "prior { target += -0.5 * (squared_norm(W) + squared_norm(v))\n"
        "        target += -0.5 * (squared_norm(B) + squared_norm(c)) }\n"
        "datum {\n"
        "  target += dot(x, v) + dot(v, x) + dot(v, v) * 0.1\n"
        "  target += sum(W * x) + dot(W * v, c) + dot(y, W * x)\n"
        "  target += sum(W * B) + sum(A * B) + sum(B * W) * 0.1\n"
        "  target += dot(tanh(W * x + c), y) + sum((W * B) * c) + sum(A * v)\n"
        "  target += dot(R * c, c) + sum(R * W) + sum(R * y) * dot(c, y)\n"
        "}\n",
        data, 14, 0.5);
    free(d);
}

static double gen_index(size_t i, size_t c, drift_rng *r)
{
    (void)i;
    if (c == 0)
        return (double)(1 + drift_rng_below(r, 4));
    if (c == 1)
        return (double)(1 + drift_rng_below(r, 3));
    return drift_rng_normal(r);
}

static void test_indexing(void **state)
{
    (void)state;
    char *d = csv("u,i,x.1,x.2", 4, 15, gen_index, 5);
    const char *data[] = {d, "json:{\"cvec\": [0.5, -1, 2], \"K\": 4}", NULL};
    check_model(
        "data { K : int  cvec : vector[3] }\n"
        "rows { u : int  i : int  x : vector[2] }\n"
        "param { U : matrix[K, 2]  V : array[3] vector[2]  t : vector[4]\n"
        "        s : real }\n"
        "prior { target += -0.5 * (squared_norm(U) + squared_norm(t) + s * s)\n"
        "        target += -0.5 * (squared_norm(V[1]) + squared_norm(V[2]))\n"
        "        V[3] ~ normal(0, 1) }\n"
        "datum {\n"
        "  target += dot(U[u], x) + dot(V[i], U[u]) + t[2] * x[1]\n"
        "  target += U[u, 2] * t[u] + U[1, 1] * s + V[i][2] + cvec[i] * s\n"
        "  target += t[i] * x[2] + U[u][1] * V[2][i - i + 1]\n"
        "}\n",
        data, 15, 0.8);
    free(d);
}

static double gen_pos(size_t i, size_t c, drift_rng *r)
{
    (void)i;
    (void)c;
    return 0.2 + 2 * drift_rng_uniform(r);
}

static void test_constrained(void **state)
{
    (void)state;
    char *d = csv("y", 1, 10, gen_pos, 6);
    const char *data[] = {d, NULL};
    check_model(
        "param { sig : real<lower=0>  p : real<lower=0, upper=1>\n"
        "        q : vector<upper=2>[2]  r : real<lower=-1, upper=3>\n"
        "        w : vector<lower=-2>[3] }\n"
        "rows { y : real }\n"
        "prior { sig ~ gamma(2, 1)  p ~ beta(2, 3)  q ~ normal(0, 1)\n"
        "        r ~ normal(0, 2)  w ~ normal(0, 1) }\n"
        "datum { y ~ lognormal(r * p + sum(q) * 0.1, sig)\n"
        "        target += 0.01 * sum(w) * y }\n",
        data, 16, 1.0);
    free(d);
}

/* The prior of a constrained parameter includes log |dx/du|: the model's
 * log density at u minus the density of x(u) on the constrained scale
 * (written out here) is the log of the finite-difference derivative of
 * the transform constrain(). */
static void test_jacobians(void **state)
{
    (void)state;
    lt_model lm;
    lt_open_ok(&lm,
               "param { a : real<lower=1.5>  b : real<upper=-2>\n"
               "        c : real<lower=-1, upper=4>  v : vector<lower=0>[2] }\n"
               "prior { a ~ normal(0, 1)  b ~ normal(0, 1)  c ~ normal(0, 1)\n"
               "        v ~ normal(0, 1) }\n",
               NULL, NULL, 0);
    const drift_model *m = &lm.m;
    assert_int_equal(m->dim, 5);
    assert_string_equal(m->out_names[3], "v.1");
    void *ws = m->workspace_new(m->self, 1);
    drift_rng r;
    drift_rng_seed(&r, 17, 0);
    for (int t = 0; t < 5; t++) {
        double u[5], x[5], xp[5], xm[5], up[5], lp, back[5];
        for (int j = 0; j < 5; j++)
            u[j] = 1.5 * drift_rng_normal(&r);
        drift_err e;
        assert_int_equal(m->log_prior(m->self, ws, u, &lp, NULL, &e), 0);
        m->constrain(m->self, u, x);
        double direct = 0, logjac = 0;
        for (int j = 0; j < 5; j++) {
            direct += -0.5 * x[j] * x[j] - 0.5 * log(2 * M_PI);
            memcpy(up, u, sizeof up);
            up[j] = u[j] + 1e-6;
            m->constrain(m->self, up, xp);
            up[j] = u[j] - 1e-6;
            m->constrain(m->self, up, xm);
            logjac += log(fabs((xp[j] - xm[j]) / 2e-6));
        }
        assert_true(x[0] > 1.5 && x[1] < -2 && x[2] > -1 && x[2] < 4 &&
                    x[3] > 0 && x[4] > 0);
        assert_true(fabs(lp - direct - logjac) < 1e-7 * (1 + fabs(lp)));
        /* unconstrain inverts constrain. */
        assert_int_equal(m->unconstrain(m->self, x, back, &e), 0);
        for (int j = 0; j < 5; j++)
            assert_true(fabs(back[j] - u[j]) < 1e-9 * (1 + fabs(u[j])));
    }
    double bad[5] = {1.0, -3, 0, 1, 1};
    drift_err e;
    assert_int_not_equal(m->unconstrain(m->self, bad, bad, &e), 0);
    assert_non_null(strstr(e.msg, "a = 1"));
    m->workspace_free(m->self, ws);
    lt_close(&lm);
}

static double gen_glm(size_t i, size_t c, drift_rng *r)
{
    (void)i;
    if (c == 0)
        return drift_rng_uniform(r) < 0.5;
    return drift_rng_normal(r);
}

/* Generalised linear form is found where every per-row gradient is a
 * scalar times a fixed data vector, and only there. */
static void test_glm_detection(void **state)
{
    (void)state;
    char *d = csv("y,x.1,x.2,x.3,z", 5, 14, gen_glm, 8);
    const char *data[] = {d, NULL};
    static const struct {
        const char *datum;
        int glm;
    } cases[] = {
        {"y ~ bernoulli_logit(dot(x, w))", 1},
        {"y ~ bernoulli_logit(dot(w, x) + b)", 1},
        {"y ~ bernoulli_logit(2 * (dot(x, w) - b) / 3 + z)", 1},
        {"y ~ bernoulli_logit(b * z + dot(x, w))", 1},
        {"z ~ normal(dot(x, w), 1.5)", 1},
        {"z ~ normal(dot(x, w) + b, sig)", 0},
        {"y ~ bernoulli_logit(dot(x, w)) target += -0.1 * b * b", 0},
        {"y ~ bernoulli_logit(dot(x, w) * b)", 0},
        {"y ~ bernoulli_logit(dot(x, exp(w)))", 0},
        {"y ~ bernoulli_logit(sum(x .* w))", 0},
        {"z ~ normal(dot(x, w), 1) y ~ bernoulli_logit(b)", 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char model[512];
        snprintf(model, sizeof model,
                 "rows { y : int  x : vector[3]  z : real }\n"
                 "param { w : vector[3]  b : real  sig : real<lower=0> }\n"
                 "prior { w ~ normal(0, 1)  b ~ normal(0, 1)\n"
                 "        sig ~ exponential(1) }\n"
                 "datum { %s }\n",
                 cases[k].datum);
        lt_model lm;
        lt_open_ok(&lm, model, data, NULL, 0);
        if (((lm.m.flags & DRIFT_MODEL_GLM) != 0) != cases[k].glm)
            fail_msg("case %zu (%s): GLM %d, expected %d", k, cases[k].datum,
                     (lm.m.flags & DRIFT_MODEL_GLM) != 0, cases[k].glm);
        lt_check_derivatives(&lm.m, 20 + k, 1, 0.5);
        lt_close(&lm);
    }
    free(d);
}

static double gen_regression(size_t i, size_t c, drift_rng *r)
{
    (void)i;
    double u = drift_rng_normal(r);
    return c == 0 ? u : (u > 0 ? 1.0 : 0.0);
}

/* Scalar parameters shared by every row (alpha, beta, sigma of
 * y ~ normal(alpha + beta x, sigma); a, b of z ~ bernoulli_logit(a + b x))
 * over 1037 rows: the rows go in tiles of 256 and their adjoint terms are
 * summed in stretches, in four partial sums, and the last stretch is not a
 * multiple of four.  Derivatives as always; and a row whose term is not
 * finite, beyond the first tile, is named. */
static void test_shared_scalars_many_rows(void **state)
{
    (void)state;
    char *d = csv("x,z", 2, 1037, gen_regression, 17);
    const char *data[] = {d, NULL};
    const char *model =
        "rows { x : real  z : int }\n"
        "param { alpha : real  beta : real  sigma : real<lower=0>\n"
        "        a : real  b : real }\n"
        "prior { alpha ~ normal(0, 1)  beta ~ normal(0, 1)\n"
        "        sigma ~ lognormal(0, 1)  a ~ normal(0, 1)\n"
        "        b ~ normal(0, 1) }\n"
        "datum { x ~ normal(alpha + beta * x, sigma)\n"
        "        z ~ bernoulli_logit(a + b * x) }\n";
    check_model(model, data, 41, 0.7);
    /* x = 1e200 in row 701: that row's normal term is -inf (the fast
     * path for a shared sigma hands over to the general loop), and the
     * failure names the row */
    char *p = d;
    for (int line = 0; line < 701; line++)
        p = strchr(p, '\n') + 1;
    char *comma = strchr(p, ',');
    memset(p, ' ', (size_t)(comma - p));
    memcpy(p, "1e200", 5);
    lt_model lm;
    lt_open_ok(&lm, model, data, NULL, 0);
    const drift_model *m = &lm.m;
    void *ws = m->workspace_new(m->self, 1037);
    double th[5] = {0.1, 0.2, 0.3, 0.4, 0.5}, ll, g[5];
    drift_err e = {{0}};
    drift_rows all = {NULL, 0, 1037};
    assert_int_not_equal(
        m->log_lik(m->self, ws, th, &all, NULL, &ll, g, NULL, &e), 0);
    if (!strstr(e.msg, "row 701"))
        fail_msg("the failure does not name row 701: %s", e.msg);
    m->workspace_free(m->self, ws);
    lt_close(&lm);
    free(d);
}

/* ---- full passes in generalised linear form (ad.c's glm_lik) ---------- */

/* 1037 rows: tiles of up to 256 rows and a last one of 13, groups of 8
 * rows and a last one of 5.  Columns y (0/1), x.1 .. x.3, z, g (1 .. 4),
 * cnt (counts), and, every 97th row, x.1 a hundred times larger so that
 * some predictors reach |z| of several hundred (exp(-|z|) underflows). */
enum { GN = 1037, GC = 7 };
static double gvals[GN][GC];

static double gen_glm_rows(size_t i, size_t c, drift_rng *r)
{
    double v;
    switch (c) {
    case 0: v = drift_rng_uniform(r) < 0.45; break;
    case 5: v = 1.0 + (double)drift_rng_below(r, 4); break;
    case 6: v = (double)drift_rng_below(r, 5); break;
    default:
        v = drift_rng_normal(r);
        if (c == 1 && i % 97 == 3)
            v *= 300;
    }
    gvals[i][c] = v;
    return v;
}

static const char *glm_header = "y,x.1,x.2,x.3,z,g,cnt";

/* Opens model text over data files (paths), as drift_lang_open does for
 * drift sample. */
static void open_paths(lt_model *lm, const char *text,
                       const char *const *files)
{
    memset(lm, 0, sizeof *lm);
    lm->paths[lm->n_paths++] = th_write_text(text, ".drift");
    drift_lang_spec spec = {.path = lm->paths[0], .data = files};
    drift_err e = {{0}};
    lm->rc = drift_lang_open(&spec, &lm->m, &e);
    if (lm->rc)
        fail_msg("model did not open (%d): %s", lm->rc, e.msg);
}

/* The log-likelihood and its gradient of y ~ bernoulli_logit(x . w + b)
 * over the generated rows, in long double, from the values alone. */
static void glm_reference(const double *w, double b, long double *ll,
                          long double *g)
{
    *ll = 0;
    for (int j = 0; j < 4; j++)
        g[j] = 0;
    for (size_t i = 0; i < GN; i++) {
        long double z = b;
        for (int j = 0; j < 3; j++)
            z += (long double)gvals[i][1 + j] * w[j];
        long double y = gvals[i][0];
        /* log p = y z - log(1 + e^z), written without overflow */
        long double lse = z > 0 ? z + log1pl(expl(-z)) : log1pl(expl(z));
        long double s = y - 1 / (1 + expl(-z));
        *ll += y * z - lse;
        for (int j = 0; j < 3; j++)
            g[j] += s * gvals[i][1 + j];
        g[3] += s;
    }
}

static void near_ld(double got, long double want, double tol,
                    const char *what, size_t j)
{
    double w = (double)want;
    if (!(fabs(got - w) <= tol * fmax(1.0, fabs(w))))
        fail_msg("%s [%zu]: %.17g, the reference %.17g", what, j, got, w);
}

/* The full passes' sums over the rows of b: the log-likelihood and its
 * gradient alone (what grad_full asks for). */
static void full_sums(const drift_model *m, void *ws, const double *th,
                      const drift_rows *b, double *ll, double *g)
{
    drift_err e = {{0}};
    if (m->log_lik(m->self, ws, th, b, NULL, ll, g, NULL, &e))
        fail_msg("full pass failed: %s", e.msg);
}

/* Models in generalised linear form over 1037 rows, each through the
 * battery (full-pass gradient against central differences of full-pass
 * sums, against per-row gradients and per-row terms of the interpreter):
 * bernoulli_logit by its own kernel (alone, with an intercept, with scales
 * and a data term, with a parameter picked by row data, with a constant
 * coefficient vector), and the nodes above the predictor by the
 * interpreter (normal, poisson_log, the predictor itself as the term, a
 * data term the kernels do not read).  The logistic regressions also
 * against a long double reference computed here from the values. */
static void test_glm_full_passes(void **state)
{
    (void)state;
    char *d = csv(glm_header, GC, GN, gen_glm_rows, 31);
    const char *json = "json:{\"c\": [0.5, -1.25, 2]}";
    const char *data[] = {d, json, NULL};
    static const struct {
        const char *datum;
        int fused;      /* the predictor from its terms */
        int reference;  /* x . w (+ b) against glm_reference */
    } cases[] = {
        {"y ~ bernoulli_logit(dot(x, w))", 1, 1},
        {"y ~ bernoulli_logit(dot(x, w) + b)", 1, 2},
        {"y ~ bernoulli_logit(2 * (dot(x, w) - b) / 3 + z)", 1, 0},
        {"y ~ bernoulli_logit(u[g] + dot(w, x))", 1, 0},
        {"y ~ bernoulli_logit(dot(c, w) * b + dot(x, w))", 0, 0},
        {"y ~ bernoulli_logit(b + dot(c, w) + dot(x, w))", 1, 0},
        {"z ~ normal(dot(x, w) + b, 1.5)", 1, 0},
        /* small: exp of the rows' largest predictors stays moderate, so
         * central differences resolve the prior's part */
        {"cnt ~ poisson_log(0.002 * dot(x, w) - b)", 1, 0},
        {"target += 0.5 * dot(x, w) - z * b", 1, 0},
        {"y ~ bernoulli_logit(dot(x, w) + log(1 + z * z))", 0, 0},
        /* Stan's GLM forms, (x, alpha, beta): the same graphs */
        {"y ~ bernoulli_logit_glm(x, b, w)", 1, 2},
        {"target += bernoulli_logit_glm_lpmf(y | x, 0, w)", 1, 1},
        /* (a scaled beta is not in the form the analysis finds: the
         * unscaled one is, in test_dist's GLM test) */
        {"cnt ~ poisson_log_glm(x, -b, 0.002 * w)", 0, 0},
        {"z ~ normal_id_glm(x, b, w, 1.5)", 1, 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char model[768];
        snprintf(model, sizeof model,
                 "data  { c : vector[3] }\n"
                 "rows  { y : int  x : vector[3]  z : real  g : int  "
                 "cnt : int }\n"
                 "param { w : vector[3]  b : real  u : vector[4] }\n"
                 "prior { w ~ normal(0, 1)  b ~ normal(0, 1)  "
                 "u ~ normal(0, 1) }\n"
                 "datum { %s }\n",
                 cases[k].datum);
        lt_model lm;
        lt_open_ok(&lm, model, data, NULL, 0);
        const drift_model *m = &lm.m;
        if (cases[k].fused && !(m->flags & DRIFT_MODEL_GLM))
            fail_msg("case %zu (%s) is not in GLM form", k, cases[k].datum);
        lt_check_derivatives(m, 60 + k, 2, 0.5);
        /* A shuffled list of rows (gathered) gives the range's sums. */
        void *ws = m->workspace_new(m->self, GN);
        size_t dim = m->dim, *rows = malloc(GN * sizeof *rows);
        double th[8], g1[8], g2[8], l1, l2;
        assert_non_null(ws);
        assert_non_null(rows);
        assert_int_equal(dim, 8);
        for (size_t j = 0; j < dim; j++)
            th[j] = 0.3 * cos(1.7 * (double)(j + k));
        for (size_t i = 0; i < GN; i++)
            rows[i] = (i * 389 + 11) % GN;
        drift_rows all = {NULL, 0, GN}, shuffled = {rows, 0, GN};
        full_sums(m, ws, th, &all, &l1, g1);
        full_sums(m, ws, th, &shuffled, &l2, g2);
        near_ld(l2, l1, 1e-12, "shuffled rows: log-likelihood", 0);
        for (size_t j = 0; j < dim; j++)
            near_ld(g2[j], g1[j], 1e-11, "shuffled rows: gradient", j);
        if (cases[k].reference) {
            long double ll, g[4];
            double b = cases[k].reference == 2 ? th[3] : 0;
            glm_reference(th, b, &ll, g);
            near_ld(l1, ll, 1e-13, "log-likelihood against the reference",
                    0);
            for (size_t j = 0; j < 3; j++)
                near_ld(g1[j], g[j], 1e-12,
                        "gradient against the reference", j);
            if (cases[k].reference == 2)
                near_ld(g1[3], g[3], 1e-12, "gradient in b", 3);
        }
        free(rows);
        m->workspace_free(m->self, ws);
        lt_close(&lm);
    }
    free(d);
}

/* A row whose term is not finite, beyond the first tiles, is named by a
 * full pass in GLM form: a predictor that overflows (row 900) in memory
 * and on a row store, and an outcome of 2 (row 701) on a row store, where
 * outcomes are checked as rows are used (a CSV file's are checked when it
 * is read, and the model does not open). */
static void test_glm_bad_rows(void **state)
{
    (void)state;
    const char *model = "rows  { y : int  x : vector[3] }\n"
                        "param { w : vector[3] }\n"
                        "prior { w ~ normal(0, 1) }\n"
                        "datum { y ~ bernoulli_logit(dot(x, w)) }\n";
    for (int which = 0; which < 2; which++) {
        char *d = csv("y,x.1,x.2,x.3", 4, GN, gen_glm_rows, 32);
        /* "csv:" then the header and one line a row */
        char *p = strchr(d, '\n') + 1;
        size_t bad = which ? 899 : 700;
        for (size_t line = 0; line < bad; line++)
            p = strchr(p, '\n') + 1;
        if (which) {
            /* x.1 = x.3 = 1e308: with w = (2, 0.5, 2) the predictor
             * overflows to infinity (each term alone already does) */
            char *f = strchr(p, ',') + 1, *end = strchr(f, ',');
            memset(f, ' ', (size_t)(end - f));
            memcpy(f, "1e308", 5);
            f = strchr(strchr(f, ',') + 1, ',') + 1; /* x.3 */
            end = strchr(f, '\n');
            memset(f, ' ', (size_t)(end - f));
            memcpy(f, "1e308", 5);
        } else {
            char *end = strchr(p, ',');
            memset(p, ' ', (size_t)(end - p));
            *p = '2';
        }
        const char *data[] = {d, NULL};
        lt_model lm;
        char want[64];
        snprintf(want, sizeof want, "row %zu", bad + 1);
        if (!which) {
            lt_open(&lm, model, data, NULL, 0);
            assert_int_not_equal(lm.rc, 0);
            if (!strstr(lm.report, want))
                fail_msg("the refusal does not name %s: %s", want,
                         lm.report);
        } else {
            lt_open_ok(&lm, model, data, NULL, 0);
        }
        snprintf(want, sizeof want, "data row %zu", bad + 1);
        for (int store = !which; store < 2; store++) {
            lt_model ls, *use = &lm;
            char *rs = NULL;
            if (store) {
                rs = th_write_text("", ".drs");
                unlink(rs);
                drift_err ce = {{0}};
                if (drift_rowstore_convert(lm.paths[1], rs, NULL, NULL, &ce))
                    fail_msg("converting: %s", ce.msg);
                const char *files[] = {rs, NULL};
                open_paths(&ls, model, files);
                use = &ls;
            }
            const drift_model *m = &use->m;
            void *ws = m->workspace_new(m->self, GN);
            double th[3] = {2, 0.5, 2}, ll, g[3];
            drift_err e = {{0}};
            drift_rows all = {NULL, 0, GN};
            assert_int_not_equal(
                m->log_lik(m->self, ws, th, &all, NULL, &ll, g, NULL, &e), 0);
            if (!strstr(e.msg, want))
                fail_msg("the failure does not name %s: %s", want, e.msg);
            if (store && !strstr(e.msg, rs))
                fail_msg("the failure does not name the row store: %s",
                         e.msg);
            /* without the gradient too (U_full) */
            e.msg[0] = 0;
            assert_int_not_equal(
                m->log_lik(m->self, ws, th, &all, NULL, &ll, NULL, NULL, &e),
                0);
            if (!strstr(e.msg, want))
                fail_msg("the failure does not name %s: %s", want, e.msg);
            m->workspace_free(m->self, ws);
            if (store) {
                lt_close(&ls);
                unlink(rs);
                free(rs);
            }
        }
        lt_close(&lm);
        free(d);
    }
}

/* The same rows dense (CSV), as a row store converted from it, sparse
 * (LIBSVM) and as a row store converted from that: the full passes agree
 * (store and source bit for bit; sparse and dense to rounding, their sums
 * running in different orders) and the sparse model passes the battery;
 * 1037 rows, so several tiles and tails. */
static void test_glm_stores_and_sparse(void **state)
{
    (void)state;
    char *d = csv("y,x.1,x.2,x.3", 4, GN, gen_glm_rows, 33);
    size_t cap = GN * 96 + 16, len = 0;
    char *svm = malloc(cap);
    assert_non_null(svm);
    len += (size_t)snprintf(svm, cap, "libsvm:");
    for (size_t i = 0; i < GN; i++) {
        len += (size_t)snprintf(svm + len, cap - len, "%g", gvals[i][0]);
        for (size_t j = 1; j <= 3; j++)
            if (i % 5 != j) /* every row misses a feature or none */
                len += (size_t)snprintf(svm + len, cap - len, " %zu:%.17g",
                                        j, gvals[i][j]);
        len += (size_t)snprintf(svm + len, cap - len, "\n");
    }
    for (size_t i = 0; i < GN; i++)
        for (size_t j = 1; j <= 3; j++)
            if (i % 5 == j)
                gvals[i][j] = 0;
    /* the dense data again, with the zeros the sparse rows leave out */
    size_t dcap = GN * 4 * 32 + 64;
    char *dz = malloc(dcap);
    assert_non_null(dz);
    size_t dl = (size_t)snprintf(dz, dcap, "csv:y,x.1,x.2,x.3\n");
    for (size_t i = 0; i < GN; i++)
        dl += (size_t)snprintf(dz + dl, dcap - dl, "%.17g,%.17g,%.17g,%.17g\n",
                               gvals[i][0], gvals[i][1], gvals[i][2],
                               gvals[i][3]);
    const char *dense_model = "rows  { y : int  x : vector[D] }\n"
                              "param { w : vector[D]  b : real }\n"
                              "prior { w ~ normal(0, 1)  b ~ normal(0, 1) }\n"
                              "datum { y ~ bernoulli_logit(dot(x, w) + b) }\n";
    const char *sparse_model =
        "rows  { y : int  x : sparse_vector[D] }\n"
        "param { w : vector[D]  b : real }\n"
        "prior { w ~ normal(0, 1)  b ~ normal(0, 1) }\n"
        "datum { y ~ bernoulli_logit(dot(x, w) + b) }\n";
    const char *dd[] = {dz, NULL}, *sd[] = {svm, NULL};
    lt_model md, ms;
    lt_open_ok(&md, dense_model, dd, NULL, 0);
    lt_open_ok(&ms, sparse_model, sd, NULL, 0);
    lt_check_derivatives(&ms.m, 70, 2, 0.5);
    /* Stan's GLM form over the sparse rows: the same graph, the same sums
     * to the bit */
    {
        lt_model mg;
        lt_open_ok(&mg,
                   "rows  { y : int  x : sparse_vector[D] }\n"
                   "param { w : vector[D]  b : real }\n"
                   "prior { w ~ normal(0, 1)  b ~ normal(0, 1) }\n"
                   "datum { y ~ bernoulli_logit_glm(x, b, w) }\n",
                   sd, NULL, 0);
        assert_true(mg.m.flags & DRIFT_MODEL_GLM);
        double th0[4] = {0.4, -0.7, 0.2, 0.1}, l1, l2, g1[4], g2[4];
        drift_rows rall = {NULL, 0, GN};
        void *w1 = ms.m.workspace_new(ms.m.self, GN);
        void *w2 = mg.m.workspace_new(mg.m.self, GN);
        full_sums(&ms.m, w1, th0, &rall, &l1, g1);
        full_sums(&mg.m, w2, th0, &rall, &l2, g2);
        assert_memory_equal(&l1, &l2, sizeof l1);
        assert_memory_equal(g1, g2, sizeof g1);
        ms.m.workspace_free(ms.m.self, w1);
        mg.m.workspace_free(mg.m.self, w2);
        lt_close(&mg);
    }
    char *rd = th_write_text("", ".drs"), *rsp = th_write_text("", ".drs");
    unlink(rd);
    unlink(rsp);
    drift_err ce = {{0}};
    if (drift_rowstore_convert(md.paths[1], rd, NULL, NULL, &ce) ||
        drift_rowstore_convert(ms.paths[1], rsp, NULL, NULL, &ce))
        fail_msg("converting: %s", ce.msg);
    const char *fd[] = {rd, NULL}, *fs[] = {rsp, NULL};
    lt_model mrd, mrs;
    open_paths(&mrd, dense_model, fd);
    open_paths(&mrs, sparse_model, fs);
    const drift_model *ms_[4] = {&md.m, &mrd.m, &ms.m, &mrs.m};
    double ll[4], g[4][4], th[4] = {0.4, -0.7, 0.2, 0.1};
    drift_rows all = {NULL, 0, GN};
    for (int k = 0; k < 4; k++) {
        const drift_model *m = ms_[k];
        assert_true(m->flags & DRIFT_MODEL_GLM);
        assert_int_equal(m->dim, 4);
        void *ws = m->workspace_new(m->self, GN);
        full_sums(m, ws, th, &all, &ll[k], g[k]);
        m->workspace_free(m->self, ws);
    }
    /* the store holds the source's numbers: the same sums exactly */
    assert_memory_equal(&ll[1], &ll[0], sizeof ll[0]);
    assert_memory_equal(g[1], g[0], sizeof g[0]);
    assert_memory_equal(&ll[3], &ll[2], sizeof ll[0]);
    assert_memory_equal(g[3], g[2], sizeof g[0]);
    near_ld(ll[2], ll[0], 1e-13, "sparse against dense: log-likelihood", 0);
    for (size_t j = 0; j < 4; j++)
        near_ld(g[2][j], g[0][j], 1e-12, "sparse against dense: gradient",
                j);
    lt_close(&md);
    lt_close(&ms);
    lt_close(&mrd);
    lt_close(&mrs);
    unlink(rd), unlink(rsp);
    free(rd), free(rsp), free(d), free(dz), free(svm);
}

/* Per-row gradients of a model with a large shared parameter node (200,000
 * values, 1.6 MB per row of adjoints) are computed in sub-batches that
 * bound that memory (64 MB: 41 rows at a time, here over 100 rows); the
 * results must not depend on it. */
static void test_large_perrow(void **state)
{
    (void)state;
    size_t M = 200000, cap = M * 24 + 64;
    char *json = malloc(cap);
    assert_non_null(json);
    size_t used = (size_t)snprintf(json, cap, "json:{\"z\": [");
    for (size_t k = 0; k < M; k++)
        used += (size_t)snprintf(json + used, cap - used, "%s%.3f",
                                 k ? "," : "", 0.5 + 1e-6 * (double)k);
    snprintf(json + used, cap - used, "]}");
    char *d = csv("x", 1, 100, gen_normal, 9);
    const char *data[] = {d, json, NULL};
    check_model("data { z : vector[M] }\n"
                "rows { x : real }\n"
                "param { s : vector<lower=0>[2] }\n"
                "prior { s ~ lognormal(0, 1) }\n"
                "datum { x ~ normal(0, s[1] + s[2])\n"
                "        target += x * mean(z .* z * s[1]) }\n",
                data, 30, 0.5);
    free(d);
    free(json);
}

/* ---- structured types, GP kernels and multivariate densities --------------- */

/* Each expression's value at x = (0.3, 1.7, -0.4) against R (printed
 * with options(digits = 17); the script is in the comment of each
 * group), and its gradient in x against central differences there.
 * Data: c = (1, 2, 3); M = [2 .5 .3; .5 1.5 -.2; .3 -.2 1]; A = [.5 -1 2;
 * 1.5 .25 -.75]; v6 = 1:6; v9 = 1:9; L2 = chol of O2 = [1 .6; .6 1];
 * O3 = [1 .3 -.2; .3 1 .4; -.2 .4 1] and L3 its Cholesky factor.  The
 * LKJ references: for K = 2, dbeta((r + 1) / 2, eta, eta, log = TRUE) -
 * log(2); for K = 3, (eta - 1) log det(O3) - log c3(eta) with c3 by
 * nested integrate() over the 3 x 3 correlation matrices (c3(1) =
 * pi^2 / 2 to 1e-13), plus log L3[2, 2] for the Cholesky factor's
 * density; multi_normal: -0.5 d' S^-1 d - 0.5 log det(2 pi S);
 * dirichlet: lgamma(sum(a)) - sum(lgamma(a)) + sum((a - 1) log(t));
 * gp_exp_quad_cov: outer(c, c, function(a, b) alpha^2 * exp(-(a - b)^2 /
 * (2 * rho^2))). */
static const struct {
    const char *expr;
    double want;
} fn_refs[] = {
    {"lgamma(x[2])", -0.095807697407065878},
    {"Phi(x[3])", 0.34457825838967582},
    {"Phi_approx(x[1])", 0.61802768452061396},
    {"logit(x[1])", -0.84729786038720356},
    {"inv_logit(x[2])", 0.84553473491646525},
    {"log1m_exp(x[3])", -1.1096329315889282},
    {"log1m_inv_logit(x[2])", -1.8677860293862656},
    {"log_diff_exp(x[2], x[1])", 1.416845046077073},
    {"fmin(x[1], x[2]) + 10 * fmax(x[1], x[3])", 3.2999999999999998},
    {"lchoose(x[2] + 5, x[1] + 2)", 3.1417347460251972},
    {"lbeta(x[2], x[1] + 1)", -0.89712968747487176},
    {"log_mix(inv_logit(x[1]), x[2], x[3])", 1.2324809076854226},
    {"log_mix(softmax(x), x)", 1.4589502665197707},
    {"dot(softmax(x), c)", 1.9093238171744145},
    {"dot(log_softmax(x), c)", -9.5847172785103805},
    {"dot(cumulative_sum(x), c)", 9.0999999999999996},
    {"dot(append_row(x, x[1]), append_row(c, 2))", 3.0999999999999996},
    {"dot(append_row(x[2], x), append_row(2, c))", 5.8999999999999995},
    {"sum(append_row(A, diag_pre_multiply(head(x, 2), A)) .* append_row(A, A))", 14.5875},
    {"sum(append_col(transpose(A), x) .* M)", 1.7249999999999999},
    {"sum(append_col(x, M) .* append_col(M, c))", 5.5700000000000003},
    {"sum(rows_dot_product(A, diag_pre_multiply(head(x, 2), A)))", 6.4624999999999995},
    {"sum(rows_dot_product(x, c))", 2.4999999999999996},
    {"sum(diag_post_multiply(A, x))", -1.175},
    {"sum(quad_form_diag(M, exp(x)))", 55.503956518698295},
    {"dot(to_vector(cholesky_decompose(quad_form_diag(M, exp(x)))), v9)", 43.080173387655691},
    {"sum(multiply_lower_tri_self_transpose(diag_pre_multiply(exp(x), M)))", 97.469595148725702},
    {"dot(mdivide_left_tri_low(cholesky_decompose(M), x), c)", 2.6042680277586938},
    {"sum(mdivide_left_tri_low(cholesky_decompose(M), append_col(x, 2 * x)) .* append_col(c, c))", 7.812804083276081},
    {"dot(diagonal(M), x)", 2.75},
    {"sum(diag_matrix(x) * c)", 2.4999999999999996},
    {"dot(to_vector(A), v6)", 7},
    {"sum(transpose(A) * head(x, 2))", 2.1499999999999999},
    {"sum(rep_vector(x[1], 3)) + sum(rep_matrix(x[2], 2, 3))", 11.1},
    {"dot(tail(x, 2), segment(c, 2, 2))", 2.1999999999999997},
    {"x[1] * (rows(A) + cols(A) * 10 + num_elements(M) * 100)", 279.59999999999997},
    {"distance(x, c) + 10 * squared_distance(x, c)", 124.88425027803686},
    {"sum(add_diag(M, x)) + sum(add_diag(M, x[1]))", 13.899999999999999},
    {"max(x) + 10 * min(x) + max(2, 3)", 0.70000000000000018},
    {"sd(x) + 10 * variance(x)", 12.502600995489697},
    {"x[1] < x[2] ? x[1] : x[3]", 0.29999999999999999},
    {"x[2] <= x[1] ? x[1] : x[3]", -0.40000000000000002},
    {"((x[1] > 0 && x[3] > 0) || !(x[2] < 1)) + 10 * (x[1] >= 0.25) + 100 * (x[1] == x[2]) + 1000 * (x[1] != x[2])", 1011},
    {"erf(x[1]) + erfc(x[3])", 1.7570191145057961},
    {"tgamma(x[2]) + inv_cloglog(x[3])", 1.3970938991642488},
    {"inv(x[2]) + inv_sqrt(x[2]) + inv_square(x[3])", 7.6052002829650176},
    {"log2(x[2]) + log10(x[1]) + exp2(x[3]) + cbrt(x[3])", 0.26370798460976119},
    {"tan(x[1]) + asin(x[3]) + acos(x[1]) + atan(x[2])", 2.2029953358577252},
    {"sinh(x[1]) + cosh(x[3]) + asinh(x[2]) + acosh(x[2]) + atanh(x[3])", 3.3859951445199385},
    {"x[1] * (step(x[3]) + 10 * step(x[1]) + 100 * floor(x[2]) + 1000 * ceil(x[3]) + 10000 * round(x[2]) + 100000 * trunc(x[3] - 1))", -23967},
    {"normal_lpdf(x[1] | x[2], exp(x[3]))", -2.6999686431272907},
    {"poisson_lpmf(3 | exp(x[1]))", -2.2416182768040582},
    {"normal_lpdf(x | c, 2)", -6.3537571412938538},
    {"binomial_lpmf(3 | 10, inv_logit(x[1]))", -2.8560607019032256},
    {"categorical_lpmf(2 | softmax(x))", -0.31411954641839679},
    {"dirichlet_lpdf(softmax(x) | c)", -1.0480140770330895},
    {"dirichlet_lpdf(softmax(x) | exp(x))", 2.214726188998013},
    {"multi_normal_lpdf(x | c, M)", -9.4616731713617188},
    {"multi_normal_cholesky_lpdf(x | c, cholesky_decompose(quad_form_diag(M, exp(x))))", -18.654161085702778},
    {"prod(x)", -0.20399999999999999},
    {"prod(append_row(x, 0) + x[1] * 0)", 0},
    {"sum(gp_exp_quad_cov(c, exp(x[1]), exp(x[2])))", 16.043158009052082},
    {"x[1] * pi() + e()", 3.660759624535983},
    {"log_sum_exp(x[1], negative_infinity())", 0.29999999999999999},
    {"std_normal_lpdf(x[2])", -2.3639385332046725},
    {"std_normal_lpdf(x)", -4.3268155996140178},
    {"lkj_corr_cholesky_lpdf(L2 | exp(x[1]))", -0.6692467725752711},
    {"lkj_corr_lpdf(O2 | exp(x[1]))", -0.6692467725752711},
    {"lkj_corr_lpdf(O3 | exp(x[1]))", -1.3206636353275827},
    {"lkj_corr_cholesky_lpdf(L3 | exp(x[1]))", -1.3678189750632033},
};

static const char *const fn_data =
    "json:{\"c\": [1, 2, 3],"
    " \"M\": [[2, 0.5, 0.3], [0.5, 1.5, -0.2], [0.3, -0.2, 1.0]],"
    " \"A\": [[0.5, -1, 2], [1.5, 0.25, -0.75]],"
    " \"v6\": [1, 2, 3, 4, 5, 6], \"v9\": [1, 2, 3, 4, 5, 6, 7, 8, 9],"
    " \"L2\": [[1, 0], [0.6, 0.8]], \"O2\": [[1, 0.6], [0.6, 1]],"
    " \"O3\": [[1, 0.3, -0.2], [0.3, 1, 0.4], [-0.2, 0.4, 1]],"
    " \"L3\": [[1, 0, 0], [0.29999999999999999, 0.95393920141694566, 0],"
    " [-0.20000000000000001, 0.4822110248920824, 0.85292000062873863]]}";

static void test_function_values(void **state)
{
    (void)state;
    const char *data[] = {fn_data, NULL};
    for (size_t k = 0; k < sizeof fn_refs / sizeof fn_refs[0]; k++) {
        char model[1024];
        snprintf(model, sizeof model,
                 "data { c : vector[3]  M : matrix[3, 3]  A : matrix[2, 3]\n"
                 "       v6 : vector[6]  v9 : vector[9]  L2 : matrix[2, 2]\n"
                 "       O2 : matrix[2, 2]  O3 : matrix[3, 3]\n"
                 "       L3 : matrix[3, 3] }\n"
                 "param { x : vector[3] }\n"
                 "prior { target += %s }\n",
                 fn_refs[k].expr);
        lt_model lm;
        lt_open(&lm, model, data, NULL, 0);
        if (lm.rc)
            fail_msg("%s: did not open: %s", fn_refs[k].expr, lm.report);
        const drift_model *m = &lm.m;
        void *ws = m->workspace_new(m->self, 1);
        double x[3] = {0.3, 1.7, -0.4}, g[3], lp;
        drift_err e;
        if (m->log_prior(m->self, ws, x, &lp, g, &e))
            fail_msg("%s: %s", fn_refs[k].expr, e.msg);
        double tol = strstr(fn_refs[k].expr, "lkj") ? 1e-9 : 1e-12;
        if (!(fabs(lp - fn_refs[k].want) <= tol * fmax(1, fabs(lp))))
            fail_msg("%s = %.17g, R says %.17g", fn_refs[k].expr, lp,
                     fn_refs[k].want);
        for (int j = 0; j < 3; j++) {
            double xp[3] = {x[0], x[1], x[2]}, up, dn, h = 1e-6;
            xp[j] = x[j] + h;
            m->log_prior(m->self, ws, xp, &up, NULL, &e);
            xp[j] = x[j] - h;
            m->log_prior(m->self, ws, xp, &dn, NULL, &e);
            double fd = (up - dn) / (2 * h);
            if (!(fabs(fd - g[j]) < 1e-6 * fmax(1, fabs(fd))))
                fail_msg("%s: d/dx[%d] = %.12g, finite differences %.12g",
                         fn_refs[k].expr, j + 1, g[j], fd);
        }
        m->workspace_free(m->self, ws);
        lt_close(&lm);
    }
}

/* Normal columns, the last a category 1..3. */
static double gen_cat_last(size_t i, size_t c, drift_rng *r)
{
    (void)i;
    if (c == 4)
        return (double)(1 + drift_rng_below(r, 3));
    return drift_rng_normal(r);
}

/* The new operations per row: the whole battery (per-row gradients,
 * jvp, rows alone) with rows variables and parameters mixed. */
static void test_composites_per_row(void **state)
{
    (void)state;
    char *d = csv("y.1,y.2,y.3,z,k", 5, 13, gen_cat_last, 21);
    const char *data[] = {d, NULL};
    check_model(
        "rows { y : vector[3]  z : real  k : int }\n"
        "param { mu : vector[3]  L : cholesky_factor_corr[3]\n"
        "        s : vector<lower=0>[3]  th : simplex[3]\n"
        "        S : cov_matrix[3]  a : real  R : corr_matrix[3]\n"
        "        o : ordered[2]  W : matrix[3, 3] }\n"
        "prior { mu ~ normal(0, 1)  L ~ lkj_corr_cholesky(2.5)\n"
        "        s ~ lognormal(0, 1)  th ~ dirichlet(rep_vector(1.5, 3) + s)\n"
        "        target += -0.1 * squared_norm(S)  R ~ lkj_corr(a * a + 1)  a ~ normal(0, 1)\n"
        "        o ~ normal(0, 2)  target += -0.5 * squared_norm(W) }\n"
        "datum {\n"
        "  y ~ multi_normal_cholesky(mu, diag_pre_multiply(s, L))\n"
        "  y ~ multi_normal(mu + z, S)\n"
        "  k ~ categorical(th)\n"
        "  target += normal_lpdf(y[1] | mu[1] * z, s[2])\n"
        "  target += log_mix(th[1], normal_lpdf(z | mu[2], 1),\n"
        "                    normal_lpdf(z | o[1], s[3]))\n"
        "  target += z > o[2] ? log1p_exp(a * z) : -a * a * z * z\n"
        "  target += dot(softmax(y .* mu), log_softmax(mu)) + sum(cumulative_sum(y .* s))\n"
        "  target += sum(append_row(y, z) .* append_row(mu, a))\n"
        "  target += sum(rows_dot_product(W, quad_form_diag(S, y))) * 0.01\n"
        "  target += sum(mdivide_left_tri_low(cholesky_decompose(S), y - mu))\n"
        "  target += sum(multiply_lower_tri_self_transpose(W * diag_matrix(y))) * 0.01\n"
        "  target += max(y .* mu) + min(y) * a + fmax(z, a) + fmin(z * a, mu[1])\n"
        "  target += sum(append_col(y, W * y)) * 0.1 + dot(diagonal(R), y)\n"
        "  target += log_diff_exp(2 + s[1], s[2] - 1 - s[1]) + lchoose(5 + s[3], 2 + s[1])\n"
        "  target += sd(y .* mu) + Phi(z * a) + sum(to_vector(transpose(W) * R))\n"
        "}\n",
        data, 22, 0.5);
    free(d);
}

/* Conditionals: a hurdle model (a density defined only on the branch
 * taken for each row: lognormal of y > 0), and a branch not taken that is
 * undefined at the parameter's value (sigma <= 0), give finite values and
 * gradients through the branch taken. */
static double gen_hurdle(size_t i, size_t c, drift_rng *r)
{
    (void)c;
    return i % 3 == 0 ? 0 : 0.1 + drift_rng_uniform(r) * 3;
}

static void test_conditional_branches(void **state)
{
    (void)state;
    char *d = csv("y", 1, 12, gen_hurdle, 23);
    const char *data[] = {d, NULL};
    check_model("rows { y : real }\n"
                "param { th : real<lower=0, upper=1>  mu : real\n"
                "        s : real<lower=0>  x : real }\n"
                "prior { th ~ beta(2, 2)  mu ~ normal(0, 1)  s ~ gamma(2, 2)\n"
                "        x ~ normal(0, 1)\n"
                "        target += x > 0 ? normal_lpdf(1 | 0, x) : -x * x\n"
                "        target += x > 0 ? log(x) : x }\n"
                "datum { target += y > 0 ? lognormal_lpdf(y | mu, s) + log(th)\n"
                "                        : log1m(th) }\n",
                data, 24, 0.8);
    free(d);
    /* The value is the branch taken's. */
    lt_model lm;
    lt_open_ok(&lm,
               "param { x : real }\n"
               "prior { target += x > 0 ? normal_lpdf(1 | 0, x) : -x * x }\n",
               NULL, NULL, 0);
    void *ws = lm.m.workspace_new(lm.m.self, 1);
    double x = -0.5, lp, g;
    drift_err e;
    assert_int_equal(lm.m.log_prior(lm.m.self, ws, &x, &lp, &g, &e), 0);
    assert_true(fabs(lp + 0.25) < 1e-15 && fabs(g - 1) < 1e-15);
    lm.m.workspace_free(lm.m.self, ws);
    lt_close(&lm);
}

/* ---- dense linear algebra beyond one block ------------------------------------- */

/* Sizes around the blocks the Cholesky factorisation's reverse pass
 * works in (32 rows below 512, 64 from there) and the size from which
 * dpotrf factors (32): one entry, less than a block, two blocks and a
 * bit, exactly four, and several with the last one partial; the
 * closed form also at 520, in blocks of 64 with the last partial. */
static const size_t chol_sizes[] = {1, 3, 70, 128, 131, 200};
enum { CHOL_MAX = 520 };

/* The compound-symmetric covariance S = a I + b 11' (a = exp(x1),
 * b = exp(x2)) has det S = a^(m-1) (a + m b) and S^-1 = (I - b/(a + m b)
 * 11') / a, so the multivariate normal density of y is known in closed
 * form; through cholesky_decompose it runs the blocked factorisation and
 * its reverse pass on an m x m matrix.  The value against the closed
 * form, the gradient against central differences of the closed form. */
static double cs_lpdf(const double *y, size_t m, const double *x)
{
    double a = exp(x[0]), b = exp(x[1]), s = 0, ss = 0;
    for (size_t i = 0; i < m; i++) {
        s += y[i];
        ss += y[i] * y[i];
    }
    double md = (double)m, c = a + md * b;
    double logdet = (md - 1) * log(a) + log(c);
    double quad = (ss - b * s * s / c) / a;
    return -0.5 * md * log(2 * M_PI) - 0.5 * logdet - 0.5 * quad;
}

static void check_cholesky_closed_form(size_t m)
{
    size_t cap = 64 + 32 * m, used = 0;
    double y[CHOL_MAX];
    char *json = malloc(cap);
    used += (size_t)snprintf(json + used, cap - used, "{\"y\": [");
    for (size_t i = 0; i < m; i++) {
        y[i] = sin(0.7 * (double)i) + 0.1 * (double)(i % 7);
        used += (size_t)snprintf(json + used, cap - used, "%s%.17g",
                                 i ? "," : "", y[i]);
    }
    snprintf(json + used, cap - used, "]}");
    char *tagged = malloc(strlen(json) + 8);
    sprintf(tagged, "json:%s", json);
    const char *data[] = {tagged, NULL};
    lt_model lm;
    lt_open_ok(&lm,
               "data  { y : vector[M] }\n"
               "param { x : vector[2] }\n"
               "prior { target += multi_normal_cholesky_lpdf(y | "
               "rep_vector(0, M), cholesky_decompose(add_diag("
               "rep_matrix(exp(x[2]), M, M), exp(x[1])))) }\n",
               data, NULL, 0);
    const drift_model *mod = &lm.m;
    void *ws = mod->workspace_new(mod->self, 1);
    const double pts[][2] = {{0.3, -1.2}, {-0.5, 0.4}, {1.1, 2.0}};
    for (size_t k = 0; k < sizeof pts / sizeof pts[0]; k++) {
        double x[2] = {pts[k][0], pts[k][1]}, g[2], lp;
        drift_err e;
        assert_int_equal(mod->log_prior(mod->self, ws, x, &lp, g, &e), 0);
        double want = cs_lpdf(y, m, x);
        if (!(fabs(lp - want) <= 1e-10 * fabs(want)))
            fail_msg("m = %zu, at (%g, %g): %.17g, closed form %.17g", m,
                     x[0], x[1], lp, want);
        for (int j = 0; j < 2; j++) {
            double xp[2] = {x[0], x[1]}, h = 1e-5;
            xp[j] = x[j] + h;
            double up = cs_lpdf(y, m, xp);
            xp[j] = x[j] - h;
            double fd = (up - cs_lpdf(y, m, xp)) / (2 * h);
            if (!(fabs(fd - g[j]) <= 1e-6 * fmax(1, fabs(fd))))
                fail_msg("m = %zu, at (%g, %g): d/dx[%d] = %.12g, closed "
                         "form's differences %.12g",
                         m, x[0], x[1], j + 1, g[j], fd);
        }
    }
    mod->workspace_free(mod->self, ws);
    lt_close(&lm);
    free(tagged);
    free(json);
}

static void test_cholesky_blocked_closed_form(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof chol_sizes / sizeof chol_sizes[0]; k++)
        check_cholesky_closed_form(chol_sizes[k]);
    check_cholesky_closed_form(CHOL_MAX);
}

/* Every entry of the factor's adjoint, and every entry of the matrix's:
 * sum(W .* cholesky_decompose(S)) with S = diag(e^x) K diag(e^x) for a
 * fixed kernel matrix K and fixed weights W, so that each of the m
 * parameters moves a row and a column of S and the weights reach every
 * entry of L.  The gradient against central differences in each
 * coordinate (the standard battery). */
static void check_cholesky_every_entry(size_t m)
{
    size_t cap = 64 + 26 * (m * m + m), used = 0;
    char *json = malloc(cap);
    used += (size_t)snprintf(json + used, cap - used, "json:{\"t\": [");
    for (size_t i = 0; i < m; i++)
        used += (size_t)snprintf(json + used, cap - used, "%s%.17g",
                                 i ? "," : "", 0.05 * (double)i);
    used += (size_t)snprintf(json + used, cap - used, "], \"W\": [");
    for (size_t i = 0; i < m; i++) {
        used += (size_t)snprintf(json + used, cap - used, "%s[",
                                 i ? "," : "");
        for (size_t j = 0; j < m; j++)
            used += (size_t)snprintf(json + used, cap - used, "%s%.6f",
                                     j ? "," : "",
                                     sin(7.0 * (double)i + 3.0 * (double)j));
        used += (size_t)snprintf(json + used, cap - used, "]");
    }
    snprintf(json + used, cap - used, "]}");
    const char *data[] = {json, NULL};
    lt_model lm;
    lt_open_ok(&lm,
               "data  { t : array[M] real  W : matrix[M, M] }\n"
               "param { x : vector[M] }\n"
               "prior { target += sum(W .* cholesky_decompose(quad_form_diag("
               "add_diag(gp_exp_quad_cov(t, 1.0, 2.0), 0.5), exp(x))))\n"
               "        x ~ normal(0, 1) }\n",
               data, NULL, 0);
    lt_check_derivatives(&lm.m, 41, 2, 0.3);
    lt_close(&lm);
    free(json);
}

static void test_cholesky_blocked_every_entry(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof chol_sizes / sizeof chol_sizes[0]; k++)
        check_cholesky_every_entry(chol_sizes[k]);
}

/* A matrix that is not positive definite (or holds NaN, or is not
 * symmetric) makes the log density fail with cholesky_decompose's
 * message, at every size dpotrf sees, whichever block the failure falls
 * in; the same workspace then evaluates a good point as before. */
static void test_cholesky_not_positive_definite(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof chol_sizes / sizeof chol_sizes[0]; k++) {
        size_t m = chol_sizes[k], cap = 64 + 52 * m * m, used = 0;
        char *json = malloc(cap);
        /* K: 1 on the diagonal, 0.5 / m off it (eigenvalues within
         * [0.5, 1.5]); E: one entry, [m, 1], so that x[2] E breaks
         * symmetry when x[2] != 0 and m > 1. */
        used += (size_t)snprintf(json + used, cap - used, "json:{");
        for (int w = 0; w < 2; w++) {
            used += (size_t)snprintf(json + used, cap - used, "%s\"%s\": [",
                                     w ? ", " : "", w ? "E" : "K");
            for (size_t i = 0; i < m; i++) {
                used += (size_t)snprintf(json + used, cap - used, "%s[",
                                         i ? "," : "");
                for (size_t j = 0; j < m; j++) {
                    double v = w ? (i == m - 1 && j == 0 ? 1.0 : 0.0)
                                 : (i == j ? 1.0 : 0.5 / (double)m);
                    used += (size_t)snprintf(json + used, cap - used,
                                             "%s%.17g", j ? "," : "", v);
                }
                used += (size_t)snprintf(json + used, cap - used, "]");
            }
            used += (size_t)snprintf(json + used, cap - used, "]");
        }
        snprintf(json + used, cap - used, "}");
        const char *data[] = {json, NULL};
        lt_model lm;
        lt_open_ok(&lm,
                   "data  { K : matrix[M, M]  E : matrix[M, M] }\n"
                   "param { x : vector[2] }\n"
                   "prior { target += sum(cholesky_decompose(add_diag(K, "
                   "x[1]) + x[2] * E)) }\n",
                   data, NULL, 0);
        const drift_model *mod = &lm.m;
        void *ws = mod->workspace_new(mod->self, 1);
        assert_non_null(ws);
        double good[2] = {0.25, 0}, g[2], lp0, lp;
        drift_err e;
        assert_int_equal(mod->log_prior(mod->self, ws, good, &lp0, g, &e), 0);
        /* x[1] = -1.6 leaves an eigenvalue below zero (for m = 1, the
         * one entry); NaN on the diagonal; E asymmetric. */
        const double bad[][2] = {{-1.6, 0}, {NAN, 0}, {0.25, 1}};
        const char *want[] = {"positive definite", "positive definite",
                              "symmetric"};
        for (size_t t = 0; t < 3; t++) {
            if (t == 2 && m == 1)
                continue;
            memset(e.msg, 0, sizeof e.msg);
            int rc = mod->log_prior(mod->self, ws, bad[t], &lp, g, &e);
            if (rc == 0)
                fail_msg("m = %zu, case %zu: no error, log density %g", m,
                         t, lp);
            char full[64];
            snprintf(full, sizeof full,
                     "cholesky_decompose: the matrix is not %s", want[t]);
            if (!strstr(e.msg, full) || !strstr(e.msg, ":3:"))
                fail_msg("m = %zu, case %zu: message '%s', wanted '%s' at "
                         "line 3",
                         m, t, e.msg, full);
        }
        assert_int_equal(mod->log_prior(mod->self, ws, good, &lp, g, &e), 0);
        assert_true(lp == lp0);
        mod->workspace_free(mod->self, ws);
        lt_close(&lm);
        free(json);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_elementwise),
        cmocka_unit_test(test_unary),
        cmocka_unit_test(test_reductions),
        cmocka_unit_test(test_linear_algebra),
        cmocka_unit_test(test_indexing),
        cmocka_unit_test(test_constrained),
        cmocka_unit_test(test_jacobians),
        cmocka_unit_test(test_glm_detection),
        cmocka_unit_test(test_glm_full_passes),
        cmocka_unit_test(test_glm_bad_rows),
        cmocka_unit_test(test_glm_stores_and_sparse),
        cmocka_unit_test(test_large_perrow),
        cmocka_unit_test(test_shared_scalars_many_rows),
        cmocka_unit_test(test_function_values),
        cmocka_unit_test(test_composites_per_row),
        cmocka_unit_test(test_conditional_branches),
        cmocka_unit_test(test_cholesky_blocked_closed_form),
        cmocka_unit_test(test_cholesky_blocked_every_entry),
        cmocka_unit_test(test_cholesky_not_positive_definite),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
