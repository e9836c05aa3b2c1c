/* test_lang_sparse.c: sparse rows and row stores in the model language.
 * The same data written densely (CSV, x : vector[D]) and sparsely
 * (LIBSVM, x : sparse_vector[D]) give the same log densities, summed and
 * per-row gradients, jvp and GLM scalars and design, for models whose
 * dense operand of dot() is a parameter or an expression of one; the
 * .drift sparse logistic regression and the C logistic plugin give the
 * same values and draws on the same LIBSVM file; CSV -> row store and
 * LIBSVM -> row store give the same draws on the same seed as their
 * sources; finite-difference checks of the sparse dot; a row store binds
 * in place (no copy of its rows); no workspace holds batch x D values;
 * the data errors of the new type; outcomes of mapped rows checked as
 * they are used; and every allocation failing in turn.  References are
 * the dense encoding, the C plugin, central differences and the CSV/
 * LIBSVM sources: none comes from the sparse code under test. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "engine/data/rowstore.h"
#include "engine/data/table.h"
#include "engine/lang/lang_model.h"
#include "engine/lang/langdata.h"
#include "engine/run/rng.h"
#include "harness.h"
#include "langtest.h"
#include "parser/front.h"
#include "parser/parse.h"

enum { N = 90, D = 11 };

/* y, then x.1 .. x.D with about 70% zeros; row 5 has no non-zeros. */
static double dense[N][D + 1];

static void make_data(uint64_t seed)
{
    drift_rng r;
    drift_rng_seed(&r, seed, 0);
    for (size_t i = 0; i < N; i++) {
        dense[i][0] = drift_rng_uniform(&r) < 0.4;
        for (size_t j = 1; j <= D; j++)
            dense[i][j] = i != 5 && drift_rng_uniform(&r) < 0.3
                              ? drift_rng_normal(&r)
                              : 0.0;
    }
    dense[N - 1][D] = 0.75; /* the last feature is used: D binds to D */
}

static char *write_csv(void)
{
    const char *names[D + 1];
    static char buf[D + 1][8];
    names[0] = "y";
    for (size_t j = 1; j <= D; j++) {
        snprintf(buf[j], sizeof buf[j], "x.%zu", j);
        names[j] = buf[j];
    }
    return th_write_csv(names, D + 1, &dense[0][0], N);
}

static char *libsvm_text(void)
{
    size_t cap = N * (D * 32 + 16), len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    for (size_t i = 0; i < N; i++) {
        len += (size_t)snprintf(text + len, cap - len, "%g", dense[i][0]);
        for (size_t j = 1; j <= D; j++)
            if (dense[i][j] != 0.0)
                len += (size_t)snprintf(text + len, cap - len, " %zu:%.17g",
                                        j, dense[i][j]);
        len += (size_t)snprintf(text + len, cap - len, "\n");
    }
    return text;
}

static char *write_libsvm(void)
{
    char *text = libsvm_text();
    char *p = th_write_text(text, ".libsvm");
    free(text);
    return p;
}

static char *to_rowstore(const char *src)
{
    char *p = th_write_text("", ".drs");
    unlink(p);
    drift_err e = {{0}};
    if (drift_rowstore_convert(src, p, NULL, NULL, &e))
        fail_msg("converting %s: %s", src, e.msg);
    return p;
}

/* A model from text over data files already written (not removed by
 * lt_close). */
static void open_files(lt_model *lm, const char *text,
                       const char *const *files, char *const *sets,
                       size_t n_sets, int check_every_row)
{
    memset(lm, 0, sizeof *lm);
    lm->paths[lm->n_paths++] = th_write_text(text, ".drift");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    drift_lang_spec spec = {.path = lm->paths[0],
                            .data = files,
                            .data_set = sets,
                            .n_data_set = n_sets,
                            .diag = f,
                            .check_every_row = check_every_row};
    drift_err e = {{0}};
    lm->rc = drift_lang_open(&spec, &lm->m, &e);
    fclose(f);
    lm->report = buf;
    lm->summary = strdup(e.msg);
}

static void open_files_ok(lt_model *lm, const char *text,
                          const char *const *files, char *const *sets,
                          size_t n_sets)
{
    open_files(lm, text, files, sets, n_sets, 0);
    if (lm->rc)
        fail_msg("model did not open (%d): %s\n%s", lm->rc, lm->summary,
                 lm->report);
}

static void must(int rc, const drift_err *e)
{
    if (rc)
        fail_msg("evaluation failed (%d): %s", rc, e->msg);
}

/* |a - b| within tol relative to max(1, |b|). */
static void near(double a, double b, double tol, const char *what, size_t i)
{
    if (!(fabs(a - b) <= tol * fmax(1.0, fabs(b))))
        fail_msg("%s [%zu]: %.17g vs %.17g", what, i, a, b);
}

/* Every ABI output of two models over the same rows, compared: equal to
 * rounding (tol), or bit for bit (tol 0). */
static void compare_models(const drift_model *a, const drift_model *b,
                           double tol, uint64_t seed)
{
    assert_int_equal(a->dim, b->dim);
    assert_int_equal(a->n_rows, b->n_rows);
    assert_int_equal(a->flags, b->flags);
    size_t d = a->dim, n = a->n_rows;
    void *wa = a->workspace_new(a->self, n), *wb = b->workspace_new(b->self, n);
    assert_true(wa && wb);
    double *th = malloc(d * sizeof *th), *v = malloc(d * sizeof *v);
    double *ga = malloc(d * sizeof *ga), *gb = malloc(d * sizeof *gb);
    double *Ga = malloc(n * d * sizeof *Ga), *Gb = malloc(n * d * sizeof *Gb);
    double *la = malloc(n * sizeof *la), *lb = malloc(n * sizeof *lb);
    double *ja = malloc(n * sizeof *ja), *jb = malloc(n * sizeof *jb);
    size_t *rows = malloc(n * sizeof *rows);
    assert_true(th && v && ga && gb && Ga && Gb && la && lb && ja && jb &&
                rows);
    drift_rng r;
    drift_rng_seed(&r, seed, 3);
    drift_err e = {{0}};
    for (int trial = 0; trial < 3; trial++) {
        for (size_t j = 0; j < d; j++) {
            th[j] = 0.7 * drift_rng_normal(&r);
            v[j] = drift_rng_normal(&r);
        }
        /* A shuffled list with repeats (random access), then a range. */
        for (size_t i = 0; i < n; i++)
            rows[i] = drift_rng_below(&r, n);
        drift_rows lists[2] = {{rows, 0, n}, {NULL, 0, n}};
        double pa, pb;
        must(a->log_prior(a->self, wa, th, &pa, ga, &e), &e);
        must(b->log_prior(b->self, wb, th, &pb, gb, &e), &e);
        near(pa, pb, tol, "log prior", 0);
        for (size_t j = 0; j < d; j++)
            near(ga[j], gb[j], tol, "prior gradient", j);
        for (int l = 0; l < 2; l++) {
            const drift_rows *bt = &lists[l];
            double sa, sb;
            must(a->log_lik(a->self, wa, th, bt, la, &sa, ga, Ga, &e), &e);
            must(b->log_lik(b->self, wb, th, bt, lb, &sb, gb, Gb, &e), &e);
            near(sa, sb, tol, "summed log likelihood", 0);
            for (size_t i = 0; i < n; i++)
                near(la[i], lb[i], tol, "row log likelihood", i);
            for (size_t j = 0; j < d; j++)
                near(ga[j], gb[j], tol, "summed gradient", j);
            for (size_t k = 0; k < n * d; k++)
                near(Ga[k], Gb[k], tol, "per-row gradient", k);
            /* The summed gradient alone (its own reverse pass). */
            must(a->log_lik(a->self, wa, th, bt, NULL, NULL, ga, NULL, &e), &e);
            must(b->log_lik(b->self, wb, th, bt, NULL, NULL, gb, NULL, &e), &e);
            for (size_t j = 0; j < d; j++)
                near(ga[j], gb[j], tol, "summed gradient alone", j);
            must(a->jvp(a->self, wa, th, v, bt, ja, la, &e), &e);
            must(b->jvp(b->self, wb, th, v, bt, jb, lb, &e), &e);
            for (size_t i = 0; i < n; i++) {
                near(ja[i], jb[i], tol, "jvp", i);
                near(la[i], lb[i], tol, "jvp's row log likelihood", i);
            }
            if (!(a->flags & DRIFT_MODEL_GLM))
                continue;
            must(a->glm_scalars(a->self, wa, th, bt, ja, NULL, &e), &e);
            must(b->glm_scalars(b->self, wb, th, bt, jb, NULL, &e), &e);
            for (size_t i = 0; i < n; i++)
                near(ja[i], jb[i], tol, "GLM scalar", i);
            must(a->glm_design(a->self, bt, Ga, &e), &e);
            must(b->glm_design(b->self, bt, Gb, &e), &e);
            for (size_t k = 0; k < n * d; k++)
                near(Ga[k], Gb[k], tol, "GLM design", k);
            /* The design weighted by the scalars, added to v: the sparse
             * form's nonzeros alone against the dense rows. */
            for (size_t j = 0; j < d; j++)
                ga[j] = gb[j] = v[j];
            must(a->glm_design_sum(a->self, bt, ja, ga, &e), &e);
            must(b->glm_design_sum(b->self, bt, ja, gb, &e), &e);
            for (size_t j = 0; j < d; j++) {
                double want = v[j];
                for (size_t i = 0; i < n; i++)
                    want += ja[i] * Ga[i * d + j];
                near(ga[j], want, tol, "GLM design sum (dense)", j);
                near(gb[j], want, tol, "GLM design sum (sparse)", j);
            }
        }
    }
    a->workspace_free(a->self, wa);
    b->workspace_free(b->self, wb);
    free(th), free(v), free(ga), free(gb), free(Ga), free(Gb);
    free(la), free(lb), free(ja), free(jb), free(rows);
}

/* Model pairs: the dense form, then the sparse (x's type swapped). */
static const char *const pairs[][2] = {
    /* logistic regression with an intercept and a scaled predictor */
    {"rows  { x : vector[D]  y : int }\n"
     "param { w : vector[D]  b : real }\n"
     "prior { w ~ normal(0, 2)  b ~ normal(0, 5) }\n"
     "datum { y ~ bernoulli_logit(0.5 * dot(x, w) + b) }\n",
     "rows  { x : sparse_vector[D]  y : int }\n"
     "param { w : vector[D]  b : real }\n"
     "prior { w ~ normal(0, 2)  b ~ normal(0, 5) }\n"
     "datum { y ~ bernoulli_logit(0.5 * dot(x, w) + b) }\n"},
    /* dot(w, x): the sparse operand second; a scale parameter */
    {"rows  { x : vector[D]  y : real }\n"
     "param { w : vector[D]  sigma : real<lower=0> }\n"
     "prior { w ~ normal(0, 1)  sigma ~ gamma(2, 2) }\n"
     "datum { y ~ normal(dot(w, x), sigma) }\n",
     "rows  { x : sparse_vector[D]  y : real }\n"
     "param { w : vector[D]  sigma : real<lower=0> }\n"
     "prior { w ~ normal(0, 1)  sigma ~ gamma(2, 2) }\n"
     "datum { y ~ normal(dot(w, x), sigma) }\n"},
    /* the dense operand an expression of the parameters (its adjoint is
     * a node of its own, summed and per row) */
    {"rows  { x : vector[D]  y : int }\n"
     "param { w : vector[D]  u : vector[D] }\n"
     "prior { w ~ normal(0, 1)  u ~ normal(0, 1) }\n"
     "datum { y ~ bernoulli_logit(dot(x, tanh(w) .* u + 0.1)) }\n",
     "rows  { x : sparse_vector[D]  y : int }\n"
     "param { w : vector[D]  u : vector[D] }\n"
     "prior { w ~ normal(0, 1)  u ~ normal(0, 1) }\n"
     "datum { y ~ bernoulli_logit(dot(x, tanh(w) .* u + 0.1)) }\n"},
};

static void test_dense_sparse_same(void **state)
{
    (void)state;
    make_data(11);
    char *csv = write_csv(), *svm = write_libsvm(), *rs = to_rowstore(svm);
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        const char *fd[] = {csv, NULL}, *fs[] = {svm, NULL}, *fr[] = {rs, NULL};
        lt_model md, ms, mr;
        open_files_ok(&md, pairs[k][0], fd, NULL, 0);
        open_files_ok(&ms, pairs[k][1], fs, NULL, 0);
        open_files_ok(&mr, pairs[k][1], fr, NULL, 0);
        /* Only the summation order differs: dense sums run over zeros. */
        compare_models(&ms.m, &md.m, 1e-12, 100 + k);
        /* The row store holds the same numbers as the LIBSVM file. */
        compare_models(&mr.m, &ms.m, 0.0, 200 + k);
        if (k == 0)
            assert_true(ms.m.flags & DRIFT_MODEL_GLM);
        lt_close(&md);
        lt_close(&ms);
        lt_close(&mr);
    }
    unlink(csv), unlink(svm), unlink(rs);
    free(csv), free(svm), free(rs);
}

static const char *sparse_logistic =
    "# the logistic C plugin's model, w ~ N(0, 10 I)\n"
    "rows  { x : sparse_vector[D]  y : int }\n"
    "param { w : vector[D] }\n"
    "prior { w ~ normal(0, sqrt(10)) }\n"
    "datum { y ~ bernoulli_logit(dot(x, w)) }\n";

/* The .drift sparse logistic regression against the C plugin's sparse
 * path on the same LIBSVM file: the same values (to rounding) and the
 * same SGLD draws on the same seed. */
static void test_c_plugin(void **state)
{
    (void)state;
    make_data(12);
    char *svm = write_libsvm();
    char *model = th_write_text(sparse_logistic, ".drift");
    th_problem pc, pl;
    th_open(&pc, "logistic", svm, NULL, 0);
    th_open(&pl, model, svm, NULL, 0);
    compare_models(&pl.p.model, &pc.p.model, 1e-12, 7);
    char *sets[] = {"h=0.002"};
    for (int access = 0; access < 3; access++) {
        th_run run = {.sampler = "sgld", .set = sets, .n_set = 1, .batch = 9,
                      .iters = 300, .seed = 4, .access = (drift_access)access};
        th_draws dc, dl;
        assert_int_equal(th_sample(&pc, &run, &dc, NULL), 0);
        assert_int_equal(th_sample(&pl, &run, &dl, NULL), 0);
        assert_int_equal(dc.n, dl.n);
        assert_int_equal(dc.cols, dl.cols);
        for (size_t k = 0; k < dc.n * dc.cols; k++)
            near(dl.v[k], dc.v[k], 1e-9, "draw", k);
        th_draws_free(&dc);
        th_draws_free(&dl);
    }
    th_close(&pc);
    th_close(&pl);
    unlink(svm), unlink(model);
    free(svm), free(model);
}

/* Central differences: the battery of langtest.c (summed and per-row
 * gradients, jvp, GLM) on sparse models, with an empty row, and with D
 * larger than the data's (the extra weights see only the prior). */
static void test_derivatives(void **state)
{
    (void)state;
    make_data(13);
    char *text = libsvm_text();
    size_t len = strlen(text) + 8;
    char *data = malloc(len);
    snprintf(data, len, "libsvm:%s", text);
    const char *files[] = {data, NULL};
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        lt_model lm;
        lt_open_ok(&lm, pairs[k][1], files, NULL, 0);
        assert_int_equal(lm.m.n_rows, N);
        lt_check_derivatives(&lm.m, 40 + k, 2, 0.8);
        lt_close(&lm);
    }
    char *more[] = {"D=14"};
    lt_model lm;
    lt_open_ok(&lm, pairs[0][1], files, more, 1);
    assert_int_equal(lm.m.dim, 14 + 1);
    lt_check_derivatives(&lm.m, 50, 2, 0.8);
    lt_close(&lm);
    free(data);
    free(text);
}

/* Row stores give the same draws on the same seed as their sources: the
 * dense model over CSV -> row store, the sparse one over LIBSVM -> row
 * store, for random, reshuffled and cyclic access. */
static void test_round_trips(void **state)
{
    (void)state;
    make_data(14);
    char *csv = write_csv(), *svm = write_libsvm();
    char *src[2] = {csv, svm};
    for (int k = 0; k < 2; k++) {
        char *rs = to_rowstore(src[k]);
        char *model = th_write_text(pairs[1][k], ".drift");
        th_problem pa, pb;
        th_open(&pa, model, src[k], NULL, 0);
        th_open(&pb, model, rs, NULL, 0);
        char *sets[] = {"h=0.001"};
        for (int access = 0; access < 3; access++) {
            th_run run = {.sampler = "sgld", .set = sets, .n_set = 1,
                          .batch = 10, .iters = 300, .seed = 8,
                          .access = (drift_access)access};
            th_draws da, db;
            assert_int_equal(th_sample(&pa, &run, &da, NULL), 0);
            assert_int_equal(th_sample(&pb, &run, &db, NULL), 0);
            assert_int_equal(da.n, db.n);
            assert_memory_equal(da.v, db.v, da.n * da.cols * sizeof(double));
            th_draws_free(&da);
            th_draws_free(&db);
        }
        th_close(&pa);
        th_close(&pb);
        unlink(rs), unlink(model);
        free(rs), free(model);
    }
    unlink(csv), unlink(svm);
    free(csv), free(svm);
}

/* A row store's rows bind in place: dense columns as a strided view into
 * the map, sparse rows as the map's own arrays. */
static void test_zero_copy(void **state)
{
    (void)state;
    make_data(15);
    const char *text =
        "rows  { x : sparse_vector[D]  y : int  z : vector[2] }\n"
        "param { w : vector[D]  v : vector[2] }\n"
        "prior { w ~ normal(0, 1)  v ~ normal(0, 1) }\n"
        "datum { y ~ bernoulli_logit(dot(x, w) + dot(z, v)) }\n";
    /* The sparse rows from one store, y and z from another. */
    char *svm = write_libsvm(), *rs = to_rowstore(svm);
    char csvtext[N * 64 + 32];
    size_t used = (size_t)snprintf(csvtext, sizeof csvtext, "a,z.1,b,z.2\n");
    for (size_t i = 0; i < N; i++)
        used += (size_t)snprintf(csvtext + used, sizeof csvtext - used,
                                 "%zu,%g,7,%g\n", i, dense[i][1],
                                 dense[i][2]);
    char *csv = th_write_text(csvtext, ".csv"), *rs2 = to_rowstore(csv);
    drift_source *src = NULL;
    drift_diag d;
    drift_diag_init(&d, stderr);
    drift_err e = {{0}};
    char *mp = th_write_text(text, ".drift");
    drift_program *p = drift_front_load(mp, &src, &d, &e);
    assert_non_null(p);
    const char *files[] = {rs, rs2, NULL};
    drift_langdata *ld = NULL;
    assert_int_equal(drift_langdata_load(files, NULL, 0, &ld, &d), 0);
    assert_int_equal(drift_langdata_bind_sizes(p, ld, 0, &d), 0);
    assert_int_equal(drift_typecheck(p, &d), 0);
    assert_int_equal(drift_langdata_bind_values(p, ld, 0, &d), 0);
    for (size_t k = 0; k < p->n_syms; k++) {
        const drift_sym *s = p->syms[k];
        if (s->kind != DRIFT_SYM_ROWS)
            continue;
        const drift_rowbind *rb = &ld->sd[k].rb;
        const drift_table *t = rb->src->table;
        assert_int_equal(t->kind, DRIFT_TABLE_ROWSTORE);
        assert_true(rb->mapped);
        const char *lo = t->rs.map, *hi = lo + t->rs.map_len;
        if (!strcmp(s->name, "x")) {
            assert_non_null(rb->sp);
            assert_ptr_equal(rb->sp, &t->view.sparse[0]);
            assert_true((const char *)rb->sp->val >= lo &&
                        (const char *)rb->sp->val < hi);
            assert_true((const char *)rb->sp->idx >= lo &&
                        (const char *)rb->sp->idx < hi);
            assert_int_equal(rb->sz, D);
        } else {
            assert_null(rb->sp);
            assert_ptr_equal(rb->base, t->view.values);
            assert_true((const char *)rb->base >= lo &&
                        (const char *)rb->base < hi);
            assert_int_equal(rb->ld, t->view.row_stride);
            if (!strcmp(s->name, "z")) {
                /* z.1, z.2 are columns 1 and 3: a strided, gathered view */
                assert_int_equal(rb->sz, 2);
                assert_int_equal(rb->cols[0], 1);
                assert_int_equal(rb->cols[1], 3);
                assert_int_equal(rb->ld, 4);
            }
        }
    }
    drift_langdata_free(ld);
    drift_program_free(p);
    drift_source_free(src);
    /* And the model built on them evaluates as on the text files. */
    const char *ft[] = {svm, csv, NULL}, *fr[] = {rs, rs2, NULL};
    lt_model mt, mr;
    open_files_ok(&mt, text, ft, NULL, 0);
    open_files_ok(&mr, text, fr, NULL, 0);
    compare_models(&mr.m, &mt.m, 0.0, 9);
    lt_close(&mt);
    lt_close(&mr);
    unlink(svm), unlink(rs), unlink(csv), unlink(rs2), unlink(mp);
    free(svm), free(rs), free(csv), free(rs2), free(mp);
}

/* D = 10^6 with a workspace for 2^20 rows: any batch x D buffer would be
 * 8 TB and its allocation would fail, so a workspace and evaluations at
 * that shape show that none exists.  The gradients are checked against
 * the rows' few non-zeros computed by hand. */
static void test_no_dense_batch(void **state)
{
    (void)state;
    const char *svm = "libsvm:1 5:1 999999:0.5 1000000:2\n"
                      "0 1:-1 5:0.25\n"
                      "1\n"
                      "0 1000000:-3\n";
    const char *files[] = {svm, NULL};
    lt_model lm;
    lt_open_ok(&lm, sparse_logistic, files, NULL, 0);
    const drift_model *m = &lm.m;
    size_t Dm = 1000000;
    assert_int_equal(m->dim, Dm);
    void *ws = m->workspace_new(m->self, (size_t)1 << 20);
    assert_non_null(ws);
    double *w = calloc(Dm, sizeof *w), *g = calloc(Dm, sizeof *g);
    double *G = calloc(4 * Dm, sizeof *G);
    assert_true(w && g && G);
    w[0] = 0.5, w[4] = -1, w[999998] = 2, w[999999] = 0.25;
    /* x_i . w and y_i - logistic(x_i . w), by hand */
    double z[4] = {-1 + 0.5 * 2 + 2 * 0.25, -0.5 - 0.25, 0, -3 * 0.25};
    double y[4] = {1, 0, 1, 0}, s[4];
    for (int i = 0; i < 4; i++)
        s[i] = y[i] - 1 / (1 + exp(-z[i]));
    drift_rows all = {NULL, 0, 4};
    drift_err e = {{0}};
    double ll;
    must(m->log_lik(m->self, ws, w, &all, NULL, &ll, g, G, &e), &e);
    double want_ll = 0;
    for (int i = 0; i < 4; i++)
        want_ll += y[i] * z[i] - log1p(exp(z[i]));
    near(ll, want_ll, 1e-14, "log likelihood", 0);
    near(g[0], -s[1], 1e-14, "gradient", 0);
    near(g[4], s[0] + 0.25 * s[1], 1e-14, "gradient", 4);
    near(g[999998], 0.5 * s[0], 1e-14, "gradient", 999998);
    near(g[999999], 2 * s[0] - 3 * s[3], 1e-14, "gradient", 999999);
    near(G[999999], 2 * s[0], 1e-14, "row 1's gradient", 999999);
    near(G[3 * Dm + 999999], -3 * s[3], 1e-14, "row 4's gradient", 999999);
    size_t nonzero = 0;
    for (size_t j = 0; j < Dm; j++)
        nonzero += g[j] != 0;
    for (size_t k = 0; k < 4 * Dm; k++)
        nonzero += G[k] != 0;
    assert_int_equal(nonzero, 4 + 6);
    m->workspace_free(m->self, ws);
    free(w), free(g), free(G);
    lt_close(&lm);
}

/* The report with the temporary paths replaced by MODEL, DATA1, DATA2. */
static char *normalised(const lt_model *lm, const char *const *files)
{
    const char *names[] = {"MODEL", "DATA1", "DATA2"};
    const char *paths[3] = {lm->paths[0], NULL, NULL};
    for (size_t k = 0; k < 2 && files && files[k]; k++)
        paths[k + 1] = files[k];
    for (size_t k = 1; k < 3 && k < lm->n_paths; k++)
        paths[k] = lm->paths[k];
    char *s = strdup(lm->report ? lm->report : "");
    for (size_t k = 0; k < 3; k++) {
        if (!paths[k])
            continue;
        size_t pl = strlen(paths[k]), nl = strlen(names[k]);
        for (char *hit; (hit = strstr(s, paths[k]));) {
            size_t before = (size_t)(hit - s), total = strlen(s);
            char *ns = malloc(total - pl + nl + 1);
            memcpy(ns, s, before);
            memcpy(ns + before, names[k], nl);
            strcpy(ns + before + nl, hit + pl);
            free(s);
            s = ns;
        }
    }
    return s;
}

static void expect_report(lt_model *lm, const char *const *files,
                          const char *want)
{
    char *got = normalised(lm, files);
    if (lm->rc == 0 || strcmp(got, want)) {
        fprintf(stderr, "--- got (rc %d):\n%s--- want:\n%s", lm->rc, got,
                want);
        fail_msg("report differs (printed above)");
    }
    free(got);
}

static void golden(const char *model, const char *const *data,
                   char *const *sets, size_t n_sets, const char *want)
{
    lt_model lm;
    lt_open(&lm, model, data, sets, n_sets);
    expect_report(&lm, NULL, want);
    lt_close(&lm);
}

static void test_data_errors(void **state)
{
    (void)state;
    const char *svm[] = {"libsvm:1 1:0.5 3:2\n0 2:1\n", NULL};
    char *small[] = {"D=2"};
    golden(sparse_logistic, svm, small, 1,
           "MODEL:2:27: error: size 'D' is 2 in --data-set, but the sparse "
           "rows 'x' in DATA1 have feature indices up to 3: 'D' must be at "
           "least 3\n"
           "    2 | rows  { x : sparse_vector[D]  y : int }\n"
           "      |                           ^\n");
    golden("rows  { x : sparse_vector[2]  y : int }\n"
           "param { w : vector[2] }\n"
           "datum { y ~ bernoulli_logit(dot(x, w)) }\n",
           svm, NULL, 0,
           "MODEL:1:27: error: sparse_vector 'x' has size 2, but its rows in "
           "DATA1 have feature indices up to 3\n"
           "    1 | rows  { x : sparse_vector[2]  y : int }\n"
           "      |                           ^\n");
    golden("rows  { x : vector[D]  y : int }\n"
           "param { w : vector[D] }\n"
           "datum { y ~ bernoulli_logit(dot(x, w)) }\n",
           svm, NULL, 0,
           "MODEL:1:9: error: DATA1 gives 'x' as sparse rows (LIBSVM "
           "features), but it is declared vector[D]: declare it x : "
           "sparse_vector[D] and use it in dot(x, w)\n"
           "    1 | rows  { x : vector[D]  y : int }\n"
           "      |         ^\n");
    const char *csv[] = {"csv:y,x.1,x.2\n1,0.5,1\n", NULL};
    golden(sparse_logistic, csv, NULL, 0,
           "MODEL:2:9: error: rows variable 'x' is declared sparse_vector, "
           "but DATA1 gives it as dense columns (x.1, x.2, ...): declare it "
           "vector, or give sparse rows (a LIBSVM file, or a row store "
           "converted from one)\n"
           "    2 | rows  { x : sparse_vector[D]  y : int }\n"
           "      |         ^\n");
    const char *json[] = {"json:{\"x\": [[1, 2]], \"y\": [1]}", NULL};
    golden(sparse_logistic, json, NULL, 0,
           "MODEL:2:9: error: rows variable 'x' is declared sparse_vector, "
           "but DATA1 gives it as JSON values; sparse rows come from a "
           "LIBSVM file or a row store converted from one (or declare it "
           "vector)\n"
           "    2 | rows  { x : sparse_vector[D]  y : int }\n"
           "      |         ^\n");
    golden("rows  { f : sparse_vector[D]  y : int }\n"
           "param { w : vector[D] }\n"
           "datum { y ~ bernoulli_logit(dot(f, w)) }\n",
           svm, NULL, 0,
           "MODEL:1:9: error: rows variable 'f : sparse_vector[D]' is in no "
           "data file: expected sparse rows named 'f' (a LIBSVM file's "
           "features are 'x', its labels 'y'; or a row store converted from "
           "one); the data have 'x' in DATA1\n"
           "    1 | rows  { f : sparse_vector[D]  y : int }\n"
           "      |         ^\n");
    const char *pm[] = {"libsvm:1 1:0.5\n-1 2:1\n", NULL};
    golden(sparse_logistic, pm, NULL, 0,
           "DATA1: error: 'y[2]': the outcome of bernoulli_logit must be 0 "
           "or 1, found -1 (LIBSVM labels -1/+1: map -1 to 0)\n"
           "MODEL:5:9: note: 'y' is the outcome of bernoulli_logit here\n"
           "    5 | datum { y ~ bernoulli_logit(dot(x, w)) }\n"
           "      |         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n");
    const char *bad[] = {"libsvm:1 1:0.5\n0 2:x\n", NULL};
    golden(sparse_logistic, bad, NULL, 0,
           "DATA1:2:3: error: value in '2:x' is not a finite number\n"
           "    2 | 0 2:x\n"
           "      |   ^\n");
}

/* A mapped row store's outcomes are not read before sampling: a bad
 * label is refused when its row is evaluated (naming the row and the
 * file), never used; drift check (check_every_row) finds it up front.
 * An int column the store records as real is refused from its header. */
static void test_mapped_checks(void **state)
{
    (void)state;
    make_data(16);
    dense[40][0] = 2;
    char *svm = write_libsvm(), *rs = to_rowstore(svm);
    const char *files[] = {rs, NULL};
    lt_model lm;
    open_files_ok(&lm, sparse_logistic, files, NULL, 0);
    const drift_model *m = &lm.m;
    void *ws = m->workspace_new(m->self, N);
    double w[D] = {0}, ll;
    drift_err e = {{0}};
    drift_rows before = {NULL, 0, 40}, after = {NULL, 41, N - 41};
    assert_int_equal(m->log_lik(m->self, ws, w, &before, NULL, &ll, NULL,
                                NULL, &e),
                     0);
    assert_int_equal(m->log_lik(m->self, ws, w, &after, NULL, &ll, NULL,
                                NULL, &e),
                     0);
    size_t rows[3] = {3, 40, 7};
    drift_rows with = {rows, 0, 3};
    double g[D];
    assert_int_not_equal(m->log_lik(m->self, ws, w, &with, NULL, &ll, g, NULL,
                                    &e),
                         0);
    char want[512];
    snprintf(want, sizeof want,
             "%s:5:9: bernoulli_logit: the outcome must be 0 or 1, got 2 "
             "(data row 41 of %s)",
             lm.paths[0], rs);
    assert_string_equal(e.msg, want);
    m->workspace_free(m->self, ws);
    lt_close(&lm);
    open_files(&lm, sparse_logistic, files, NULL, 0, 1);
    expect_report(&lm, files,
                  "DATA1: error: 'y[41]': the outcome of bernoulli_logit "
                  "must be 0 or 1, found 2\n"
                  "MODEL:5:9: note: 'y' is the outcome of bernoulli_logit "
                  "here\n"
                  "    5 | datum { y ~ bernoulli_logit(dot(x, w)) }\n"
                  "      |         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n");
    lt_close(&lm);
    /* y of 0.5: the store records the column as real. */
    dense[40][0] = 0.5;
    char *svm2 = write_libsvm(), *rs2 = to_rowstore(svm2);
    const char *files2[] = {rs2, NULL};
    open_files(&lm, sparse_logistic, files2, NULL, 0, 0);
    expect_report(&lm, files2,
                  "DATA1: error: 'y' is declared int, but column 'y' of this "
                  "row store holds values that are not integers (see drift "
                  "data info)\n");
    lt_close(&lm);
    unlink(svm), unlink(rs), unlink(svm2), unlink(rs2);
    free(svm), free(rs), free(svm2), free(rs2);
}

/* Every allocation on the path from text and sparse data (LIBSVM, and a
 * row store) to a model failing in turn: reported, never a crash or a
 * leak; and a workspace's. */
static void test_allocation_failures(void **state)
{
    (void)state;
    make_data(17);
    char *svm = write_libsvm(), *rs = to_rowstore(svm);
    const char *model = pairs[0][1];
    for (int k = 0; k < 2; k++) {
        const char *files[] = {k ? rs : svm, NULL};
        lt_model lm;
        drift_fail_alloc(0);
        open_files_ok(&lm, model, files, NULL, 0);
        uint64_t count = drift_fail_alloc(0);
        lt_close(&lm);
        assert_true(count > 10);
        for (uint64_t j = 1; j <= count; j++) {
            drift_fail_alloc(j);
            open_files(&lm, model, files, NULL, 0, 0);
            drift_fail_alloc(0);
            if (lm.rc == 0)
                fail_msg("allocation %llu of %llu failed but the model "
                         "opened",
                         (unsigned long long)j, (unsigned long long)count);
            if (!strstr(lm.summary, "out of memory") &&
                !strstr(lm.report, "out of memory"))
                fail_msg("allocation %llu: no 'out of memory' in '%s' / '%s'",
                         (unsigned long long)j, lm.summary, lm.report);
            lt_close(&lm);
        }
        open_files_ok(&lm, model, files, NULL, 0);
        drift_fail_alloc(0);
        void *ws = lm.m.workspace_new(lm.m.self, 32);
        uint64_t wcount = drift_fail_alloc(0);
        lm.m.workspace_free(lm.m.self, ws);
        for (uint64_t j = 1; j <= wcount; j++) {
            drift_fail_alloc(j);
            ws = lm.m.workspace_new(lm.m.self, 32);
            drift_fail_alloc(0);
            assert_null(ws);
        }
        lt_close(&lm);
    }
    unlink(svm), unlink(rs);
    free(svm), free(rs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dense_sparse_same),
        cmocka_unit_test(test_c_plugin),
        cmocka_unit_test(test_derivatives),
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_zero_copy),
        cmocka_unit_test(test_no_dense_batch),
        cmocka_unit_test(test_data_errors),
        cmocka_unit_test(test_mapped_checks),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
