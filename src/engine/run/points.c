/* points.c: a model's points from a draws file, by column name (see
 * points.h).  Not for initial values (inits.c). */
#include "config.h"

#include <string.h>

#include "base/util.h"
#include "engine/stats/stancsv.h"
#include "points.h"

int drift_points_from_draws(const char *path, const drift_model *m,
                            int with_warmup, double **vals, size_t *n,
                            struct drift_stancsv **csv, drift_err *e)
{
    *vals = NULL;
    *n = 0;
    if (csv)
        *csv = NULL;
    drift_stancsv *f;
    int rc = drift_stancsv_read(path, &f, e);
    if (rc)
        return rc;
    size_t no = m->n_out;
    long *col = drift_malloc_array(no ? no : 1, sizeof *col);
    if (!col) {
        drift_stancsv_free(f);
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    }
    for (size_t j = 0; j < no; j++)
        if ((col[j] = drift_stancsv_column(f, m->out_names[j])) < 0) {
            const char *nm = m->out_names[j];
            size_t len = strlen(nm);
            /* A Stan parameter whose bounds depend on other parameters
             * is sampled as its unconstrained value NAME__free. */
            int free_form = len > 6 && !strcmp(nm + len - 6, "__free");
            drift_err_set(e, DRIFT_EDATA,
                          "%s: no column '%s', a parameter of the model (%s)",
                          path, nm,
                          free_form
                              ? "the unconstrained value of a parameter whose "
                                "bounds depend on others, which drift's own "
                                "draws of this model hold"
                              : "a draws file of another model?");
            drift_free(col);
            drift_stancsv_free(f);
            return DRIFT_EDATA;
        }
    size_t first = with_warmup ? 0 : f->n_warmup, rows = f->n_rows - first;
    size_t cells = rows * no;
    double *v = drift_malloc_array(cells ? cells : 1, sizeof *v);
    if (!v) {
        drift_free(col);
        drift_stancsv_free(f);
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    }
    for (size_t r = 0; r < rows; r++)
        for (size_t j = 0; j < no; j++)
            v[r * no + j] = f->values[(first + r) * f->n_cols + (size_t)col[j]];
    drift_free(col);
    if (csv)
        *csv = f;
    else
        drift_stancsv_free(f);
    *vals = v;
    *n = rows;
    return DRIFT_OK;
}
