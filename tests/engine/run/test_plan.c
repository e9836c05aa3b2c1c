/* test_plan.c: libdrift's public API as a program meets it, through
 * <drift/drift.h> alone and linked against the installed library's
 * build: a logistic regression fitted from rows in memory (no data file,
 * no draws file), its draws taken from the callback and their means
 * checked against the posterior's mode and Laplace spread found here by
 * Newton's method; and the clear refusals of specs that cannot run. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <drift/drift.h>

#define N 1000
#define D 3

/* The example's model: y ~ bernoulli_logit(x . w), w ~ N(0, 10 I). */
static char model_path[4096];

static int y[N];
static double x1[N], x2[N], x3[N];
/* The rows as columns, in the model's order (make_data fills them). */
static const drift_column logistic_cols[4] = {
    {"y", DRIFT_COLUMN_INT, y, 0},
    {"x.1", DRIFT_COLUMN_DOUBLE, x1, 0},
    {"x.2", DRIFT_COLUMN_DOUBLE, x2, 0},
    {"x.3", DRIFT_COLUMN_DOUBLE, x3, 0},
};

/* A fixed data set from a small LCG (no drift code involved): an
 * intercept column and two standard normal features, y drawn from the
 * model at w = (-0.5, 1, -2). */
static double uniform(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return ((double)(*s >> 11) + 0.5) / 9007199254740992.0;
}

static void make_data(void)
{
    uint64_t s = 20240601;
    const double w[D] = {-0.5, 1.0, -2.0};
    for (size_t i = 0; i < N; i++) {
        double u1 = uniform(&s), u2 = uniform(&s);
        double r = sqrt(-2 * log(u1));
        x1[i] = 1;
        x2[i] = r * cos(2 * M_PI * u2);
        x3[i] = r * sin(2 * M_PI * u2);
        double eta = w[0] * x1[i] + w[1] * x2[i] + w[2] * x3[i];
        y[i] = uniform(&s) < 1 / (1 + exp(-eta));
    }
}

/* The posterior's mode by Newton's method, and the Laplace
 * approximation's marginal sds there (sqrt of the inverse Hessian's
 * diagonal), for columns xs. */
static void newton(const double *const xs[D], double mode[D], double sd[D])
{
    double w[D] = {0}, H[D][D];
    for (int it = 0; it < 50; it++) {
        double g[D];
        for (int a = 0; a < D; a++) {
            g[a] = -w[a] / 10;
            for (int b = 0; b < D; b++)
                H[a][b] = a == b ? 1.0 / 10 : 0;
        }
        for (size_t i = 0; i < N; i++) {
            double eta = 0;
            for (int a = 0; a < D; a++)
                eta += xs[a][i] * w[a];
            double p = 1 / (1 + exp(-eta));
            for (int a = 0; a < D; a++) {
                g[a] += (y[i] - p) * xs[a][i];
                for (int b = 0; b < D; b++)
                    H[a][b] += p * (1 - p) * xs[a][i] * xs[b][i];
            }
        }
        /* w += H^-1 g, by Gaussian elimination on a copy */
        double A[D][D + 1];
        for (int a = 0; a < D; a++) {
            memcpy(A[a], H[a], sizeof H[a]);
            A[a][D] = g[a];
        }
        for (int c = 0; c < D; c++)
            for (int r = c + 1; r < D; r++) {
                double f = A[r][c] / A[c][c];
                for (int k = c; k <= D; k++)
                    A[r][k] -= f * A[c][k];
            }
        double step[D];
        for (int r = D - 1; r >= 0; r--) {
            double v = A[r][D];
            for (int k = r + 1; k < D; k++)
                v -= A[r][k] * step[k];
            step[r] = v / A[r][r];
        }
        for (int a = 0; a < D; a++)
            w[a] += step[a];
    }
    /* the inverse's diagonal: solve H z = e_a for each a */
    for (int a = 0; a < D; a++) {
        double A[D][D + 1];
        for (int r = 0; r < D; r++) {
            memcpy(A[r], H[r], sizeof H[r]);
            A[r][D] = r == a;
        }
        for (int c = 0; c < D; c++)
            for (int r = c + 1; r < D; r++) {
                double f = A[r][c] / A[c][c];
                for (int k = c; k <= D; k++)
                    A[r][k] -= f * A[c][k];
            }
        double z[D];
        for (int r = D - 1; r >= 0; r--) {
            double v = A[r][D];
            for (int k = r + 1; k < D; k++)
                v -= A[r][k] * z[k];
            z[r] = v / A[r][r];
        }
        sd[a] = sqrt(z[a]);
        mode[a] = w[a];
    }
}

/* The callback's sums: per column named w.1 ... w.D. */
typedef struct sums {
    long col[D];            /* the columns' indices */
    double s[D], ss[D];
    size_t n;
    unsigned chains_seen;   /* bit k: chain id k */
    size_t width;
} sums;

static void on_draw(void *user, unsigned chain_id, unsigned flags,
                    const double *v, size_t n)
{
    (void)flags;
    sums *s = user;
    s->width = n;
    s->chains_seen |= 1u << chain_id;
    for (int a = 0; a < D; a++) {
        double w = v[s->col[a]];
        s->s[a] += w;
        s->ss[a] += w * w;
    }
    s->n++;
}

/* Runs the model on the columns as given, 2 chains, a fixed seed, draws
 * to the callback alone; fills s. */
static void run_columns(const drift_column *cols, sums *s)
{
    drift_option opts[] = {{"chains", "2"}, {"seed", "7"}, {"quiet", NULL},
                           {"warmup", "500"}, {"iter", "1000"}};
    drift_spec spec = {.model = model_path,
                       .columns = cols,
                       .n_columns = 4,
                       .n_rows = N,
                       .options = opts,
                       .n_options = sizeof opts / sizeof opts[0],
                       .on_draw = on_draw,
                       .on_draw_user = s};
    drift_plan *p = NULL;
    drift_err e = {{0}};
    if (drift_plan_new(&spec, &p, &e))
        fail_msg("drift_plan_new: %s", e.msg);
    assert_int_equal(drift_plan_chains(p), 2);
    memset(s, 0, sizeof *s);
    for (int a = 0; a < D; a++) {
        char name[16];
        snprintf(name, sizeof name, "w.%d", a + 1);
        s->col[a] = -1;
        for (size_t k = 0; k < drift_plan_n_columns(p); k++)
            if (!strcmp(drift_plan_column_name(p, k), name))
                s->col[a] = (long)k;
        assert_true(s->col[a] >= 0);
    }
    assert_string_equal(drift_plan_column_name(p, 0), "lp__");
    if (drift_plan_run(p, DRIFT_LAUNCH_IN_PROCESS, &e))
        fail_msg("drift_plan_run: %s", e.msg);
    assert_int_equal(drift_plan_chain_draws(p, 0), 1000);
    assert_int_equal(drift_plan_chain_draws(p, 1), 1000);
    assert_int_equal(s->width, drift_plan_n_columns(p));
    drift_plan_free(p);
    assert_int_equal(s->n, 2000);
    assert_int_equal(s->chains_seen, (1u << 1) | (1u << 2));
}

static void test_version(void **state)
{
    (void)state;
    assert_int_equal(drift_api_version(), DRIFT_API_VERSION);
    assert_non_null(drift_version());
    assert_true(strlen(drift_version()) > 0);
}

/* The draws' means against the mode (within a quarter of the posterior
 * sd: the Monte Carlo error of 2000 NUTS draws is about 0.03 sd, and the
 * mean's distance from the mode at N = 1000 well under 0.1 sd), and their
 * sds against the Laplace sds (within 15 %). */
static void test_columns_in_memory(void **state)
{
    (void)state;
    make_data();
    const drift_column *cols = logistic_cols;
    const double *xs[D] = {x1, x2, x3};
    double mode[D], sd[D];
    newton(xs, mode, sd);
    /* the reference is the data's: near the true w */
    assert_true(fabs(mode[1] - 1.0) < 0.3 && fabs(mode[2] + 2.0) < 0.4);
    char cwd_out[64];
    snprintf(cwd_out, sizeof cwd_out, "output.csv");
    int had_output = access(cwd_out, F_OK) == 0;
    sums s;
    run_columns(cols, &s);
    for (int a = 0; a < D; a++) {
        double m = s.s[a] / (double)s.n;
        double v = s.ss[a] / (double)s.n - m * m;
        if (fabs(m - mode[a]) > 0.25 * sd[a])
            fail_msg("w.%d: mean %g, the posterior's mode %g (sd %g)", a + 1,
                     m, mode[a], sd[a]);
        if (fabs(sqrt(v) / sd[a] - 1) > 0.15)
            fail_msg("w.%d: sd %g, Laplace sd %g", a + 1, sqrt(v), sd[a]);
    }
    /* no out option with a callback: no draws file */
    assert_int_equal(access(cwd_out, F_OK) == 0, had_output);
}

/* With out given, the rows go to the callback and to the Stan CSV file
 * both: the file holds as many draws, with the plan's columns as its
 * header's model columns. */
static size_t n_rows_seen;

static void count_row(void *user, unsigned chain_id, unsigned flags,
                      const double *v, size_t n)
{
    (void)flags;
    (void)user;
    (void)chain_id;
    (void)v;
    (void)n;
    n_rows_seen++;
}

static void test_csv_and_callback(void **state)
{
    (void)state;
    make_data();
    char dir[] = "/tmp/drift-plan-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char out[64];
    snprintf(out, sizeof out, "%s/fit.csv", dir);
    const drift_column *cols = logistic_cols;
    drift_option opts[] = {{"chains", "1"}, {"seed", "3"}, {"quiet", NULL},
                           {"warmup", "100"}, {"iter", "150"},
                           {"out", out}};
    drift_spec spec = {.model = model_path, .columns = cols, .n_columns = 4,
                       .n_rows = N, .options = opts, .n_options = 6,
                       .on_draw = count_row};
    drift_plan *p;
    drift_err e = {{0}};
    if (drift_plan_new(&spec, &p, &e))
        fail_msg("drift_plan_new: %s", e.msg);
    n_rows_seen = 0;
    if (drift_plan_run(p, DRIFT_LAUNCH_IN_PROCESS, &e))
        fail_msg("drift_plan_run: %s", e.msg);
    assert_int_equal(n_rows_seen, 150);
    FILE *f = fopen(out, "r");
    assert_non_null(f);
    char line[8192];
    size_t rows = 0;
    int header = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        if (!header++) {
            assert_int_equal(strncmp(line, "lp__,", 5), 0);
            assert_non_null(strstr(line, ",w.1,w.2,w.3"));
            continue;
        }
        rows++;
    }
    fclose(f);
    assert_int_equal(rows, 150);
    drift_plan_free(p);
    unlink(out);
    rmdir(dir);
}

/* A guarded run: the chains in a child process watched from this one;
 * the draws reach the file, and a callback is refused (it would be
 * called in the child). */
static void test_guarded(void **state)
{
    (void)state;
    make_data();
    char dir[] = "/tmp/drift-plan-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char out[64];
    snprintf(out, sizeof out, "%s/fit.csv", dir);
    const drift_column *cols = logistic_cols;
    drift_option opts[] = {{"chains", "1"}, {"seed", "3"}, {"quiet", NULL},
                           {"warmup", "100"}, {"iter", "30"},
                           {"out", out}};
    drift_spec spec = {.model = model_path, .columns = cols, .n_columns = 4,
                       .n_rows = N, .options = opts, .n_options = 6};
    drift_plan *p;
    drift_err e = {{0}};
    if (drift_plan_new(&spec, &p, &e))
        fail_msg("drift_plan_new: %s", e.msg);
    /* The child checks the file as drift sample does: 30 draws cannot
     * reach 100 effective draws, and the warning reaches stderr. */
    char errpath[80];
    snprintf(errpath, sizeof errpath, "%s/stderr", dir);
    fflush(stderr);
    int saved_fd = dup(STDERR_FILENO);
    FILE *ef = fopen(errpath, "w+");
    assert_non_null(ef);
    dup2(fileno(ef), STDERR_FILENO);
    int rc = drift_plan_run(p, DRIFT_LAUNCH_GUARDED, &e);
    fflush(stderr);
    dup2(saved_fd, STDERR_FILENO);
    close(saved_fd);
    char err[4096] = "";
    rewind(ef);
    size_t got = fread(err, 1, sizeof err - 1, ef);
    err[got] = 0;
    fclose(ef);
    unlink(errpath);
    if (rc)
        fail_msg("guarded drift_plan_run: %s", e.msg);
    drift_plan_free(p);
    if (!strstr(err, "ESS below 100 per chain"))
        fail_msg("no ESS warning from the guarded run: '%s'", err);
    assert_int_equal(access(out, R_OK), 0);
    unlink(out);
    spec.on_draw = count_row;
    if (drift_plan_new(&spec, &p, &e))
        fail_msg("drift_plan_new: %s", e.msg);
    assert_int_not_equal(drift_plan_run(p, DRIFT_LAUNCH_GUARDED, &e),
                         DRIFT_OK);
    assert_non_null(strstr(e.msg, "run in process for a callback"));
    drift_plan_free(p);
    unlink(out);
    rmdir(dir);
}

/* A spec naming an option, sampler or model that is not there, or none,
 * is refused with a message that names it. */
static void expect_refusal(const drift_spec *spec, const char *needle)
{
    drift_plan *p = (drift_plan *)1;
    drift_err e = {{0}};
    int rc = drift_plan_new(spec, &p, &e);
    assert_int_not_equal(rc, DRIFT_OK);
    assert_null(p);
    if (!strstr(e.msg, needle))
        fail_msg("message '%s' lacks '%s'", e.msg, needle);
}

static void test_bad_specs(void **state)
{
    (void)state;
    make_data();
    drift_column cols[4];
    memcpy(cols, logistic_cols, sizeof cols); /* x.2 is swapped below */
    drift_option bogus[] = {{"chians", "2"}};
    drift_option badval[] = {{"chains", "many"}};
    drift_spec spec = {.model = model_path, .columns = cols, .n_columns = 4,
                       .n_rows = N, .options = bogus, .n_options = 1};
    expect_refusal(&spec, "unknown option --chians");
    spec.options = badval;
    expect_refusal(&spec, "--chains many: expected an integer");
    spec.n_options = 0;
    spec.sampler = "no-such-sampler";
    expect_refusal(&spec, "no-such-sampler");
    spec.sampler = NULL;
    spec.model = NULL;
    expect_refusal(&spec, "no model given");
    spec.model = "/nonexistent/model.drift";
    expect_refusal(&spec, "/nonexistent/model.drift");
    spec.model = model_path;
    spec.method = "vb";
    expect_refusal(&spec, "method 'vb': unknown");
    spec.method = "optimize";
    spec.sampler = "nuts";
    expect_refusal(&spec, "method optimize takes no sampler");
    spec.sampler = NULL;
    drift_option chains[] = {{"chains", "2"}};
    spec.options = chains;
    spec.n_options = 1;
    expect_refusal(&spec, "unknown option --chains (drift optimize --help");
    drift_option iter0[] = {{"iter", "0"}};
    spec.options = iter0;
    expect_refusal(&spec, "--iter 0: expected a positive integer");
    spec.method = "laplace";
    drift_option nomode[] = {{"mode", "/nonexistent/mode.csv"}};
    spec.options = nomode;
    drift_plan *lp = NULL;
    drift_err le = {{0}};
    assert_int_equal(drift_plan_new(&spec, &lp, &le), DRIFT_OK);
    assert_int_not_equal(drift_plan_run(lp, DRIFT_LAUNCH_IN_PROCESS, &le),
                         DRIFT_OK);
    assert_non_null(strstr(le.msg, "/nonexistent/mode.csv"));
    drift_plan_free(lp);
    spec.options = NULL;
    spec.n_options = 0;
    spec.method = NULL;
    /* a NaN in a column of data, named with its row, as a data file's */
    static double xbad[N];
    memcpy(xbad, x2, sizeof xbad);
    xbad[6] = NAN;
    cols[2].values = xbad;
    expect_refusal(&spec, "'x.2' in row 7 is nan");
    xbad[6] = -INFINITY;
    expect_refusal(&spec, "'x.2' in row 7 is -inf");
    cols[2].values = x2;
    drift_column dup[] = {{"y", DRIFT_COLUMN_INT, y, 0},
                          {"y", DRIFT_COLUMN_DOUBLE, x1, 0}};
    spec.columns = dup;
    spec.n_columns = 2;
    expect_refusal(&spec, "'y' is given twice");
    drift_err e = {{0}};
    assert_int_equal(drift_spec_check_option("thin", "2", &e), DRIFT_OK);
    assert_int_not_equal(drift_spec_check_option("quiet", "yes", &e),
                         DRIFT_OK);
    assert_non_null(strstr(e.msg, "--quiet takes no value"));
}

/* The rows of a method's plan: the callback's last row and count. */
typedef struct rows {
    double last[16];
    size_t n, width;
    double s[D], ss[D];
    long col[D];
} rows;

static void on_row(void *user, unsigned chain_id, unsigned flags,
                   const double *v, size_t n)
{
    (void)flags;
    rows *r = user;
    assert_int_equal(chain_id, 1);
    r->width = n;
    memcpy(r->last, v, (n < 16 ? n : 16) * sizeof *v);
    for (int a = 0; a < D; a++) {
        r->s[a] += v[r->col[a]];
        r->ss[a] += v[r->col[a]] * v[r->col[a]];
    }
    r->n++;
}

/* Runs method on the columns, options opts, rows to r. */
static void run_method(const char *method, const drift_option *opts,
                       size_t n_opts, const char *first_column, rows *r)
{
    const drift_column *cols = logistic_cols;
    drift_spec spec = {.method = method, .model = model_path,
                       .columns = cols, .n_columns = 4, .n_rows = N,
                       .options = opts, .n_options = n_opts,
                       .on_draw = on_row, .on_draw_user = r};
    drift_plan *p = NULL;
    drift_err e = {{0}};
    if (drift_plan_new(&spec, &p, &e))
        fail_msg("drift_plan_new(%s): %s", method, e.msg);
    assert_int_equal(drift_plan_chains(p), 1);
    assert_string_equal(drift_plan_column_name(p, 0), first_column);
    memset(r, 0, sizeof *r);
    for (int a = 0; a < D; a++) {
        char name[16];
        snprintf(name, sizeof name, "w.%d", a + 1);
        r->col[a] = -1;
        for (size_t k = 0; k < drift_plan_n_columns(p); k++)
            if (!strcmp(drift_plan_column_name(p, k), name))
                r->col[a] = (long)k;
        assert_true(r->col[a] >= 0);
    }
    if (drift_plan_run(p, DRIFT_LAUNCH_IN_PROCESS, &e))
        fail_msg("drift_plan_run(%s): %s", method, e.msg);
    assert_int_equal(drift_plan_chain_draws(p, 0), r->n);
    assert_int_equal(r->width, drift_plan_n_columns(p));
    drift_plan_free(p);
}

/* optimize, laplace and pathfinder as plans over rows in memory: the mode against
 * Newton's (L-BFGS's tolerances leave it within 1e-3 sd), the Laplace
 * draws' means and sds against the mode and the inverse Hessian's (4000
 * draws: the mean's Monte Carlo sd is 0.016 sd, the sd's 1.1 %). */
static void test_methods(void **state)
{
    (void)state;
    make_data();
    const double *xs[D] = {x1, x2, x3};
    double mode[D], sd[D];
    newton(xs, mode, sd);
    rows r;
    drift_option o_opts[] = {{"seed", "3"}};
    run_method("optimize", o_opts, 1, "lp__", &r);
    assert_int_equal(r.n, 1);
    for (int a = 0; a < D; a++)
        if (fabs(r.last[r.col[a]] - mode[a]) > 1e-3 * sd[a])
            fail_msg("optimize w.%d: %.8g, Newton's mode %.8g", a + 1,
                     r.last[r.col[a]], mode[a]);
    drift_option l_opts[] = {{"seed", "3"}, {"draws", "4000"}};
    run_method("laplace", l_opts, 2, "log_p__", &r);
    assert_int_equal(r.n, 4000);
    for (int a = 0; a < D; a++) {
        double m = r.s[a] / (double)r.n;
        double v = r.ss[a] / (double)r.n - m * m;
        if (fabs(m - mode[a]) > 4 * 0.016 * sd[a])
            fail_msg("laplace w.%d: mean %g, the mode %g (sd %g)", a + 1, m,
                     mode[a], sd[a]);
        if (fabs(sqrt(v) / sd[a] - 1) > 0.05)
            fail_msg("laplace w.%d: sd %g, Newton's %g", a + 1, sqrt(v),
                     sd[a]);
    }
    /* Pathfinder's 1000 resampled draws: its approximation's mean is near
     * the mode at N = 1000 (a posterior close to Gaussian), so within a
     * quarter sd (the Monte Carlo part alone is about 0.05 sd) */
    drift_option p_opts[] = {{"seed", "3"}};
    run_method("pathfinder", p_opts, 1, "lp_approx__", &r);
    assert_int_equal(r.n, 1000);
    for (int a = 0; a < D; a++) {
        double m = r.s[a] / (double)r.n;
        if (fabs(m - mode[a]) > 0.25 * sd[a])
            fail_msg("pathfinder w.%d: mean %g, the mode %g (sd %g)", a + 1,
                     m, mode[a], sd[a]);
    }
}

/* generate's rows: the recomputed s against the draw's w (the file's
 * values are printed to 9 digits or more). */
typedef struct gen_rows {
    long s, w[D];
    size_t n;
    double worst;
} gen_rows;

static void on_gen_row(void *user, unsigned chain_id, unsigned flags,
                       const double *v, size_t n)
{
    (void)flags;
    gen_rows *g = user;
    (void)n;
    assert_int_equal(chain_id, 1);
    double sum = v[g->w[0]] + v[g->w[1]] + v[g->w[2]] + 100;
    double err = fabs(v[g->s] - sum) / (1 + fabs(sum));
    if (err > g->worst)
        g->worst = err;
    g->n++;
}

/* generate as a plan: a fit's file in, the model's generated block (one
 * the fit's model did not have) recomputed at every draw to the callback
 * and to the output file. */
static void test_generate_plan(void **state)
{
    (void)state;
    make_data();
    char dir[] = "/tmp/drift-plan-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char fit[64], gen[64], gq_model[64], gen_out[64];
    snprintf(fit, sizeof fit, "%s/fit.csv", dir);
    snprintf(gen, sizeof gen, "%s/gen.csv", dir);
    snprintf(gq_model, sizeof gq_model, "%s/gq.drift", dir);
    snprintf(gen_out, sizeof gen_out, "%s/gen.csv", dir);
    FILE *mf = fopen(gq_model, "w");
    assert_non_null(mf);
    fprintf(mf, "rows  { x : vector[D]  y : int }\n"
                "param { w : vector[D] }\n"
                "prior { w ~ normal(0, sqrt(10)) }\n"
                "datum { y ~ bernoulli_logit(dot(x, w)) }\n"
                "generated { s = sum(w) + 100 }\n");
    fclose(mf);
    const drift_column *cols = logistic_cols;
    drift_option opts[] = {{"chains", "1"}, {"seed", "3"}, {"quiet", NULL},
                           {"warmup", "100"}, {"iter", "50"},
                           {"out", fit}};
    drift_spec spec = {.model = model_path, .columns = cols, .n_columns = 4,
                       .n_rows = N, .options = opts, .n_options = 6};
    drift_plan *p;
    drift_err e = {{0}};
    if (drift_plan_new(&spec, &p, &e) ||
        drift_plan_run(p, DRIFT_LAUNCH_IN_PROCESS, &e))
        fail_msg("the fit: %s", e.msg);
    drift_plan_free(p);
    gen_rows g = {0};
    drift_option gopts[] = {{"draws", fit}, {"seed", "1"}, {"out", gen}};
    drift_spec gspec = {.method = "generate", .model = gq_model,
                        .columns = cols, .n_columns = 4, .n_rows = N,
                        .options = gopts, .n_options = 3,
                        .on_draw = on_gen_row, .on_draw_user = &g};
    if (drift_plan_new(&gspec, &p, &e))
        fail_msg("drift_plan_new(generate): %s", e.msg);
    g.s = -1;
    for (int a = 0; a < D; a++)
        g.w[a] = -1;
    for (size_t k = 0; k < drift_plan_n_columns(p); k++) {
        const char *name = drift_plan_column_name(p, k);
        if (!strcmp(name, "s"))
            g.s = (long)k;
        for (int a = 0; a < D; a++) {
            char w[8];
            snprintf(w, sizeof w, "w.%d", a + 1);
            if (!strcmp(name, w))
                g.w[a] = (long)k;
        }
    }
    assert_true(g.s >= 0 && g.w[0] >= 0 && g.w[1] >= 0 && g.w[2] >= 0);
    if (drift_plan_run(p, DRIFT_LAUNCH_IN_PROCESS, &e))
        fail_msg("drift_plan_run(generate): %s", e.msg);
    assert_int_equal(drift_plan_chain_draws(p, 0), 50);
    drift_plan_free(p);
    assert_int_equal(g.n, 50);
    if (g.worst > 1e-8)
        fail_msg("generate: s differs from sum(w) + 100 by %g", g.worst);
    assert_int_equal(access(gen_out, R_OK), 0);
    unlink(gen_out);
    unlink(fit);
    unlink(gq_model);
    rmdir(dir);
}

static double sim_s, sim_ss;
static size_t sim_n;

static void on_sim_row(void *user, unsigned chain_id, unsigned flags,
                       const double *v, size_t n)
{
    (void)flags;
    (void)user;
    (void)chain_id;
    sim_s += v[n - 1];
    sim_ss += v[n - 1] * v[n - 1];
    sim_n++;
}

/* A model without parameters simulates: fixed_param by default (as
 * CmdStan), its generated block drawn at every iteration (y ~ N(3, 2):
 * 4000 draws, the mean's sd 0.032, the variance's about 0.09); another
 * sampler is refused, and so is a method with nothing to do. */
static void test_no_parameters(void **state)
{
    (void)state;
    char dir[] = "/tmp/drift-plan-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char sim[64];
    snprintf(sim, sizeof sim, "%s/sim.drift", dir);
    FILE *mf = fopen(sim, "w");
    assert_non_null(mf);
    fprintf(mf, "generated { y = normal_rng(3, 2) }\n");
    fclose(mf);
    drift_option opts[] = {{"seed", "5"}, {"quiet", NULL}};
    drift_spec spec = {.model = sim, .options = opts, .n_options = 2,
                       .on_draw = on_sim_row};
    drift_plan *p;
    drift_err e = {{0}};
    if (drift_plan_new(&spec, &p, &e) ||
        drift_plan_run(p, DRIFT_LAUNCH_IN_PROCESS, &e))
        fail_msg("a model without parameters: %s", e.msg);
    drift_plan_free(p);
    assert_int_equal(sim_n, 4000);
    double m = sim_s / (double)sim_n, v = sim_ss / (double)sim_n - m * m;
    if (fabs(m - 3) > 4 * 0.032 || fabs(v - 4) > 4 * 0.09)
        fail_msg("fixed_param's y: mean %g (3), variance %g (4)", m, v);
    spec.sampler = "sgld";
    expect_refusal(&spec, "use --sampler fixed_param");
    spec.sampler = NULL;
    spec.method = "optimize";
    spec.n_options = 0;
    expect_refusal(&spec, "the model has no parameters");
    unlink(sim);
    rmdir(dir);
}

/* ---- strided columns, messages, warmup rows ---------------------------- */

/* Every row a run delivers, in order (one chain), and their flags. */
typedef struct record {
    double *v;
    size_t n, cap, width, warmup;
    int warmup_after_draw;  /* a warmup row came after a draw's */
} record;

static void record_row(void *user, unsigned chain_id, unsigned flags,
                       const double *v, size_t n)
{
    record *r = user;
    (void)chain_id;
    if (r->n + n > r->cap) {
        r->cap = 2 * (r->n + n);
        r->v = realloc(r->v, r->cap * sizeof *r->v);
        assert_non_null(r->v);
    }
    memcpy(r->v + r->n, v, n * sizeof *v);
    r->n += n;
    r->width = n;
    if (flags & DRIFT_DRAW_WARMUP) {
        r->warmup++;
        r->warmup_after_draw |= r->n > n * r->warmup;
    }
}

/* Runs one chain of the model on cols (seed 11), its rows to r; fill,
 * when given, is called between drift_plan_new and drift_plan_run. */
static void run_recorded(const drift_column *cols, record *r,
                         void (*fill)(void))
{
    drift_option opts[] = {{"chains", "1"}, {"seed", "11"}, {"quiet", NULL},
                           {"warmup", "100"}, {"iter", "100"}};
    drift_spec spec = {.model = model_path, .columns = cols, .n_columns = 4,
                       .n_rows = N, .options = opts, .n_options = 5,
                       .on_draw = record_row, .on_draw_user = r};
    drift_plan *p;
    drift_err e = {{0}};
    memset(r, 0, sizeof *r);
    if (drift_plan_new(&spec, &p, &e))
        fail_msg("drift_plan_new: %s", e.msg);
    if (fill)
        fill();
    if (drift_plan_run(p, DRIFT_LAUNCH_IN_PROCESS, &e))
        fail_msg("drift_plan_run: %s", e.msg);
    drift_plan_free(p);
    assert_int_equal(r->n, 100 * r->width);
}

/* The data inside wider C-ordered arrays: x.1..x.3 in columns 1-3 of an
 * N x 5 array, y in column 1 of an N x 2 array of ints (read through
 * their strides, copied); y, x.1..x.3 as columns 0-3 of an N x 6 array
 * of doubles, which the plan borrows as its table; and x.1..x.3 as an
 * N x 3 array, borrowed as x's table beside y's ints, copied. */
static double wide[N][5], rw[N][6], xs3[N][3];
static int ywide[N][2];

static void fill_xs3(void)
{
    for (size_t i = 0; i < N; i++) {
        xs3[i][0] = x1[i];
        xs3[i][1] = x2[i];
        xs3[i][2] = x3[i];
    }
}

static void fill_rows(void)
{
    for (size_t i = 0; i < N; i++) {
        rw[i][0] = y[i];
        rw[i][1] = x1[i];
        rw[i][2] = x2[i];
        rw[i][3] = x3[i];
        rw[i][4] = rw[i][5] = -1e300;
    }
}

/* Strided columns give the very draws of contiguous ones (same seed,
 * same bytes).  The borrowed arrays are filled only after drift_plan_new:
 * had the plan copied them then, the run would see zeros.  A variable
 * given in pieces (x.1 apart from x.2 and x.3) is copied whole. */
static void test_strided_columns(void **state)
{
    (void)state;
    make_data();
    for (size_t i = 0; i < N; i++) {
        wide[i][0] = wide[i][4] = NAN;
        wide[i][1] = x1[i];
        wide[i][2] = x2[i];
        wide[i][3] = x3[i];
        ywide[i][0] = -7;
        ywide[i][1] = y[i];
    }
    const drift_column *flat = logistic_cols;
    drift_column strided[] = {{"y", DRIFT_COLUMN_INT, &ywide[0][1], 2},
                              {"x.1", DRIFT_COLUMN_DOUBLE, &wide[0][1], 5},
                              {"x.2", DRIFT_COLUMN_DOUBLE, &wide[0][2], 5},
                              {"x.3", DRIFT_COLUMN_DOUBLE, &wide[0][3], 5}};
    drift_column borrowed[] = {{"y", DRIFT_COLUMN_DOUBLE, &rw[0][0], 6},
                               {"x.1", DRIFT_COLUMN_DOUBLE, &rw[0][1], 6},
                               {"x.2", DRIFT_COLUMN_DOUBLE, &rw[0][2], 6},
                               {"x.3", DRIFT_COLUMN_DOUBLE, &rw[0][3], 6}};
    drift_column mixed[] = {{"y", DRIFT_COLUMN_INT, y, 0},
                            {"x.1", DRIFT_COLUMN_DOUBLE, &xs3[0][0], 3},
                            {"x.2", DRIFT_COLUMN_DOUBLE, &xs3[0][1], 3},
                            {"x.3", DRIFT_COLUMN_DOUBLE, &xs3[0][2], 3}};
    drift_column pieces[] = {{"x.1", DRIFT_COLUMN_DOUBLE, &xs3[0][0], 3},
                             {"y", DRIFT_COLUMN_INT, y, 0},
                             {"x.2", DRIFT_COLUMN_DOUBLE, &xs3[0][1], 3},
                             {"x.3", DRIFT_COLUMN_DOUBLE, &xs3[0][2], 3}};
    record a, b, c, m, q;
    run_recorded(flat, &a, NULL);
    run_recorded(strided, &b, NULL);
    memset(rw, 0, sizeof rw);
    run_recorded(borrowed, &c, fill_rows);
    memset(xs3, 0, sizeof xs3);
    run_recorded(mixed, &m, fill_xs3);
    run_recorded(pieces, &q, NULL);
    assert_int_equal(b.n, a.n);
    assert_int_equal(c.n, a.n);
    assert_int_equal(m.n, a.n);
    assert_int_equal(q.n, a.n);
    if (memcmp(a.v, b.v, a.n * sizeof *a.v))
        fail_msg("strided columns gave other draws than contiguous ones");
    if (memcmp(a.v, c.v, a.n * sizeof *a.v))
        fail_msg("the borrowed array gave other draws than contiguous "
                 "columns (was it copied when the plan was made?)");
    if (memcmp(a.v, m.v, a.n * sizeof *a.v))
        fail_msg("x's borrowed array beside y's ints gave other draws "
                 "than contiguous columns (was it copied?)");
    if (memcmp(a.v, q.v, a.n * sizeof *a.v))
        fail_msg("a variable given in pieces gave other draws");
    free(a.v);
    free(b.v);
    free(c.v);
    free(m.v);
    free(q.v);
}

/* The lines the message callback received, by kind. */
typedef struct lines {
    char text[64][512];
    int kind[64];
    size_t n;
} lines;

static void on_message(void *user, int kind, const char *line)
{
    lines *l = user;
    assert_null(strchr(line, '\n'));
    if (l->n < 64) {
        snprintf(l->text[l->n], sizeof l->text[l->n], "%s", line);
        l->kind[l->n++] = kind;
    }
}

static long find_line(const lines *l, int kind, const char *needle)
{
    for (size_t k = 0; k < l->n; k++)
        if (l->kind[k] == kind && strstr(l->text[k], needle))
            return (long)k;
    return -1;
}

/* Runs the model with stderr sent to a file (read back into err), with
 * a plugin directory first on the path whose nuts.so is not a plugin (a
 * warning as the plan is made), and messages to l when l is given. */
static void run_messages(lines *l, char *err, size_t cap)
{
    char dir[] = "/tmp/drift-plan-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char bogus[64], errpath[64], path[8192];
    snprintf(bogus, sizeof bogus, "%s/nuts.so", dir);
    snprintf(errpath, sizeof errpath, "%s/stderr", dir);
    FILE *f = fopen(bogus, "w");
    assert_non_null(f);
    fputs("not a plugin\n", f);
    fclose(f);
    /* the directories searched first: DRIFT_PLUGIN_DIR's under test */
    const char *var = getenv("DRIFT_PLUGIN_DIR") ? "DRIFT_PLUGIN_DIR"
                                                 : "DRIFT_PLUGIN_PATH";
    const char *was = getenv(var);
    char *saved = was ? strdup(was) : NULL;
    snprintf(path, sizeof path, "%s%s%s", dir, was ? ":" : "",
             was ? was : "");
    setenv(var, path, 1);
    const drift_column *cols = logistic_cols;
    drift_option opts[] = {{"chains", "2"}, {"seed", "5"},
                           {"warmup", "100"}, {"iter", "100"}};
    drift_spec spec = {.model = model_path, .columns = cols, .n_columns = 4,
                       .n_rows = N, .options = opts, .n_options = 4,
                       .on_draw = count_row,
                       .on_message = l ? on_message : NULL,
                       .on_message_user = l};
    fflush(stderr);
    int saved_fd = dup(STDERR_FILENO);
    FILE *ef = fopen(errpath, "w+");
    assert_non_null(ef);
    dup2(fileno(ef), STDERR_FILENO);
    drift_plan *p;
    drift_err e = {{0}};
    int rc = drift_plan_new(&spec, &p, &e);
    if (!rc) {
        rc = drift_plan_run(p, DRIFT_LAUNCH_IN_PROCESS, &e);
        drift_plan_free(p);
    }
    fflush(stderr);
    dup2(saved_fd, STDERR_FILENO);
    close(saved_fd);
    if (rc)
        fail_msg("the run: %s", e.msg);
    rewind(ef);
    size_t got = fread(err, 1, cap - 1, ef);
    err[got] = '\0';
    fclose(ef);
    if (saved)
        setenv(var, saved, 1);
    else
        unsetenv(var);
    free(saved);
    unlink(bogus);
    unlink(errpath);
    rmdir(dir);
}

/* Without a message callback the warning and the progress lines go to
 * stderr; with one, each reaches it as a line of its kind, and stderr
 * stays empty. */
static void test_messages(void **state)
{
    (void)state;
    make_data();
    static char err[1 << 16];
    run_messages(NULL, err, sizeof err);
    assert_non_null(strstr(err, "drift: warning: "));
    assert_non_null(strstr(err, "nuts.so: cannot load plugin"));
    assert_non_null(strstr(err, "Chain 2 Iteration: 200 / 200 [100%]"));
    static lines l;
    memset(&l, 0, sizeof l);
    run_messages(&l, err, sizeof err);
    if (err[0])
        fail_msg("stderr with a message callback: '%s'", err);
    assert_true(find_line(&l, DRIFT_MESSAGE_WARNING,
                          "nuts.so: cannot load plugin") >= 0);
    long w = find_line(&l, DRIFT_MESSAGE_WARNING, "nuts.so");
    assert_int_equal(strncmp(l.text[w], "drift: warning: ", 16), 0);
    assert_true(find_line(&l, DRIFT_MESSAGE_PROGRESS,
                          "Chain 1 Iteration: 200 / 200 [100%]") >= 0);
    assert_true(find_line(&l, DRIFT_MESSAGE_PROGRESS,
                          "Chain 2 Iteration: 200 / 200 [100%]") >= 0);
}

/* A run in process that writes files gets drift sample's checks of them
 * after it, as warning lines to the message callback: 2 chains of 30
 * draws cannot reach 100 effective draws a chain, so the ESS warning must
 * come, after the last progress line. */
static void test_checks_after_run(void **state)
{
    (void)state;
    make_data();
    char dir[] = "/tmp/drift-plan-XXXXXX", out[64], f1[80], f2[80];
    assert_non_null(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/d.csv", dir);
    const drift_column *cols = logistic_cols;
    drift_option opts[] = {{"chains", "2"}, {"seed", "4"}, {"warmup", "30"},
                           {"iter", "30"}, {"out", out}};
    static lines l;
    memset(&l, 0, sizeof l);
    drift_spec spec = {.model = model_path, .columns = cols, .n_columns = 4,
                       .n_rows = N, .options = opts, .n_options = 5,
                       .on_message = on_message, .on_message_user = &l};
    drift_plan *p;
    drift_err e = {{0}};
    if (drift_plan_new(&spec, &p, &e) ||
        drift_plan_run(p, DRIFT_LAUNCH_IN_PROCESS, &e))
        fail_msg("the run: %s", e.msg);
    drift_plan_free(p);
    long w = find_line(&l, DRIFT_MESSAGE_WARNING, "ESS below 100 per chain");
    if (w < 0)
        fail_msg("no ESS warning among %zu lines", l.n);
    assert_true(w > find_line(&l, DRIFT_MESSAGE_PROGRESS,
                              "Chain 2 Iteration: 60 / 60 [100%]"));
    snprintf(f1, sizeof f1, "%s/d_1.csv", dir);
    snprintf(f2, sizeof f2, "%s/d_2.csv", dir);
    unlink(f1);
    unlink(f2);
    rmdir(dir);
}

/* With save-warmup the warmup rows come first, flagged DRIFT_DRAW_WARMUP,
 * and the draws after them unflagged.  A stop asked before the run (as
 * for an earlier one) does not end it. */
static void test_warmup_flags(void **state)
{
    (void)state;
    make_data();
    const drift_column *cols = logistic_cols;
    drift_option opts[] = {{"chains", "1"}, {"seed", "2"}, {"quiet", NULL},
                           {"warmup", "60"}, {"iter", "40"},
                           {"save-warmup", NULL}};
    record r;
    memset(&r, 0, sizeof r);
    drift_spec spec = {.model = model_path, .columns = cols, .n_columns = 4,
                       .n_rows = N, .options = opts, .n_options = 6,
                       .on_draw = record_row, .on_draw_user = &r};
    drift_plan *p;
    drift_err e = {{0}};
    drift_request_stop();
    if (drift_plan_new(&spec, &p, &e) ||
        drift_plan_run(p, DRIFT_LAUNCH_IN_PROCESS, &e))
        fail_msg("the run: %s", e.msg);
    drift_plan_free(p);
    assert_int_equal(r.n, 100 * r.width);
    assert_int_equal(r.warmup, 60);
    assert_false(r.warmup_after_draw);
    free(r.v);
}

int main(void)
{
    const char *srcdir = getenv("srcdir");
    snprintf(model_path, sizeof model_path,
             "%s/examples/logistic/logistic.drift", srcdir ? srcdir : ".");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_columns_in_memory),
        cmocka_unit_test(test_csv_and_callback),
        cmocka_unit_test(test_guarded),
        cmocka_unit_test(test_bad_specs),
        cmocka_unit_test(test_methods),
        cmocka_unit_test(test_generate_plan),
        cmocka_unit_test(test_no_parameters),
        cmocka_unit_test(test_strided_columns),
        cmocka_unit_test(test_messages),
        cmocka_unit_test(test_checks_after_run),
        cmocka_unit_test(test_warmup_flags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
