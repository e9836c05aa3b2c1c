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
    DRIFT_S_TILDE,   /* lhs ~ dist(args) */
    DRIFT_S_TARGET,  /* target += value */
    DRIFT_S_LET      /* name = value */
} drift_stmt_kind;

struct drift_dist;

typedef struct drift_stmt {
    drift_stmt_kind kind;
    drift_loc loc;
    drift_expr *lhs;            /* TILDE */
    const char *dist;           /* TILDE */
    drift_loc dist_loc;
    drift_expr *args;           /* TILDE, linked by next */
    size_t n_args;
    drift_expr *value;          /* TARGET, LET */
    const char *name;           /* LET */
    drift_loc name_loc;
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

/* Spelling of a binary operator ("+", ".*", ...). */
const char *drift_binop_name(drift_binop op);

#endif
