/* stan.h: the Stan front end.  A Stan program (CmdStan 2.3x syntax) is
 * parsed by its own grammar (stan_grammar.y, stan_lexer.l) into the
 * statement tree below, whose expressions are drift's own (ast.h), and
 * then lowered (stan_lower.c) into a drift_program, so that name
 * resolution, type checking and the likelihood graph are those of .drift
 * models.  Lowering finds the rows: the data whose leading dimension is
 * the size the model's log density sums over.  Not for evaluation. */
#ifndef DRIFT_STAN_H
#define DRIFT_STAN_H

#include <setjmp.h>

#include "ast.h"
#include "diag.h"
#include "lexstate.h"

/* A declared Stan type: drift's type expression, with what drift's types
 * lack. */
typedef struct stan_type {
    drift_typeexpr *t;          /* kind, sizes, array sizes, bounds */
    int rowvec;                 /* row_vector[n] (drift has none: a vector) */
    drift_expr *offset, *multiplier;
    drift_loc affine_loc;
} stan_type;

typedef enum stan_stmt_kind {
    STAN_S_DECL,     /* type name [= value] */
    STAN_S_ASSIGN,   /* lhs op= value (op: 0 for '=', else a drift_binop) */
    STAN_S_TILDE,    /* lhs ~ dist(args) [T[lo, hi]] */
    STAN_S_TARGET,   /* target += value */
    STAN_S_FOR,      /* for (var in lo:hi) body */
    STAN_S_FOREACH,  /* for (var in container) body */
    STAN_S_WHILE,    /* while (cond) body */
    STAN_S_IF,       /* if (cond) body else els */
    STAN_S_BLOCK,    /* { body } */
    STAN_S_PRINT,    /* print(...) */
    STAN_S_REJECT,   /* reject(...), fatal_error(...) */
    STAN_S_BREAK, STAN_S_CONTINUE, STAN_S_RETURN,
    STAN_S_CALL,     /* f(...); */
    STAN_S_EMPTY     /* also a function definition in the functions block:
                        name, parameters (DECLs) in els, body, op 1 when
                        it returns void */
} stan_stmt_kind;

typedef struct stan_stmt {
    stan_stmt_kind kind;
    drift_loc loc;
    /* DECL */
    stan_type type;
    const char *name;
    drift_loc name_loc;
    /* DECL (initial value), ASSIGN, TARGET, RETURN, CALL: value */
    drift_expr *value;
    /* ASSIGN, TILDE: lhs; FOR: lo; WHILE, IF: cond */
    drift_expr *lhs;
    int op;                     /* ASSIGN: -1 for '=', else drift_binop */
    /* TILDE */
    const char *dist;
    drift_loc dist_loc;
    drift_expr *args;
    size_t n_args;
    int truncated;
    drift_loc trunc_loc;
    drift_expr *trunc_lo, *trunc_hi;    /* NULL: that side is open */
    /* FOR */
    drift_expr *hi;
    /* PRINT, REJECT of drift's own language: the arguments in order */
    const drift_pitem *items;
    /* FOR, WHILE, IF, BLOCK: body (BLOCK: a list); IF: els */
    struct stan_stmt *body, *els;
    struct stan_stmt *next;
} stan_stmt;

typedef enum stan_block_kind {
    STAN_FUNCTIONS, STAN_DATA, STAN_TDATA, STAN_PARAMS, STAN_TPARAMS,
    STAN_MODEL, STAN_GQ, STAN_N_BLOCKS
} stan_block_kind;

typedef struct stan_program {
    stan_stmt *block[STAN_N_BLOCKS];    /* statements (declarations too) */
    drift_loc block_loc[STAN_N_BLOCKS];
    int have[STAN_N_BLOCKS];
} stan_program;

/* What stan_grammar.y's actions share. */
typedef struct stan_parser {
    drift_arena *arena;
    drift_diag *diag;
    const drift_source *src;
    stan_program *prog;
    void *scanner;
    drift_lexstate lex;
    int ftype_void;         /* the last function type read was void */
    int last_tok;           /* the token before (0 at the start) */
} stan_parser;

/* Whether a model file name is a Stan program (ends in ".stan"). */
int drift_stan_is_file(const char *name);

/* Parses a Stan program and lowers it into a drift program (its blocks
 * built as drift's grammar would have built them from the equivalent
 * .drift text), reporting syntax errors and constructs drift cannot run
 * to diag.  Returns NULL when out of memory, as drift_parse. */
drift_program *drift_stan_parse(const drift_source *src,
                                const drift_known_ints *ki, drift_diag *diag);

/* Lowers a parsed Stan program into prog (stan_lower.c).  ki (may be
 * NULL) gives the data's integers, with which loops whose bounds are
 * data can be unrolled.  Returns the number of errors reported. */
size_t drift_stan_lower(const stan_program *sp, const drift_known_ints *ki,
                        drift_program *prog, drift_diag *diag);

/* Replaces the control flow of a program in drift's own language (for,
 * if/else, element assignment, truncation, reject: DRIFT_S_FOR ... in
 * ast.h) by loop-free statements, executed symbolically as a Stan
 * program's are (stan_lower.c), before names are resolved.  Programs
 * without any are left as they are.  Returns the number of errors
 * reported to diag. */
size_t drift_control_lower(drift_program *prog, drift_diag *diag);

#endif
