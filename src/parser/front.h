/* front.h: the passes of the language's front end after parsing: name
 * resolution (resolve.c) and type and shape checking (typecheck.c), each
 * reporting every error it finds to a drift_diag.  Not for building the
 * likelihood graph (src/engine/graph.c). */
#ifndef DRIFT_FRONT_H
#define DRIFT_FRONT_H

#include "ast.h"
#include "builtins.h"
#include "diag.h"
#include "parse.h"

/* Binds every name to a symbol (declared, a size bound from the data, N,
 * or a local), every call to a builtin and every '~' to a distribution;
 * checks that blocks appear once, names are declared once, and rows
 * variables stay out of the prior.  Returns the number of errors. */
size_t drift_resolve(drift_program *p, drift_diag *d);

/* Computes the type and shape of every declaration and expression and
 * checks operators, calls, indices and distributions against them.  Sizes
 * whose values are bound (drift_sym.have_value) are compared by value,
 * others by name, so that running it again after the data are bound
 * catches what only the data reveal.  Returns the number of errors. */
size_t drift_typecheck(drift_program *p, drift_diag *d);

/* The value of an integer size expression (literals, + - *, unary minus
 * and int symbols with a bound value).  Returns 0 and *out, or -1 when a
 * name has no value yet or the expression is not of that form. */
int drift_eval_size(const drift_expr *e, long *out);

/* Reads, parses, resolves and type-checks a model file (sizes unbound).
 * Reports go to diag; returns the program or NULL when anything failed
 * (then *src may still be set for the caller to free). */
drift_program *drift_front_load(const char *path, drift_source **src,
                                drift_diag *diag, drift_err *e);

/* drift_front_load with the data's integers known (parse.h; ki may be
 * NULL). */
drift_program *drift_front_load_known(const char *path,
                                      const drift_known_ints *ki,
                                      drift_source **src, drift_diag *diag,
                                      drift_err *e);

#endif
