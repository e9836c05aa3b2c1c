/* laplace.h: the Laplace approximation of a posterior at its mode, as
 * CmdStan's laplace method makes it: the Gaussian on the unconstrained
 * scale whose mean is the mode and whose precision is the negative
 * Hessian of the log density there (central differences of the model's
 * gradient), and draws from it.  Not for the control variates' diagonal
 * approximation (mode.c). */
#ifndef DRIFT_LAPLACE_H
#define DRIFT_LAPLACE_H

#include "logdensity.h"
#include "rng.h"

typedef struct drift_laplace drift_laplace;

/* The approximation of ld's density at mode (d values, copied).  Refused
 * with a message when the Hessian there is not negative definite (not a
 * mode, or a flat direction) or not finite. */
int drift_laplace_new(drift_laplace **out, drift_logdensity *ld, size_t d,
                      const double *mode, drift_err *e);
void drift_laplace_free(drift_laplace *la);

/* A draw theta = mode + L^-T z, z ~ N(0, I) from rng (L L' the
 * precision), and log_g = -z'z / 2, the draw's log density under the
 * approximation up to its constant, as CmdStan's log_g__. */
void drift_laplace_draw(const drift_laplace *la, drift_rng *rng,
                        double *theta, double *log_g);

#endif
