/* langtest.c: shared machinery of the model language's tests (see
 * langtest.h). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/lang/lang_model.h"
#include "engine/run/rng.h"
#include "harness.h"
#include "langtest.h"

void lt_open(lt_model *lm, const char *model_text, const char *const *data,
             char *const *sets, size_t n_sets)
{
    memset(lm, 0, sizeof *lm);
    lm->paths[lm->n_paths++] = th_write_text(model_text, ".drift");
    const char *files[9];
    size_t nf = 0;
    for (const char *const *d = data; d && *d; d++) {
        const char *colon = strchr(*d, ':');
        assert_non_null(colon);
        char suffix[16];
        snprintf(suffix, sizeof suffix, ".%.*s", (int)(colon - *d), *d);
        assert_true(lm->n_paths < 9);
        lm->paths[lm->n_paths] = th_write_text(colon + 1, suffix);
        files[nf++] = lm->paths[lm->n_paths++];
    }
    files[nf] = NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    drift_lang_spec spec = {.path = lm->paths[0],
                            .data = files,
                            .data_set = sets,
                            .n_data_set = n_sets,
                            .diag = f};
    drift_err e = {{0}};
    lm->rc = drift_lang_open(&spec, &lm->m, &e);
    fclose(f);
    lm->report = buf;
    lm->summary = strdup(e.msg);
}

void lt_open_ok(lt_model *lm, const char *model_text,
                const char *const *data, char *const *sets, size_t n_sets)
{
    lt_open(lm, model_text, data, sets, n_sets);
    if (lm->rc)
        fail_msg("model did not open (%d): %s\n%s", lm->rc, lm->summary,
                 lm->report);
}

void lt_close(lt_model *lm)
{
    if (lm->rc == 0 && lm->m.free)
        lm->m.free(lm->m.self);
    for (size_t k = 0; k < lm->n_paths; k++) {
        unlink(lm->paths[k]);
        free(lm->paths[k]);
    }
    free(lm->report);
    free(lm->summary);
    memset(lm, 0, sizeof *lm);
}

static void must(int rc, const drift_err *e)
{
    if (rc)
        fail_msg("model evaluation failed (%d): %s", rc, e->msg);
}

double lt_log_density(const drift_model *m, void *ws, const double *theta)
{
    drift_err e = {{0}};
    double lp, ll = 0;
    must(m->log_prior(m->self, ws, theta, &lp, NULL, &e), &e);
    if (m->n_rows) {
        drift_rows all = {NULL, 0, m->n_rows};
        must(m->log_lik(m->self, ws, theta, &all, NULL, &ll, NULL, NULL, &e),
             &e);
    }
    return lp + ll;
}

static void close_to(double got, double want, double tol, const char *what,
                     size_t j)
{
    double err = fabs(got - want) / fmax(1.0, fabs(want));
    if (!(err < tol))
        fail_msg("%s, coordinate %zu: %.12g vs %.12g (relative error %.3g)",
                 what, j, got, want, err);
}

void lt_check_derivatives(const drift_model *m, uint64_t seed, int trials,
                          double sd)
{
    size_t d = m->dim, N = m->n_rows;
    size_t cap = N ? N : 1;
    void *ws = m->workspace_new(m->self, cap);
    assert_non_null(ws);
    double *theta = calloc(d, sizeof *theta), *tp = calloc(d, sizeof *tp);
    double *g = calloc(d, sizeof *g), *gp = calloc(d, sizeof *gp);
    double *gl = calloc(d, sizeof *gl), *gl2 = calloc(d, sizeof *gl2);
    double *v = calloc(d, sizeof *v);
    double *G = calloc(cap * d, sizeof *G), *X = calloc(cap * d, sizeof *X);
    double *lr = calloc(cap, sizeof *lr), *lp1 = calloc(cap, sizeof *lp1);
    double *lm1 = calloc(cap, sizeof *lm1), *jv = calloc(cap, sizeof *jv);
    double *s = calloc(cap, sizeof *s);
    size_t *rows = calloc(cap, sizeof *rows);
    assert_true(theta && tp && g && gp && gl && gl2 && v && G && X && lr &&
                lp1 && lm1 && jv && s && rows);
    drift_rng r;
    drift_rng_seed(&r, seed, 7);
    drift_err e = {{0}};
    const double h = 1e-5;
    for (int t = 0; t < trials; t++) {
        for (size_t j = 0; j < d; j++) {
            theta[j] = sd * drift_rng_normal(&r);
            v[j] = drift_rng_normal(&r);
        }
        double lp, ll = 0;
        must(m->log_prior(m->self, ws, theta, &lp, gp, &e), &e);
        drift_rows all = {NULL, 0, N};
        if (N)
            must(m->log_lik(m->self, ws, theta, &all, NULL, &ll, gl, NULL, &e),
                 &e);
        for (size_t j = 0; j < d; j++)
            g[j] = gp[j] + (N ? gl[j] : 0);
        /* The summed gradient against central differences. */
        for (size_t j = 0; j < d; j++) {
            memcpy(tp, theta, d * sizeof *tp);
            tp[j] = theta[j] + h;
            double up = lt_log_density(m, ws, tp);
            tp[j] = theta[j] - h;
            double dn = lt_log_density(m, ws, tp);
            close_to(g[j], (up - dn) / (2 * h), 1e-6, "gradient", j);
        }
        if (!N)
            continue;
        /* Per-row gradients, on rows in a shuffled order (the gathering
         * path), against differences of each row's term. */
        for (size_t i = 0; i < N; i++)
            rows[i] = (i * 7 + 3) % N;
        if (N % 7 == 0)
            for (size_t i = 0; i < N; i++)
                rows[i] = N - 1 - i;
        drift_rows b = {rows, 0, N};
        double sum_ll = 0;
        must(m->log_lik(m->self, ws, theta, &b, lr, &sum_ll, gl2, G, &e), &e);
        close_to(sum_ll, ll, 1e-10, "sum of the rows' terms", 0);
        for (size_t j = 0; j < d; j++) {
            double col = 0;
            for (size_t i = 0; i < N; i++)
                col += G[i * d + j];
            close_to(col, gl[j], 1e-9, "per-row gradients summed", j);
            close_to(gl2[j], gl[j], 1e-9, "summed gradient (row list)", j);
            memcpy(tp, theta, d * sizeof *tp);
            tp[j] = theta[j] + h;
            must(m->log_lik(m->self, ws, tp, &b, lp1, NULL, NULL, NULL, &e),
                 &e);
            tp[j] = theta[j] - h;
            must(m->log_lik(m->self, ws, tp, &b, lm1, NULL, NULL, NULL, &e),
                 &e);
            for (size_t i = 0; i < N; i++)
                close_to(G[i * d + j], (lp1[i] - lm1[i]) / (2 * h), 1e-6,
                         "per-row gradient", j);
        }
        /* Each row alone gives the same term (no leakage between rows). */
        for (size_t i = 0; i < N && i < 5; i++) {
            drift_rows one = {&rows[i], 0, 1};
            double l1;
            must(m->log_lik(m->self, ws, theta, &one, &l1, NULL, NULL, NULL,
                            &e),
                 &e);
            close_to(l1, lr[i], 1e-12, "row evaluated alone", i);
        }
        /* jvp: one forward pass equals per-row gradients dotted with v. */
        if (m->jvp) {
            must(m->jvp(m->self, ws, theta, v, &b, jv, NULL, &e), &e);
            for (size_t i = 0; i < N; i++) {
                double dot = 0;
                for (size_t j = 0; j < d; j++)
                    dot += G[i * d + j] * v[j];
                close_to(jv[i], dot, 1e-9, "jvp", i);
            }
        }
        /* Generalised linear form: grad l_i = s_i x_i. */
        if (m->flags & DRIFT_MODEL_GLM) {
            must(m->glm_scalars(m->self, ws, theta, &b, s, NULL, &e), &e);
            must(m->glm_design(m->self, &b, X, &e), &e);
            for (size_t i = 0; i < N; i++)
                for (size_t j = 0; j < d; j++)
                    close_to(s[i] * X[i * d + j], G[i * d + j], 1e-9,
                             "glm s_i x_i", j);
        }
    }
    m->workspace_free(m->self, ws);
    free(theta), free(tp), free(g), free(gp), free(gl), free(gl2), free(v);
    free(G), free(X), free(lr), free(lp1), free(lm1), free(jv), free(s);
    free(rows);
}
