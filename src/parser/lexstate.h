/* lexstate.h: what a scanner (lexer.l, stan_lexer.l) and the parser
 * driving it (parse.c, stan_parse.c) share: the scanner's position, the
 * last token's text for messages, and the limit on nesting.  Not for the
 * syntax trees (ast.h). */
#ifndef DRIFT_LEXSTATE_H
#define DRIFT_LEXSTATE_H

#include <setjmp.h>
#include <stddef.h>

#include "ast.h"
#include "diag.h"

/* Expressions nested deeper than this are refused (so that the passes,
 * which recurse over the tree, never exhaust the stack). */
#define DRIFT_MAX_DEPTH 400

/* The scanner's extra state. */
typedef struct drift_lexstate {
    drift_arena *arena;
    drift_diag *diag;
    const drift_source *src;
    int line, col;          /* where the next token starts */
    int bol;                /* the last token began a line */
    int end_line, end_col;  /* where the last token ended (0: none yet) */
    int pending_bol;
    int oom;                /* an allocation failed */
    drift_loc comment_loc;  /* an open block comment */
    char last[48];          /* text of the last token, for messages */
    jmp_buf *fatal;         /* the scanner's allocation failures land here */
    void *last_buffer;      /* the scanner's buffer state, once allocated */
    void *orphan;           /* what a failed realloc left behind */
} drift_lexstate;

/* Records the text of the token just scanned (lexer.l, stan_lexer.l). */
void drift_lex_remember(drift_lexstate *s, const char *text, size_t n);

/* The integers the data give by name (scalars of a JSON file or
 * --data-set), for a front end that lowers loops whose bounds are data
 * (Stan's).  int_value returns 0 and *out when name is an integer scalar
 * of the data, -1 otherwise. */
typedef struct drift_known_ints {
    const void *self;
    int (*int_value)(const void *self, const char *name, long *out);
} drift_known_ints;

#endif
