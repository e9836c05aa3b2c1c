/* test_transform.c: the structured types' transforms (simplex, ordered,
 * positive_ordered, cholesky_factor_corr, cholesky_factor_cov,
 * cov_matrix, corr_matrix).  At random points: the log-Jacobian against
 * the log-determinant of the finite-difference Jacobian of u -> the free
 * coordinates of x; the reverse pass against finite differences of
 * w . x(u) + c lj(u); the tangents against directional differences; the
 * inverse against the forward map; the constraint itself.  Then the
 * types through the language: the derivative battery, Stan's output
 * names (column-major), the log prior as the density of x plus the
 * log-Jacobian, initial values, data checks and describe. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/lang/lang_model.h"
#include "engine/lang/transform.h"
#include "engine/run/rng.h"
#include "harness.h"
#include "langtest.h"

typedef struct tcase {
    drift_constraint con;
    size_t m, n;
} tcase;

static const tcase cases[] = {
    {DRIFT_CON_SIMPLEX, 1, 1},       {DRIFT_CON_SIMPLEX, 2, 1},
    {DRIFT_CON_SIMPLEX, 5, 1},       {DRIFT_CON_ORDERED, 1, 1},
    {DRIFT_CON_ORDERED, 4, 1},       {DRIFT_CON_POSITIVE_ORDERED, 4, 1},
    {DRIFT_CON_CHOL_CORR, 1, 1},     {DRIFT_CON_CHOL_CORR, 2, 2},
    {DRIFT_CON_CHOL_CORR, 4, 4},     {DRIFT_CON_CHOL_COV, 3, 3},
    {DRIFT_CON_CHOL_COV, 4, 2},      {DRIFT_CON_COV, 1, 1},
    {DRIFT_CON_COV, 3, 3},           {DRIFT_CON_CORR, 2, 2},
    {DRIFT_CON_CORR, 4, 4},
    /* At and beyond the size where L L^T goes through BLAS. */
    {DRIFT_CON_COV, 32, 32},         {DRIFT_CON_CORR, 37, 37},
};

/* The free coordinates of x (indices into x), whose density the
 * log-Jacobian is about. */
static size_t free_coords(const tcase *t, size_t *idx)
{
    size_t n = 0, K = t->m;
    switch (t->con) {
    case DRIFT_CON_SIMPLEX:
        for (size_t k = 0; k + 1 < K; k++)
            idx[n++] = k;
        break;
    case DRIFT_CON_ORDERED:
    case DRIFT_CON_POSITIVE_ORDERED:
        for (size_t k = 0; k < K; k++)
            idx[n++] = k;
        break;
    case DRIFT_CON_CHOL_CORR:
    case DRIFT_CON_CORR:
        for (size_t i = 0; i < K; i++)
            for (size_t j = 0; j < i; j++)
                idx[n++] = i * K + j;
        break;
    case DRIFT_CON_CHOL_COV:
        for (size_t i = 0; i < t->m; i++)
            for (size_t j = 0; j <= i && j < t->n; j++)
                idx[n++] = i * t->n + j;
        break;
    case DRIFT_CON_COV:
        for (size_t i = 0; i < K; i++)
            for (size_t j = 0; j <= i; j++)
                idx[n++] = i * K + j;
        break;
    case DRIFT_CON_NONE:
        break;
    }
    return n;
}

/* log |det A| of an n x n matrix (row-major, destroyed). */
static double log_abs_det(double *A, size_t n)
{
    double ld = 0;
    for (size_t c = 0; c < n; c++) {
        size_t p = c;
        for (size_t r = c + 1; r < n; r++)
            if (fabs(A[r * n + c]) > fabs(A[p * n + c]))
                p = r;
        if (p != c)
            for (size_t k = 0; k < n; k++) {
                double t = A[c * n + k];
                A[c * n + k] = A[p * n + k];
                A[p * n + k] = t;
            }
        double d = A[c * n + c];
        ld += log(fabs(d));
        for (size_t r = c + 1; r < n; r++) {
            double f = A[r * n + c] / d;
            for (size_t k = c; k < n; k++)
                A[r * n + k] -= f * A[c * n + k];
        }
    }
    return ld;
}

static double fwd(const tcase *t, const double *u, double *x, double *work)
{
    return drift_transform_forward(t->con, t->m, t->n, u, x, NULL, NULL, NULL,
                                   work);
}

static void check_case(const tcase *t, drift_rng *rng)
{
    size_t F = drift_transform_free_size(t->con, t->m, t->n);
    size_t X = drift_transform_size(t->con, t->m, t->n);
    size_t W = drift_transform_work(t->con, t->m, t->n);
    double *buf = calloc(7 * (F + 1) + 5 * (X + 1) + W + F * F + 1,
                         sizeof *buf);
    size_t *idx = calloc(F + 1, sizeof *idx);
    assert_non_null(buf);
    assert_non_null(idx);
    double *u = buf, *up = u + F + 1, *gu = up + F + 1, *back = gu + F + 1;
    double *v = back + F + 1, *x = v + F + 1, *xp = x + X + 1;
    double *xm = xp + X + 1, *tx = xm + X + 1, *w = tx + X + 1;
    double *work = w + X + 1, *J = work + W;
    const char *name = drift_transform_name(t->con);
    /* Smaller free values for large matrices: a random triangular
     * factor's condition number grows with its size, and the inverse's
     * round trip below is checked to 1e-8. */
    double su = t->m > 8 ? 0.8 * sqrt(8.0 / (double)t->m) : 0.8;
    for (size_t k = 0; k < F; k++)
        u[k] = su * drift_rng_normal(rng);
    double lj = fwd(t, u, x, work);
    /* The constraint holds. */
    char why[200];
    if (drift_transform_inverse(t->con, t->m, t->n, x, back, why, sizeof why,
                                work))
        fail_msg("%s[%zu]: x fails its own check: %s", name, t->m, why);
    for (size_t k = 0; k < F; k++)
        if (!(fabs(back[k] - u[k]) < 1e-8 * (1 + fabs(u[k]))))
            fail_msg("%s[%zu]: inverse u[%zu] = %.12g, was %.12g", name, t->m,
                     k, back[k], u[k]);
    /* log-Jacobian against the finite-difference Jacobian. */
    size_t nf = free_coords(t, idx);
    assert_int_equal(nf, F);
    double h = 1e-6;
    for (size_t c = 0; c < F; c++) {
        memcpy(up, u, F * sizeof *u);
        up[c] = u[c] + h;
        fwd(t, up, xp, work);
        up[c] = u[c] - h;
        fwd(t, up, xm, work);
        for (size_t r = 0; r < F; r++)
            J[r * F + c] = (xp[idx[r]] - xm[idx[r]]) / (2 * h);
    }
    double fd_lj = F ? log_abs_det(J, F) : 0;
    if (!(fabs(fd_lj - lj) < 1e-6 * (1 + fabs(lj))))
        fail_msg("%s[%zu, %zu]: log-Jacobian %.12g, finite differences "
                 "%.12g",
                 name, t->m, t->n, lj, fd_lj);
    /* Reverse: the gradient of w . x + c lj. */
    for (size_t k = 0; k < X; k++)
        w[k] = drift_rng_normal(rng);
    double cj = 0.7;
    memset(gu, 0, F * sizeof *gu);
    drift_transform_reverse(t->con, t->m, t->n, u, x, w, cj, gu, work);
    for (size_t c = 0; c < F; c++) {
        double f[2];
        for (int s = 0; s < 2; s++) {
            memcpy(up, u, F * sizeof *u);
            up[c] = u[c] + (s ? -h : h);
            double l = fwd(t, up, xp, work), v = cj * l;
            for (size_t k = 0; k < X; k++)
                v += w[k] * xp[k];
            f[s] = v;
        }
        double fd = (f[0] - f[1]) / (2 * h);
        if (!(fabs(fd - gu[c]) < 1e-6 * (1 + fabs(fd))))
            fail_msg("%s[%zu, %zu]: reverse d/du[%zu] %.12g, finite "
                     "differences %.12g",
                     name, t->m, t->n, c, gu[c], fd);
    }
    /* Tangents along a random direction. */
    double tlj = 0;
    for (size_t k = 0; k < F; k++)
        v[k] = drift_rng_normal(rng);
    drift_transform_forward(t->con, t->m, t->n, u, x, v, tx, &tlj, work);
    for (size_t k = 0; k < F; k++)
        up[k] = u[k] + h * v[k];
    double lp = fwd(t, up, xp, work);
    for (size_t k = 0; k < F; k++)
        up[k] = u[k] - h * v[k];
    double lm = fwd(t, up, xm, work);
    for (size_t k = 0; k < X; k++) {
        double fd = (xp[k] - xm[k]) / (2 * h);
        if (!(fabs(fd - tx[k]) < 1e-6 * (1 + fabs(fd))))
            fail_msg("%s[%zu]: tangent of x[%zu] %.12g, finite differences "
                     "%.12g",
                     name, t->m, k, tx[k], fd);
    }
    double fdl = (lp - lm) / (2 * h);
    if (!(fabs(fdl - tlj) < 1e-6 * (1 + fabs(fdl))))
        fail_msg("%s[%zu]: tangent of lj %.12g, finite differences %.12g",
                 name, t->m, tlj, fdl);
    free(buf);
    free(idx);
}

static void test_transforms(void **state)
{
    (void)state;
    drift_rng rng;
    drift_rng_seed(&rng, 2024, 0);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int trial = 0; trial < 4; trial++)
            check_case(&cases[c], &rng);
}

/* What each constraint refuses, in words. */
static void test_inverse_refusals(void **state)
{
    (void)state;
    static const struct {
        drift_constraint con;
        size_t m;
        double x[9];
        const char *why;
    } bad[] = {
        {DRIFT_CON_SIMPLEX, 3, {0.2, 0.3, 0.4}, "sum to 0.9"},
        {DRIFT_CON_SIMPLEX, 2, {1.5, -0.5}, "entry 2 is -0.5"},
        {DRIFT_CON_ORDERED, 3, {1, 3, 2}, "entry 3 (2) is not above entry 2"},
        {DRIFT_CON_POSITIVE_ORDERED, 2, {0, 1}, "positive entries"},
        {DRIFT_CON_CHOL_CORR, 2, {1, 0, 0.6, 0.7}, "row 2 has squared length"},
        {DRIFT_CON_CHOL_CORR, 2, {1, 0.1, 0, 1}, "lower triangular"},
        {DRIFT_CON_COV, 2, {1, 2, 2, 1}, "not positive definite"},
        {DRIFT_CON_COV, 2, {1, 0.5, 0.4, 1}, "must be symmetric"},
        {DRIFT_CON_CORR, 2, {2, 0.5, 0.5, 1}, "has ones there"},
    };
    double work[64], u[9];
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char why[200];
        assert_int_equal(drift_transform_inverse(bad[k].con, bad[k].m,
                                                 bad[k].con >=
                                                         DRIFT_CON_CHOL_CORR
                                                     ? bad[k].m
                                                     : 1,
                                                 bad[k].x, u, why, sizeof why,
                                                 work),
                         -1);
        if (!strstr(why, bad[k].why))
            fail_msg("case %zu: '%s' lacks '%s'", k, why, bad[k].why);
    }
}

/* ---- through the language ----------------------------------------------------- */

static const char *const structured_model =
    "data { K : int }\n"
    "rows { y : vector[3] }\n"
    "param { th : simplex[K]  c : ordered[3]  p : positive_ordered[2]\n"
    "        L : cholesky_factor_corr[3]  F : cholesky_factor_cov[3, 2]\n"
    "        S : cov_matrix[2]  R : corr_matrix[3]\n"
    "        ths : array[2] simplex[3]  mu : vector[3] }\n"
    "prior { th ~ normal(0.3, 1)  c ~ normal(0, 2)  p ~ exponential(1)\n"
    "        target += -0.5 * squared_norm(L) - 0.5 * squared_norm(F)\n"
    "        target += -0.1 * squared_norm(S) - 0.3 * squared_norm(R)\n"
    "        target += log(ths[1][2]) + sum(log(ths[2]))\n"
    "        mu ~ normal(0, 1) }\n"
    "datum { y ~ normal(mu + c + L * mu + F * p + R * c, 1 + th[1])\n"
    "        target += dot(S * p, p) * 0.01 }\n";

static double gen_normal(size_t i, size_t c, drift_rng *r)
{
    (void)i;
    (void)c;
    return drift_rng_normal(r);
}

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

static void test_language(void **state)
{
    (void)state;
    char *d = csv("y.1,y.2,y.3", 3, 9, gen_normal, 7);
    const char *data[] = {d, "json:{\"K\": 4}", NULL};
    lt_model lm;
    lt_open_ok(&lm, structured_model, data, NULL, 0);
    const drift_model *m = &lm.m;
    /* free: 3 + 3 + 2 + 3 + 5 + 3 + 3 + 2*2 + 3 */
    assert_int_equal(m->dim, 29);
    /* values: 4 + 3 + 2 + 9 + 6 + 4 + 9 + 6 + 3 */
    assert_int_equal(m->n_out, 46);
    lt_check_derivatives(m, 71, 3, 0.7);
    /* Stan's names, column-major. */
    static const char *const want[] = {
        "th.1", "th.2", "th.3", "th.4", "c.1", "c.2", "c.3", "p.1", "p.2",
        "L.1.1", "L.2.1", "L.3.1", "L.1.2", "L.2.2", "L.3.2", "L.1.3",
        "L.2.3", "L.3.3", "F.1.1", "F.2.1", "F.3.1", "F.1.2", "F.2.2",
        "F.3.2", "S.1.1", "S.2.1", "S.1.2", "S.2.2"};
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++)
        assert_string_equal(m->out_names[k], want[k]);
    assert_string_equal(m->out_names[37], "ths.1.1");
    assert_string_equal(m->out_names[38], "ths.2.1");
    assert_string_equal(m->out_names[39], "ths.1.2");
    assert_string_equal(m->theta_names[0], "th.1");
    assert_string_equal(m->theta_names[2], "th.3");
    /* The values are where the names say, and constrained. */
    drift_rng r;
    drift_rng_seed(&r, 5, 0);
    double theta[29], out[46], back[29];
    for (int k = 0; k < 29; k++)
        theta[k] = drift_rng_normal(&r);
    m->constrain(m->self, theta, out);
    double s = out[0] + out[1] + out[2] + out[3];
    assert_true(fabs(s - 1) < 1e-12);
    assert_true(out[4] < out[5] && out[5] < out[6] && out[7] > 0 &&
                out[7] < out[8]);
    assert_true(out[9] == 1 && out[12] == 0 && out[15] == 0 &&
                out[16] == 0); /* L.1.1, L.1.2, L.1.3, L.2.3 */
    assert_true(fabs(out[10] * out[10] + out[13] * out[13] - 1) < 1e-12);
    assert_true(out[25] == out[26]); /* S.2.1 == S.1.2 */
    assert_true(out[28] == 1 && out[32] == 1 && out[36] == 1);
    drift_err e;
    assert_int_equal(m->unconstrain(m->self, out, back, &e), 0);
    for (int k = 0; k < 29; k++)
        assert_true(fabs(back[k] - theta[k]) < 1e-8 * (1 + fabs(theta[k])));
    /* An initial value that breaks its constraint is named. */
    out[1] += 0.25;
    assert_int_not_equal(m->unconstrain(m->self, out, back, &e), 0);
    assert_string_equal(e.msg, "initial value of th is not a simplex: the "
                               "entries sum to 1.25; a simplex sums to 1");
    out[1] -= 0.25;
    out[38] = -0.5;
    assert_int_not_equal(m->unconstrain(m->self, out, back, &e), 0);
    assert_non_null(strstr(e.msg, "initial value of ths (element 2) is not "
                                  "a simplex: entry 1 is -0.5"));
    lt_close(&lm);
    free(d);
}

/* The prior of a structured parameter is the density of its values plus
 * the log-Jacobian: with a flat statement over x, log p(u) - f(x(u)) is
 * the transform's own log-Jacobian. */
static void test_prior_jacobian(void **state)
{
    (void)state;
    lt_model lm;
    lt_open_ok(&lm,
               "param { th : simplex[4]  S : cov_matrix[3] }\n"
               "prior { target += 2 * log(th[1]) + sum(S) }\n",
               NULL, NULL, 0);
    const drift_model *m = &lm.m;
    assert_int_equal(m->dim, 9);
    void *ws = m->workspace_new(m->self, 1);
    drift_rng r;
    drift_rng_seed(&r, 9, 0);
    double work[64];
    for (int t = 0; t < 3; t++) {
        double u[9], x[13], lp, xs[9];
        for (int k = 0; k < 9; k++)
            u[k] = drift_rng_normal(&r);
        drift_err e;
        assert_int_equal(m->log_prior(m->self, ws, u, &lp, NULL, &e), 0);
        m->constrain(m->self, u, x);
        double f = 2 * log(x[0]);
        for (int k = 4; k < 13; k++)
            f += x[k];
        double lj = drift_transform_forward(DRIFT_CON_SIMPLEX, 4, 1, u, xs,
                                            NULL, NULL, NULL, work) +
                    drift_transform_forward(DRIFT_CON_COV, 3, 3, u + 3, xs,
                                            NULL, NULL, NULL, work);
        assert_true(fabs(lp - f - lj) < 1e-10 * (1 + fabs(lp)));
    }
    m->workspace_free(m->self, ws);
    lt_close(&lm);
}

/* Data declared with a structured type is checked, element by element
 * and row by row. */
static void test_data_checks(void **state)
{
    (void)state;
    lt_model lm;
    const char *d1[] = {"json:{\"a\": [0.5, 0.6], \"o\": [[1, 2], [3, 3]]}",
                        NULL};
    lt_open(&lm,
            "data { a : simplex[2]  o : array[2] ordered[2] }\n"
            "param { z : real }\n"
            "prior { z ~ normal(0, 1) }\n",
            d1, NULL, 0);
    assert_int_not_equal(lm.rc, 0);
    assert_non_null(strstr(lm.report, "error: 'a' is not a simplex: the "
                                      "entries sum to 1.1; a simplex sums "
                                      "to 1"));
    assert_non_null(strstr(lm.report, "error: 'o' is not an ordered vector "
                                      "(element 2): entry 2 (3) is not above "
                                      "entry 1"));
    lt_close(&lm);
    const char *d2[] = {"csv:q.1,q.2\n0.25,0.75\n0.5,0.4\n", NULL};
    lt_open(&lm,
            "rows { q : simplex[2] }\n"
            "param { z : real }\n"
            "datum { target += z * q[1] }\n",
            d2, NULL, 0);
    assert_int_not_equal(lm.rc, 0);
    assert_non_null(strstr(lm.report, "'q' is not a simplex: the entries sum "
                                      "to 0.9"));
    assert_non_null(strstr(lm.report, ":3:"));
    lt_close(&lm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transforms),
        cmocka_unit_test(test_inverse_refusals),
        cmocka_unit_test(test_language),
        cmocka_unit_test(test_prior_jacobian),
        cmocka_unit_test(test_data_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
