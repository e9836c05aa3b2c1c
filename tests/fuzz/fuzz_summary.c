/* fuzz_summary.c: libFuzzer target for what `drift summary` does with a
 * draws file: the Stan CSV reader (header comments, column row, draws,
 * adaptation and footer lines), then each column's statistics (mean,
 * quantiles, ESS, R-hat; the file split in two chains) and the run's
 * checks over them.  The input is written to a file and read as one
 * chain's file.  Built by `make fuzz`; seeds in corpus/summary. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/stats/checks.h"
#include "engine/stats/stancsv.h"
#include "engine/stats/summary.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!path[0]) {
        const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(path, sizeof path, "%s/fuzz-summary-%d.csv", dir,
                 (int)getpid());
    }
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    fwrite(data, 1, size, f);
    fclose(f);
    drift_stancsv *s = NULL;
    drift_err e = {{0}};
    if (drift_stancsv_read(path, &s, &e) == DRIFT_OK && s) {
        (void)drift_stancsv_meta(s, "num_samples");
        (void)drift_stancsv_footer(s, "Elapsed Time");
        (void)drift_stancsv_column(s, "lp__");
        size_t n = s->n_rows - s->n_warmup, half = n / 2;
        drift_summary_stats *st =
            calloc(s->n_cols ? s->n_cols : 1, sizeof *st);
        double *x = malloc((half ? 2 * half : 1) * sizeof *x);
        if (!st || !x)
            abort();
        int ok = half > 0;
        for (size_t c = 0; c < s->n_cols && ok; c++) {
            /* two chains of half the draws each, chain-major */
            for (size_t i = 0; i < 2 * half; i++)
                x[i] = s->values[(s->n_warmup + i) * s->n_cols + c];
            drift_err e2 = {{0}};
            ok = drift_summary_compute(x, half, 2, &st[c], &e2) == DRIFT_OK;
        }
        if (ok) {
            const drift_stancsv *chains[1] = {s};
            drift_checks ck;
            drift_err e3 = {{0}};
            if (drift_checks_run(chains, 1, n, st, &ck, &e3) == DRIFT_OK)
                drift_checks_free(&ck);
        }
        free(x);
        free(st);
        drift_stancsv_free(s);
    }
    unlink(path);
    return 0;
}
