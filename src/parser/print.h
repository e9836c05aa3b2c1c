/* print.h: writes a drift_program back as text in drift's own language
 * (the blocks, declarations and statements grammar.y reads), so that a
 * program that came from another front end (a Stan program) can be kept
 * and edited as a .drift file.  Reading the text back gives the same
 * tree: operators are parenthesised wherever the grammar's precedence
 * would group them otherwise, and numbers are written so that they read
 * back to the same double and keep their int or real type.  Not for
 * checking the program (resolve.c, typecheck.c). */
#ifndef DRIFT_PRINT_H
#define DRIFT_PRINT_H

#include <stddef.h>
#include <stdio.h>

#include "ast.h"

/* Writes p to f.  Returns 0, or -1 with a message in why (cap bytes)
 * when a node has no spelling in drift's language (a name that is a
 * keyword or not an identifier, a '~' whose outcome is not a name, an
 * index or a call); nothing useful has then been written. */
int drift_program_print(const drift_program *p, FILE *f, char *why,
                        size_t cap);

/* Writes one expression (for messages and tests); the same rules. */
int drift_expr_print(const drift_expr *e, FILE *f, char *why, size_t cap);

#endif
