/* test_plugin.c: the loader's refusals and rules.  Each refusal plugin
 * aborts if any of its sampler functions is ever called, so passing these
 * tests also shows a refused plugin is never called. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/run/problem.h"
#include "harness.h"

static const char *test_dir(void)
{
    const char *d = getenv("DRIFT_TEST_PLUGIN_DIR");
    if (!d)
        fail_msg("DRIFT_TEST_PLUGIN_DIR is not set: run with make check");
    return d;
}

static void expect_refused(const char *file, const char *n1, const char *n2)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", test_dir(), file);
    drift_registry *r = drift_registry_new();
    drift_err e = {{0}};
    assert_int_not_equal(drift_registry_load(r, path, &e), DRIFT_OK);
    print_message("%s\n", e.msg);
    assert_non_null(strstr(e.msg, path));
    if (n1 && !strstr(e.msg, n1))
        fail_msg("'%s' lacks '%s'", e.msg, n1);
    if (n2 && !strstr(e.msg, n2))
        fail_msg("'%s' lacks '%s'", e.msg, n2);
    assert_int_equal(drift_registry_n_samplers(r), 0);
    drift_registry_free(r);
}

static void test_future_abi(void **state)
{
    (void)state;
    char want[64];
    snprintf(want, sizeof want, "loads version %u",
             DRIFT_SAMPLER_ABI_VERSION);
    expect_refused("badabi.so", "ABI version 999", want);
}

/* A plugin that needs services this engine lacks is refused at load, not
 * left to call past the end of the table. */
static void test_newer_services(void **state)
{
    (void)state;
    char want[96];
    snprintf(want, sizeof want,
             "needs drift's services version %u, but this drift offers "
             "version %u",
             DRIFT_SERVICES_VERSION + 1, DRIFT_SERVICES_VERSION);
    expect_refused("newsvc.so", want, "upgrade drift");
}

/* Counts that lie about their tables are refused, not read past: absurd
 * ones by their bound, the crasher's (50 for a table of 1) by the probes
 * and checks of what lies past the table. */
static void test_table_counts(void **state)
{
    (void)state;
    expect_refused("bigcount.so", "n_hparams = 1099511627776",
                   "more than the 256 allowed");
    expect_refused("manysamplers.so", "n_samplers = 1000000",
                   "more than the 64 allowed");
    expect_refused("shorttable.so", "refused", "shorttable");
}

static void test_previous_abi(void **state)
{
    (void)state;
    char want[64];
    snprintf(want, sizeof want, "ABI version %u,",
             DRIFT_SAMPLER_ABI_VERSION - 1);
    expect_refused("prevabi.so", want, "rebuild it against this drift's");
}

static void test_no_symbol(void **state)
{
    (void)state;
    expect_refused("nosym.so", "not a drift plugin", "drift_sampler_entry");
}

static void test_dlopen_failure(void **state)
{
    (void)state;
    /* dlerror()'s text names the missing symbol. */
    expect_refused("unresolved.so", "cannot load plugin",
                   "drift_test_missing_function");
    /* A file that is not a shared object at all. */
    char *junk = th_write_text("not an ELF file\n", ".so");
    drift_registry *r = drift_registry_new();
    drift_err e;
    assert_int_not_equal(drift_registry_load(r, junk, &e), 0);
    assert_non_null(strstr(e.msg, "cannot load plugin"));
    assert_non_null(strstr(e.msg, junk));
    drift_registry_free(r);
    unlink(junk);
    free(junk);
}

static void test_malformed_tables(void **state)
{
    (void)state;
    expect_refused("dupparam.so", "'h' is declared twice", NULL);
    expect_refused("baddefault.so", "default 5 outside its bounds [0, 1]",
                   NULL);
    expect_refused("badcolumn.so", "'accept' must end in", NULL);
}

/* The stability policy: appending descriptor fields keeps the version, so
 * a plugin built with later headers of this version loads (read at the
 * entry size it declares, its unknown fields ignored), and one declaring
 * less than version 1 defined is refused before its entries are read. */
static void test_descriptor_sizes(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s/newer.so", test_dir());
    drift_registry *r = drift_registry_new();
    drift_err e = {{0}};
    if (drift_registry_load(r, path, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(drift_registry_n_samplers(r), 2);
    const drift_sampler_entry *s = drift_registry_sampler_at(r, 1);
    assert_string_equal(s->s.name, "newer-second");
    assert_string_equal(s->s.summary, "second of two");
    assert_int_equal(s->s.n_hparams, 2);
    assert_string_equal(s->s.hparams[1].name, "mode");
    assert_null(s->s.finish);
    drift_registry_free(r);
    expect_refused("shortdesc.so", "its drift_sampler is 16 bytes",
                   "expected at least");
}

/* Models: one built against the headers before glm_design_sum was
 * appended reports the smaller struct and loads, its unknown tail read as
 * absent whatever the bytes hold; a struct smaller still is refused. */
static void *fake_ws(const void *self, size_t n)
{
    (void)self, (void)n;
    return NULL;
}
static void fake_ws_free(const void *self, void *ws)
{
    (void)self, (void)ws;
}
static int fake_prior(const void *self, void *ws, const double *t, double *lp,
                      double *g, drift_err *e)
{
    (void)self, (void)ws, (void)t, (void)lp, (void)g, (void)e;
    return 0;
}
static int fake_lik(const void *self, void *ws, const double *t,
                    const drift_rows *b, double *a, double *s, double *g,
                    double *G, drift_err *e)
{
    (void)self, (void)ws, (void)t, (void)b, (void)a, (void)s, (void)g,
        (void)G, (void)e;
    return 0;
}
static void fake_constrain(const void *self, const double *t, double *o)
{
    (void)self, (void)t, (void)o;
}
static int fake_unconstrain(const void *self, const double *o, double *t,
                            drift_err *e)
{
    (void)self, (void)o, (void)t, (void)e;
    return 0;
}

static void test_model_struct_sizes(void **state)
{
    (void)state;
    drift_model m;
    memset(&m, 0xA5, sizeof m); /* the tail an old model never wrote */
    m.abi_version = DRIFT_MODEL_ABI_VERSION;
    m.struct_size = (uint32_t)DRIFT_MODEL_MIN_SIZE;
    m.dim = 1, m.n_rows = 0, m.n_out = 0, m.out_names = NULL, m.flags = 0;
    m.workspace_new = fake_ws, m.workspace_free = fake_ws_free;
    m.log_prior = fake_prior, m.log_lik = fake_lik, m.jvp = NULL;
    m.glm_scalars = NULL, m.glm_design = NULL;
    m.constrain = fake_constrain, m.unconstrain = fake_unconstrain;
    m.outcome = 0, m.predict = NULL, m.theta_names = NULL, m.n_gen = 0;
    drift_err e = {{0}};
    assert_int_equal(drift_model_check(&m, "old model", &e), DRIFT_OK);
    assert_null(m.glm_design_sum);
    m.struct_size = (uint32_t)DRIFT_MODEL_MIN_SIZE - 8;
    assert_int_equal(drift_model_check(&m, "short model", &e), DRIFT_EPLUGIN);
    print_message("%s\n", e.msg);
    assert_non_null(strstr(e.msg, "short model: the model struct is"));
}

static void test_install_dir(void **state)
{
    (void)state;
    /* A test program runs from the build tree, not from an install: the
     * install directory is the configured one. */
    char dir[4096];
    drift_registry_install_dir(dir, sizeof dir);
    assert_string_equal(dir, DRIFT_PLUGINDIR);
}

static void test_missing_file(void **state)
{
    (void)state;
    drift_registry *r = drift_registry_new();
    drift_err e;
    assert_int_not_equal(drift_registry_load(r, "/nonexistent/x.so", &e), 0);
    assert_non_null(strstr(e.msg, "/nonexistent/x.so"));
    drift_registry_free(r);
}

static void test_unknown_name_suggests(void **state)
{
    (void)state;
    drift_registry *r = th_registry();
    const drift_sampler_entry *s;
    drift_err e;
    assert_int_not_equal(drift_registry_sampler(r, "sgdl", &s, &e), 0);
    assert_non_null(strstr(e.msg, "unknown sampler 'sgdl'"));
    assert_non_null(strstr(e.msg, "did you mean 'sgld'?"));
    assert_non_null(strstr(e.msg, "Installed samplers: "));
    assert_int_equal(drift_registry_sampler(r, "sgld", &s, &e), 0);
    assert_string_equal(s->s.name, "sgld");
    drift_registry_free(r);
}

static void test_shadowing(void **state)
{
    (void)state;
    /* The install directory (DRIFT_PLUGIN_DIR in tests) comes first. */
    char shadow[4096];
    snprintf(shadow, sizeof shadow, "%s/../shadow/.libs", test_dir());
    const char *old = getenv("DRIFT_PLUGIN_PATH");
    char *saved = old ? strdup(old) : NULL;
    setenv("DRIFT_PLUGIN_PATH", shadow, 1);
    drift_registry *r = drift_registry_new();
    drift_err e;
    assert_int_equal(drift_registry_scan(r, &e), 0);
    const drift_sampler_entry *s;
    assert_int_equal(drift_registry_sampler(r, "sgld", &s, &e), 0);
    assert_null(strstr(s->path, "shadow"));
    int warned = 0;
    for (size_t k = 0; k < drift_registry_n_problems(r); k++) {
        const char *p = drift_registry_problem(r, k);
        if (strstr(p, "sampler 'sgld'") && strstr(p, "sgld_shadow.so") &&
            strstr(p, s->path) && strstr(p, "shadowed"))
            warned = 1;
    }
    assert_true(warned);
    drift_registry_free(r);
    if (saved) {
        setenv("DRIFT_PLUGIN_PATH", saved, 1);
        free(saved);
    } else {
        unsetenv("DRIFT_PLUGIN_PATH");
    }
}

/* An explicit path means that file even when the search path found a
 * sampler of the same name first; asking for the same path again gives
 * the same entry. */
static void test_explicit_path_wins(void **state)
{
    (void)state;
    char shadow[4096];
    snprintf(shadow, sizeof shadow, "%s/../shadow/.libs/sgld_shadow.so",
             test_dir());
    drift_registry *r = th_registry();
    drift_err e = {{0}};
    const drift_sampler_entry *byname, *bypath, *again, *named;
    assert_int_equal(drift_registry_sampler(r, "sgld", &byname, &e), 0);
    if (drift_registry_sampler(r, shadow, &bypath, &e))
        fail_msg("%s", e.msg);
    assert_string_equal(bypath->s.name, "sgld");
    assert_string_equal(bypath->path, shadow);
    /* Names still resolve to the first found. */
    assert_int_equal(drift_registry_sampler(r, "sgld", &byname, &e), 0);
    assert_null(strstr(byname->path, "shadow"));
    assert_int_equal(drift_registry_sampler(r, shadow, &again, &e), 0);
    assert_ptr_equal(again, bypath);
    char spec[4200];
    snprintf(spec, sizeof spec, "%s:sgld", shadow);
    assert_int_equal(drift_registry_sampler(r, spec, &named, &e), 0);
    assert_ptr_equal(named, bypath);
    snprintf(spec, sizeof spec, "%s:other", shadow);
    assert_int_not_equal(drift_registry_sampler(r, spec, &named, &e), 0);
    assert_non_null(strstr(e.msg, "offers no sampler 'other'"));
    drift_registry_free(r);

    /* The same when a scan opened the file and left its sampler out as
     * shadowed (what drift sample does: scan, then resolve --sampler). */
    const char *old = getenv("DRIFT_PLUGIN_PATH");
    char *saved = old ? strdup(old) : NULL;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/../shadow/.libs", test_dir());
    setenv("DRIFT_PLUGIN_PATH", dir, 1);
    r = drift_registry_new();
    assert_int_equal(drift_registry_scan(r, &e), 0);
    assert_true(drift_registry_n_problems(r) >= 1);
    size_t n = drift_registry_n_samplers(r);
    char path2[4200];
    snprintf(path2, sizeof path2, "%s/sgld_shadow.so", dir);
    if (drift_registry_sampler(r, path2, &bypath, &e))
        fail_msg("%s", e.msg);
    assert_string_equal(bypath->path, path2);
    assert_int_equal(drift_registry_n_samplers(r), n + 1);
    assert_int_equal(drift_registry_sampler(r, path2, &again, &e), 0);
    assert_ptr_equal(again, bypath);
    assert_int_equal(drift_registry_n_samplers(r), n + 1);
    drift_registry_free(r);
    if (saved) {
        setenv("DRIFT_PLUGIN_PATH", saved, 1);
        free(saved);
    } else {
        unsetenv("DRIFT_PLUGIN_PATH");
    }
}

static void test_scan_keeps_good_plugins(void **state)
{
    (void)state;
    /* A directory mixing good and bad plugins: the bad are problems, the
     * good load. */
    const char *old = getenv("DRIFT_PLUGIN_PATH");
    char *saved = old ? strdup(old) : NULL;
    setenv("DRIFT_PLUGIN_PATH", test_dir(), 1);
    drift_registry *r = drift_registry_new();
    drift_err e;
    assert_int_equal(drift_registry_scan(r, &e), 0);
    const drift_model_entry *m;
    assert_int_equal(drift_registry_model(r, "gauss", &m, &e), 0);
    size_t refusals = 0;
    for (size_t k = 0; k < drift_registry_n_problems(r); k++)
        refusals += strstr(drift_registry_problem(r, k), "refused") != NULL;
    assert_true(refusals >= 5);
    drift_registry_free(r);
    if (saved) {
        setenv("DRIFT_PLUGIN_PATH", saved, 1);
        free(saved);
    } else {
        unsetenv("DRIFT_PLUGIN_PATH");
    }
}

/* Sets DRIFT_PLUGIN_PATH to dirs, scans, and returns the registry. */
static drift_registry *scan_with(const char *dirs)
{
    setenv("DRIFT_PLUGIN_PATH", dirs, 1);
    drift_registry *r = drift_registry_new();
    drift_err e;
    assert_int_equal(drift_registry_scan(r, &e), 0);
    return r;
}

/* 1 when some problem of r contains both a and b. */
static int has_problem(const drift_registry *r, const char *a, const char *b)
{
    for (size_t k = 0; k < drift_registry_n_problems(r); k++) {
        const char *p = drift_registry_problem(r, k);
        print_message("problem: %s\n", p);
        if (strstr(p, a) && (!b || strstr(p, b)))
            return 1;
    }
    return 0;
}

/* Copies the test plugin gauss.so to path with the given mode. */
static void copy_gauss(const char *path, mode_t mode)
{
    char src[4096];
    snprintf(src, sizeof src, "%s/gauss.so", test_dir());
    FILE *in = fopen(src, "rb"), *out = fopen(path, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
    assert_int_equal(chmod(path, mode), 0);
}

/* Only regular files are opened: a FIFO (which would block dlopen), a
 * directory and a dangling link named *.so are skipped by name, and a
 * world-writable file or directory is refused; the good plugin beside
 * them loads. */
static void test_unsafe_files(void **state)
{
    (void)state;
    char dir[] = "/tmp/drift-loader-XXXXXX", wdir[] = "/tmp/drift-ww-XXXXXX";
    assert_non_null(mkdtemp(dir));
    assert_non_null(mkdtemp(wdir));
    char p[6][4200];
    snprintf(p[0], sizeof p[0], "%s/x.so", dir);
    snprintf(p[1], sizeof p[1], "%s/d.so", dir);
    snprintf(p[2], sizeof p[2], "%s/dangling.so", dir);
    snprintf(p[3], sizeof p[3], "%s/ww.so", dir);
    snprintf(p[4], sizeof p[4], "%s/good.so", dir);
    snprintf(p[5], sizeof p[5], "%s/inww.so", wdir);
    assert_int_equal(mkfifo(p[0], 0644), 0);
    assert_int_equal(mkdir(p[1], 0755), 0);
    assert_int_equal(symlink("/nonexistent/drift.so", p[2]), 0);
    copy_gauss(p[3], 0666);
    copy_gauss(p[4], 0644);
    copy_gauss(p[5], 0644);
    assert_int_equal(chmod(wdir, 0777), 0);

    char *old = getenv("DRIFT_PLUGIN_PATH") ? strdup(getenv("DRIFT_PLUGIN_PATH"))
                                            : NULL;
    char dirs[8400];
    snprintf(dirs, sizeof dirs, "%s:%s", dir, wdir);
    drift_registry *r = scan_with(dirs);
    assert_true(has_problem(r, p[0], "a FIFO, not a regular file"));
    assert_true(has_problem(r, p[1], "a directory, not a regular file"));
    assert_true(has_problem(r, p[2], "dangling symbolic link"));
    assert_true(has_problem(r, p[3], "file is writable by others"));
    assert_true(has_problem(r, p[5], "directory"));
    assert_true(has_problem(r, p[5], "writable by others"));
    size_t gauss = 0;
    for (size_t k = 0; k < drift_registry_n_models(r); k++)
        if (strstr(drift_registry_model_at(r, k)->path, dir))
            gauss++;
    assert_int_equal(gauss, 1); /* good.so alone */
    drift_registry_free(r);

    /* An explicit path gets the same checks, as errors. */
    r = drift_registry_new();
    drift_err e;
    const drift_model_entry *m;
    assert_int_not_equal(drift_registry_model(r, p[0], &m, &e), 0);
    assert_non_null(strstr(e.msg, "FIFO"));
    assert_int_not_equal(drift_registry_model(r, p[3], &m, &e), 0);
    assert_non_null(strstr(e.msg, "writable by others"));
    assert_int_equal(drift_registry_model(r, p[4], &m, &e), 0);
    drift_registry_free(r);

    if (old) {
        setenv("DRIFT_PLUGIN_PATH", old, 1);
        free(old);
    } else {
        unsetenv("DRIFT_PLUGIN_PATH");
    }
    for (int k = 0; k < 6; k++)
        k == 1 ? rmdir(p[k]) : unlink(p[k]);
    rmdir(dir);
    rmdir(wdir);
}

/* A relative entry of DRIFT_PLUGIN_PATH is refused, not resolved against
 * the working directory. */
static void test_relative_path(void **state)
{
    (void)state;
    char *old = getenv("DRIFT_PLUGIN_PATH") ? strdup(getenv("DRIFT_PLUGIN_PATH"))
                                            : NULL;
    drift_registry *r = scan_with("tests/plugins/.libs");
    assert_true(has_problem(r, "tests/plugins/.libs", "relative entry"));
    const drift_model_entry *m;
    drift_err e;
    assert_int_not_equal(drift_registry_model(r, "gauss", &m, &e), 0);
    drift_registry_free(r);
    if (old) {
        setenv("DRIFT_PLUGIN_PATH", old, 1);
        free(old);
    } else {
        unsetenv("DRIFT_PLUGIN_PATH");
    }
}

/* A plugin whose entry point crashes and one that hangs: a scan inspects
 * each in a child process, names them, and still lists the others; a
 * named lookup opens NAME.so alone and never touches them; a name that
 * needs a scan (agld.so's svrg-ld) finds its file all the same. */
static void test_broken_plugins(void **state)
{
    (void)state;
    char broken[4096];
    snprintf(broken, sizeof broken, "%s/../broken/.libs", test_dir());
    char *old = getenv("DRIFT_PLUGIN_PATH") ? strdup(getenv("DRIFT_PLUGIN_PATH"))
                                            : NULL;
    setenv("DRIFT_PLUGIN_TIMEOUT", "1", 1);
    drift_registry *r = scan_with(broken);
    assert_true(has_problem(r, "crashentry.so", "crashed with signal"));
    assert_true(has_problem(r, "hangentry.so", "still loading after 1 s"));
    const drift_sampler_entry *s;
    drift_err e;
    assert_int_equal(drift_registry_sampler(r, "sgld", &s, &e), 0);
    drift_registry_free(r);

    /* Named: sgld.so is opened, nothing else (opening crashentry.so in
     * this process would kill the test). */
    r = drift_registry_new();
    if (drift_registry_sampler(r, "sgld", &s, &e))
        fail_msg("%s", e.msg);
    assert_non_null(strstr(s->path, "sgld.so"));
    assert_int_equal(drift_registry_n_problems(r), 0);
    assert_int_equal(drift_registry_n_samplers(r), 1);
    drift_registry_free(r);

    /* An alias: no svrg-ld.so, so a safe scan finds it in agld.so. */
    r = drift_registry_new();
    if (drift_registry_sampler(r, "svrg-ld", &s, &e))
        fail_msg("%s", e.msg);
    assert_non_null(strstr(s->path, "agld.so"));
    assert_true(has_problem(r, "crashentry.so", "crashed"));
    drift_registry_free(r);

    unsetenv("DRIFT_PLUGIN_TIMEOUT");
    if (old) {
        setenv("DRIFT_PLUGIN_PATH", old, 1);
        free(old);
    } else {
        unsetenv("DRIFT_PLUGIN_PATH");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_future_abi),
        cmocka_unit_test(test_newer_services),
        cmocka_unit_test(test_table_counts),
        cmocka_unit_test(test_previous_abi),
        cmocka_unit_test(test_no_symbol),
        cmocka_unit_test(test_dlopen_failure),
        cmocka_unit_test(test_malformed_tables),
        cmocka_unit_test(test_descriptor_sizes),
        cmocka_unit_test(test_model_struct_sizes),
        cmocka_unit_test(test_install_dir),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_unknown_name_suggests),
        cmocka_unit_test(test_shadowing),
        cmocka_unit_test(test_explicit_path_wins),
        cmocka_unit_test(test_scan_keeps_good_plugins),
        cmocka_unit_test(test_unsafe_files),
        cmocka_unit_test(test_relative_path),
        cmocka_unit_test(test_broken_plugins),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
