/* test_ext.c: the run extensions (src/engine/run/ext.h): the table names
 * each feature once, keeps the gates in the order the step loop needs
 * them, gives every extension that makes per-chain state a close hook,
 * and drift_run_check consults every extension's check: a pair of
 * features that one extension refuses reaches the caller with that
 * extension's message (the same bytes its own check writes), while the
 * configuration without the pair passes.  The configurations are filled
 * here by hand, not by the plan, on purpose: what is tested is
 * drift_run_check itself, on pairs of features that options in one
 * process cannot all make (a run across MPI ranks, its checkpoints). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/run/ext.h"
#include "engine/run/hparam.h"
#include "harness.h"

static const drift_run_ext *find_ext(const char *name)
{
    for (unsigned k = 0; k < drift_run_n_exts; k++)
        if (!strcmp(drift_run_exts[k]->name, name))
            return drift_run_exts[k];
    return NULL;
}

static unsigned ext_index(const char *name)
{
    for (unsigned k = 0; k < drift_run_n_exts; k++)
        if (!strcmp(drift_run_exts[k]->name, name))
            return k;
    fail_msg("no extension %s", name);
    return 0;
}

static void test_table(void **state)
{
    (void)state;
    static const char *const names[] = {"guard",    "maps",       "shard",
                                        "tune",     "progress",   "checkpoint",
                                        "heldout",  "watch"};
    size_t n = sizeof names / sizeof names[0];
    assert_int_equal(drift_run_n_exts, n);
    assert_true(drift_run_n_exts <= DRIFT_RUN_MAX_EXTS);
    for (size_t k = 0; k < n; k++) {
        const drift_run_ext *x = find_ext(names[k]);
        if (!x)
            fail_msg("extension %s is not in the table", names[k]);
        /* once only */
        for (unsigned j = ext_index(names[k]) + 1; j < drift_run_n_exts; j++)
            assert_string_not_equal(drift_run_exts[j]->name, names[k]);
    }
    /* A map that changed stops the chain before the ranks agree on the
     * step, so that no rank sums rows from changed data. */
    assert_true(ext_index("maps") < ext_index("shard"));
    /* What a step counts (progress) is noted before a checkpoint saves
     * it, and held-out metrics come last. */
    assert_true(ext_index("progress") < ext_index("checkpoint"));
    assert_true(ext_index("checkpoint") < ext_index("heldout"));
    /* Per-chain state is released by its extension. */
    const char *const owners[] = {"guard", "shard", "progress", "checkpoint",
                                  "heldout", "watch"};
    for (size_t k = 0; k < sizeof owners / sizeof owners[0]; k++)
        assert_non_null(find_ext(owners[k])->close);
    /* The checkpoint saves and restores; the watch's state travels in
     * it. */
    assert_non_null(find_ext("checkpoint")->restore);
    assert_non_null(find_ext("checkpoint")->after_step);
    assert_non_null(find_ext("watch")->ckpt);
    /* The step size and plan left to the engine are chosen in the
     * run-level setup, by the tuning alone. */
    assert_non_null(find_ext("tune")->setup);
    for (unsigned k = 0; k < drift_run_n_exts; k++)
        if (drift_run_exts[k]->setup)
            assert_string_equal(drift_run_exts[k]->name, "tune");
}

typedef struct fixture {
    th_problem tp;
    char *csv;
    drift_sampler sampler;
    double hp[64];
    unsigned char hp_set[64];
    drift_run_config cfg;
    drift_run_ranks ranks;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    th_gauss t;
    f->csv = th_gauss_data(&t);
    th_open(&f->tp, "gauss", f->csv, NULL, 0);
    const drift_sampler_entry *se;
    drift_err e = {{0}};
    if (drift_registry_sampler(f->tp.reg, "sgld", &se, &e))
        fail_msg("sgld: %s", e.msg);
    f->sampler = se->s;
    char set[] = "h=1e-3";
    char *sets[] = {set};
    assert_true(f->sampler.n_hparams <= 64);
    if (drift_hparams_apply(f->sampler.hparams, f->sampler.n_hparams, "--set",
                            f->sampler.name, sets, 1, f->hp, f->hp_set, &e))
        fail_msg("--set: %s", e.msg);
    f->cfg = (drift_run_config){
        .problem.model = &f->tp.p.model,
        .problem.data = drift_problem_data(&f->tp.p),
        .step.sampler = &f->sampler,
        .step.hp = f->hp,
        .step.hp_set = f->hp_set,
        .budget.iters = 10,
        .budget.thin = 1,
        .launch.seed = 1,
        .launch.chains = 1,
        .output.quiet = 1,
    };
    /* One group running the run's one chain over every row (what a run
     * across ranks looks like to the checks). */
    f->ranks = (drift_run_ranks){.first = 0, .count = 1,
                                 .rows_total = f->tp.p.model.n_rows,
                                 .writer = 1};
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    th_close(&f->tp);
    unlink(f->csv);
    free(f->csv);
    free(f);
    return 0;
}

/* cfg is refused by extension ext's check with a message containing
 * needle, and drift_run_check gives the same status and message. */
static void expect_refused_by(const drift_run_config *cfg, const char *ext,
                              const char *needle)
{
    const drift_run_ext *x = find_ext(ext);
    assert_non_null(x);
    assert_non_null(x->check);
    drift_err own = {{0}}, run = {{0}};
    int rc_own = x->check(cfg, &own);
    int rc_run = drift_run_check(cfg, &run);
    if (!rc_own)
        fail_msg("extension %s did not refuse (expected '%s')", ext, needle);
    assert_int_equal(rc_run, rc_own);
    assert_string_equal(run.msg, own.msg);
    if (!strstr(run.msg, needle))
        fail_msg("extension %s: '%s' does not say '%s'", ext, run.msg,
                 needle);
}

static void test_checks(void **state)
{
    fixture *f = *state;
    drift_err e = {{0}};
    if (drift_run_check(&f->cfg, &e))
        fail_msg("a plain run was refused: %s", e.msg);

    drift_run_config c = f->cfg;
    c.ckpt.dir = "/nonexistent-checkpoint-dir";
    if (drift_run_check(&c, &e))
        fail_msg("a checkpointed run was refused: %s", e.msg);
    c.heldout.model = &f->tp.p.model;
    c.heldout.path = f->csv;
    expect_refused_by(&c, "checkpoint",
                      "--checkpoint-every with --test: held-out metrics are "
                      "not checkpointed");

    drift_sampler no_ckpt = f->sampler;
    no_ckpt.checkpoint = NULL;
    c = f->cfg;
    c.step.sampler = &no_ckpt;
    c.ckpt.dir = "/nonexistent-checkpoint-dir";
    expect_refused_by(&c, "checkpoint", "cannot be checkpointed");

    c = f->cfg;
    c.ranks = &f->ranks;
    if (drift_run_check(&c, &e))
        fail_msg("a run across ranks was refused: %s", e.msg);
    c.ckpt.dir = "/nonexistent-checkpoint-dir";
    expect_refused_by(&c, "checkpoint",
                      "a run across MPI ranks is not checkpointed");

    c = f->cfg;
    c.ranks = &f->ranks;
    c.step.gradient = DRIFT_GRADIENT_CV;
    expect_refused_by(&c, "shard", "--gradient cv under mpirun");
    c.step.gradient = DRIFT_GRADIENT_SAGA;
    expect_refused_by(&c, "shard", "--gradient saga under mpirun");
    c.step.gradient = DRIFT_GRADIENT_PLAIN;
    c.output.save_gradients = 1;
    expect_refused_by(&c, "shard", "--save-gradients under mpirun");

    double auto_hp[64];
    memcpy(auto_hp, f->hp, sizeof auto_hp);
    long k = drift_hparams_step_size(f->sampler.hparams,
                                     f->sampler.n_hparams);
    assert_true(k >= 0);
    auto_hp[k] = NAN;
    c = f->cfg;
    c.step.hp = auto_hp;
    if (drift_run_check(&c, &e))
        fail_msg("a step size left to the engine was refused: %s", e.msg);
    c.ranks = &f->ranks;
    expect_refused_by(&c, "tune", "is chosen by pilot chains in one process");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test_setup_teardown(test_checks, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
