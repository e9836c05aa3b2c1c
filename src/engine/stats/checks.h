/* checks.h: the warnings a user acts on after a run, as CmdStan's diagnose
 * utility gives them: divergent transitions, tree depth saturation,
 * E-BFMI below 0.3, an acceptance rate far below its target, a chain that
 * never moved, R-hat above 1.01 and bulk or tail ESS below 100 per chain;
 * and, for continuous-time samplers, a --thin grid too coarse for the
 * trajectory (fewer than 100 draws).
 * Each warning is one line saying what is wrong and what to try.  Not for
 * printing (the CLI) or the statistics themselves (summary.c). */
#ifndef DRIFT_CHECKS_H
#define DRIFT_CHECKS_H

#include <stddef.h>
#include <stdio.h>

#include <drift/common.h>

#include "stancsv.h"
#include "summary.h"

/* Thresholds (CmdStan's and Vehtari et al.'s 2021). */
#define DRIFT_CHECKS_RHAT 1.01
#define DRIFT_CHECKS_ESS_PER_CHAIN 100.0
#define DRIFT_CHECKS_EBFMI 0.3
#define DRIFT_CHECKS_ACCEPT_GAP 0.15
/* Fewer draws than this on a continuous-time sampler's grid: --thin is
 * too coarse for the trajectory. */
#define DRIFT_CHECKS_GRID_DRAWS 100

/* The warnings found, each a line without "warning: " and without a
 * newline; the caller frees them with drift_checks_free. */
typedef struct drift_checks {
    char **lines;
    size_t n;
} drift_checks;

/* Checks the post-warmup draws of C chains (one file each, same columns).
 * n is the number of draws per chain the summary used (each chain's
 * first n after warmup); stats (one per column, may be NULL) are the
 * summary's, computed here when NULL.  Returns DRIFT_OK or DRIFT_ENOMEM. */
int drift_checks_run(const drift_stancsv *const *chains, size_t C, size_t n,
                     const drift_summary_stats *stats, drift_checks *out,
                     drift_err *e);
/* The same, with the R-hat and ESS checks over the columns c with keep[c]
 * set (all when keep is NULL): a summary of some variables judges only
 * those, and stats need hold only the kept columns' values.  The checks
 * of transitions and chains (divergences, E-BFMI, ...) read the sampler's
 * columns whatever keep says. */
int drift_checks_run_selected(const drift_stancsv *const *chains, size_t C,
                              size_t n, const drift_summary_stats *stats,
                              const unsigned char *keep, drift_checks *out,
                              drift_err *e);
void drift_checks_free(drift_checks *c);

/* Reads the draws files paths[0..K) (Stan CSV) and writes to out one
 * "drift: warning: ..." line per problem drift_checks_run finds in them,
 * as drift sample does after a run; a file that cannot be read gets a
 * warning of its own and is left out, as is one with other columns than
 * the first file's.  The draws are valid all the same. */
void drift_checks_files(const char *const *paths, size_t K, FILE *out);

/* E-BFMI of a chain's energies x[0..n): the mean squared change between
 * successive draws over the variance (NaN when n < 2 or constant). */
double drift_checks_ebfmi(const double *x, size_t n);

#endif
