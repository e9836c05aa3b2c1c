/* test_lang_control.c: control flow in drift's own language (for loops,
 * if/else, element assignment, truncation T[,], reject), lowered into
 * loop-free statements when parsed: each form's log density and gradient
 * against a hand-vectorised twin, truncation against closed forms, an
 * outcome outside its bounds, and reject's -inf. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "harness.h"
#include "langtest.h"

/* log p(theta) + sum of the rows' terms, and its gradient (d <= 16);
 * -inf where the model says the log density is -inf. */
static double total(const drift_model *m, const double *theta, double *g)
{
    drift_err e = {{0}};
    void *ws = m->workspace_new(m->self, m->n_rows ? m->n_rows : 1);
    assert_non_null(ws);
    double lp = 0, ll = 0, gl[16] = {0};
    int rc = m->log_prior(m->self, ws, theta, &lp, g, &e);
    if (!rc && m->n_rows) {
        drift_rows all = {NULL, 0, m->n_rows};
        rc = m->log_lik(m->self, ws, theta, &all, NULL, &ll, gl, NULL, &e);
    }
    if (rc) {
        m->workspace_free(m->self, ws);
        if (strstr(e.msg, "-inf") || strstr(e.msg, "rejected: "))
            return -INFINITY;
        fail_msg("%s", e.msg);
    }
    if (m->n_rows) {
        for (size_t k = 0; k < m->dim; k++)
            g[k] += gl[k];
    }
    m->workspace_free(m->self, ws);
    return lp + ll;
}

static void near(double got, double want, double tol, const char *what)
{
    if (!(fabs(got - want) <= tol * fmax(1.0, fabs(want))))
        fail_msg("%s: %.15g vs %.15g", what, got, want);
}

/* The model with loops and its hand-vectorised twin give the same log
 * density and gradient (to 1e-10) at a few points. */
static void twin(const char *loops, const char *vec,
                 const char *const *data)
{
    lt_model a, b;
    lt_open_ok(&a, loops, data, NULL, 0);
    lt_open_ok(&b, vec, data, NULL, 0);
    assert_int_equal(a.m.dim, b.m.dim);
    size_t d = a.m.dim;
    assert_true(d <= 16);
    for (int t = 0; t < 3; t++) {
        double th[16], ga[16] = {0}, gb[16] = {0};
        for (size_t k = 0; k < d; k++)
            th[k] = 0.3 * sin(1.7 * (double)(k + 1) + t) + 0.1 * t;
        double la = total(&a.m, th, ga), lb = total(&b.m, th, gb);
        near(la, lb, 1e-10, "log density");
        for (size_t k = 0; k < d; k++)
            near(ga[k], gb[k], 1e-10, "gradient");
    }
    lt_check_derivatives(&a.m, 7, 2, 0.5);
    lt_close(&a);
    lt_close(&b);
}

static const char *const rows3[] = {
    "csv:x.1,x.2,x.3,y\n0.5,-1,2,1.5\n1.5,0.2,-0.3,0.1\n-0.4,0.9,1.1,2.2\n",
    NULL};

static void test_loop_prior(void **state)
{
    (void)state;
    twin("rows { x : vector[K]  y : real }\n"
         "param { mu : vector[K]  s : real<lower=0> }\n"
         "prior { for (k in 1:K) mu[k] ~ normal(k, 2)\n"
         "        for (k in 2:K) target += -0.5 * square(mu[k] - mu[1])\n"
         "        s ~ lognormal(0, 1) }\n"
         "datum { y ~ normal(sum(mu), s) }\n",
         "rows { x : vector[K]  y : real }\n"
         "param { mu : vector[K]  s : real<lower=0> }\n"
         "prior { mu[1] ~ normal(1, 2)  mu[2] ~ normal(2, 2)\n"
         "        mu[3] ~ normal(3, 2)\n"
         "        target += -0.5 * square(mu[2] - mu[1])"
         " - 0.5 * square(mu[3] - mu[1])\n"
         "        s ~ lognormal(0, 1) }\n"
         "datum { y ~ normal(sum(mu), s) }\n",
         rows3);
}

/* User functions and transformed values inside loops: the functions are
 * inlined before the loop is lowered, and a transformed value is the
 * same value there. */
static void test_loop_functions_transformed(void **state)
{
    (void)state;
    twin("functions { sq(v : real) : real = v * v }\n"
         "rows { x : vector[K]  y : real }\n"
         "transformed { w = x * 0 + 2 }\n"
         "param { mu : vector[K]  s : real<lower=0> }\n"
         "prior { for (k in 1:K) mu[k] ~ normal(0, sq(k + 1))\n"
         "        s ~ lognormal(0, 1) }\n"
         "datum { for (k in 1:K) target += normal_lpdf(x[k] | "
         "sq(mu[k]) * w[k], s) }\n",
         "rows { x : vector[K]  y : real }\n"
         "param { mu : vector[K]  s : real<lower=0> }\n"
         "prior { mu[1] ~ normal(0, 4)  mu[2] ~ normal(0, 9)\n"
         "        mu[3] ~ normal(0, 16)\n"
         "        s ~ lognormal(0, 1) }\n"
         "datum { x ~ normal((mu .* mu) * 2, s) }\n",
         rows3);
}

static void test_loop_datum(void **state)
{
    (void)state;
    /* the brief's form: a row vector's elements, one term each, and a
     * constant counted once per iteration */
    twin("rows { x : vector[K]  y : real }\n"
         "param { mu : vector[K]  s : real<lower=0> }\n"
         "prior { mu ~ normal(0, 3)  s ~ lognormal(0, 1) }\n"
         "datum { for (k in 1:K) target += normal_lpdf(x[k] | mu[k], 1)\n"
         "        for (k in 1:K) { m = mu[k] * s\n"
         "                         x[k] ~ normal(m, s) }\n"
         "        for (j in 1:K) target += 0.25 + y * x[j] }\n",
         "rows { x : vector[K]  y : real }\n"
         "param { mu : vector[K]  s : real<lower=0> }\n"
         "prior { mu ~ normal(0, 3)  s ~ lognormal(0, 1) }\n"
         "datum { target += normal_lpdf(x | mu, 1)\n"
         "        x ~ normal(mu * s, s)\n"
         "        target += 3 * 0.25 + sum(y * x) }\n",
         rows3);
}

static void test_loop_derived_and_if(void **state)
{
    (void)state;
    /* element assignment in derived, if on data (K) and on a
     * parameter */
    twin("rows { x : vector[K]  y : real }\n"
         "param { mu : vector[K]  s : real<lower=0> }\n"
         "derived { m : vector[K]\n"
         "          for (k in 1:K) m[k] = 2 * mu[k] + 1\n"
         "          t = sum(m) }\n"
         "prior { mu ~ normal(0, 3)\n"
         "        if (s > 1) s ~ lognormal(0, 1) else s ~ exponential(1)\n"
         "        if (K > 5) { target += 100 } }\n"
         "datum { y ~ normal(t, s) }\n",
         "rows { x : vector[K]  y : real }\n"
         "param { mu : vector[K]  s : real<lower=0> }\n"
         "derived { t = sum(2 * mu + 1) }\n"
         "prior { mu ~ normal(0, 3)\n"
         "        target += s > 1 ? lognormal_lpdf(s | 0, 1)"
         " : exponential_lpdf(s | 1) }\n"
         "datum { y ~ normal(t, s) }\n",
         rows3);
}

/* The loop variable as a value, through an element assignment used in
 * a datum loop, against the vector 1..K given as data. */
static void test_loop_variable_value(void **state)
{
    (void)state;
    static const char *const d[] = {
        "csv:x.1,x.2,x.3,y\n0.5,-1,2,1.5\n1.5,0.2,-0.3,0.1\n"
        "-0.4,0.9,1.1,2.2\n",
        "json:{\"kk\": [1, 2, 3]}", NULL};
    twin("data { kk : vector[K] }\n"
         "rows { x : vector[K]  y : real }\n"
         "param { mu : vector[K]  s : real<lower=0> }\n"
         "derived { m : vector[K]\n"
         "          for (k in 1:K) m[k] = 2 * mu[k] + k }\n"
         "prior { mu ~ normal(0, 3)  s ~ lognormal(0, 1) }\n"
         "datum { for (j in 1:K) target += normal_lpdf(x[j] | m[j], s)"
         " + j * y }\n",
         "data { kk : vector[K] }\n"
         "rows { x : vector[K]  y : real }\n"
         "param { mu : vector[K]  s : real<lower=0> }\n"
         "derived { m = 2 * mu + kk }\n"
         "prior { mu ~ normal(0, 3)  s ~ lognormal(0, 1) }\n"
         "datum { target += normal_lpdf(x | m, s) + 6 * y }\n",
         d);
}

static void test_generated_loop(void **state)
{
    (void)state;
    lt_model lm;
    lt_open_ok(&lm,
               "rows { x : vector[K]  y : real }\n"
               "param { mu : vector[K] }\n"
               "prior { mu ~ normal(0, 1) }\n"
               "datum { y ~ normal(sum(mu), 1) }\n"
               "generated { sq : vector[K]\n"
               "            for (k in 1:K) sq[k] = square(mu[k]) + 1 }\n",
               rows3, NULL, 0);
    const drift_model *m = &lm.m;
    assert_int_equal(m->n_gen, 3);
    assert_string_equal(m->gen_names[2], "sq.3");
    void *ws = m->workspace_new(m->self, 3);
    double th[3] = {0.5, -1, 2}, out[3];
    drift_err e;
    if (m->generate(m->self, ws, th, 1, 1, out, &e))
        fail_msg("%s", e.msg);
    for (int k = 0; k < 3; k++)
        near(out[k], th[k] * th[k] + 1, 1e-15, "sq");
    m->workspace_free(m->self, ws);
    lt_close(&lm);
}

static double Phi(double z)
{
    return 0.5 * erfc(-z / sqrt(2.0));
}

/* y ~ normal(mu, sigma) T[0, 10] over the rows, against
 * log N(y | mu, sigma) - log(Phi((10 - mu) / sigma) - Phi(-mu / sigma)). */
static void test_truncated_normal(void **state)
{
    (void)state;
    static const char *const d[] = {"csv:y\n0.5\n3.2\n9.9\n4\n", NULL};
    lt_model lm;
    lt_open_ok(&lm,
               "rows { y : real }\n"
               "param { mu : real  sigma : real<lower=0> }\n"
               "datum { y ~ normal(mu, sigma) T[0, 10] }\n",
               d, NULL, 0);
    const double ys[4] = {0.5, 3.2, 9.9, 4};
    for (int t = 0; t < 3; t++) {
        double th[2] = {-1 + 2.5 * t, -0.5 + 0.4 * t}, g[2] = {0};
        double mu = th[0], sig = exp(th[1]);
        double want = th[1]; /* the log-Jacobian of sigma */
        for (int i = 0; i < 4; i++) {
            double z = (ys[i] - mu) / sig;
            want += -0.5 * z * z - log(sig) - 0.5 * log(2 * M_PI) -
                    log(Phi((10 - mu) / sig) - Phi(-mu / sig));
        }
        near(total(&lm.m, th, g), want, 1e-10, "truncated normal");
    }
    lt_check_derivatives(&lm.m, 3, 2, 0.5);
    lt_close(&lm);
    /* T[lo, ] and T[, hi] in the prior, with parameter arguments */
    lt_open_ok(&lm,
               "data { a : real }\n"
               "param { mu : real  th : real<lower=1> }\n"
               "prior { mu ~ normal(0, 1)\n"
               "        th ~ normal(mu, 2) T[1, ]\n"
               "        a ~ normal(mu, 1) T[, 3] }\n",
               (const char *const[]){"json:{\"a\": 0.5}", NULL}, NULL, 0);
    double th[2] = {0.3, 0.2}, g[2];
    double t1 = 1 + exp(th[1]), mu = th[0];
    double want = -0.5 * mu * mu - 0.5 * log(2 * M_PI) + th[1] +
                  (-0.125 * (t1 - mu) * (t1 - mu) - log(2.0) - 0.5 * log(2 * M_PI) -
                   log(1 - Phi((1 - mu) / 2))) +
                  (-0.5 * (0.5 - mu) * (0.5 - mu) - 0.5 * log(2 * M_PI) -
                   log(Phi(3 - mu)));
    near(total(&lm.m, th, g), want, 1e-10, "one-sided truncations");
    lt_close(&lm);
}

/* Truncation of a row vector's elements in a loop, against the density
 * less each element's log probability of [0, inf); an element outside
 * is refused when the data are read, naming the row. */
static void test_truncated_loop(void **state)
{
    (void)state;
    static const char *const d[] = {
        "csv:x.1,x.2,x.3\n0.5,1,2\n1.5,0.2,0.3\n0.4,0.9,1.1\n", NULL};
    twin("rows { x : vector[K] }\n"
         "param { mu : vector[K]  s : real<lower=0> }\n"
         "prior { mu ~ normal(0, 1)  s ~ lognormal(0, 1) }\n"
         "datum { for (k in 1:K) x[k] ~ normal(mu[k], s) T[0, ] }\n",
         "rows { x : vector[K] }\n"
         "param { mu : vector[K]  s : real<lower=0> }\n"
         "prior { mu ~ normal(0, 1)  s ~ lognormal(0, 1) }\n"
         "datum { target += normal_lpdf(x | mu, s)"
         " - normal_lccdf(rep_vector(0, K) | mu, s) }\n",
         d);
    static const char *const bad[] = {
        "csv:x.1,x.2,x.3\n0.5,1,2\n1.5,-0.2,0.3\n", NULL};
    lt_model lm;
    lt_open(&lm,
            "rows { x : vector[K] }\n"
            "param { mu : vector[K] }\n"
            "datum { for (k in 1:K) x[k] ~ normal(mu[k], 1) T[0, ] }\n",
            bad, NULL, 0);
    assert_int_not_equal(lm.rc, 0);
    if (!strstr(lm.report, "row 2"))
        fail_msg("no row named: %s", lm.report);
    lt_close(&lm);
}

/* Discrete: the CCDF at lo - 1, as Stan; y ~ poisson(lambda) T[1, ] is
 * log poisson(y | lambda) - log1m_exp(-lambda). */
static void test_zero_truncated_poisson(void **state)
{
    (void)state;
    static const char *const d[] = {"csv:y\n1\n4\n2\n", NULL};
    lt_model lm;
    lt_open_ok(&lm,
               "rows { y : int }\n"
               "param { lambda : real<lower=0> }\n"
               "datum { y ~ poisson(lambda) T[1, ] }\n",
               d, NULL, 0);
    const int ys[3] = {1, 4, 2};
    double th[1] = {0.3}, g[1];
    double lam = exp(th[0]), want = th[0];
    for (int i = 0; i < 3; i++)
        want += ys[i] * log(lam) - lam - lgamma(ys[i] + 1.0) -
                log1p(-exp(-lam));
    near(total(&lm.m, th, g), want, 1e-10, "zero-truncated poisson");
    lt_check_derivatives(&lm.m, 5, 2, 0.5);
    lt_close(&lm);
}

/* An outcome outside its bounds: data are refused when read, naming the
 * row; a parameter outside them has log density -inf (a draw Stan
 * rejects), never a finite term. */
static void test_outside_bounds(void **state)
{
    (void)state;
    static const char *const d[] = {"csv:y\n1\n0\n2\n", NULL};
    lt_model lm;
    lt_open(&lm,
            "rows { y : int }\n"
            "param { lambda : real<lower=0> }\n"
            "datum { y ~ poisson(lambda) T[1, ] }\n",
            d, NULL, 0);
    assert_int_not_equal(lm.rc, 0);
    if (!strstr(lm.report, "row 2") && !strstr(lm.report, "line 3"))
        fail_msg("no row named: %s", lm.report);
    lt_close(&lm);
    lt_open_ok(&lm,
               "param { th : real  mu : real }\n"
               "prior { mu ~ normal(0, 1)  th ~ normal(mu, 1) T[0, 2] }\n",
               NULL, NULL, 0);
    double g[2];
    double in[2] = {1.5, 0.1}, below[2] = {-0.01, 0.1}, above[2] = {2.5, 0};
    assert_true(isfinite(total(&lm.m, in, g)));
    double lb = total(&lm.m, below, g), la = total(&lm.m, above, g);
    assert_true(isinf(lb) && lb < 0);
    assert_true(isinf(la) && la < 0);
    lt_close(&lm);
}

/* reject(...) where a condition holds: log density -inf there. */
static void test_reject(void **state)
{
    (void)state;
    lt_model lm;
    lt_open_ok(&lm,
               "param { theta : real }\n"
               "prior { theta ~ normal(1, 1)\n"
               "        if (theta < 0) reject(\"theta < 0: \", theta) }\n",
               NULL, NULL, 0);
    double g[1], pos[1] = {0.5}, neg[1] = {-0.5};
    near(total(&lm.m, pos, g), -0.125 - 0.5 * log(2 * M_PI), 1e-14,
         "accepted");
    double ln = total(&lm.m, neg, g);
    assert_true(isinf(ln) && ln < 0);
    lt_close(&lm);
    /* in derived: the draw is rejected through the prior */
    lt_open_ok(&lm,
               "param { theta : real }\n"
               "derived { d = 2 * theta\n"
               "          if (d > 1) reject(\"too large\") }\n"
               "prior { theta ~ normal(0, 1) }\n",
               NULL, NULL, 0);
    double big[1] = {0.6};
    ln = total(&lm.m, big, g);
    assert_true(isinf(ln) && ln < 0);
    assert_true(isfinite(total(&lm.m, pos, g)));
    lt_close(&lm);
    /* in datum, per row: the error names the row */
    static const char *const d[] = {"csv:y\n0.5\n-2\n1\n", NULL};
    lt_open_ok(&lm,
               "rows { y : real }\n"
               "param { mu : real }\n"
               "datum { y ~ normal(mu, 1)\n"
               "        if (y < mu - 2) reject(\"y far below mu\") }\n",
               d, NULL, 0);
    double at[1] = {0.5};
    void *ws = lm.m.workspace_new(lm.m.self, 3);
    drift_rows all = {NULL, 0, 3};
    drift_err e = {{0}};
    double ll;
    assert_int_not_equal(lm.m.log_lik(lm.m.self, ws, at, &all, NULL, &ll,
                                      NULL, NULL, &e),
                         0);
    if (!strstr(e.msg, "rejected: y far below mu (data row 2)"))
        fail_msg("%s", e.msg);
    double below[1] = {-1.5};
    assert_true(isfinite(total(&lm.m, below, g)));
    lm.m.workspace_free(lm.m.self, ws);
    lt_close(&lm);
}

/* Under nuts, a model rejecting theta < 0 has no negative draw, its
 * draws follow the normal truncated to [0, inf) (mean mu + phi(a) / (1 -
 * Phi(a)), a = -mu, sigma 1), the reject's message is written once, and
 * generated's print one line per kept draw. */
static void test_reject_nuts_and_print(void **state)
{
    (void)state;
    char *m = th_write_text(
        "param { theta : real }\n"
        "prior { theta ~ normal(0.3, 1)\n"
        "        if (theta < 0) reject(\"theta must be positive\") }\n"
        "generated { g = theta + 1\n"
        "            print(\"theta = \", theta, \" g = \", g) }\n",
        ".drift");
    char out[512];
    snprintf(out, sizeof out, "%s.csv", m);
    th_cli c = th_cli_run((const char *[]){"sample", m, "--chains", "1",
                                           "--seed", "11", "--out", out,
                                           NULL});
    if (c.status != 0)
        fail_msg("exit %d\n%s", c.status, c.err);
    char *csv = th_slurp(out);
    assert_non_null(csv);
    size_t n = 0, col = 0;
    double sum = 0;
    int header = 0;
    for (char *line = strtok(csv, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#')
            continue;
        if (!header) {
            header = 1;
            for (char *f = line; f; f = strchr(f, ',') ? strchr(f, ',') + 1 : NULL, col++)
                if (!strncmp(f, "theta,", 6))
                    break;
            continue;
        }
        char *f = line;
        for (size_t k = 0; k < col; k++)
            f = strchr(f, ',') + 1;
        double th = strtod(f, NULL);
        if (!(th >= 0))
            fail_msg("draw %zu has theta = %g", n + 1, th);
        sum += th;
        n++;
    }
    assert_int_equal(n, 1000);
    double want = 0.3 + exp(-0.5 * 0.09) / sqrt(2 * M_PI) / (1 - Phi(-0.3));
    /* sd of the truncated normal is about 0.7; with an ESS of 200 or
     * more, 5 standard errors are 0.25 */
    if (fabs(sum / n - want) > 0.25)
        fail_msg("mean %g, want %g", sum / n, want);
    const char *r = strstr(c.err, "reject: theta must be positive");
    assert_non_null(r);
    assert_null(strstr(r + 1, "reject: theta must be positive"));
    size_t lines = 0;
    for (const char *q = c.err; (q = strstr(q, "theta = ")); q++)
        lines++;
    assert_int_equal(lines, 1000);
    th_cli_free(&c);
    free(csv);
    unlink(out);
    unlink(m);
    free(m);
}

/* print in prior or datum (run per gradient, per minibatch) is not
 * evaluated, and says so. */
static void test_print_in_prior_warns(void **state)
{
    (void)state;
    lt_model lm;
    lt_open_ok(&lm,
               "param { theta : real }\n"
               "prior { theta ~ normal(0, 1)  print(\"theta = \", theta) }\n",
               NULL, NULL, 0);
    if (!strstr(lm.report, ":2:31: warning: print in prior or datum is not "
                           "evaluated"))
        fail_msg("no warning: %s", lm.report);
    lt_close(&lm);
}

/* Every allocation on the way from a model with print and reject to a
 * drift_model failing in turn: each reported, none crashing. */
static void test_allocation_failures(void **state)
{
    (void)state;
    static const char *const model =
        "param { theta : real }\n"
        "prior { theta ~ normal(0, 1)\n"
        "        if (theta < -3) reject(\"far \", \"out\") }\n"
        "derived { d = 2 * theta  print(\"d = \", d) }\n"
        "generated { g = theta + 1  print(\"g = \", g, \"!\") }\n";
    drift_fail_alloc(0);
    lt_model lm;
    lt_open_ok(&lm, model, NULL, NULL, 0);
    uint64_t count = drift_fail_alloc(0);
    lt_close(&lm);
    assert_true(count > 10);
    for (uint64_t k = 1; k <= count; k++) {
        drift_fail_alloc(k);
        lt_open(&lm, model, NULL, NULL, 0);
        drift_fail_alloc(0);
        if (lm.rc == 0)
            fail_msg("allocation %llu of %llu failed but the model opened",
                     (unsigned long long)k, (unsigned long long)count);
        lt_close(&lm);
    }
}

/* What cannot be lowered is refused with its place. */
static void refused(const char *text, const char *want)
{
    lt_model lm;
    lt_open(&lm, text, rows3, NULL, 0);
    assert_int_not_equal(lm.rc, 0);
    if (!strstr(lm.report, want))
        fail_msg("report lacks '%s':\n%s", want, lm.report);
    lt_close(&lm);
}

static void test_refusals(void **state)
{
    (void)state;
    refused("rows { x : vector[K]  y : real }\n"
            "param { mu : vector[K]  n : real }\n"
            "prior { for (k in 1:n) mu[k] ~ normal(0, 1) }\n",
            ".drift:3:9: error: a loop's bounds must be ints of the data "
            "or literals, not values of the parameters\n"
            "    3 | prior { for (k in 1:n) mu[k] ~ normal(0, 1) }\n"
            "      |         ^~~~~~~~~~~~~~");
    refused("rows { x : vector[K]  y : real }\n"
            "param { mu : real }\n"
            "datum { for (n in 1:N) y[n] ~ normal(mu, 1) }\n",
            ":3:9: error: a loop over the rows: the datum block is already "
            "one row's term");
    refused("rows { x : vector[K]  y : real }\n"
            "param { mu : real }\n"
            "prior { reject(\"always\") }\n",
            ":3:9: error: reject reached unconditionally");
    refused("rows { x : vector[K]  y : real }\n"
            "param { mu : vector[K] }\n"
            "generated { z = normal_rng(0, 1)\n"
            "            w : vector[K]\n"
            "            for (k in 1:K) w[k] = z + mu[k] }\n",
            ":5:35: error: 'z' holds a random draw (_rng)");
    refused("rows { x : vector[K]  y : real }\n"
            "param { mu : vector[K] }\n"
            "derived { for (k in 1:K) mu[k] ~ normal(0, 1) }\n",
            ":3:26: error: '~' belongs in prior or datum");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loop_prior),
        cmocka_unit_test(test_loop_functions_transformed),
        cmocka_unit_test(test_loop_datum),
        cmocka_unit_test(test_loop_derived_and_if),
        cmocka_unit_test(test_loop_variable_value),
        cmocka_unit_test(test_generated_loop),
        cmocka_unit_test(test_truncated_normal),
        cmocka_unit_test(test_truncated_loop),
        cmocka_unit_test(test_zero_truncated_poisson),
        cmocka_unit_test(test_outside_bounds),
        cmocka_unit_test(test_reject),
        cmocka_unit_test(test_reject_nuts_and_print),
        cmocka_unit_test(test_print_in_prior_warns),
        cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
