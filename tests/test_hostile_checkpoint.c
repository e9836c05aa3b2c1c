/* test_hostile_checkpoint.c: drift sample --resume against checkpoints
 * that changed after they were written: every part (the manifest, each
 * chain's state and its draws) is checked against its checksum and a
 * mismatch refused, naming the file, before a byte of it reaches an
 * output; and the checkpoint resumed is the directory given, whatever
 * its name, never another one the run's command implies. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostile.h"

/* Changes the last digit of the fifth draw of dir/name (same length, as
 * a flipped bit or a torn sector would). */
static void flip_a_draw(const char *dir, const char *name)
{
    char *p = hx_in(dir, name);
    char *text = th_slurp(p);
    assert_non_null(text);
    int draws = 0;
    for (char *line = text; *line;) {
        char *nl = strchr(line, '\n');
        assert_non_null(nl);
        if (line[0] != '#' && line[0] != 'l' && ++draws == 5) {
            nl[-1] = nl[-1] == '1' ? '2' : '1';
            break;
        }
        line = nl + 1;
    }
    assert_int_equal(draws, 5);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
    free(text);
    free(p);
}

static void test_damaged_rows(void **state)
{
    (void)state;
    char *dir = hx_tmpdir();
    hx_logistic(dir);
    hx_make_ckpt(dir, "r", 1, "100000000");
    flip_a_draw(dir, "r.ckpt/chain_1.rows");
    const char *resume[] = {"sample", "--resume", "r.ckpt", NULL};
    th_cli r = hx_run(dir, resume, 120);
    if (r.status == 0 || !strstr(r.err, "chain_1.rows is damaged"))
        fail_msg("a changed draw in the checkpoint: exit %d, stderr:\n%s",
                 r.status, r.err);
    th_cli_free(&r);
    assert_false(hx_exists(dir, "r.csv"));
    /* The checkpoint is kept, for whoever can repair it. */
    assert_true(hx_exists(dir, "r.ckpt/chain_1.rows"));
    hx_rm(dir);
    free(dir);
}

static void test_damaged_manifest(void **state)
{
    (void)state;
    char *dir = hx_tmpdir();
    hx_logistic(dir);
    hx_make_ckpt(dir, "r", 1, "100000000");
    /* One digit of the command: a longer run than the one begun. */
    hx_replace(dir, "r.ckpt/run", "\narg 100000000\n", "\narg 100000001\n");
    const char *resume[] = {"sample", "--resume", "r.ckpt", NULL};
    hx_expect(dir, resume, 2, "r.ckpt/run is damaged (its checksum does not "
                              "match)");
    assert_false(hx_exists(dir, "r.csv"));
    hx_rm(dir);
    free(dir);
}

/* A manifest forged with a valid checksum is still checked file by
 * file: another build's is refused as such. */
static void test_forged_build(void **state)
{
    (void)state;
    char *dir = hx_tmpdir();
    hx_logistic(dir);
    hx_make_ckpt(dir, "r", 1, "100000000");
    char *p = hx_in(dir, "r.ckpt/run");
    char *text = th_slurp(p);
    char *line = strstr(text, "\nfile build ");
    assert_non_null(line);
    char old[4300];
    snprintf(old, sizeof old, "%.*s", (int)(strchr(line + 1, '\n') - line),
             line);
    free(text);
    free(p);
    hx_replace(dir, "r.ckpt/run", old, "\nfile build drift 0\t1 0");
    hx_resum(dir, "r.ckpt/run");
    const char *resume[] = {"sample", "--resume", "r.ckpt", NULL};
    hx_expect(dir, resume, 2, "another build of drift");
    hx_rm(dir);
    free(dir);
}

/* The checkpoint resumed is DIR: a copy under another name is resumed
 * (and removed once done) while the run's own STEM.ckpt, absent or
 * different, is left alone. */
static void test_resume_a_copy(void **state)
{
    (void)state;
    char *dir = hx_tmpdir();
    hx_logistic(dir);
    hx_make_ckpt(dir, "r", 1, "3000000");
    char *from = hx_in(dir, "r.ckpt"), *to = hx_in(dir, "bak.ckpt");
    assert_int_equal(rename(from, to), 0);
    const char *resume[] = {"sample", "--resume", "bak.ckpt", "--quiet",
                            NULL};
    hx_expect(dir, resume, 0, "");
    assert_true(hx_exists(dir, "r.csv"));
    assert_false(hx_exists(dir, "bak.ckpt"));
    assert_false(hx_exists(dir, "r.ckpt"));
    /* Both there, and the run's own one damaged: the copy is used. */
    char *out = hx_in(dir, "r.csv");
    assert_int_equal(remove(out), 0);
    free(out);
    hx_make_ckpt(dir, "r", 1, "3000000");
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "cp -a '%s' '%s'", from, to);
    assert_int_equal(system(cmd), 0);
    hx_write(dir, "r.ckpt/chain_1.state", "damaged");
    hx_expect(dir, resume, 0, "");
    assert_true(hx_exists(dir, "r.csv"));
    assert_false(hx_exists(dir, "bak.ckpt"));
    assert_true(hx_exists(dir, "r.ckpt/chain_1.state"));
    free(from);
    free(to);
    hx_rm(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_damaged_rows),
        cmocka_unit_test(test_damaged_manifest),
        cmocka_unit_test(test_forged_build),
        cmocka_unit_test(test_resume_a_copy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
