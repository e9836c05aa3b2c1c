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
        cmocka_unit_test(test_large_perrow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
