/* laplace.c: the Laplace approximation at a mode (see laplace.h). */
#include "config.h"

#include <math.h>
#include <string.h>

#include <cblas.h>

#include "base/util.h"
#include "adapt.h"
#include "laplace.h"

struct drift_laplace {
    size_t d;
    double *mode;   /* d */
    double *L;      /* d x d row-major: the precision's lower factor */
};

void drift_laplace_free(drift_laplace *la)
{
    if (!la)
        return;
    drift_free(la->mode);
    drift_free(la->L);
    drift_free(la);
}

int drift_laplace_new(drift_laplace **out, drift_logdensity *ld, size_t d,
                      const double *mode, drift_err *e)
{
    *out = NULL;
    drift_laplace *la = drift_calloc(1, sizeof *la);
    double *work = drift_malloc_array(3 * d + 1, sizeof *work);
    if (la) {
        la->d = d;
        la->mode = drift_malloc_array(d + 1, sizeof *la->mode);
        la->L = drift_malloc_array(d * d + 1, sizeof *la->L);
    }
    if (!la || !work || !la->mode || !la->L) {
        drift_free(work);
        drift_laplace_free(la);
        return drift_err_set(e, DRIFT_ENOMEM, "out of memory");
    }
    memcpy(la->mode, mode, d * sizeof *mode);
    int rc = drift_logdensity_precision(ld, d, mode, la->L, work, e);
    drift_free(work);
    if (rc) {
        drift_err_prefix(e, "the Hessian at the mode: the density next to "
                            "it");
        drift_laplace_free(la);
        return rc;
    }
    if (drift_adapt_cholesky(la->L, d, la->L)) {
        drift_laplace_free(la);
        return drift_err_set(e, DRIFT_ENUMERIC,
                             "the Hessian of the log density at the mode is "
                             "not negative definite (the point is not a "
                             "mode, or the density is flat or improper in "
                             "some direction there): no Laplace "
                             "approximation");
    }
    *out = la;
    return DRIFT_OK;
}

void drift_laplace_draw(const drift_laplace *la, drift_rng *rng,
                        double *theta, double *log_g)
{
    size_t d = la->d;
    double q = 0;
    for (size_t k = 0; k < d; k++) {
        theta[k] = drift_rng_normal(rng);
        q += theta[k] * theta[k];
    }
    /* x = L^-T z in place (L lower, row-major), then theta = mode + x. */
    if (d)
        cblas_dtrsv(CblasRowMajor, CblasLower, CblasTrans, CblasNonUnit,
                    (blasint)d, la->L, (blasint)d, theta, 1);
    for (size_t k = 0; k < d; k++)
        theta[k] += la->mode[k];
    *log_g = -0.5 * q;
}
