/* parse.h: from a model source to its syntax tree, and the state the
 * scanner and the parser share.  Syntax errors are reported to a
 * drift_diag; the parser recovers at statement, declaration and block
 * boundaries so that one run reports several.  Not for names or types
 * (resolve.c, typecheck.c). */
#ifndef DRIFT_PARSE_H
#define DRIFT_PARSE_H

#include "ast.h"
#include "diag.h"
#include "lexstate.h"

typedef struct drift_parser drift_parser;


/* What the grammar's actions and the token filter share. */
struct drift_parser {
    drift_arena *arena;
    drift_diag *diag;
    const drift_source *src;
    drift_program *prog;
    void *scanner;
    drift_lexstate lex;
    int resync;             /* skip tokens up to the next line start */
};


/* drift_known_ints: lexstate.h */

/* Parses src.  Returns the program (its blocks possibly partial when
 * syntax errors were reported to diag), or NULL when out of memory (also
 * reported to diag).  The program borrows src, which must outlive it. */
drift_program *drift_parse(const drift_source *src, drift_diag *diag);

/* drift_parse, with the data's integers known (ki may be NULL: none). */
drift_program *drift_parse_known(const drift_source *src,
                                 const drift_known_ints *ki,
                                 drift_diag *diag);

/* Frees a program and everything in its arena. */
void drift_program_free(drift_program *p);

/* Checks the functions block's definitions and inlines every call of a
 * user function (funcs.c); drift_parse runs it.  Returns the number of
 * errors reported to d. */
size_t drift_funcs_inline(drift_program *p, drift_diag *d);

/* Adds a symbol to p's table; NULL when out of memory. */
drift_sym *drift_program_add_sym(drift_program *p, drift_sym_kind kind,
                                 const char *name, drift_loc loc);

#endif
