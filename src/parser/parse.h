/* parse.h: from a model source to its syntax tree, and the state the
 * scanner and the parser share.  Syntax errors are reported to a
 * drift_diag; the parser recovers at statement, declaration and block
 * boundaries so that one run reports several.  Not for names or types
 * (resolve.c, typecheck.c). */
#ifndef DRIFT_PARSE_H
#define DRIFT_PARSE_H

#include <setjmp.h>

#include "ast.h"
#include "diag.h"

typedef struct drift_parser drift_parser;

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

/* Records the text of the token just scanned (lexer.l). */
void drift_lex_remember(drift_lexstate *s, const char *text, size_t n);

/* Parses src.  Returns the program (its blocks possibly partial when
 * syntax errors were reported to diag), or NULL when out of memory (also
 * reported to diag).  The program borrows src, which must outlive it. */
drift_program *drift_parse(const drift_source *src, drift_diag *diag);

/* Frees a program and everything in its arena. */
void drift_program_free(drift_program *p);

/* Adds a symbol to p's table; NULL when out of memory. */
drift_sym *drift_program_add_sym(drift_program *p, drift_sym_kind kind,
                                 const char *name, drift_loc loc);

#endif
