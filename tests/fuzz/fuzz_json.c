/* fuzz_json.c: libFuzzer target for the CmdStan-JSON data loader and the
 * binding of its values to a model's data block and rows.  The input is
 * parsed from memory, then written to a file and opened as the data of a
 * fixed model with scalars, vectors, a matrix, an int array, sizes bound
 * from shapes and rows from JSON.  Built by `make fuzz`; seeds in
 * corpus/json. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/lang/lang_model.h"
#include "engine/lang/langdata.h"
#include "parser/diag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *model_text =
    "data  { K : int<lower=1>  mu : vector[K]  s : real<lower=0>\n"
    "        M : matrix[2, K]  idx : array[3] int }\n"
    "rows  { y : real  x : vector[K] }\n"
    "param { t : real  v : vector[K] }\n"
    "prior { t ~ normal(0, s)  v ~ normal(mu, 1) }\n"
    "datum { y ~ normal(dot(x, v) + t + sum(M * v) + idx[2], s) }\n";

static char model_path[64], data_path[64];

static void setup(void)
{
    if (model_path[0])
        return;
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(model_path, sizeof model_path, "%s/fuzz-json-%d.drift", dir,
             (int)getpid());
    snprintf(data_path, sizeof data_path, "%s/fuzz-json-%d.json", dir,
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
    drift_diag d;
    drift_diag_init(&d, NULL);
    drift_dvalue *vals;
    size_t n;
    drift_json_parse((const char *)data, size, "fuzz.json", &vals, &n, &d);
    drift_dvalues_free(vals, n);

    FILE *f = fopen(data_path, "wb");
    if (!f)
        abort();
    fwrite(data, 1, size, f);
    fclose(f);
    const char *files[] = {data_path, NULL};
    FILE *sink = fopen("/dev/null", "w");
    drift_lang_spec spec = {.path = model_path, .data = files, .diag = sink};
    drift_model m;
    drift_err e;
    if (drift_lang_open(&spec, &m, &e) == 0) {
        void *ws = m.workspace_new(m.self, 4);
        double *theta = calloc(m.dim + 1, sizeof *theta);
        double lp;
        if (ws && theta && m.dim < 100000) {
            m.log_prior(m.self, ws, theta, &lp, NULL, &e);
            if (m.n_rows) {
                drift_rows b = {NULL, 0, m.n_rows < 4 ? m.n_rows : 4};
                m.log_lik(m.self, ws, theta, &b, NULL, &lp, NULL, NULL, &e);
            }
        }
        free(theta);
        m.workspace_free(m.self, ws);
        m.free(m.self);
    }
    fclose(sink);
    return 0;
}
