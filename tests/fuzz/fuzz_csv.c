/* fuzz_csv.c: libFuzzer target for the CSV rows loader and the binding of
 * rows to a model's schema.  The input is written to a file (the loader
 * reads files) and opened as the data of a fixed model that uses every
 * kind of check: an int outcome with a support, an integer index into a
 * parameter, a vector of columns.  Built by `make fuzz`; seeds in
 * corpus/csv. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/lang/lang_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *model_text =
    "data  { }\n"
    "rows  { x : vector[D]  y : int  g : int }\n"
    "param { w : vector[D]  u : vector[3] }\n"
    "prior { w ~ normal(0, 1)  u ~ normal(0, 1) }\n"
    "datum { y ~ bernoulli_logit(dot(x, w) + u[g]) }\n";

static char model_path[64], data_path[64];

static void setup(void)
{
    if (model_path[0])
        return;
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(model_path, sizeof model_path, "%s/fuzz-csv-%d.drift", dir,
             (int)getpid());
    snprintf(data_path, sizeof data_path, "%s/fuzz-csv-%d.csv", dir,
             (int)getpid());
    FILE *f = fopen(model_path, "w");
    if (!f)
        abort();
    fputs(model_text, f);
    fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    FILE *f = fopen(data_path, "wb");
    if (!f)
        abort();
    fwrite(data, 1, size, f);
    fclose(f);
    const char *files[] = {data_path, NULL};
    drift_lang_spec spec = {.path = model_path, .data = files};
    FILE *sink = fopen("/dev/null", "w");
    spec.diag = sink;
    drift_model m;
    drift_err e;
    if (drift_lang_open(&spec, &m, &e) == 0) {
        /* Evaluate the likelihood over the first rows. */
        void *ws = m.workspace_new(m.self, 8);
        double *theta = calloc(m.dim + 1, sizeof *theta);
        if (ws && theta && m.n_rows) {
            drift_rows b = {NULL, 0, m.n_rows < 8 ? m.n_rows : 8};
            double ll;
            m.log_lik(m.self, ws, theta, &b, NULL, &ll, NULL, NULL, &e);
        }
        free(theta);
        m.workspace_free(m.self, ws);
        m.free(m.self);
    }
    fclose(sink);
    return 0;
}
