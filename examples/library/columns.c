/* SPDX-License-Identifier: MIT (drift; see LICENSE) */
/* columns.c: drift run from a C program through libdrift, its rows in
 * memory.  The model (examples/gaussian/gaussian.drift) has one rows
 * variable, a 2-vector c per row, and the posterior of theta is
 * N(mean of the c_i, I / N): the program checks each chain's mean
 * against it.  The rows live in one C-ordered N x 2 array, which drift
 * reads in place (each column given with the array's row stride); draws
 * arrive at a callback, warmup rows flagged, and drift's progress lines
 * and warnings at another instead of standard error.
 *
 *   cc $(pkg-config --cflags drift) columns.c -o columns \
 *       $(pkg-config --libs drift) -lm
 *   ./columns examples/gaussian/gaussian.drift                           */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <drift/drift.h>

enum { N = 400, CHAINS = 2 };

/* What the draws callback keeps: the sums of theta's two values over
 * each chain's kept draws (one call at a time, from the chains' threads). */
typedef struct tally {
    size_t at;              /* the column of theta.1 */
    double sum[CHAINS][2];
    size_t n[CHAINS], warmup;
} tally;

static void on_draw(void *user, unsigned chain_id, unsigned flags,
                    const double *values, size_t n)
{
    tally *t = user;
    (void)n;
    if (flags & DRIFT_DRAW_WARMUP) {
        t->warmup++;
        return;
    }
    t->sum[chain_id - 1][0] += values[t->at];
    t->sum[chain_id - 1][1] += values[t->at + 1];
    t->n[chain_id - 1]++;
}

static void on_message(void *user, int kind, const char *line)
{
    (void)user;
    if (kind == DRIFT_MESSAGE_WARNING)
        fprintf(stderr, "[drift] %s\n", line);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODEL (examples/gaussian/gaussian.drift)\n",
                argv[0]);
        return 2;
    }
    if (drift_api_version() != DRIFT_API_VERSION) {
        fprintf(stderr, "libdrift has API %u, this program wants %d\n",
                drift_api_version(), DRIFT_API_VERSION);
        return 2;
    }
    /* The rows: c_i = (sin i, 2 + cos 3i), row-major. */
    static double c[N][2];
    double mean[2] = {0, 0};
    for (int i = 0; i < N; i++) {
        c[i][0] = sin(i);
        c[i][1] = 2 + cos(3.0 * i);
        mean[0] += c[i][0] / N;
        mean[1] += c[i][1] / N;
    }
    drift_column cols[] = {
        {"c.1", DRIFT_COLUMN_DOUBLE, &c[0][0], 2},
        {"c.2", DRIFT_COLUMN_DOUBLE, &c[0][1], 2},
    };
    drift_option opts[] = {
        {"chains", "2"}, {"seed", "1"}, {"save-warmup", NULL},
    };
    tally t;
    memset(&t, 0, sizeof t);
    drift_spec spec = {
        .model = argv[1],
        .columns = cols, .n_columns = 2, .n_rows = N,
        .options = opts, .n_options = sizeof opts / sizeof *opts,
        .on_draw = on_draw, .on_draw_user = &t,
        .on_message = on_message,
    };
    drift_plan *p;
    drift_err e = {{0}};
    if (drift_plan_new(&spec, &p, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    while (t.at < drift_plan_n_columns(p) &&
           strcmp(drift_plan_column_name(p, t.at), "theta.1"))
        t.at++;
    int rc = drift_plan_run(p, DRIFT_LAUNCH_IN_PROCESS, &e);
    drift_plan_free(p);
    if (rc) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    /* Each chain's mean within 5 posterior sds (5 / sqrt(N)) of the
     * centres' mean; 1000 warmup rows and 1000 draws a chain. */
    int ok = t.warmup == CHAINS * 1000;
    for (int k = 0; k < CHAINS; k++) {
        double m0 = t.sum[k][0] / t.n[k], m1 = t.sum[k][1] / t.n[k];
        printf("chain %d: %zu draws, mean (%.4f, %.4f); posterior mean "
               "(%.4f, %.4f)\n", k + 1, t.n[k], m0, m1, mean[0], mean[1]);
        ok = ok && t.n[k] == 1000 && fabs(m0 - mean[0]) < 0.25 &&
             fabs(m1 - mean[1]) < 0.25;
    }
    return ok ? 0 : 1;
}
