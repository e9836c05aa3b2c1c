/* fuzz_inits.c: libFuzzer target for initial-value files (--init FILE):
 * CmdStan JSON or a draws CSV, matched against a fixed model's
 * parameters (scalars, a constrained vector, a matrix, an array, a
 * simplex and a Cholesky factor) with the checks on names, near misses,
 * duplicates, extra elements and constraints.  The input's first byte
 * chooses the reader (even: JSON, odd: CSV); the rest is the file.  Built
 * by `make fuzz`; seeds in corpus/inits. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/lang/lang_model.h"
#include "engine/run/inits.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *model_text =
    "rows  { y : real }\n"
    "param { mu : real  s : real<lower=0>  v : vector<lower=-1, upper=1>[3]\n"
    "        M : matrix[2, 2]  a : array[2] real  p : simplex[3]\n"
    "        L : cholesky_factor_corr[3] }\n"
    "prior { mu ~ normal(0, 1)  s ~ normal(0, 1)  v ~ normal(0, 1)\n"
    "        a ~ normal(0, 1)  p ~ dirichlet(rep_vector(1, 3))\n"
    "        L ~ lkj_corr_cholesky(2) }\n"
    "datum { y ~ normal(mu + sum(v) + sum(M) + sum(a), s) }\n";

static char dir[32], model_path[64], data_path[64], json_path[64],
    csv_path[64];
static drift_model model;
static int opened;

static void setup(void)
{
    if (opened)
        return;
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(dir, sizeof dir, "%s", base);
    int pid = (int)getpid();
    snprintf(model_path, sizeof model_path, "%s/fuzz-inits-%d.drift", dir,
             pid);
    snprintf(data_path, sizeof data_path, "%s/fuzz-inits-%d.csv", dir, pid);
    snprintf(json_path, sizeof json_path, "%s/fuzz-inits-%d.json", dir, pid);
    snprintf(csv_path, sizeof csv_path, "%s/fuzz-inits-%d-i.csv", dir, pid);
    FILE *f = fopen(model_path, "w");
    if (!f)
        abort();
    fputs(model_text, f);
    fclose(f);
    f = fopen(data_path, "w");
    if (!f)
        abort();
    fputs("y\n0.5\n-0.25\n1.5\n", f);
    fclose(f);
    const char *files[] = {data_path, NULL};
    FILE *sink = fopen("/dev/null", "w");
    drift_lang_spec spec = {.path = model_path, .data = files, .diag = sink};
    drift_err e;
    if (drift_lang_open(&spec, &model, &e) != 0)
        abort();
    fclose(sink);
    opened = 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    if (size == 0)
        return 0;
    const char *path = data[0] & 1 ? csv_path : json_path;
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    fwrite(data + 1, 1, size - 1, f);
    fclose(f);
    /* constrained values, one per output name, as the CLI sizes them */
    double *values = calloc(model.n_out + 1, sizeof *values);
    unsigned char *given = calloc(model.n_out + 1, 1);
    if (!values || !given)
        abort();
    drift_err e = {{0}};
    (void)drift_inits_read_partial(path, &model, values, given, &e);
    (void)drift_inits_read(path, &model, values, &e);
    free(values);
    free(given);
    unlink(path);
    return 0;
}
