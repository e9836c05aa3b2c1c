/* typecheck.c: types and shapes, the pass after name resolution.  Every
 * declaration gets its type (sizes evaluated where their values are
 * bound), every expression its type, shape and whether it depends on the
 * rows or the parameters; operators, calls, indices and distributions are
 * checked against them, and a mismatch names both shapes.  Not for
 * values (the graph builder). */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "front.h"
#include "parse.h"

typedef struct checker {
    drift_program *p;
    drift_diag *d;
    size_t errors;
} checker;

#define TYPE_TEXT 128

static void error(checker *c, drift_loc loc, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void error(checker *c, drift_loc loc, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    drift_diag_error(c->d, c->p->src, loc, "%s", msg);
    c->errors++;
}

static drift_type scalar_type(drift_tkind k)
{
    drift_type t;
    memset(&t, 0, sizeof t);
    t.kind = k;
    return t;
}

static drift_dim no_dim(void)
{
    drift_dim d = {-1, NULL};
    return d;
}

static int is_scalar(const drift_type *t)
{
    return t->n_arr == 0 &&
           (t->kind == DRIFT_T_INT || t->kind == DRIFT_T_REAL);
}

static int is_scalar_kind(drift_tkind k)
{
    return k == DRIFT_T_INT || k == DRIFT_T_REAL;
}

static int is_int_scalar(const drift_type *t)
{
    return t->n_arr == 0 && t->kind == DRIFT_T_INT;
}

/* 1: equal, 0: known to differ, -1: not known yet. */
static int dim_cmp(drift_dim a, drift_dim b)
{
    if (a.n >= 0 && b.n >= 0)
        return a.n == b.n;
    if (a.sym && b.sym && !strcmp(a.sym, b.sym))
        return 1;
    return -1;
}

/* The dimensions of a type, outermost first (arrays, then the element's). */
static int flat_dims(const drift_type *t, drift_dim *out)
{
    int n = 0;
    for (int k = 0; k < t->n_arr; k++)
        out[n++] = t->arr[k];
    if (t->kind == DRIFT_T_VECTOR)
        out[n++] = t->dim[0];
    if (t->kind == DRIFT_T_MATRIX) {
        out[n++] = t->dim[0];
        out[n++] = t->dim[1];
    }
    return n;
}

/* Whether two shapes hold the same elements in the same layout (vector[n]
 * and array[n] real do; int and real elements mix). */
static int same_layout(const drift_type *a, const drift_type *b)
{
    drift_dim da[DRIFT_MAX_ARRAY + 2], db[DRIFT_MAX_ARRAY + 2];
    int na = flat_dims(a, da), nb = flat_dims(b, db);
    if (na != nb)
        return 0;
    for (int k = 0; k < na; k++)
        if (dim_cmp(da[k], db[k]) == 0)
            return 0;
    return 1;
}

/* Same kind and dimensions, for arithmetic. */
static int same_shape(const drift_type *a, const drift_type *b)
{
    if (a->n_arr != b->n_arr)
        return 0;
    int ka = a->kind == DRIFT_T_INT ? DRIFT_T_REAL : (int)a->kind;
    int kb = b->kind == DRIFT_T_INT ? DRIFT_T_REAL : (int)b->kind;
    return ka == kb && same_layout(a, b);
}

static const char *tname(const drift_type *t, char *buf)
{
    drift_type_format(t, buf, TYPE_TEXT);
    return buf;
}

/* A sparse_vector may only be an argument of dot(); every other use of
 * one is refused where it occurs, naming the uses that are allowed.
 * Returns 1 (after reporting) when e is a sparse_vector. */
static int sparse_use(checker *c, const drift_expr *e)
{
    if (e->type.kind != DRIFT_T_SPARSE)
        return 0;
    char t[TYPE_TEXT], who[80];
    const char *n = e->kind == DRIFT_E_NAME ? e->name : "x";
    if (e->kind == DRIFT_E_NAME)
        snprintf(who, sizeof who, "'%s'", e->name);
    else
        snprintf(who, sizeof who, "this");
    error(c, e->loc,
          "%s is a %s: a sparse_vector can only be an argument of dot(), "
          "as dot(%s, v) or dot(v, %s) with v a vector of the same length",
          who, tname(&e->type, t), n, n);
    return 1;
}

int drift_eval_size(const drift_expr *e, long *out)
{
    long a, b;
    const long LIM = 1L << 40;
    switch (e->kind) {
    case DRIFT_E_NUM:
        if (!e->is_int)
            return -1;
        *out = (long)e->num;
        return 0;
    case DRIFT_E_NAME: {
        const drift_sym *s = e->sym;
        if (!s || !s->have_value)
            return -1;
        *out = s->value;
        return 0;
    }
    case DRIFT_E_NEG:
        if (drift_eval_size(e->a, &a))
            return -1;
        *out = -a;
        return 0;
    case DRIFT_E_BINOP:
        if (drift_eval_size(e->a, &a) || drift_eval_size(e->b, &b))
            return -1;
        if (a > LIM || a < -LIM || b > LIM || b < -LIM)
            return -1;
        switch (e->op) {
        case DRIFT_OP_ADD: *out = a + b; return 0;
        case DRIFT_OP_SUB: *out = a - b; return 0;
        case DRIFT_OP_MUL:
            if ((a > 1 << 20 || a < -(1 << 20)) &&
                (b > 1 << 20 || b < -(1 << 20)))
                return -1;
            *out = a * b;
            return 0;
        default: return -1;
        }
    default:
        return -1;
    }
}

static void check_expr(checker *c, drift_expr *e);
static void sym_type(checker *c, drift_sym *s);

/* The value of a size expression, checked to be an int of the data. */
static drift_dim size_dim(checker *c, drift_expr *e, const char *what)
{
    drift_dim d = no_dim();
    check_expr(c, e);
    if (e->type.kind == DRIFT_T_ERROR)
        return d;
    if (!is_int_scalar(&e->type)) {
        char t[TYPE_TEXT];
        error(c, e->loc, "the %s must be an int, found %s", what,
              tname(&e->type, t));
        return d;
    }
    if (e->kind == DRIFT_E_NAME)
        d.sym = e->name;
    long v;
    if (drift_eval_size(e, &v) == 0) {
        if (v < 0) {
            error(c, e->loc, "the %s is %ld; sizes cannot be negative", what,
                  v);
            return d;
        }
        if (v > (1L << 31)) {
            error(c, e->loc, "the %s is %ld, more than drift allows (2^31)",
                  what, v);
            return d;
        }
        d.n = v;
    }
    return d;
}

static void bound_check(checker *c, drift_expr *b, const char *which)
{
    check_expr(c, b);
    if (b->type.kind == DRIFT_T_ERROR)
        return;
    if (!is_scalar(&b->type)) {
        char t[TYPE_TEXT];
        error(c, b->loc, "the %s bound must be a scalar, found %s", which,
              tname(&b->type, t));
    }
}

/* Where a sparse_vector may be declared: a rows variable (one sparse row
 * per datum), not in an array, without bounds.  Reports and returns 0
 * otherwise. */
static int sparse_decl_ok(checker *c, const drift_sym *s)
{
    const drift_typeexpr *te = s->decl->type;
    if (s->kind != DRIFT_SYM_ROWS) {
        error(c, te->loc,
              "'%s' is declared sparse_vector in the %s block; a "
              "sparse_vector is a rows variable (one sparse row per datum, "
              "e.g. LIBSVM features): declare it in the rows block, or "
              "declare a vector",
              s->name, drift_block_name(s->decl->block));
        return 0;
    }
    if (te->n_arr) {
        error(c, te->loc,
              "'%s': arrays of sparse_vector are not supported; a rows "
              "variable holds one sparse_vector per datum",
              s->name);
        return 0;
    }
    if (te->lower || te->upper) {
        error(c, te->lower ? te->lower_loc : te->upper_loc,
              "'%s': a sparse_vector takes no bounds", s->name);
        return 0;
    }
    return 1;
}

static void sym_type(checker *c, drift_sym *s)
{
    if (s->typed == 2)
        return;
    if (s->typed == 1) {
        error(c, s->loc, "the type of '%s' depends on itself", s->name);
        s->type = scalar_type(DRIFT_T_ERROR);
        s->typed = 2;
        return;
    }
    switch (s->kind) {
    case DRIFT_SYM_SIZE:
    case DRIFT_SYM_N:
        s->type = scalar_type(DRIFT_T_INT);
        s->typed = 2;
        return;
    case DRIFT_SYM_LOCAL:
        /* Typed when its statement is checked; an earlier use cannot
         * exist (resolution is in order). */
        if (!s->typed)
            s->type = scalar_type(DRIFT_T_ERROR);
        return;
    default:
        break;
    }
    s->typed = 1;
    drift_typeexpr *te = s->decl->type;
    drift_type t = scalar_type(te->kind);
    char what[96];
    for (int k = 0; k < te->n_arr; k++) {
        snprintf(what, sizeof what, "array size of '%s'", s->name);
        t.arr[k] = size_dim(c, te->arr_size[k], what);
    }
    t.n_arr = te->n_arr;
    if (te->kind == DRIFT_T_VECTOR || te->kind == DRIFT_T_SPARSE) {
        snprintf(what, sizeof what, "size of '%s'", s->name);
        t.dim[0] = size_dim(c, te->size[0], what);
    } else if (te->kind == DRIFT_T_MATRIX) {
        snprintf(what, sizeof what, "row count of '%s'", s->name);
        t.dim[0] = size_dim(c, te->size[0], what);
        if (te->size[1]) {
            snprintf(what, sizeof what, "column count of '%s'", s->name);
            t.dim[1] = size_dim(c, te->size[1], what);
        } else {
            t.dim[1] = t.dim[0]; /* square: cov_matrix[K], ... */
        }
        if (te->con == DRIFT_CON_CHOL_COV && t.dim[0].n >= 0 &&
            t.dim[1].n >= 0 && t.dim[0].n < t.dim[1].n)
            error(c, te->loc,
                  "'%s' is cholesky_factor_cov[%ld, %ld]: a Cholesky factor "
                  "needs at least as many rows as columns",
                  s->name, t.dim[0].n, t.dim[1].n);
    }
    if (te->lower)
        bound_check(c, te->lower, "lower");
    if (te->upper)
        bound_check(c, te->upper, "upper");
    if (s->kind == DRIFT_SYM_PARAM && te->kind == DRIFT_T_INT)
        error(c, te->loc,
              "parameter '%s' is declared int; parameters are real-valued "
              "(declare it real, or move it to the data block)",
              s->name);
    if (te->kind == DRIFT_T_SPARSE && !sparse_decl_ok(c, s))
        t = scalar_type(DRIFT_T_ERROR);
    s->type = t;
    s->rows = s->kind == DRIFT_SYM_ROWS;
    s->param = s->kind == DRIFT_SYM_PARAM;
    s->typed = 2;
}

static void set_flags(drift_expr *e, const drift_expr *a, const drift_expr *b)
{
    e->rows = (a && a->rows) || (b && b->rows);
    e->param = (a && a->param) || (b && b->param);
}

static int any_error(const drift_expr *a, const drift_expr *b)
{
    return (a && a->type.kind == DRIFT_T_ERROR) ||
           (b && b->type.kind == DRIFT_T_ERROR);
}

/* Elementwise typing with scalar broadcasting, for + - .* ./ ^ pow and
 * the binary log_sum_exp.  keep_int: int op int stays int. */
static drift_type elementwise(checker *c, drift_loc loc, const char *what,
                              const drift_type *a, const drift_type *b,
                              int keep_int)
{
    char ta[TYPE_TEXT], tb[TYPE_TEXT];
    if (is_scalar(a) && is_scalar(b))
        return scalar_type(keep_int && a->kind == DRIFT_T_INT &&
                                   b->kind == DRIFT_T_INT
                               ? DRIFT_T_INT
                               : DRIFT_T_REAL);
    if (a->n_arr || b->n_arr) {
        error(c, loc,
              "%s does not apply to arrays (operands %s and %s); declare a "
              "vector, or index the array",
              what, tname(a, ta), tname(b, tb));
        return scalar_type(DRIFT_T_ERROR);
    }
    if (is_scalar(a))
        return *b;
    if (is_scalar(b))
        return *a;
    if (!same_shape(a, b)) {
        error(c, loc, "the operands of %s have different shapes: %s and %s",
              what, tname(a, ta), tname(b, tb));
        return scalar_type(DRIFT_T_ERROR);
    }
    return *a;
}

static void check_binop(checker *c, drift_expr *e)
{
    check_expr(c, e->a);
    check_expr(c, e->b);
    set_flags(e, e->a, e->b);
    e->type = scalar_type(DRIFT_T_ERROR);
    if (any_error(e->a, e->b) || sparse_use(c, e->a) || sparse_use(c, e->b))
        return;
    const drift_type *a = &e->a->type, *b = &e->b->type;
    char ta[TYPE_TEXT], tb[TYPE_TEXT], what[32];
    snprintf(what, sizeof what, "'%s'", drift_binop_name(e->op));
    switch (e->op) {
    case DRIFT_OP_ADD:
    case DRIFT_OP_SUB:
    case DRIFT_OP_EMUL:
        e->type = elementwise(c, e->loc, what, a, b, 1);
        return;
    case DRIFT_OP_EDIV:
    case DRIFT_OP_POW:
    case DRIFT_OP_DIV:
        e->type = elementwise(c, e->loc, what, a, b, 0);
        if (is_scalar(&e->type))
            e->type.kind = e->type.kind == DRIFT_T_ERROR ? DRIFT_T_ERROR
                                                         : DRIFT_T_REAL;
        return;
    case DRIFT_OP_MUL:
        break;
    case DRIFT_OP_LT: case DRIFT_OP_LE: case DRIFT_OP_GT: case DRIFT_OP_GE:
    case DRIFT_OP_EQ: case DRIFT_OP_NE: case DRIFT_OP_AND: case DRIFT_OP_OR:
        if (!is_scalar(a) || !is_scalar(b)) {
            error(c, e->loc,
                  "%s takes scalars (int or real), given %s and %s", what,
                  tname(a, ta), tname(b, tb));
            return;
        }
        e->type = scalar_type(DRIFT_T_INT);
        return;
    }
    if (is_scalar(a) || is_scalar(b)) {
        e->type = elementwise(c, e->loc, what, a, b, 1);
        return;
    }
    if (a->kind == DRIFT_T_VECTOR && b->kind == DRIFT_T_VECTOR &&
        !a->n_arr && !b->n_arr) {
        /* Stan refuses it; accepting it as elementwise once turned
         * poisson_log(x * beta) into one term per element. */
        error(c, e->loc,
              "%s * %s is not defined (vectors are columns): write "
              "dot(a, b) for the inner product, or a .* b for the "
              "elementwise product",
              tname(a, ta), tname(b, tb));
        return;
    }
    if (a->n_arr || b->n_arr) {
        error(c, e->loc,
              "%s * %s is not defined: '*' does not apply to arrays; use "
              ".* for elementwise products",
              tname(a, ta), tname(b, tb));
        return;
    }
    if (a->kind == DRIFT_T_MATRIX && b->kind == DRIFT_T_VECTOR) {
        if (dim_cmp(a->dim[1], b->dim[0]) == 0) {
            error(c, e->loc,
                  "matrix times vector needs as many matrix columns as "
                  "vector entries: %s * %s",
                  tname(a, ta), tname(b, tb));
            return;
        }
        e->type = scalar_type(DRIFT_T_VECTOR);
        e->type.dim[0] = a->dim[0];
        return;
    }
    if (a->kind == DRIFT_T_MATRIX && b->kind == DRIFT_T_MATRIX) {
        if (dim_cmp(a->dim[1], b->dim[0]) == 0) {
            error(c, e->loc,
                  "matrix product needs the left's columns to match the "
                  "right's rows: %s * %s",
                  tname(a, ta), tname(b, tb));
            return;
        }
        e->type = scalar_type(DRIFT_T_MATRIX);
        e->type.dim[0] = a->dim[0];
        e->type.dim[1] = b->dim[1];
        return;
    }
    error(c, e->loc,
          "%s * %s is not defined (vectors are columns): write matrix * "
          "vector, or use .* for elementwise products",
          tname(a, ta), tname(b, tb));
}

static void check_index(checker *c, drift_expr *e)
{
    check_expr(c, e->a);
    set_flags(e, e->a, NULL);
    e->type = scalar_type(DRIFT_T_ERROR);
    int bad = e->a->type.kind == DRIFT_T_ERROR || sparse_use(c, e->a);
    for (drift_expr *i = e->args; i; i = i->next) {
        check_expr(c, i);
        e->rows |= i->rows;
        if (i->type.kind == DRIFT_T_ERROR || sparse_use(c, i)) {
            bad = 1;
            continue;
        }
        char t[TYPE_TEXT];
        if (!is_int_scalar(&i->type)) {
            error(c, i->loc, "an index must be an int, found %s",
                  tname(&i->type, t));
            bad = 1;
        } else if (i->param) {
            error(c, i->loc, "an index cannot depend on a parameter");
            bad = 1;
        }
    }
    if (bad)
        return;
    drift_type t = e->a->type;
    char tt[TYPE_TEXT];
    for (drift_expr *i = e->args; i; i = i->next) {
        drift_dim range;
        drift_type next;
        if (t.n_arr > 0) {
            range = t.arr[0];
            next = t;
            for (int k = 1; k < t.n_arr; k++)
                next.arr[k - 1] = t.arr[k];
            next.n_arr--;
        } else if (t.kind == DRIFT_T_VECTOR) {
            range = t.dim[0];
            next = scalar_type(DRIFT_T_REAL);
        } else if (t.kind == DRIFT_T_MATRIX) {
            range = t.dim[0];
            next = scalar_type(DRIFT_T_VECTOR);
            next.dim[0] = t.dim[1];
        } else {
            error(c, i->loc, "too many indices: the value indexed is %s",
                  tname(&t, tt));
            return;
        }
        long v;
        if (drift_eval_size(i, &v) == 0 && range.n >= 0 &&
            (v < 1 || v > range.n)) {
            error(c, i->loc,
                  "index %ld is out of range for %s (indices run from 1 "
                  "to %ld)",
                  v, tname(&t, tt), range.n);
            return;
        }
        t = next;
    }
    e->type = t;
}

static void check_density(checker *c, const drift_dist *d, drift_expr *lhs,
                          drift_expr *args, size_t n_args,
                          drift_loc dist_loc);

static drift_dim dim_sum(drift_dim a, drift_dim b)
{
    drift_dim d = {-1, NULL};
    if (a.n >= 0 && b.n >= 0)
        d.n = a.n + b.n;
    return d;
}

static drift_dim dim_of(long n)
{
    drift_dim d = {n, NULL};
    return d;
}

static drift_type vec_type(drift_dim n)
{
    drift_type t = scalar_type(DRIFT_T_VECTOR);
    t.dim[0] = n;
    return t;
}

static drift_type mat_type(drift_dim r, drift_dim cl)
{
    drift_type t = scalar_type(DRIFT_T_MATRIX);
    t.dim[0] = r;
    t.dim[1] = cl;
    return t;
}

static int is_vec(const drift_type *t)
{
    return !t->n_arr && t->kind == DRIFT_T_VECTOR;
}

static int is_mat(const drift_type *t)
{
    return !t->n_arr && t->kind == DRIFT_T_MATRIX;
}

static int is_square(const drift_type *t)
{
    return t->kind == DRIFT_T_MATRIX && !t->n_arr &&
           dim_cmp(t->dim[0], t->dim[1]) != 0;
}

/* A size argument (rep_vector's n, head's n, ...): an int whose value the
 * data give; its value or -1 while sizes are unbound. */
static drift_dim size_arg(checker *c, drift_expr *e, const char *fn,
                          int *bad)
{
    drift_dim d = no_dim();
    char t[TYPE_TEXT];
    if (!is_int_scalar(&e->type) || e->param || e->rows) {
        error(c, e->loc, "the size given to '%s' must be an int of the data, "
                         "found %s%s",
              fn, tname(&e->type, t),
              e->param ? " depending on a parameter"
                       : e->rows ? " varying by row" : "");
        *bad = 1;
        return d;
    }
    long v;
    if (drift_eval_size(e, &v) == 0) {
        if (v < 0) {
            error(c, e->loc, "the size given to '%s' is %ld", fn, v);
            *bad = 1;
            return d;
        }
        d.n = v;
    }
    return d;
}

/* Functions with their own typing rules (DRIFT_RULE_SPECIAL). */
static void check_special(checker *c, drift_expr *e, int n)
{
    const drift_type *a = &e->args->type;
    const drift_type *b = n > 1 ? &e->args->next->type : NULL;
    drift_expr *a3 = n > 2 ? e->args->next->next : NULL;
    char ta[TYPE_TEXT], tb[TYPE_TEXT];
    const char *f = e->name;
    int bad = 0;
    switch (e->fn->id) {
    case DRIFT_FN_LOG_MIX:
        if (n == 3) {
            drift_type t = elementwise(c, e->loc, "function 'log_mix'", a, b,
                                       0);
            if (t.kind != DRIFT_T_ERROR)
                t = elementwise(c, e->loc, "function 'log_mix'", &t,
                                &a3->type, 0);
            if (t.kind == DRIFT_T_INT)
                t.kind = DRIFT_T_REAL;
            e->type = t;
            return;
        }
        if (!is_vec(a) || !is_vec(b) || dim_cmp(a->dim[0], b->dim[0]) == 0) {
            error(c, e->loc,
                  "log_mix(theta, lambda) takes a simplex and a vector of "
                  "log densities of the same length, given %s and %s",
                  tname(a, ta), tname(b, tb));
            return;
        }
        e->type = scalar_type(DRIFT_T_REAL);
        return;
    case DRIFT_FN_SOFTMAX:
    case DRIFT_FN_LOG_SOFTMAX:
    case DRIFT_FN_CUMULATIVE_SUM:
        if (is_vec(a) || (e->fn->id == DRIFT_FN_CUMULATIVE_SUM &&
                          a->n_arr == 1 && is_scalar_kind(a->kind))) {
            e->type = *a;
            if (e->fn->id != DRIFT_FN_CUMULATIVE_SUM)
                e->type.kind = DRIFT_T_VECTOR;
            return;
        }
        error(c, e->loc, "function '%s' takes a vector, given %s", f,
              tname(a, ta));
        return;
    case DRIFT_FN_APPEND_ROW:
        if ((is_vec(a) || is_scalar(a)) && (is_vec(b) || is_scalar(b))) {
            e->type = vec_type(dim_sum(is_vec(a) ? a->dim[0] : dim_of(1),
                                       is_vec(b) ? b->dim[0] : dim_of(1)));
            return;
        }
        if (is_mat(a) && is_mat(b) && dim_cmp(a->dim[1], b->dim[1]) != 0) {
            e->type = mat_type(dim_sum(a->dim[0], b->dim[0]), a->dim[1]);
            return;
        }
        error(c, e->loc,
              "append_row takes two vectors (or reals), or two matrices with "
              "as many columns, given %s and %s",
              tname(a, ta), tname(b, tb));
        return;
    case DRIFT_FN_APPEND_COL: {
        if ((is_vec(a) || is_mat(a)) && (is_vec(b) || is_mat(b))) {
            drift_dim ca = is_vec(a) ? dim_of(1) : a->dim[1];
            drift_dim cb = is_vec(b) ? dim_of(1) : b->dim[1];
            if (dim_cmp(a->dim[0], b->dim[0]) != 0) {
                e->type = mat_type(a->dim[0], dim_sum(ca, cb));
                return;
            }
        }
        error(c, e->loc,
              "append_col takes two matrices (or vectors, as columns) with "
              "as many rows, given %s and %s",
              tname(a, ta), tname(b, tb));
        return;
    }
    case DRIFT_FN_ROWS_DOT_PRODUCT:
        if ((is_mat(a) || is_vec(a)) && same_shape(a, b)) {
            e->type = vec_type(a->dim[0]);
            return;
        }
        error(c, e->loc,
              "rows_dot_product takes two matrices (or vectors) of the same "
              "shape, given %s and %s",
              tname(a, ta), tname(b, tb));
        return;
    case DRIFT_FN_DIAG_PRE_MULTIPLY:
        if (is_vec(a) && is_mat(b) && dim_cmp(a->dim[0], b->dim[0]) != 0) {
            e->type = *b;
            return;
        }
        error(c, e->loc,
              "diag_pre_multiply(v, M) takes a vector with as many entries "
              "as M has rows, given %s and %s",
              tname(a, ta), tname(b, tb));
        return;
    case DRIFT_FN_DIAG_POST_MULTIPLY:
        if (is_mat(a) && is_vec(b) && dim_cmp(a->dim[1], b->dim[0]) != 0) {
            e->type = *a;
            return;
        }
        error(c, e->loc,
              "diag_post_multiply(M, v) takes a vector with as many entries "
              "as M has columns, given %s and %s",
              tname(a, ta), tname(b, tb));
        return;
    case DRIFT_FN_QUAD_FORM_DIAG:
        if (is_square(a) && is_vec(b) && dim_cmp(a->dim[0], b->dim[0]) != 0) {
            e->type = *a;
            return;
        }
        error(c, e->loc,
              "quad_form_diag(M, v) takes a square matrix and a vector of "
              "its size, given %s and %s",
              tname(a, ta), tname(b, tb));
        return;
    case DRIFT_FN_CHOLESKY_DECOMPOSE:
        if (is_square(a)) {
            e->type = *a;
            return;
        }
        error(c, e->loc, "cholesky_decompose takes a square matrix, given %s",
              tname(a, ta));
        return;
    case DRIFT_FN_MULTIPLY_LOWER_TRI_SELF_TRANSPOSE:
        if (is_mat(a)) {
            e->type = mat_type(a->dim[0], a->dim[0]);
            return;
        }
        error(c, e->loc, "%s takes a matrix, given %s", f, tname(a, ta));
        return;
    case DRIFT_FN_MDIVIDE_LEFT_TRI_LOW:
        if (is_square(a) && (is_vec(b) || is_mat(b)) &&
            dim_cmp(a->dim[0], b->dim[0]) != 0) {
            e->type = *b;
            return;
        }
        error(c, e->loc,
              "mdivide_left_tri_low(L, b) takes a square matrix and a vector "
              "or matrix with as many rows, given %s and %s",
              tname(a, ta), tname(b, tb));
        return;
    case DRIFT_FN_DIAGONAL:
        if (is_square(a)) {
            e->type = vec_type(a->dim[0]);
            return;
        }
        error(c, e->loc, "diagonal takes a square matrix, given %s",
              tname(a, ta));
        return;
    case DRIFT_FN_DIAG_MATRIX:
        if (is_vec(a)) {
            e->type = mat_type(a->dim[0], a->dim[0]);
            return;
        }
        error(c, e->loc, "diag_matrix takes a vector, given %s", tname(a, ta));
        return;
    case DRIFT_FN_TO_VECTOR:
        if (is_mat(a)) {
            drift_dim d = no_dim();
            if (a->dim[0].n >= 0 && a->dim[1].n >= 0)
                d.n = a->dim[0].n * a->dim[1].n;
            e->type = vec_type(d);
            return;
        }
        if (is_vec(a) || (a->n_arr == 1 && is_scalar_kind(a->kind))) {
            e->type = vec_type(is_vec(a) ? a->dim[0] : a->arr[0]);
            return;
        }
        error(c, e->loc,
              "to_vector takes a matrix, a vector or an array of reals, "
              "given %s",
              tname(a, ta));
        return;
    case DRIFT_FN_TRANSPOSE:
        if (is_mat(a)) {
            e->type = mat_type(a->dim[1], a->dim[0]);
            return;
        }
        error(c, e->loc,
              "transpose takes a matrix (drift has no row vectors: for a "
              "vector's inner product write dot(a, b)), given %s",
              tname(a, ta));
        return;
    case DRIFT_FN_REP_VECTOR:
    case DRIFT_FN_REP_MATRIX: {
        if (!is_scalar(a)) {
            error(c, e->loc, "function '%s' repeats a real, given %s", f,
                  tname(a, ta));
            return;
        }
        drift_dim r = size_arg(c, e->args->next, f, &bad);
        drift_dim cl = n > 2 ? size_arg(c, a3, f, &bad) : r;
        if (bad)
            return;
        e->type = n > 2 ? mat_type(r, cl) : vec_type(r);
        return;
    }
    case DRIFT_FN_HEAD:
    case DRIFT_FN_TAIL:
    case DRIFT_FN_SEGMENT: {
        if (!is_vec(a)) {
            error(c, e->loc, "function '%s' takes a vector, given %s", f,
                  tname(a, ta));
            return;
        }
        drift_dim first = no_dim();
        if (n > 2)
            first = size_arg(c, e->args->next, f, &bad);
        drift_dim len = size_arg(c, n > 2 ? a3 : e->args->next, f, &bad);
        if (bad)
            return;
        long start = n > 2 ? first.n : 1;
        if (len.n >= 0 && a->dim[0].n >= 0 && start >= 0 &&
            (start < 1 || start - 1 + len.n > a->dim[0].n)) {
            error(c, e->loc,
                  "function '%s' takes %ld entries from %ld of %s, beyond its "
                  "end",
                  f, len.n, start, tname(a, ta));
            return;
        }
        e->type = vec_type(len);
        return;
    }
    case DRIFT_FN_ROWS:
    case DRIFT_FN_COLS:
    case DRIFT_FN_NUM_ELEMENTS:
        if (a->kind == DRIFT_T_SPARSE) {
            sparse_use(c, e->args);
            return;
        }
        e->type = scalar_type(DRIFT_T_INT);
        e->param = e->rows = 0; /* a size, known from the shape */
        return;
    case DRIFT_FN_DISTANCE:
    case DRIFT_FN_SQUARED_DISTANCE:
        if (is_vec(a) && same_shape(a, b)) {
            e->type = scalar_type(DRIFT_T_REAL);
            return;
        }
        error(c, e->loc, "function '%s' takes two vectors of the same "
                         "length, given %s and %s",
              f, tname(a, ta), tname(b, tb));
        return;
    case DRIFT_FN_GP_EXP_QUAD_COV: {
        drift_dim n_x = no_dim();
        if (a->n_arr == 1 && is_scalar_kind(a->kind))
            n_x = a->arr[0];
        else if (is_vec(a))
            n_x = a->dim[0];
        else if (a->n_arr == 1 && a->kind == DRIFT_T_VECTOR)
            n_x = a->arr[0];
        else {
            error(c, e->loc,
                  "gp_exp_quad_cov(x, alpha, rho) takes an array of reals, "
                  "a vector or an array of vectors, given %s",
                  tname(a, ta));
            return;
        }
        if (e->args->param || e->args->rows) {
            error(c, e->args->loc,
                  "gp_exp_quad_cov: the inputs x must be data (not %s)",
                  e->args->param ? "parameters" : "rows variables");
            return;
        }
        if (!is_scalar(b) || !is_scalar(&a3->type)) {
            error(c, e->loc,
                  "gp_exp_quad_cov: alpha and rho are reals, given %s and %s",
                  tname(b, ta), tname(&a3->type, tb));
            return;
        }
        e->type = mat_type(n_x, n_x);
        return;
    }
    case DRIFT_FN_ADD_DIAG:
        if (is_square(a) && (is_scalar(b) || (is_vec(b) && dim_cmp(
                                                  a->dim[0], b->dim[0]) != 0))) {
            e->type = *a;
            return;
        }
        error(c, e->loc,
              "add_diag(M, d) takes a square matrix and a real or a vector "
              "of its size, given %s and %s",
              tname(a, ta), tname(b, tb));
        return;
    default:
        return;
    }
}

/* Elements per vector of a vector or an array of vectors (the K of
 * vector[K] and array[J] vector[K]); -1 when t is neither. */
static int vec_elem(const drift_type *t, drift_dim *K)
{
    if (t->kind != DRIFT_T_VECTOR || t->n_arr > 1)
        return -1;
    *K = t->dim[0];
    return 0;
}

/* name_rng(args): the draw has the shape of the arguments (int for the
 * discrete distributions: an array of ints where the arguments are
 * vectors), or the outcome's shape for the multivariate ones. */
static void check_rng(checker *c, drift_expr *e)
{
    const drift_dist *d = e->dist;
    int bad = 0;
    int n = 0;
    for (drift_expr *a = e->args; a; a = a->next, n++) {
        check_expr(c, a);
        e->rows |= a->rows;
        e->param |= a->param;
        bad |= a->type.kind == DRIFT_T_ERROR || sparse_use(c, a);
    }
    if (bad)
        return;
    char t1[TYPE_TEXT], t2[TYPE_TEXT];
    int want = d->rule == DRIFT_DRULE_LKJ ? 2 : d->n_args;
    if (n != want) {
        error(c, e->loc, "%s takes %d argument%s, given %d", e->name, want,
              want == 1 ? "" : "s", n);
        return;
    }
    /* The first argument; NULL for a draw that takes none (std_normal_rng),
     * which only the elementwise rule allows. */
    const drift_type *a = e->args ? &e->args->type : NULL;
    drift_dim K;
    switch (d->rule) {
    case DRIFT_DRULE_ELEM: {
        const drift_type *common = NULL;
        int k = 0;
        for (drift_expr *x = e->args; x; x = x->next, k++) {
            if (d->arg_int[k] && x->type.kind != DRIFT_T_INT) {
                error(c, x->loc, "argument %s of %s must be an int, found %s",
                      d->arg_names[k], e->name, tname(&x->type, t1));
                return;
            }
            if (is_scalar(&x->type))
                continue;
            if (common && !same_layout(common, &x->type)) {
                error(c, x->loc, "the arguments of %s have different shapes: "
                                 "%s and %s",
                      e->name, tname(common, t1), tname(&x->type, t2));
                return;
            }
            common = &x->type;
        }
        drift_type t = common ? *common : scalar_type(DRIFT_T_REAL);
        if (d->discrete) {
            if (t.kind == DRIFT_T_MATRIX) {
                error(c, e->loc, "%s of matrices: there are no int matrices; "
                                 "pass vectors or arrays",
                      e->name);
                return;
            }
            if (t.kind == DRIFT_T_VECTOR && t.n_arr >= DRIFT_MAX_ARRAY) {
                error(c, e->loc, "%s of %s: the draws would be an array of "
                                 "more than %d dimensions",
                      e->name, tname(&t, t1), DRIFT_MAX_ARRAY);
                return;
            }
            if (t.kind == DRIFT_T_VECTOR) {
                t.arr[t.n_arr++] = t.dim[0];
                t.dim[0] = no_dim();
            }
            t.kind = DRIFT_T_INT;
        } else if (t.kind == DRIFT_T_INT) {
            t.kind = DRIFT_T_REAL;
        }
        e->type = t;
        return;
    }
    case DRIFT_DRULE_CATLOGIT:
    case DRIFT_DRULE_CATEGORICAL:
        if (!is_vec(a)) {
            error(c, e->loc, "%s takes a vector, given %s", e->name,
                  tname(a, t1));
            return;
        }
        e->type = scalar_type(DRIFT_T_INT);
        return;
    case DRIFT_DRULE_DIRICHLET:
        if (!is_vec(a)) {
            error(c, e->loc, "%s takes a vector alpha, given %s", e->name,
                  tname(a, t1));
            return;
        }
        e->type = *a;
        return;
    case DRIFT_DRULE_MVN: {
        const drift_type *S = &e->args->next->type;
        if (vec_elem(a, &K) || !is_square(S) || dim_cmp(S->dim[0], K) == 0) {
            error(c, e->loc,
                  "%s takes a vector location (or an array of them) and a "
                  "square matrix of its size, given %s and %s",
                  e->name, tname(a, t1), tname(S, t2));
            return;
        }
        e->type = *a;
        return;
    }
    case DRIFT_DRULE_LKJ: {
        drift_dim k = size_arg(c, e->args, e->name, &bad);
        if (bad)
            return;
        if (!is_scalar(&e->args->next->type)) {
            error(c, e->args->next->loc, "the shape eta of %s must be a real, "
                                         "given %s",
                  e->name, tname(&e->args->next->type, t2));
            return;
        }
        e->type = mat_type(k, k);
        return;
    }
    case DRIFT_DRULE_GLM: {
        /* one draw, or one per row of a matrix x */
        const drift_type *bt = &e->args->next->next->type;
        if (!(is_vec(a) || is_mat(a)) || !is_vec(bt)) {
            error(c, e->loc, "%s takes x a vector[K] or matrix[n, K] and "
                             "beta a vector[K], given %s and %s",
                  e->name, tname(a, t1), tname(bt, t2));
            return;
        }
        drift_type t = scalar_type(d->discrete ? DRIFT_T_INT : DRIFT_T_REAL);
        if (is_mat(a)) {
            if (d->discrete) {
                t.arr[0] = a->dim[0];
                t.n_arr = 1;
            } else {
                t = vec_type(a->dim[0]);
            }
        }
        e->type = t;
        return;
    }
    case DRIFT_DRULE_ORDERED: {
        /* one draw per eta */
        const drift_type *ct = &e->args->next->type;
        if (!(is_scalar(a) || is_vec(a)) || !is_vec(ct)) {
            error(c, e->loc, "%s takes eta a real (or vector) and the "
                             "cutpoints a vector, given %s and %s",
                  e->name, tname(a, t1), tname(ct, t2));
            return;
        }
        drift_type t = scalar_type(DRIFT_T_INT);
        if (is_vec(a)) {
            t.arr[0] = a->dim[0];
            t.n_arr = 1;
        }
        e->type = t;
        return;
    }
    }
}

/* mean(x), sd(x), ... over every row in the transformed block: the
 * argument one real or int per row, the value one real of the data. */
static void check_over_rows(checker *c, drift_expr *e)
{
    drift_expr *a = e->args;
    check_expr(c, a);
    e->type = scalar_type(DRIFT_T_REAL);
    e->rows = e->param = 0;
    if (a->type.kind == DRIFT_T_ERROR) {
        e->type = scalar_type(DRIFT_T_ERROR);
        return;
    }
    if (a->type.n_arr ||
        (a->type.kind != DRIFT_T_REAL && a->type.kind != DRIFT_T_INT)) {
        char t[TYPE_TEXT];
        error(c, a->loc,
              "%s over the rows takes one real or int per row, given %s "
              "per row",
              e->name, tname(&a->type, t));
        e->type = scalar_type(DRIFT_T_ERROR);
    }
}

static void check_call(checker *c, drift_expr *e)
{
    e->type = scalar_type(DRIFT_T_ERROR);
    if (e->fn && e->fn->id == DRIFT_FN_RNG) {
        check_rng(c, e);
        return;
    }
    if (e->fn && (e->fn->id == DRIFT_FN_DENSITY || e->fn->id == DRIFT_FN_LCDF ||
                  e->fn->id == DRIFT_FN_LCCDF || e->fn->id == DRIFT_FN_CDF)) {
        check_density(c, e->dist, e->args, e->args->next, e->n_args - 1,
                      e->name_loc);
        for (drift_expr *a = e->args; a; a = a->next) {
            e->rows |= a->rows;
            e->param |= a->param;
            if (a->type.kind == DRIFT_T_ERROR)
                return;
        }
        e->type = scalar_type(DRIFT_T_REAL);
        return;
    }
    int bad = 0;
    for (drift_expr *a = e->args; a; a = a->next) {
        check_expr(c, a);
        e->rows |= a->rows;
        e->param |= a->param;
        bad |= a->type.kind == DRIFT_T_ERROR;
    }
    const drift_builtin *fn = e->fn;
    if (!fn || bad)
        return;
    if (fn->rule != DRIFT_RULE_DOT)
        for (drift_expr *a = e->args; a; a = a->next)
            if (sparse_use(c, a))
                return;
    int n = (int)e->n_args;
    if (n < fn->min_args || n > fn->max_args) {
        if (fn->min_args == fn->max_args)
            error(c, e->loc, "function '%s' takes %d argument%s, given %d",
                  e->name, fn->min_args, fn->min_args == 1 ? "" : "s", n);
        else
            error(c, e->loc,
                  "function '%s' takes %d or %d arguments, given %d",
                  e->name, fn->min_args, fn->max_args, n);
        return;
    }
    if (n == 0) {
        e->type = scalar_type(DRIFT_T_REAL); /* pi(), e(), ... */
        return;
    }
    const drift_type *a = &e->args->type;
    const drift_type *b = n > 1 ? &e->args->next->type : NULL;
    char ta[TYPE_TEXT], tb[TYPE_TEXT], what[80];
    snprintf(what, sizeof what, "function '%s'", e->name);
    drift_fn_rule rule = fn->rule;
    if (rule == DRIFT_RULE_LSE)
        rule = n == 1 ? DRIFT_RULE_REDUCE : DRIFT_RULE_BINARY;
    switch (rule) {
    case DRIFT_RULE_UNARY:
        if (a->n_arr) {
            error(c, e->loc,
                  "function '%s' does not apply to arrays (given %s); "
                  "declare a vector",
                  e->name, tname(a, ta));
            return;
        }
        e->type = *a;
        if (a->kind == DRIFT_T_INT)
            e->type.kind = DRIFT_T_REAL;
        return;
    case DRIFT_RULE_BINARY:
        e->type = elementwise(c, e->loc, what, a, b, 0);
        if (e->type.kind == DRIFT_T_INT)
            e->type.kind = DRIFT_T_REAL;
        return;
    case DRIFT_RULE_REDUCE:
        if (a->n_arr && fn->id != DRIFT_FN_SUM && fn->id != DRIFT_FN_MEAN &&
            fn->id != DRIFT_FN_PROD) {
            error(c, e->loc,
                  "function '%s' takes a vector or matrix, given %s",
                  e->name, tname(a, ta));
            return;
        }
        e->type = scalar_type(DRIFT_T_REAL);
        return;
    case DRIFT_RULE_DOT:
        if (a->kind == DRIFT_T_SPARSE && b->kind == DRIFT_T_SPARSE) {
            error(c, e->loc,
                  "function '%s' of two sparse_vectors is not supported: "
                  "one argument must be a dense vector (usually the "
                  "parameters), as in dot(x, w)",
                  e->name);
            return;
        }
        if (a->n_arr || b->n_arr ||
            (a->kind != DRIFT_T_VECTOR && a->kind != DRIFT_T_SPARSE) ||
            (b->kind != DRIFT_T_VECTOR && b->kind != DRIFT_T_SPARSE)) {
            error(c, e->loc, "function '%s' takes two vectors, given %s and %s",
                  e->name, tname(a, ta), tname(b, tb));
            return;
        }
        if (dim_cmp(a->dim[0], b->dim[0]) == 0) {
            error(c, e->loc,
                  "function '%s' needs two vectors of the same length, "
                  "given %s and %s",
                  e->name, tname(a, ta), tname(b, tb));
            return;
        }
        e->type = scalar_type(DRIFT_T_REAL);
        return;
    case DRIFT_RULE_MINMAX:
        if (n == 1) {
            if (is_scalar(a) || a->kind == DRIFT_T_SPARSE) {
                error(c, e->loc,
                      "function '%s' of one argument takes a vector, matrix "
                      "or array, given %s",
                      e->name, tname(a, ta));
                return;
            }
            e->type = scalar_type(a->kind == DRIFT_T_INT ? DRIFT_T_INT
                                                         : DRIFT_T_REAL);
            return;
        }
        e->type = elementwise(c, e->loc, what, a, b, 1);
        return;
    case DRIFT_RULE_SPECIAL:
        check_special(c, e, n);
        return;
    case DRIFT_RULE_LSE:
        break;
    }
}

static void check_expr(checker *c, drift_expr *e)
{
    e->rows = e->param = 0;
    switch (e->kind) {
    case DRIFT_E_NUM:
        e->type = scalar_type(e->is_int ? DRIFT_T_INT : DRIFT_T_REAL);
        return;
    case DRIFT_E_NAME:
        if (!e->sym) {
            e->type = scalar_type(DRIFT_T_ERROR);
            return;
        }
        sym_type(c, e->sym);
        e->type = e->sym->type;
        e->rows = e->sym->rows;
        e->param = e->sym->param;
        return;
    case DRIFT_E_NEG:
        check_expr(c, e->a);
        set_flags(e, e->a, NULL);
        e->type = e->a->type;
        if (sparse_use(c, e->a)) {
            e->type = scalar_type(DRIFT_T_ERROR);
        } else if (e->type.n_arr) {
            char t[TYPE_TEXT];
            error(c, e->loc, "unary '-' does not apply to arrays (given %s)",
                  tname(&e->type, t));
            e->type = scalar_type(DRIFT_T_ERROR);
        }
        return;
    case DRIFT_E_NOT: {
        check_expr(c, e->a);
        set_flags(e, e->a, NULL);
        e->type = scalar_type(DRIFT_T_INT);
        char t[TYPE_TEXT];
        if (e->a->type.kind == DRIFT_T_ERROR || sparse_use(c, e->a)) {
            e->type = scalar_type(DRIFT_T_ERROR);
        } else if (!is_scalar(&e->a->type)) {
            error(c, e->loc, "'!' applies to a scalar (int or real), given %s",
                  tname(&e->a->type, t));
            e->type = scalar_type(DRIFT_T_ERROR);
        }
        return;
    }
    case DRIFT_E_COND: {
        check_expr(c, e->a);
        check_expr(c, e->b);
        check_expr(c, e->args);
        set_flags(e, e->a, e->b);
        e->rows |= e->args->rows;
        e->param |= e->args->param;
        e->type = scalar_type(DRIFT_T_ERROR);
        if (any_error(e->a, e->b) || any_error(e->args, NULL) ||
            sparse_use(c, e->a) || sparse_use(c, e->b) ||
            sparse_use(c, e->args))
            return;
        char t1[TYPE_TEXT], t2[TYPE_TEXT];
        if (!is_int_scalar(&e->a->type)) {
            error(c, e->a->loc,
                  "the condition of '? :' must be an int (a comparison, say), "
                  "given %s",
                  tname(&e->a->type, t1));
            return;
        }
        const drift_type *x = &e->b->type, *y = &e->args->type;
        if (!same_shape(x, y)) {
            error(c, e->loc,
                  "the two branches of '? :' have different shapes: %s and %s",
                  tname(x, t1), tname(y, t2));
            return;
        }
        e->type = *x;
        if (x->kind == DRIFT_T_INT && y->kind != DRIFT_T_INT)
            e->type.kind = y->kind;
        return;
    }
    case DRIFT_E_BINOP:
        check_binop(c, e);
        return;
    case DRIFT_E_INDEX:
        check_index(c, e);
        return;
    case DRIFT_E_CALL:
        if (e->over_rows)
            check_over_rows(c, e);
        else
            check_call(c, e);
        return;
    }
}

/* How to name an expression in a message: its name when it is one. */
static void expr_text(const drift_expr *e, char *buf, size_t cap)
{
    if (e->kind == DRIFT_E_NAME)
        snprintf(buf, cap, "'%s'", e->name);
    else
        snprintf(buf, cap, "the left of '~'");
}

/* The multivariate distributions' shapes (rule not ELEM). */
static void check_glm(checker *c, const drift_dist *d, drift_expr *lhs,
                      drift_expr *args);

static void check_multivariate(checker *c, const drift_dist *d,
                               drift_expr *lhs, drift_expr *args)
{
    char t1[TYPE_TEXT], t2[TYPE_TEXT];
    const drift_type *y = &lhs->type;
    drift_dim K, K2;
    switch (d->rule) {
    case DRIFT_DRULE_DIRICHLET: {
        const drift_type *al = &args->type;
        if (vec_elem(y, &K)) {
            error(c, lhs->loc,
                  "the outcome of dirichlet is a simplex (a vector, or an "
                  "array of vectors), but it is %s",
                  tname(y, t1));
            return;
        }
        if (vec_elem(al, &K2) || (al->n_arr && !same_layout(al, y)) ||
            dim_cmp(K, K2) == 0)
            error(c, args->loc,
                  "dirichlet's alpha must be a vector of the outcome's "
                  "length (or as many as the outcome has), given %s for %s",
                  tname(al, t2), tname(y, t1));
        return;
    }
    case DRIFT_DRULE_MVN: {
        const drift_type *mu = &args->type, *S = &args->next->type;
        if (vec_elem(y, &K)) {
            error(c, lhs->loc,
                  "the outcome of %s is a vector (or an array of vectors), "
                  "but it is %s",
                  d->name, tname(y, t1));
            return;
        }
        if (vec_elem(mu, &K2) || dim_cmp(K, K2) == 0 ||
            (mu->n_arr && y->n_arr && !same_layout(mu, y))) {
            error(c, args->loc,
                  "the location of %s must be a vector of the outcome's "
                  "length (or as many as the outcome has), given %s for %s",
                  d->name, tname(mu, t2), tname(y, t1));
            return;
        }
        if (!is_square(S) || dim_cmp(S->dim[0], K) == 0)
            error(c, args->next->loc,
                  "%s of %s must be a square matrix of the outcome's size, "
                  "given %s for %s",
                  d->arg_names[1], d->name, tname(S, t2), tname(y, t1));
        return;
    }
    case DRIFT_DRULE_LKJ:
        if (!is_square(y)) {
            error(c, lhs->loc,
                  "the outcome of %s is a square matrix (%s), but it is %s",
                  d->name, d->support_text, tname(y, t1));
            return;
        }
        if (!is_scalar(&args->type))
            error(c, args->loc, "the shape eta of %s must be a real, given %s",
                  d->name, tname(&args->type, t2));
        return;
    case DRIFT_DRULE_CATEGORICAL:
        if (y->kind != DRIFT_T_INT || y->n_arr > 1) {
            error(c, lhs->loc,
                  "the outcome of categorical is an int (or an array of "
                  "them), but it is %s",
                  tname(y, t1));
            return;
        }
        if (args->type.n_arr || args->type.kind != DRIFT_T_VECTOR)
            error(c, args->loc,
                  "categorical takes a simplex of K probabilities, given %s",
                  tname(&args->type, t2));
        return;
    case DRIFT_DRULE_GLM:
        check_glm(c, d, lhs, args);
        return;
    case DRIFT_DRULE_ORDERED: {
        drift_dim n = {1, NULL};
        int many = 0;
        if (y->kind != DRIFT_T_INT || y->n_arr > 1) {
            error(c, lhs->loc,
                  "the outcome of %s is an int 1..K (or an array of them), "
                  "but it is %s",
                  d->name, tname(y, t1));
            return;
        }
        if (y->n_arr) {
            n = y->arr[0];
            many = 1;
        }
        const drift_type *eta = &args->type, *cp = &args->next->type;
        if (!is_scalar(eta) &&
            !(is_vec(eta) && (!many || dim_cmp(eta->dim[0], n)))) {
            error(c, args->loc,
                  "eta of %s must be a real%s, given %s", d->name,
                  many ? " or a vector with one per outcome" : "",
                  tname(eta, t2));
            return;
        }
        if (!is_vec(cp))
            error(c, args->next->loc,
                  "the cutpoints c of %s must be a vector (ordered[K - 1] "
                  "for K categories), given %s",
                  d->name, tname(cp, t2));
        return;
    }
    default:
        return;
    }
}

/* bernoulli_logit_glm, poisson_log_glm and normal_id_glm (y | x, alpha,
 * beta[, sigma]): x a vector[K] (one row: a rows vector in the datum
 * block) with y one value, or a matrix[n, K] with y one value or n
 * (an array, or a vector for normal_id_glm); alpha (and sigma) a real or
 * vector[n]; beta a vector[K]. */
static void check_glm(checker *c, const drift_dist *d, drift_expr *lhs,
                      drift_expr *args)
{
    char t1[TYPE_TEXT], t2[TYPE_TEXT];
    const drift_type *y = &lhs->type, *x = &args->type;
    drift_expr *al = args->next, *be = al->next, *sg = be->next;
    drift_dim n = {1, NULL}, K;
    int many = 0;
    if (is_mat(x)) {
        n = x->dim[0];
        K = x->dim[1];
        many = 1;
    } else if (is_vec(x) ||
               (x->kind == DRIFT_T_SPARSE && !x->n_arr)) {
        K = x->dim[0];
    } else {
        error(c, args->loc,
              "x of %s must be a vector[K] or sparse_vector[K] (one row) "
              "or a matrix[n, K], given %s",
              d->name, tname(x, t1));
        return;
    }
    int y_ok = is_scalar(y);
    drift_dim ny = {1, NULL};
    if (!y_ok && y->n_arr == 1 && is_scalar_kind(y->kind)) {
        y_ok = 1;
        ny = y->arr[0];
    } else if (!y_ok && !d->discrete && is_vec(y)) {
        y_ok = 1;
        ny = y->dim[0];
    }
    if (!y_ok || (!is_scalar(y) && (!many || dim_cmp(ny, n) == 0))) {
        error(c, lhs->loc,
              "the outcome of %s must be one value%s, but it is %s for x %s",
              d->name, many ? " or one per row of x" : " (x is one row)",
              tname(y, t1), tname(x, t2));
        return;
    }
    for (drift_expr *a = al; a; a = a == al ? sg : NULL) {
        const drift_type *t = &a->type;
        if (!is_scalar(t) && !(many && is_vec(t) && dim_cmp(t->dim[0], n)))
            error(c, a->loc,
                  "%s of %s must be a real%s, given %s", a == al ? "alpha"
                                                                : "sigma",
                  d->name, many ? " or a vector with one per row of x" : "",
                  tname(t, t1));
    }
    if (!is_vec(&be->type) || dim_cmp(be->type.dim[0], K) == 0)
        error(c, be->loc,
              "beta of %s must be a vector of x's %s, given %s for x %s",
              d->name, many ? "columns" : "length", tname(&be->type, t1),
              tname(x, t2));
}

/* A distribution's outcome and arguments, for '~' and for name_lpdf(y |
 * ...). */
static void check_density(checker *c, const drift_dist *d, drift_expr *lhs,
                          drift_expr *args, size_t n_args,
                          drift_loc dist_loc)
{
    check_expr(c, lhs);
    int bad = lhs->type.kind == DRIFT_T_ERROR || sparse_use(c, lhs);
    for (drift_expr *a = args; a; a = a->next) {
        check_expr(c, a);
        /* a GLM's x may be a sparse row: it enters a dot product */
        int sparse_ok = d && d->rule == DRIFT_DRULE_GLM && a == args &&
                        !a->type.n_arr;
        bad |= a->type.kind == DRIFT_T_ERROR ||
               (!sparse_ok && sparse_use(c, a));
    }
    if (!d)
        return;
    if ((int)n_args != d->n_args) {
        char names[96] = "";
        size_t used = 0;
        for (int k = 0; k < d->n_args; k++) {
            int w = snprintf(names + used, sizeof names - used, "%s%s",
                             k ? ", " : "", d->arg_names[k]);
            if (w > 0 && (size_t)w < sizeof names - used)
                used += (size_t)w;
        }
        error(c, dist_loc,
              "distribution '%s' takes %d argument%s (%s), given %zu",
              d->name, d->n_args, d->n_args == 1 ? "" : "s", names,
              n_args);
        return;
    }
    if (bad)
        return;
    char t1[TYPE_TEXT], t2[TYPE_TEXT], what[80];
    const drift_type *y = &lhs->type;
    expr_text(lhs, what, sizeof what);
    if (d->discrete && y->kind != DRIFT_T_INT) {
        error(c, lhs->loc,
              "the outcome of %s must be an int, but %s is %s%s", d->name,
              what, tname(y, t1),
              lhs->kind == DRIFT_E_NAME ? " (declare it int)" : "");
        return;
    }
    if (d->rule != DRIFT_DRULE_ELEM && d->rule != DRIFT_DRULE_CATLOGIT) {
        check_multivariate(c, d, lhs, args);
        return;
    }
    if (d->id == DRIFT_D_CATEGORICAL_LOGIT) {
        const drift_type *b = &args->type;
        if (!is_int_scalar(y)) {
            error(c, lhs->loc,
                  "the outcome of categorical_logit must be one int per "
                  "statement, but %s is %s",
                  what, tname(y, t1));
            return;
        }
        if (b->n_arr || b->kind != DRIFT_T_VECTOR)
            error(c, args->loc,
                  "categorical_logit takes a vector of K log-odds, given %s",
                  tname(b, t2));
        return;
    }
    const drift_type *common = is_scalar(y) ? NULL : y;
    const char *common_name = "the outcome";
    int k = 0;
    for (drift_expr *a = args; a; a = a->next, k++) {
        if (d->arg_int[k]) {
            if (a->type.kind != DRIFT_T_INT) {
                error(c, a->loc, "argument %s of %s must be an int, found %s",
                      d->arg_names[k], d->name, tname(&a->type, t1));
                return;
            }
        }
        if (is_scalar(&a->type))
            continue;
        if (!common) {
            common = &a->type;
            common_name = d->arg_names[k];
            continue;
        }
        if (!same_layout(common, &a->type)) {
            error(c, a->loc,
                  "the arguments of %s have different shapes: %s is %s but "
                  "%s is %s",
                  d->name, common_name, tname(common, t1), d->arg_names[k],
                  tname(&a->type, t2));
            return;
        }
    }
}

static void check_tilde(checker *c, drift_stmt *st)
{
    check_density(c, st->d, st->lhs, st->args, st->n_args, st->dist_loc);
}

static void check_block(checker *c, drift_block *b)
{
    for (drift_stmt *st = b->stmts; st; st = st->next) {
        switch (st->kind) {
        case DRIFT_S_TILDE:
            check_tilde(c, st);
            break;
        case DRIFT_S_TARGET:
            check_expr(c, st->value);
            sparse_use(c, st->value);
            break;
        case DRIFT_S_PRINT:
            for (drift_expr *a = st->args; a; a = a->next) {
                check_expr(c, a);
                if (a->rows)
                    error(c, a->loc, "print of a value that varies by row: "
                                     "print writes one line per draw");
            }
            break;
        default:
        /* control flow: replaced by drift_control_lower when parsed */
            break;
        case DRIFT_S_LET:
            check_expr(c, st->value);
            if (sparse_use(c, st->value))
                st->value->type = scalar_type(DRIFT_T_ERROR);
            if (b->kind == DRIFT_BLOCK_DERIVED && st->value->rows) {
                error(c, st->value->loc,
                      "'%s' varies by row: a derived quantity is one value "
                      "per draw; compute per-row values in the generated "
                      "block",
                      st->name);
                st->value->type = scalar_type(DRIFT_T_ERROR);
            }
            if ((b->kind == DRIFT_BLOCK_DERIVED ||
                 b->kind == DRIFT_BLOCK_GENERATED ||
                 b->kind == DRIFT_BLOCK_TRANSFORMED) &&
                st->value->type.kind != DRIFT_T_ERROR &&
                st->value->rows && st->value->type.n_arr) {
                char t[TYPE_TEXT];
                error(c, st->value->loc,
                      "'%s' is %s per row: a per-row %s value is a scalar, "
                      "vector or matrix",
                      st->name, tname(&st->value->type, t),
                      drift_block_name(b->kind));
                st->value->type = scalar_type(DRIFT_T_ERROR);
            }
            if (st->sym) {
                st->sym->type = st->value->type;
                st->sym->rows = st->value->rows;
                st->sym->param = st->value->param;
                st->sym->typed = 2;
            }
            break;
        }
    }
}

/* An unsized function type as written: "vector", "array[,] real". */
static const char *ftype_name(const drift_ftype *t, char *buf, size_t cap)
{
    static const char *const kinds[] = {"?", "int", "real", "vector",
                                        "matrix", "sparse_vector"};
    const char *k = (unsigned)t->kind < 6 ? kinds[t->kind] : "?";
    if (t->n_arr)
        snprintf(buf, cap, "array[%s] %s", t->n_arr == 2 ? "," : "", k);
    else
        snprintf(buf, cap, "%s", k);
    return buf;
}

/* The arguments and values of inlined user functions (funcs.c) against
 * the types the functions declare; an int is accepted for a real. */
static void check_fcalls(checker *c)
{
    for (const drift_fcheck *k = c->p->fchecks; k; k = k->next) {
        const drift_type *t = k->value ? &k->value->type : NULL;
        if (!t || t->kind == DRIFT_T_ERROR)
            continue; /* unused, or an error already reported */
        const drift_ftype *want = k->param ? &k->param->type : &k->f->ret;
        if (t->n_arr == want->n_arr &&
            (t->kind == want->kind ||
             (want->kind == DRIFT_T_REAL && t->kind == DRIFT_T_INT)))
            continue;
        char got[TYPE_TEXT], w[64];
        if (k->param)
            error(c, k->value->loc,
                  "argument '%s' of '%s' is %s, but '%s' declares it %s",
                  k->param->name, k->f->name, tname(t, got), k->f->name,
                  ftype_name(want, w, sizeof w));
        else
            error(c, k->call_loc, "'%s' returns %s, but is declared to "
                                  "return %s",
                  k->f->name, tname(t, got), ftype_name(want, w, sizeof w));
    }
}

size_t drift_typecheck(drift_program *p, drift_diag *d)
{
    checker c = {p, d, 0};
    for (size_t k = 0; k < p->n_syms; k++)
        if (p->syms[k]->kind != DRIFT_SYM_LOCAL)
            p->syms[k]->typed = 0;
    for (size_t k = 0; k < p->n_syms; k++)
        sym_type(&c, p->syms[k]);
    size_t n_params = 0;
    for (size_t k = 0; k < p->n_syms; k++)
        n_params += p->syms[k]->kind == DRIFT_SYM_PARAM;
    /* A model with no parameters simulates: its generated block is drawn
     * at every iteration of fixed_param (CmdStan's rule). */
    if (n_params == 0 && !p->block[DRIFT_BLOCK_GENERATED]) {
        drift_loc top = {1, 1, 1, 1};
        error(&c, p->block[DRIFT_BLOCK_PARAM] ? p->block[DRIFT_BLOCK_PARAM]->loc
                                              : top,
              "the model has no parameters: declare them in a param block, "
              "e.g. param { w : vector[D] } (a model that only simulates "
              "needs a generated block)");
    }
    static const drift_block_kind order[] = {
        DRIFT_BLOCK_TRANSFORMED, DRIFT_BLOCK_DERIVED, DRIFT_BLOCK_PRIOR,
        DRIFT_BLOCK_DATUM, DRIFT_BLOCK_GENERATED};
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++)
        if (p->block[order[k]])
            check_block(&c, p->block[order[k]]);
    check_fcalls(&c);
    return c.errors;
}

drift_program *drift_front_load(const char *path, drift_source **src,
                                drift_diag *diag, drift_err *e)
{
    return drift_front_load_known(path, NULL, src, diag, e);
}

drift_program *drift_front_load_known(const char *path,
                                      const drift_known_ints *ki,
                                      drift_source **src, drift_diag *diag,
                                      drift_err *e)
{
    *src = NULL;
    int rc = drift_source_read(path, src, e);
    if (rc)
        return NULL;
    drift_program *p = drift_parse_known(*src, ki, diag);
    if (!p) {
        drift_diag_summary(diag, path, DRIFT_EINVAL, e);
        return NULL;
    }
    if (diag->n_errors || drift_resolve(p, diag) || drift_typecheck(p, diag)) {
        drift_diag_summary(diag, path, DRIFT_EINVAL, e);
        drift_program_free(p);
        return NULL;
    }
    /* A parameter no statement uses has a flat, improper posterior. */
    for (size_t k = 0; k < p->n_syms; k++) {
        const drift_sym *s = p->syms[k];
        if (s->kind == DRIFT_SYM_PARAM && !s->used)
            drift_diag_warning(diag, *src, s->loc,
                               "parameter '%s' is used in no statement: its "
                               "posterior is flat and improper",
                               s->name);
    }
    return p;
}
