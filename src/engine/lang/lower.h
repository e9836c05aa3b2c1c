/* lower.h: the last pass of the language: a type-checked program and its
 * bound data become the likelihood graph (graph.h), with constants folded
 * by evaluating them (ad.h). */
#ifndef DRIFT_LOWER_H
#define DRIFT_LOWER_H

#include "graph.h"

/* Builds the graph of a type-checked program whose data ld is bound.
 * Errors (constant bounds that are not constants, out-of-range indices
 * and outcomes outside a distribution's support in the data, ...) go to
 * diag.  Returns the graph, or NULL on errors. */
drift_graph *drift_lower_program(drift_program *p,
                                 const drift_langdata *ld, drift_diag *diag);
#endif
