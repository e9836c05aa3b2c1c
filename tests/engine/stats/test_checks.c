/* test_checks.c: the warnings after a run (engine/stats/checks.c) on small
 * Stan CSV files written here, each with one known problem: divergences in
 * one chain, tree depth saturation, a random-walk energy (E-BFMI far below
 * 0.3), acceptance far below its target, a chain that never moved, chains
 * that disagree (R-hat), short, sticky chains (ESS) and a continuous-time
 * sampler's grid too coarse for its trajectory, and none of these on clean
 * independent draws. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/stats/checks.h"
#include "harness.h"

/* A small deterministic normal stream (xorshift + Box-Muller). */
static uint64_t rs = 88172645463325252ull;
static double unif(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return ((double)(rs >> 11) + 0.5) / 9007199254740992.0;
}
static double gauss(void)
{
    return sqrt(-2 * log(unif())) * cos(2 * M_PI * unif());
}

/* What to put in a chain's file. */
typedef struct spec {
    size_t n;
    double x_shift;     /* added to x */
    double x_trend;     /* added to x in proportion to the draw's index:
                           the first and second halves differ */
    double x_ar;        /* AR(1) coefficient of x (0: independent) */
    int frozen;         /* x and lp__ constant */
    size_t divergent;   /* this many draws divergent__ = 1 */
    size_t saturated;   /* this many at treedepth__ = 10 */
    int energy_walk;    /* energy__ a random walk */
    double accept;      /* mean of accept_stat__ */
    double thin_time;   /* > 0: a continuous-time sampler's file, draws
                           every thin_time along a trajectory of length
                           traj_time (in the footer) */
    double traj_time;
} spec;

static char *write_chain(unsigned id, const spec *s)
{
    size_t cap = 200 + s->n * 120;
    char *t = malloc(cap), *p = t, thin[64] = "";
    assert_non_null(t);
    if (s->thin_time > 0)
        snprintf(thin, sizeof thin, "# thin_time = %g\n", s->thin_time);
    p += sprintf(p, "# sampler = nuts\n#   delta = 0.8\n#   max_depth = 10\n"
                    "# chain_id = %u\n# warmup = 1000\n"
                    "%s"
                    "lp__,accept_stat__,treedepth__,divergent__,energy__,x\n",
                 id, thin);
    double x = 0, e = 10;
    for (size_t i = 0; i < s->n; i++) {
        double z = gauss();
        x = s->frozen ? 0.5 : s->x_ar * x + sqrt(1 - s->x_ar * s->x_ar) * z;
        e = s->energy_walk ? e + 0.05 * gauss() : 10 + gauss();
        double a = fmin(1, fmax(0, s->accept + 0.1 * gauss()));
        p += sprintf(p, "%.6f,%.4f,%d,%d,%.6f,%.6f\n",
                     s->frozen ? -1.0 : -0.5 * x * x, a,
                     i < s->saturated ? 10 : 3, i < s->divergent, e,
                     x + s->x_shift + s->x_trend * (double)i / (double)s->n);
    }
    if (s->thin_time > 0)
        p += sprintf(p, "# trajectory_time = %g\n", s->traj_time);
    char *path = th_write_text(t, ".csv");
    free(t);
    return path;
}

/* Runs the checks on K chains made from specs; returns every line joined
 * by newlines (caller frees). */
static char *check(const spec *specs, unsigned K)
{
    drift_stancsv *f[8];
    const drift_stancsv *cf[8];
    size_t n = SIZE_MAX;
    drift_err e = {{0}};
    for (unsigned k = 0; k < K; k++) {
        char *path = write_chain(k + 1, &specs[k]);
        if (drift_stancsv_read(path, &f[k], &e))
            fail_msg("%s", e.msg);
        unlink(path);
        free(path);
        cf[k] = f[k];
        size_t kept = f[k]->n_rows - f[k]->n_warmup;
        if (kept < n)
            n = kept;
    }
    drift_checks c;
    assert_int_equal(drift_checks_run(cf, K, n, NULL, &c, &e), DRIFT_OK);
    size_t len = 1;
    for (size_t k = 0; k < c.n; k++)
        len += strlen(c.lines[k]) + 1;
    char *all = calloc(len, 1);
    assert_non_null(all);
    for (size_t k = 0; k < c.n; k++) {
        strcat(all, c.lines[k]);
        strcat(all, "\n");
    }
    drift_checks_free(&c);
    for (unsigned k = 0; k < K; k++)
        drift_stancsv_free(f[k]);
    return all;
}

static void expect(const char *all, const char *needle)
{
    if (!strstr(all, needle))
        fail_msg("no '%s' in the warnings:\n%s", needle, all);
}

static spec clean(void)
{
    return (spec){.n = 1000, .accept = 0.8};
}

static void test_clean(void **state)
{
    (void)state;
    spec s[4] = {clean(), clean(), clean(), clean()};
    char *all = check(s, 4);
    if (*all)
        fail_msg("clean chains got warnings:\n%s", all);
    free(all);
}

static void test_divergences(void **state)
{
    (void)state;
    spec s[2] = {clean(), clean()};
    s[1].divergent = 3;
    char *all = check(s, 2);
    expect(all, "3 of 2000 transitions (0.15%) ended with a divergence "
                "(chain 2: 3)");
    expect(all, "delta=0.95");
    free(all);
}

static void test_tree_depth(void **state)
{
    (void)state;
    spec s[2] = {clean(), clean()};
    s[0].saturated = 20;
    s[1].saturated = 5;
    char *all = check(s, 2);
    expect(all, "25 of 2000 transitions (1.25%) hit the maximum tree depth "
                "10 (chain 1: 20, chain 2: 5)");
    free(all);
}

static void test_ebfmi(void **state)
{
    (void)state;
    /* 0,1,0,1: mean squared step 1, variance 1/3. */
    double x[4] = {0, 1, 0, 1};
    assert_true(fabs(drift_checks_ebfmi(x, 4) - 3) < 1e-12);
    assert_true(isnan(drift_checks_ebfmi(x, 1)));
    spec s[2] = {clean(), clean()};
    s[1].energy_walk = 1;
    char *all = check(s, 2);
    expect(all, "chain 2: E-BFMI");
    assert_null(strstr(all, "chain 1: E-BFMI"));
    free(all);
}

static void test_acceptance(void **state)
{
    (void)state;
    spec s[2] = {clean(), clean()};
    s[0].accept = 0.4;
    /* Far above the target is no warning: Stan's own chains end there on
     * some posteriors (0.93 on posteriordb's arK at delta 0.8). */
    s[1].accept = 1.05; /* a mean near 0.99 */
    char *all = check(s, 2);
    expect(all, "chain 1: mean acceptance 0.3");
    expect(all, "below its target 0.8");
    assert_null(strstr(all, "chain 2: mean acceptance"));
    free(all);
}

static void test_frozen_and_rhat(void **state)
{
    (void)state;
    spec s[3] = {clean(), clean(), clean()};
    s[2].frozen = 1;
    char *all = check(s, 3);
    expect(all, "chain 3 never moved: all its 1000 draws");
    free(all);
    s[2] = clean();
    s[2].x_shift = 1;
    all = check(s, 3);
    expect(all, "R-hat above 1.01 for 1 of 2 quantities (x; worst");
    free(all);
}

/* One chain: split R-hat compares its halves, and the warning says so
 * instead of speaking of chains that disagree. */
/* A continuous-time sampler's --thin grid too coarse for its trajectory:
 * a handful of draws, and the warning says which --thin gives about 1000;
 * a grid fine enough for 1000 draws gets none. */
static void test_coarse_grid(void **state)
{
    (void)state;
    spec s[2] = {clean(), clean()};
    for (int k = 0; k < 2; k++) {
        s[k].n = 3;
        s[k].thin_time = 1;
        s[k].traj_time = 3.5;
    }
    char *all = check(s, 2);
    expect(all, "chain 1: 3 draws kept on the grid");
    expect(all, "give --thin 0.0035 for about 1000 draws");
    free(all);
    for (int k = 0; k < 2; k++) {
        s[k] = clean();
        s[k].thin_time = 0.001;
        s[k].traj_time = 1.0;
    }
    all = check(s, 2);
    if (strstr(all, "on the grid"))
        fail_msg("1000 draws on a fine grid got the warning:\n%s", all);
    free(all);
}

static void test_rhat_one_chain(void **state)
{
    (void)state;
    spec s[1] = {clean()};
    s[0].x_trend = 2;
    char *all = check(s, 1);
    expect(all, "R-hat above 1.01 for 1 of 2 quantities (x; worst");
    expect(all, "the chain's two halves disagree");
    assert_null(strstr(all, "the chains disagree"));
    free(all);
}

static void test_low_ess(void **state)
{
    (void)state;
    spec s[2] = {clean(), clean()};
    for (int k = 0; k < 2; k++) {
        s[k].n = 300;
        s[k].x_ar = 0.95;
    }
    char *all = check(s, 2);
    expect(all, "bulk or tail ESS below 100 per chain for");
    expect(all, "(x");
    free(all);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clean),
        cmocka_unit_test(test_divergences),
        cmocka_unit_test(test_tree_depth),
        cmocka_unit_test(test_ebfmi),
        cmocka_unit_test(test_acceptance),
        cmocka_unit_test(test_frozen_and_rhat),
        cmocka_unit_test(test_low_ess),
        cmocka_unit_test(test_coarse_grid),
        /* last: the other cases' draws come from one fixed stream */
        cmocka_unit_test(test_rhat_one_chain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
