/* ast.h: the syntax tree of drift's model language, the arena it lives in,
 * the symbols name resolution binds, and the types and shapes the type
 * checker attaches.  The grammar only builds these nodes; every later
 * pass (resolve.c, typecheck.c, the engine's graph builder) fills the
 * "filled by" fields.  Not for evaluation (src/engine/graph.c, ad.c). */
#ifndef DRIFT_AST_H
#define DRIFT_AST_H

#include <stddef.h>
#include <stdint.h>

/* A place in a source file: 1-based lines and byte columns, the last
 * column inclusive.  Bison's location type (api.location.type). */
typedef struct drift_loc {
    int first_line, first_column, last_line, last_column;
} drift_loc;

/* ---- arena -------------------------------------------------------------- */

/* Every node, list and string of one parse is allocated here and freed at
 * once, so error recovery never has to free half-built trees. */
typedef struct drift_arena drift_arena;

drift_arena *drift_arena_new(void);
void drift_arena_free(drift_arena *a);
/* Zeroed memory, NULL when out of memory. */
void *drift_arena_alloc(drift_arena *a, size_t n);
char *drift_arena_strndup(drift_arena *a, const char *s, size_t n);

/* ---- types and shapes ------------------------------------------------- */

/* One dimension: its value when known (n >= 0), and the size name it was
 * declared with (for messages; NULL for literals and expressions). */
typedef struct drift_dim {
    long n;
    const char *sym;
} drift_dim;

typedef enum drift_tkind {
    DRIFT_T_ERROR = 0,  /* an earlier error; accepted everywhere */
    DRIFT_T_INT,
    DRIFT_T_REAL,
    DRIFT_T_VECTOR,     /* dim[0] entries */
    DRIFT_T_MATRIX,     /* dim[0] rows, dim[1] columns */
    DRIFT_T_SPARSE      /* sparse_vector[dim[0]]: a rows variable read
                           from sparse rows (LIBSVM features), usable
                           only as an argument of dot() */
} drift_tkind;

#define DRIFT_MAX_ARRAY 2

/* The structured types: a vector or matrix with Stan's constraint and its
 * unconstraining transform (src/engine/lang/transform.c). */
typedef enum drift_constraint {
    DRIFT_CON_NONE = 0,
    DRIFT_CON_SIMPLEX,          /* simplex[K]: vector, x >= 0, sum 1 */
    DRIFT_CON_ORDERED,          /* ordered[K]: strictly increasing */
    DRIFT_CON_POSITIVE_ORDERED, /* positive_ordered[K] */
    DRIFT_CON_CHOL_CORR,        /* cholesky_factor_corr[K]: K x K */
    DRIFT_CON_CHOL_COV,         /* cholesky_factor_cov[M, N] (M >= N) */
    DRIFT_CON_COV,              /* cov_matrix[K] */
    DRIFT_CON_CORR              /* corr_matrix[K] */
} drift_constraint;

/* A value's type: arrays (n_arr dimensions, outermost first) of an
 * element kind. */
typedef struct drift_type {
    drift_tkind kind;
    int n_arr;
    drift_dim arr[DRIFT_MAX_ARRAY];
    drift_dim dim[2];
} drift_type;

/* Writes a type as the user would write it, e.g. "vector[D=3]" or
 * "array[K] real", into buf. */
void drift_type_format(const drift_type *t, char *buf, size_t cap);

/* ---- expressions --------------------------------------------------------- */

typedef enum drift_expr_kind {
    DRIFT_E_NUM,    /* literal: num, is_int */
    DRIFT_E_NAME,   /* name */
    DRIFT_E_CALL,   /* name(args) */
    DRIFT_E_INDEX,  /* a[args] */
    DRIFT_E_BINOP,  /* a op b */
    DRIFT_E_NEG,    /* -a */
    DRIFT_E_NOT,    /* !a */
    DRIFT_E_COND    /* a ? b : c (c in args) */
} drift_expr_kind;

typedef enum drift_binop {
    DRIFT_OP_ADD, DRIFT_OP_SUB, DRIFT_OP_MUL, DRIFT_OP_DIV,
    DRIFT_OP_EMUL,  /* .* */
    DRIFT_OP_EDIV,  /* ./ */
    DRIFT_OP_POW,   /* ^ */
    DRIFT_OP_LT, DRIFT_OP_LE, DRIFT_OP_GT, DRIFT_OP_GE, DRIFT_OP_EQ,
    DRIFT_OP_NE,    /* comparisons: int 0 or 1 */
    DRIFT_OP_AND, DRIFT_OP_OR   /* && || */
} drift_binop;

struct drift_sym;
struct drift_builtin;

typedef struct drift_expr {
    drift_expr_kind kind;
    drift_loc loc;              /* the whole expression */
    double num;                 /* NUM */
    int is_int;                 /* NUM: written without '.' or exponent */
    const char *name;           /* NAME, CALL */
    drift_loc name_loc;
    struct drift_expr *a, *b;   /* BINOP: a op b; NEG: a; INDEX: a[...] */
    drift_binop op;
    struct drift_expr *args;    /* CALL, INDEX: linked by next; COND: c */
    size_t n_args;
    int bar;                    /* CALL: written name(y | ...), the
                                   outcome of a density before '|' */
    struct drift_expr *next;
    int depth;                  /* nesting depth (see parse.h) */

    /* filled by resolve.c */
    int over_rows;                      /* CALL in the transformed block:
                                           a reduction of a per-row value
                                           over every row (mean(x)) */
    struct drift_sym *sym;              /* NAME */
    const struct drift_builtin *fn;     /* CALL */
    const struct drift_dist *dist;      /* CALL of name_lpdf(y | ...) */
    /* filled by typecheck.c */
    drift_type type;
    int rows;       /* depends on a rows variable (one value per datum) */
    int param;      /* depends on a parameter */
} drift_expr;

/* ---- declarations -------------------------------------------------------- */

typedef struct drift_typeexpr {
    drift_tkind kind;           /* INT, REAL, VECTOR, MATRIX or SPARSE */
    drift_loc loc;
    drift_expr *size[2];        /* VECTOR, SPARSE: size[0]; MATRIX: both */
    int n_arr;
    drift_expr *arr_size[DRIFT_MAX_ARRAY];
    drift_expr *lower, *upper;  /* constraint bounds, NULL when absent */
    drift_loc lower_loc, upper_loc;
    drift_constraint con;       /* a structured type (simplex[K], ...):
                                   kind is VECTOR or MATRIX */
} drift_typeexpr;

typedef enum drift_block_kind {
    DRIFT_BLOCK_DATA, DRIFT_BLOCK_ROWS, DRIFT_BLOCK_PARAM,
    DRIFT_BLOCK_PRIOR, DRIFT_BLOCK_DATUM,
    DRIFT_BLOCK_DERIVED,    /* named values of parameters and data, written
                               to the output and usable everywhere */
    DRIFT_BLOCK_GENERATED,  /* quantities drawn once per kept draw (_rng)
                               and per-row values, written to the output */
    DRIFT_BLOCK_TRANSFORMED,    /* named values of the data alone, computed
                                   once when the model is built and never
                                   written (Stan's transformed data) */
    DRIFT_N_BLOCKS
} drift_block_kind;

/* The keyword of a block kind ("data", ...). */
const char *drift_block_name(drift_block_kind k);

typedef struct drift_decl {
    const char *name;
    drift_loc loc;              /* the name */
    drift_typeexpr *type;
    drift_block_kind block;
    struct drift_decl *next;
    struct drift_sym *sym;      /* filled by resolve.c */
} drift_decl;

/* ---- statements ------------------------------------------------------------ */

typedef enum drift_stmt_kind {
    DRIFT_S_TILDE,   /* lhs ~ dist(args) [T[lo, hi]] */
    DRIFT_S_TARGET,  /* target += value */
    DRIFT_S_LET,     /* name = value */
    /* Control flow, as written; drift_control_lower (stan_lower.c)
     * replaces these by the statements above before names are
     * resolved, so no later pass sees them. */
    DRIFT_S_FOR,     /* for (name in lhs:value) body */
    DRIFT_S_IF,      /* if (value) body else els */
    DRIFT_S_BLOCK,   /* { body } */
    DRIFT_S_ASSIGN,  /* lhs[...] = value: one element of a declared local */
    DRIFT_S_DECL,    /* name : type, a local given its value in parts */
    DRIFT_S_PRINT,   /* print(items): args holds the values; kept in
                        derived and generated, where it is evaluated */
    DRIFT_S_REJECT   /* reject(items), as print */
} drift_stmt_kind;

struct drift_dist;

/* One argument of print or reject, in order: a string or a value. */
typedef struct drift_pitem {
    const char *str;            /* NULL for a value */
    drift_expr *e;              /* the value (also in the statement's args) */
    struct drift_pitem *next;
} drift_pitem;

typedef struct drift_stmt {
    drift_stmt_kind kind;
    drift_loc loc;
    drift_expr *lhs;            /* TILDE */
    const char *dist;           /* TILDE */
    drift_loc dist_loc;
    drift_expr *args;           /* TILDE, linked by next */
    size_t n_args;
    drift_expr *value;          /* TARGET, LET */
    const char *name;           /* LET, FOR (the loop variable), DECL */
    drift_loc name_loc;
    /* TILDE: a truncation T[trunc_lo, trunc_hi] (NULL: that side open) */
    int truncated;
    drift_loc trunc_loc;
    drift_expr *trunc_lo, *trunc_hi;
    /* FOR, IF, BLOCK: the statements run (IF: when value holds, els
     * otherwise); FOR: lhs is the lower bound, value the upper */
    struct drift_stmt *body, *els;
    drift_typeexpr *type;       /* DECL */
    drift_pitem *items;         /* PRINT, REJECT; TARGET: the message of
                                   the reject it stands for (its value is
                                   cond ? negative_infinity() : 0) */
    int jacobian;               /* TARGET in prior: the log-Jacobian of a
                                   parameter's constraint transform (left
                                   out of the density without it) */
    struct drift_stmt *next;

    const struct drift_dist *d; /* TILDE, filled by resolve.c */
    struct drift_sym *sym;      /* LET, filled by resolve.c */
} drift_stmt;

typedef struct drift_block {
    drift_block_kind kind;
    drift_loc loc;              /* the keyword */
    drift_decl *decls;          /* DATA, ROWS, PARAM */
    drift_stmt *stmts;          /* PRIOR, DATUM */
    struct drift_block *next;
} drift_block;

/* ---- user functions ------------------------------------------------------ */

/* The unsized type of a function's parameter or value: an element kind
 * (INT, REAL, VECTOR or MATRIX) in n_arr array dimensions. */
typedef struct drift_ftype {
    drift_tkind kind;
    int n_arr;
    drift_loc loc;
} drift_ftype;

typedef struct drift_fparam {
    const char *name;
    drift_loc loc;
    drift_ftype type;
    struct drift_fparam *next;
} drift_fparam;

/* name(params) : ret { locals  return value }, inlined where it is
 * called (funcs.c); a name ending in _lpdf or _lpmf is a density usable
 * with '~'. */
typedef struct drift_func {
    const char *name;
    drift_loc name_loc;
    drift_fparam *params;
    size_t n_params;
    drift_ftype ret;
    drift_stmt *body;           /* name = value statements */
    drift_expr *value;          /* what it returns */
    struct drift_func *next;
} drift_func;

/* An argument or a returned value of an inlined call, whose type
 * typecheck.c compares with the one the function declares. */
typedef struct drift_fcheck {
    const drift_func *f;
    const drift_fparam *param;  /* NULL: the returned value */
    drift_expr *value;
    drift_loc call_loc;
    struct drift_fcheck *next;
} drift_fcheck;

/* ---- symbols ------------------------------------------------------------- */

/* The number of rows' name that no declaration shadows (N is it unless
 * the data declare an N). */
#define DRIFT_ROWS_NAME "N__"

typedef enum drift_sym_kind {
    DRIFT_SYM_DATA,   /* declared in data */
    DRIFT_SYM_ROWS,   /* declared in rows: one value per datum */
    DRIFT_SYM_PARAM,  /* declared in param */
    DRIFT_SYM_SIZE,   /* a size name used in a type but declared nowhere:
                         an int bound from the data */
    DRIFT_SYM_N,      /* the number of rows: named N, or N__ (DRIFT_ROWS_NAME)
                         when the data declare an N of their own */
    DRIFT_SYM_LOCAL   /* name = value in prior or datum */
} drift_sym_kind;

typedef struct drift_sym {
    drift_sym_kind kind;
    const char *name;
    drift_loc loc;              /* declaration (or first use for SIZE) */
    drift_decl *decl;           /* DATA, ROWS, PARAM */
    drift_stmt *let;            /* LOCAL */
    drift_block_kind block;     /* LOCAL: where it lives */
    size_t id;                  /* index in the program's symbol table */
    int used;
    /* filled by typecheck.c */
    drift_type type;
    int typed;                  /* 0: not yet, 1: in progress, 2: done */
    int rows, param;            /* as drift_expr */
    /* int scalars (SIZE, N and int DATA scalars): the value once bound */
    int have_value;
    long value;
} drift_sym;

/* ---- the program -------------------------------------------------------- */

typedef struct drift_program {
    drift_arena *arena;
    const struct drift_source *src;
    drift_block *blocks;                    /* in source order */
    drift_block *block[DRIFT_N_BLOCKS];     /* filled by resolve.c */
    drift_func *funcs;                      /* the functions block */
    drift_fcheck *fchecks;                  /* filled by funcs.c */
    drift_sym **syms;                       /* filled by resolve.c */
    size_t n_syms, cap_syms;
    const char *origin;     /* how the program was obtained when it was
                               not written in drift's language (the Stan
                               front end's decomposition into rows), for
                               drift check; NULL otherwise */
    const char *whole_why;  /* a Stan program lowered whole (its data one
                               datum): the statement that couples the rows,
                               for the minibatch samplers' refusal; NULL
                               otherwise */
} drift_program;

/* AST constructors used by the grammar.  Each returns NULL when the arena
 * is out of memory (the grammar then aborts the parse). */
drift_expr *drift_ast_num(drift_arena *a, drift_loc loc, double v, int is_int);
drift_expr *drift_ast_name(drift_arena *a, drift_loc loc, const char *name);
drift_expr *drift_ast_call(drift_arena *a, drift_loc loc, const char *name,
                           drift_loc name_loc, drift_expr *args,
                           size_t n_args);
drift_expr *drift_ast_index(drift_arena *a, drift_loc loc, drift_expr *base,
                            drift_expr *args, size_t n_args);
drift_expr *drift_ast_binop(drift_arena *a, drift_loc loc, drift_binop op,
                            drift_expr *x, drift_expr *y);
drift_expr *drift_ast_neg(drift_arena *a, drift_loc loc, drift_expr *x);
drift_expr *drift_ast_not(drift_arena *a, drift_loc loc, drift_expr *x);
drift_expr *drift_ast_cond(drift_arena *a, drift_loc loc, drift_expr *c,
                           drift_expr *x, drift_expr *y);

/* A rewrite of expressions into new ones (inlining, substitution): a
 * copy of e with each NAME node replaced by name(rw, node) and each CALL
 * node, once its arguments are rewritten, by call(rw, copy); nodes for
 * which keep() holds, and literals, are shared as they are.  A NULL
 * callback keeps its nodes.  A node a callback returns may appear in
 * several places of the result (an argument a function uses twice), so
 * the passes that annotate nodes in place see it once per use.  Returns NULL
 * with failed set when a callback returns NULL (having said why) or the
 * arena is out of memory. */
typedef struct drift_rewriter {
    drift_arena *A;
    drift_expr *(*name)(struct drift_rewriter *rw, drift_expr *e);
    drift_expr *(*call)(struct drift_rewriter *rw, drift_expr *e);
    int (*keep)(const drift_expr *e);
    int fresh;      /* the callbacks return a new node for each use: a
                       list links it in place rather than a copy */
    int failed;
    /* x[...] before its parts are rewritten: a replacement, or NULL to
     * rewrite it as any other (may be NULL) */
    drift_expr *(*index)(struct drift_rewriter *rw, drift_expr *e);
} drift_rewriter;

drift_expr *drift_ast_rewrite(drift_rewriter *rw, drift_expr *e);
/* A list (linked by next) rewritten element by element into fresh nodes;
 * *n their number. */
drift_expr *drift_ast_rewrite_list(drift_rewriter *rw, drift_expr *args,
                                   size_t *n);

/* Whether e calls (anywhere inside it) a function whose name pred
 * accepts. */
int drift_ast_calls(const drift_expr *e, int (*pred)(const char *name));
/* Whether name is a random draw's (ends in _rng). */
int drift_ast_is_rng(const char *name);

/* Spelling of a binary operator ("+", ".*", ...). */
const char *drift_binop_name(drift_binop op);

#endif
