/* stan_lower.c: lowers a parsed Stan program (stan.h) into drift's
 * blocks.  drift's language has no loops and no assignment, so the
 * program is executed symbolically: a local, transformed datum or
 * transformed parameter is replaced by the expression it was given, and
 * a loop over 1:S whose body touches element i of each container is
 * replaced by one vectorised statement (outside the rows, a loop over
 * a:b with lags x[i - k] by statements over segments); if/else become
 * conditional expressions and user functions are inlined.  The rows are
 * found, not
 * declared: when the data have a leading size R (vector[R], array[R],
 * matrix[R, K]) over which every model statement that touches them is a
 * sum of per-element terms, those data become drift's rows and those
 * statements its datum block; otherwise the program is lowered whole
 * (every datum in the data block, every statement in prior) and the
 * reason is reported as a warning.  The same executor lowers the
 * control flow of drift's own language (drift_control_lower, at the end:
 * for, if/else, element assignment, truncation, reject), block by block
 * with the rows implicit.  Not for parsing (stan_grammar.y, grammar.y) or
 * for types (typecheck.c, which checks the result). */
#include "config.h"

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "parser/builtins.h"
#include "parser/stan.h"

/* The Stan type of a value, as far as lowering needs it. */
enum { B_INT, B_REAL, B_VEC, B_ROWVEC, B_MAT };

typedef struct stype {
    int base, n_arr;
} stype;

/* V_NAMED: a value of the model block given a name among the prior's
 * statements (an element of an unrolled recursion), def its value. */
typedef enum vkind { V_DATA, V_PARAM, V_LOCAL, V_LOOP, V_NAMED } vkind;

typedef struct var {
    const char *name;
    vkind kind;
    const stan_stmt *decl;  /* DATA, PARAM, LOCAL */
    int row;                /* DATA: one of the rows (leading size R) */
    drift_expr *def;        /* LOCAL: its value (already substituted) */
    drift_expr *size;       /* LOOP: the upper bound */
    int loop_level;         /* LOCAL: loops around its declaration */
    int in_rows;            /* DATA: a rows variable of a drift model */
    int rng;                /* LOCAL: drift's name = value with a random
                               draw in it, which substitution would draw
                               anew at each use */
    /* LOCAL given values element by element at indices known while
     * lowering (unrolled loops, x[1] = ...): the elements' values,
     * row-major over d1 x d2 (d2 0 for one dimension), NULL where not
     * yet given; def is then NULL */
    drift_expr **el;
    long n_el, d1, d2;
    /* LOCAL matrix given column by column (M[:, j] = ...): its n_col
     * columns, NULL where not yet given; def is then NULL */
    drift_expr **col;
    long n_col;
    struct var *next;
} var;

/* The place a statement's lowering goes. */
typedef struct out {
    drift_decl *first, *last;
} dlist;

typedef struct slist {
    drift_stmt *first, *last;
} slist;

typedef struct lower {
    const stan_program *sp;
    drift_program *prog;
    drift_arena *A;
    drift_diag *diag;
    int rows_mode;
    int drift;              /* lowering drift's own control flow
                               (drift_control_lower), not a Stan program */
    const char *R;          /* the row size's name (rows mode) */
    const drift_known_ints *ki; /* the data's integers (may be NULL) */
    long n_unrolled;        /* loop iterations unrolled so far */
    long n_named;           /* named values made (their names' serial) */
    long n_work;            /* unrolling work, attempts given up too */
    /* the tree size and depth of values made so far, by node (an open
     * addressing table; values share nodes, the trees drift's passes
     * walk do not) */
    struct measured *meas;
    size_t meas_cap, meas_n;
    var *vars;
    int failed;
    drift_loc fail_loc;
    char why[400];
    int oom;
    dlist data, rows, params;
    slist prior, datum, derived, generated;
    slist transformed;      /* reductions over the rows (mean(x)) */
    int n_reduced;
    /* symbolic execution */
    drift_expr *cond;       /* the condition of the enclosing if branches */
    const stan_stmt *funcs; /* user functions, inlined where called */
    int fdepth;             /* calls being inlined */
    drift_expr *ret;        /* the value returned so far */
    drift_expr *ret_cond;   /* ret holds only under this condition */
    int ret_done;           /* an unconditional return was reached */
    /* warnings of this attempt, reported once it is the one kept */
    int n_warn;
    drift_loc warn_loc[8];
    char warn[8][300];
    /* generated quantities left out */
    int gq_skipped;
    drift_loc gq_loc;
    char gq_why[600];
} lower;

/* A translation context: the loop variables that stand for the current
 * element (datum: the current row; otherwise the vectorised index), and
 * the size they run over. */
typedef struct ctx {
    int datum;
    const char *ix[4];
    int n_ix;
    drift_expr *size;   /* the loop's upper bound */
    drift_expr *lo;     /* its lower bound; NULL for 1 */
    int datum_block;    /* drift's own datum block */
} ctx;

typedef struct tr {
    drift_expr *e;
    stype t;
    int rw;     /* one value per element of the vectorised index */
} tr;

static void fail(lower *L, drift_loc loc, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void fail(lower *L, drift_loc loc, const char *fmt, ...)
{
    if (L->failed)
        return;
    L->failed = 1;
    L->fail_loc = loc;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(L->why, sizeof L->why, fmt, ap);
    va_end(ap);
}

static void warn(lower *L, drift_loc loc, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void warn(lower *L, drift_loc loc, const char *fmt, ...)
{
    for (int k = 0; k < L->n_warn; k++)
        if (L->warn_loc[k].first_line == loc.first_line &&
            L->warn_loc[k].first_column == loc.first_column)
            return;
    if (L->n_warn == 8)
        return;
    L->warn_loc[L->n_warn] = loc;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(L->warn[L->n_warn], sizeof L->warn[0], fmt, ap);
    va_end(ap);
    L->n_warn++;
}

static void *need(lower *L, void *p)
{
    if (!p && !L->oom) {
        L->oom = 1;
        fail(L, (drift_loc){0, 0, 0, 0}, "out of memory");
    }
    return p;
}

static var *lookup(lower *L, const char *name)
{
    for (var *v = L->vars; v; v = v->next)
        if (!strcmp(v->name, name))
            return v;
    return NULL;
}

static var *push_var(lower *L, const char *name, vkind k)
{
    var *v = need(L, drift_arena_alloc(L->A, sizeof *v));
    if (!v)
        return NULL;
    v->name = name;
    v->kind = k;
    v->next = L->vars;
    L->vars = v;
    return v;
}

/* A value's size as drift's passes see it: nodes as a tree (shared
 * nodes counted each time) and its depth. */
typedef struct measured {
    const drift_expr *e;
    long size;
    int depth;
} measured;

/* A value past these is refused: translated, type-checked and built
 * as trees, larger or deeper ones would take memory without bound or
 * overflow the stack (the parser allows 400 levels). */
#define VALUE_MAX_SIZE 250000L
#define VALUE_MAX_DEPTH 400

static int is_elem_call(const drift_expr *e)
{
    return e && e->kind == DRIFT_E_CALL && !strcmp(e->name, "(");
}

/* Loop iterations lowering unrolls in one program at most: a loop
 * beyond it is an error naming its size, never cut short. */
#define UNROLL_MAX 200000L

/* Work lowering spends unrolling at most, counting attempts given up
 * (a loop tried as one vectorised statement first) and the copies they
 * keep: beyond it the program is refused, not lowered for ever. */
#define UNROLL_WORK 4000000L
/* A while loop's passes: its length is known only by running it, and a
 * condition that never turns false would otherwise build UNROLL_MAX
 * copies of the body (a gigabyte) before failing. */
#define WHILE_MAX 10000L

/* The value of an integer expression known while lowering: int
 * literals, the data's integers, locals and unrolled loop variables
 * whose values are such expressions, + - * / and unary minus, and
 * size(), rows(), cols(), num_elements() of a value declared with known
 * sizes.  Returns 0 and *out, or -1. */
static int const_int(lower *L, const drift_expr *e, long *out);

static int decl_dim(lower *L, const drift_typeexpr *t, int k, long *out)
{
    /* the k-th size, array sizes first */
    if (k < t->n_arr)
        return const_int(L, t->arr_size[k], out);
    k -= t->n_arr;
    if ((t->kind == DRIFT_T_VECTOR && k == 0) ||
        (t->kind == DRIFT_T_MATRIX && k < 2))
        return const_int(L, t->size[k], out);
    return -1;
}

static int const_int_at(lower *L, const drift_expr *e, long *out, int depth)
{
    if (!e || depth > 200)
        return -1;
    switch (e->kind) {
    case DRIFT_E_NUM:
        if (!e->is_int || !(e->num > -1e15 && e->num < 1e15))
            return -1;
        *out = (long)e->num;
        return 0;
    case DRIFT_E_NAME: {
        var *v = lookup(L, e->name);
        if (!v)
            return -1;
        if (v->kind == V_LOCAL && v->def && (!v->decl ||
            v->decl->type.t->kind == DRIFT_T_INT)) {
            return const_int_at(L, v->def, out, depth + 1);
        }
        if (v->kind == V_DATA && L->ki && v->decl &&
            v->decl->type.t->kind == DRIFT_T_INT && !v->decl->type.t->n_arr)
            return L->ki->int_value(L->ki->self, e->name, out);
        return -1;
    }
    case DRIFT_E_NEG:
        if (const_int_at(L, e->a, out, depth + 1) || *out == LONG_MIN)
            return -1;
        *out = -*out;
        return 0;
    case DRIFT_E_BINOP: {
        long a, b;
        if (const_int_at(L, e->a, &a, depth + 1) ||
            const_int_at(L, e->b, &b, depth + 1))
            return -1;
        switch (e->op) {
        case DRIFT_OP_ADD: return __builtin_add_overflow(a, b, out) ? -1 : 0;
        case DRIFT_OP_SUB: return __builtin_sub_overflow(a, b, out) ? -1 : 0;
        case DRIFT_OP_MUL: return __builtin_mul_overflow(a, b, out) ? -1 : 0;
        case DRIFT_OP_DIV:
            if (!b || (a == LONG_MIN && b == -1))
                return -1;
            *out = a / b;
            return 0;
        case DRIFT_OP_LT: *out = a < b; return 0;
        case DRIFT_OP_LE: *out = a <= b; return 0;
        case DRIFT_OP_GT: *out = a > b; return 0;
        case DRIFT_OP_GE: *out = a >= b; return 0;
        case DRIFT_OP_EQ: *out = a == b; return 0;
        case DRIFT_OP_NE: *out = a != b; return 0;
        case DRIFT_OP_AND: *out = a && b; return 0;
        case DRIFT_OP_OR: *out = a || b; return 0;
        default: return -1;
        }
    }
    case DRIFT_E_NOT:
        if (const_int_at(L, e->a, out, depth + 1))
            return -1;
        *out = !*out;
        return 0;
    case DRIFT_E_INDEX: {
        /* dims(x)[k] */
        const drift_expr *d = e->a, *x = d->args;
        long k;
        if (d->kind != DRIFT_E_CALL || strcmp(d->name, "dims") ||
            d->n_args != 1 || x->kind != DRIFT_E_NAME || e->n_args != 1 ||
            const_int_at(L, e->args, &k, depth + 1))
            return -1;
        var *v = lookup(L, x->name);
        if (!v || !v->decl || k < 1)
            return -1;
        return decl_dim(L, v->decl->type.t, (int)(k - 1), out);
    }
    case DRIFT_E_CALL: {
        const drift_expr *x = e->args;
        if (x && e->n_args == 1 && x->kind == DRIFT_E_CALL &&
            !strcmp(x->name, "{el}") &&
            (!strcmp(e->name, "size") || !strcmp(e->name, "rows") ||
             !strcmp(e->name, "num_elements"))) {
            *out = (long)x->n_args;
            return 0;
        }
        if (!x || e->n_args != 1 || x->kind != DRIFT_E_NAME)
            return -1;
        var *v = lookup(L, x->name);
        if (!v || !v->decl)
            return -1;
        const drift_typeexpr *t = v->decl->type.t;
        if (!strcmp(e->name, "size") || !strcmp(e->name, "rows"))
            return decl_dim(L, t, 0, out);
        if (!strcmp(e->name, "cols"))
            return t->kind == DRIFT_T_MATRIX && !t->n_arr
                       ? decl_dim(L, t, 1, out)
                       : -1;
        if (!strcmp(e->name, "num_elements")) {
            long n = 1, d;
            int nd = t->n_arr + (t->kind == DRIFT_T_VECTOR) +
                     2 * (t->kind == DRIFT_T_MATRIX);
            for (int k = 0; k < nd; k++) {
                if (decl_dim(L, t, k, &d) || __builtin_mul_overflow(n, d, &n))
                    return -1;
            }
            *out = n;
            return 0;
        }
        return -1;
    }
    default:
        return -1;
    }
}

static int const_int(lower *L, const drift_expr *e, long *out)
{
    return const_int_at(L, e, out, 0);
}

static measured *meas_slot(lower *L, const drift_expr *e)
{
    size_t h = ((uintptr_t)e >> 4) * 0x9E3779B97F4A7C15ull;
    for (size_t k = h & (L->meas_cap - 1);; k = (k + 1) & (L->meas_cap - 1))
        if (!L->meas[k].e || L->meas[k].e == e)
            return &L->meas[k];
}

/* The tree size and depth of e, each node measured once. */
static void measure(lower *L, const drift_expr *e, long *size, int *depth)
{
    *size = 0;
    *depth = 0;
    if (!e || L->oom)
        return;
    if (L->meas_n * 2 >= L->meas_cap) {
        size_t cap = L->meas_cap ? 2 * L->meas_cap : 1024;
        measured *old = L->meas, *t = need(L, drift_arena_alloc(L->A,
                                                  cap * sizeof *t));
        if (!t)
            return;
        memset(t, 0, cap * sizeof *t);
        size_t ocap = L->meas_cap;
        L->meas = t;
        L->meas_cap = cap;
        for (size_t k = 0; k < ocap; k++)
            if (old[k].e)
                *meas_slot(L, old[k].e) = old[k];
    }
    measured *m = meas_slot(L, e);
    if (m->e) {
        *size = m->size;
        *depth = m->depth;
        return;
    }
    long sz = 1;
    int dp = 0;
    const drift_expr *kids[2] = {e->a, e->b};
    for (int k = 0; k < 2; k++) {
        long s1;
        int d1;
        measure(L, kids[k], &s1, &d1);
        sz = s1 > VALUE_MAX_SIZE ? VALUE_MAX_SIZE + 1 : sz + s1;
        dp = d1 > dp ? d1 : dp;
    }
    for (const drift_expr *a = e->args; a; a = a->next) {
        long s1;
        int d1;
        measure(L, a, &s1, &d1);
        sz = s1 > VALUE_MAX_SIZE ? VALUE_MAX_SIZE + 1 : sz + s1;
        dp = d1 > dp ? d1 : dp;
        if (e->kind == DRIFT_E_COND || is_elem_call(e))
            break;  /* one expression, not a list */
    }
    if (sz > VALUE_MAX_SIZE)
        sz = VALUE_MAX_SIZE + 1;
    m = meas_slot(L, e);    /* the table may have grown */
    m->e = e;
    m->size = sz;
    m->depth = dp + 1 > VALUE_MAX_DEPTH ? VALUE_MAX_DEPTH + 1 : dp + 1;
    L->meas_n++;
    *size = m->size;
    *depth = m->depth;
}

/* Refuses a value given to name that has grown past what drift's passes
 * take.  Returns nonzero when refused. */
static int too_large(lower *L, const char *name, const drift_expr *val,
                     drift_loc loc)
{
    long size;
    int depth;
    measure(L, val, &size, &depth);
    if (size <= VALUE_MAX_SIZE && depth <= VALUE_MAX_DEPTH)
        return 0;
    fail(L, loc, "the value of '%s' grows past %ld terms or %d levels of "
                 "nesting as its loop is unrolled (it accumulates over many "
                 "iterations, or is used twice in each): drift cannot lower "
                 "it",
         name, VALUE_MAX_SIZE, VALUE_MAX_DEPTH);
    return 1;
}

static stype decl_stype(const stan_stmt *d)
{
    stype t = {B_REAL, d->type.t->n_arr};
    switch (d->type.t->kind) {
    case DRIFT_T_INT: t.base = B_INT; break;
    case DRIFT_T_VECTOR: t.base = d->type.rowvec ? B_ROWVEC : B_VEC; break;
    case DRIFT_T_MATRIX: t.base = B_MAT; break;
    default: t.base = B_REAL; break;
    }
    return t;
}

static stype strip(stype t)
{
    if (t.n_arr > 0)
        t.n_arr--;
    else if (t.base == B_MAT)
        t.base = B_ROWVEC;
    else if (t.base == B_VEC || t.base == B_ROWVEC)
        t.base = B_REAL;
    return t;
}

static int scalar(stype t)
{
    return t.n_arr == 0 && (t.base == B_INT || t.base == B_REAL);
}

/* The leading size of a declared type (NULL for a scalar). */
static drift_expr *lead_size(const drift_typeexpr *t)
{
    if (t->n_arr)
        return t->arr_size[0];
    if (t->kind == DRIFT_T_VECTOR || t->kind == DRIFT_T_MATRIX)
        return t->size[0];
    return NULL;
}

static int same_expr(const drift_expr *a, const drift_expr *b)
{
    if (!a || !b || a->kind != b->kind)
        return 0;
    if (a->kind == DRIFT_E_NAME)
        return !strcmp(a->name, b->name);
    if (a->kind == DRIFT_E_NUM)
        return a->num == b->num;
    if (a->kind == DRIFT_E_BINOP)
        return a->op == b->op && same_expr(a->a, b->a) &&
               same_expr(a->b, b->b);
    return 0;
}

static int is_name(const drift_expr *e, const char *name)
{
    return e && e->kind == DRIFT_E_NAME && !strcmp(e->name, name);
}

static int in_ix(const ctx *c, const char *name)
{
    for (int k = 0; k < c->n_ix; k++)
        if (!strcmp(c->ix[k], name))
            return 1;
    return 0;
}

/* ---- substitution (Stan space) ----------------------------------------- */

/* An elementwise value: inner, in terms of the loop variable i. */
static drift_expr *elem_node(lower *L, drift_expr *inner, const char *i,
                             drift_expr *size, drift_loc loc)
{
    drift_expr *n = need(L, drift_ast_name(L->A, loc, i));
    if (!n || !inner)
        return NULL;
    /* The inner expression is shared, so link copies of nothing: wrap
     * it in a one-argument holder whose second argument is the index. */
    drift_expr *hold = need(L, drift_ast_call(L->A, loc, "(", loc, NULL, 0));
    if (!hold)
        return NULL;
    hold->a = inner;
    hold->b = n;
    hold->args = size;  /* the loop's size (not an argument list) */
    return hold;
}

static int is_elem(const drift_expr *e)
{
    return e && e->kind == DRIFT_E_CALL && !strcmp(e->name, "(");
}

static drift_expr *subst(lower *L, drift_expr *e);
static drift_expr *inline_call(lower *L, const stan_stmt *f, drift_expr *call);

static const stan_stmt *find_fun(lower *L, const char *name)
{
    for (const stan_stmt *f = L->funcs; f; f = f->next)
        if (f->name && !strcmp(f->name, name) && f->body)
            return f;
    return NULL;
}

/* Stan's generalised linear densities, written out: *_glm(x, alpha,
 * beta, ...) is the density at alpha + x * beta, whose rows lowering
 * then finds as for any linear predictor. */
static const char *glm_base(const char *dist)
{
    static const char *const glm[][2] = {
        {"bernoulli_logit_glm", "bernoulli_logit"},
        {"poisson_log_glm", "poisson_log"},
        {"normal_id_glm", "normal"},
        {"neg_binomial_2_log_glm", "neg_binomial_2_log"}};
    for (size_t k = 0; k < sizeof glm / sizeof glm[0]; k++)
        if (!strcmp(dist, glm[k][0]))
            return glm[k][1];
    return NULL;
}

/* args (x, alpha, beta, rest...) as (alpha + x * beta, rest...) (the
 * list is linked anew); NULL with fewer than three. */
static drift_expr *glm_args(lower *L, drift_expr *args, drift_loc loc,
                            size_t *n)
{
    drift_expr *x = args, *al = x ? x->next : NULL, *be = al ? al->next : NULL;
    if (!be) {
        fail(L, loc, "a _glm density takes x, alpha and beta");
        return NULL;
    }
    drift_expr *rest = be->next;
    drift_expr *xc = need(L, drift_arena_alloc(L->A, sizeof *xc));
    drift_expr *ac = need(L, drift_arena_alloc(L->A, sizeof *ac));
    drift_expr *bc = need(L, drift_arena_alloc(L->A, sizeof *bc));
    if (!xc || !ac || !bc)
        return NULL;
    *xc = *x;
    *ac = *al;
    *bc = *be;
    xc->next = ac->next = bc->next = NULL;
    drift_expr *xb = need(L, drift_ast_binop(L->A, loc, DRIFT_OP_MUL, xc, bc));
    drift_expr *eta = need(L, drift_ast_binop(L->A, loc, DRIFT_OP_ADD, ac, xb));
    if (!eta)
        return NULL;
    eta->next = rest;
    *n = 1;
    for (drift_expr *r = rest; r; r = r->next)
        (*n)++;
    return eta;
}

/* A copy of e's node, unlinked from any list. */
static drift_expr *unlinked(lower *L, drift_expr *e)
{
    drift_expr *c = need(L, drift_arena_alloc(L->A, sizeof *c));
    if (!c)
        return NULL;
    *c = *e;
    c->next = NULL;
    return c;
}

/* parts[from..from+n-1] (a local's elements or columns) as the call
 * name of copies of them, which translate stacks; what names a part in
 * the message when one has no value yet. */
static drift_expr *parts_call(lower *L, drift_expr **parts, long from, long n,
                              const char *what, const char *owner,
                              const char *name, drift_loc loc)
{
    drift_expr *first = NULL, *last = NULL;
    for (long k = from; k < from + n; k++) {
        if (!parts[k]) {
            fail(L, loc, "%s %ld of '%s' is used before it is given a value",
                 what, k + 1, owner);
            return NULL;
        }
        drift_expr *c = unlinked(L, parts[k]);
        if (!c)
            return NULL;
        if (last)
            last->next = c;
        else
            first = c;
        last = c;
    }
    return need(L, drift_ast_call(L->A, loc, name, loc, first, (size_t)n));
}

/* Elements from..from+n-1 of a local given element by element, as the
 * vector of them (the call "{el}"). */
static drift_expr *el_vector(lower *L, var *v, long from, long n,
                             drift_loc loc)
{
    return parts_call(L, v->el, from, n, "element", v->name, "{el}", loc);
}

/* x[i], x[i, j] or x[i] (a row) of a local given element by element,
 * the indices known; NULL and *unknown set when they are not. */
static drift_expr *el_index(lower *L, var *v, const drift_expr *e,
                            int *unknown)
{
    long ix[2];
    size_t n = 0;
    *unknown = 0;
    for (const drift_expr *a = e->args; a; a = a->next) {
        drift_expr *sa = subst(L, (drift_expr *)a);
        if (L->failed)
            return NULL;
        if (n == 2 || const_int(L, sa, &ix[n])) {
            *unknown = 1;
            return NULL;
        }
        n++;
    }
    long d2 = v->d2 ? v->d2 : 1;
    if (ix[0] < 1 || ix[0] > v->d1 ||
        (n == 2 && (!v->d2 || ix[1] < 1 || ix[1] > v->d2))) {
        fail(L, e->loc, "index out of range for '%s'", v->name);
        return NULL;
    }
    if (n == 1 && v->d2)
        return el_vector(L, v, (ix[0] - 1) * d2, d2, e->loc);
    long k = (ix[0] - 1) * d2 + (n == 2 ? ix[1] - 1 : 0);
    if (!v->el[k]) {
        fail(L, e->loc, "'%s' is used at an element not yet given a value",
             v->name);
        return NULL;
    }
    return v->el[k];
}

/* Whether a drift program declares its own N (which then shadows the
 * number of rows, named N__). */
static int declares_n(const drift_program *prog)
{
    for (const drift_block *b = prog ? prog->blocks : NULL; b; b = b->next)
        for (const drift_decl *d = b->decls; d; d = d->next)
            if (!strcmp(d->name, "N"))
                return 1;
    return 0;
}

/* A rewriter whose callbacks reach the lowering. */
typedef struct substr {
    drift_rewriter rw;
    lower *L;
} substr;

/* A name: a local stands for its value. */
static drift_expr *subst_name(drift_rewriter *rw, drift_expr *e)
{
    lower *L = ((substr *)rw)->L;
    var *v = lookup(L, e->name);
    if (!v && find_fun(L, e->name)) {
        fail(L, e->loc, "the function '%s' is passed as a value: ODE "
                        "solvers and other higher-order functions are "
                        "not supported (see doc/language.md, \"Out of "
                        "scope\")", e->name);
        return NULL;
    }
    if (!v) {
        fail(L, e->loc, "unknown name '%s'", e->name);
        return NULL;
    }
    if (v->kind != V_LOCAL)
        return e;
    if (v->rng) {
        fail(L, e->loc, "'%s' holds a random draw (_rng): inside a loop "
                        "or condition each use would draw anew; draw "
                        "it there, or compute with it over whole "
                        "vectors outside", e->name);
        return NULL;
    }
    if (v->col && !v->def)
        return parts_call(L, v->col, 0, v->n_col, "column", e->name,
                          "{cols}", e->loc);
    if (v->el && !v->def) {
        if (v->d2) {
            fail(L, e->loc, "'%s', given values element by element, is "
                            "used whole: drift follows such values of "
                            "one dimension only", e->name);
            return NULL;
        }
        return el_vector(L, v, 0, v->d1, e->loc);
    }
    long known;
    if (v->def && v->decl && v->decl->type.t->kind == DRIFT_T_INT &&
        !v->decl->type.t->n_arr && v->def->kind != DRIFT_E_NUM &&
        !const_int(L, v->def, &known))
        return need(L, drift_ast_num(L->A, e->loc, (double)known, 1));
    if (!v->def) {
        fail(L, e->loc,
             "'%s' is used before it is given a value (or is given its "
             "value in a way drift cannot follow: element by element "
             "outside a loop over all its elements)",
             e->name);
        return NULL;
    }
    return v->def;
}

/* A call, its arguments substituted: a user function is inlined and a
 * _glm density written out. */
static drift_expr *subst_call(drift_rewriter *rw, drift_expr *c)
{
    lower *L = ((substr *)rw)->L;
    if (!strcmp(c->name, ":")) {
        /* a range a:b, its bounds in a and b */
        c->a = c->a ? subst(L, c->a) : NULL;
        c->b = c->b ? subst(L, c->b) : NULL;
        return L->failed ? NULL : c;
    }
    const stan_stmt *f = find_fun(L, c->name);
    if (f)
        return inline_call(L, f, c);
    if (c->bar && c->args) {
        const char *sfx = strrchr(c->name, '_');
        char base[128];
        if (sfx && (size_t)(sfx - c->name) < sizeof base) {
            memcpy(base, c->name, (size_t)(sfx - c->name));
            base[sfx - c->name] = '\0';
            const char *g = glm_base(base);
            if (g) {
                size_t m;
                drift_expr *y = c->args;
                drift_expr *rest = glm_args(L, y->next, c->loc, &m);
                if (!rest)
                    return NULL;
                char nm[160];
                snprintf(nm, sizeof nm, "%s%s", g, sfx);
                drift_expr *yc = need(L, drift_arena_alloc(L->A, sizeof *yc));
                if (!yc)
                    return NULL;
                *yc = *y;
                yc->next = rest;
                c->name = need(L, drift_arena_strndup(L->A, nm, strlen(nm)));
                c->args = yc;
                c->n_args = m + 1;
            }
        }
    }
    return c;
}

/* x[i] of a local given element by element at indices the data decide:
 * the element itself; NULL (the index rewritten as any other) when the
 * indices are not known. */
static drift_expr *subst_index(drift_rewriter *rw, drift_expr *e)
{
    lower *L = ((substr *)rw)->L;
    var *ev = e->a->kind == DRIFT_E_NAME ? lookup(L, e->a->name) : NULL;
    if (!ev || ev->kind != V_LOCAL || !ev->el || ev->def)
        return NULL;
    int unknown;
    drift_expr *x = el_index(L, ev, e, &unknown);
    if (L->failed)
        rw->failed = 1;
    return unknown ? NULL : x;
}

static drift_expr *subst_list(lower *L, drift_expr *args, size_t *n)
{
    substr s = {{L->A, subst_name, subst_call, is_elem, 0, 0, subst_index}, L};
    *n = 0;
    drift_expr *r = L->failed ? NULL : drift_ast_rewrite_list(&s.rw, args, n);
    if (!r && args && !L->failed)
        need(L, NULL);
    return r;
}

/* e with every local replaced by its value (new nodes where anything
 * changed; the rest shared, never written). */
static drift_expr *subst(lower *L, drift_expr *e)
{
    if (!e || L->failed)
        return NULL;
    substr s = {{L->A, subst_name, subst_call, is_elem, 0, 0, subst_index}, L};
    drift_expr *r = drift_ast_rewrite(&s.rw, e);
    if (!r && !L->failed)
        need(L, NULL);
    return r;
}

/* Whether two sizes are the same, a transformed datum (int K = 2)
 * standing for its value. */
static int same_size(lower *L, drift_expr *a, drift_expr *b)
{
    if (same_expr(a, b))
        return 1;
    int failed = L->failed;
    drift_expr *sa = subst(L, a), *sb = subst(L, b);
    if (L->failed && !failed) {
        L->failed = 0;  /* not a size drift can compare: not the same */
        return 0;
    }
    long va, vb;
    if (!const_int(L, sa, &va) && !const_int(L, sb, &vb))
        return va == vb;
    return same_expr(sa, sb);
}

/* ---- translation into drift's expressions ------------------------------ */


static tr translate(lower *L, ctx *c, const drift_expr *e);
static drift_expr *size_expr(lower *L, drift_expr *e);

static tr bad(void)
{
    tr r = {NULL, {B_REAL, 0}, 0};
    return r;
}

/* Whether the Stan program's data declare an N that is not the row
 * size: it is then drift's data N, shadowing the row count. */
static int own_n(const lower *L)
{
    if (L->R && !strcmp(L->R, "N"))
        return 0;
    for (const stan_stmt *s = L->sp->block[STAN_DATA]; s; s = s->next)
        if (s->kind == STAN_S_DECL && !strcmp(s->name, "N"))
            return 1;
    return 0;
}

static drift_expr *mk_name(lower *L, drift_loc loc, const char *name)
{
    if (L->rows_mode && L->R && !strcmp(name, L->R))
        name = own_n(L) ? DRIFT_ROWS_NAME : "N";
    return need(L, drift_ast_name(L->A, loc, name));
}

static drift_expr *mk_call(lower *L, drift_loc loc, const char *name,
                           drift_expr *a, drift_expr *b)
{
    if (!a)
        return NULL;
    a->next = b;
    if (b)
        b->next = NULL;
    return need(L, drift_ast_call(L->A, loc, name, loc, a, b ? 2 : 1));
}

/* Elementwise functions: one value per element of their argument. */
static int elementwise(const char *f)
{
    static const char *const names[] = {
        "exp", "log", "log1p", "expm1", "sqrt", "square", "fabs", "abs",
        "tanh", "inv_logit", "logistic", "log1p_exp", "log_inv_logit",
        "log1m", "sin", "cos", "lgamma", "tgamma", "Phi", "Phi_approx",
        "logit", "log1m_exp", "log1m_inv_logit", "inv_cloglog", "inv",
        "inv_sqrt", "inv_square", "log2", "log10", "exp2", "cbrt", "tan",
        "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh",
        "erf", "erfc", "fmin", "fmax", "log_diff_exp", "lchoose",
        "binomial_coefficient_log", "lbeta", "step", "floor", "ceil",
        "round", "trunc", "pow", "log_sum_exp", "fdim", "hypot", "int_step",
        "log_mix", "inv_erfc", NULL};
    for (int k = 0; names[k]; k++)
        if (!strcmp(f, names[k]))
            return 1;
    return 0;
}

/* Whether a call of f with n arguments is elementwise: log_sum_exp of
 * one container and log_mix of mixing weights and a container of
 * densities reduce it to one value, which over the rows couples them. */
static int elementwise_call(const char *f, size_t n)
{
    if (n == 1 && !strcmp(f, "log_sum_exp"))
        return 0;
    if (n == 2 && !strcmp(f, "log_mix"))
        return 0;
    return elementwise(f);
}

static int has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n > m && !strcmp(s + n - m, suf);
}

static int is_density(const char *f)
{
    return has_suffix(f, "_lpdf") || has_suffix(f, "_lpmf") ||
           has_suffix(f, "_lupdf") || has_suffix(f, "_lupmf");
}

/* The Stan type of a call's value from its name and arguments. */
static stype call_type(const char *f, const tr *args, size_t n)
{
    stype r = {B_REAL, 0};
    stype a0 = n ? args[0].t : r;
    if (elementwise(f)) {
        if (!strcmp(f, "log_sum_exp") && n == 1)
            return r;
        if (n == 2 && scalar(a0))
            return args[1].t;
        return a0;
    }
    if (!strcmp(f, "rep_vector") || !strcmp(f, "softmax") ||
        !strcmp(f, "log_softmax") || !strcmp(f, "to_vector") ||
        !strcmp(f, "head") || !strcmp(f, "tail") || !strcmp(f, "segment") ||
        !strcmp(f, "diagonal") || !strcmp(f, "append_row") ||
        !strcmp(f, "rows_dot_product") || !strcmp(f, "mdivide_left_tri_low")) {
        r.base = B_VEC;
        return r;
    }
    if (!strcmp(f, "cumulative_sum") || !strcmp(f, "reverse"))
        return a0;
    if (!strcmp(f, "rep_matrix") || !strcmp(f, "cholesky_decompose") ||
        !strcmp(f, "diag_pre_multiply") || !strcmp(f, "diag_post_multiply") ||
        !strcmp(f, "quad_form_diag") || !strcmp(f, "diag_matrix") ||
        !strcmp(f, "add_diag") || !strcmp(f, "append_col") ||
        !strcmp(f, "multiply_lower_tri_self_transpose") ||
        !strcmp(f, "gp_exp_quad_cov") || !strcmp(f, "cov_exp_quad")) {
        r.base = B_MAT;
        return r;
    }
    if (!strcmp(f, "transpose")) {
        if (a0.base == B_VEC)
            a0.base = B_ROWVEC;
        else if (a0.base == B_ROWVEC)
            a0.base = B_VEC;
        return a0;
    }
    if (!strcmp(f, "to_row_vector")) {
        r.base = B_ROWVEC;
        return r;
    }
    if (!strcmp(f, "rows") || !strcmp(f, "cols") ||
        !strcmp(f, "num_elements") || !strcmp(f, "size")) {
        r.base = B_INT;
        return r;
    }
    if (has_suffix(f, "_rng")) {
        int discrete = !strncmp(f, "bernoulli", 9) ||
                       !strncmp(f, "binomial", 8) ||
                       !strncmp(f, "poisson", 7) ||
                       !strncmp(f, "neg_binomial", 12) ||
                       !strncmp(f, "categorical", 11) ||
                       !strncmp(f, "beta_binomial", 13);
        if (!strncmp(f, "multi_normal", 12) || !strncmp(f, "dirichlet", 9)) {
            r.base = B_VEC;
            return r;
        }
        stype best = {discrete ? B_INT : B_REAL, 0};
        for (size_t k = 0; k < n; k++)
            if (!scalar(args[k].t)) {
                best.n_arr = 1;
                best.base = discrete ? B_INT : B_REAL;
            }
        return best;
    }
    return r;   /* reductions, densities, constants */
}

/* Stan's names that drift spells otherwise. */
static const char *drift_name(const char *f)
{
    if (!strcmp(f, "dot_product"))
        return "dot";
    if (!strcmp(f, "size"))
        return "num_elements";
    if (!strcmp(f, "cov_exp_quad"))
        return "gp_exp_quad_cov";
    return f;
}

static tr translate_list(lower *L, ctx *c, const drift_expr *args, tr *out,
                         size_t cap, size_t *n)
{
    *n = 0;
    for (const drift_expr *a = args; a; a = a->next) {
        if (*n == cap) {
            fail(L, a->loc, "a call with more than %zu arguments", cap);
            return bad();
        }
        out[*n] = translate(L, c, a);
        if (L->failed)
            return bad();
        (*n)++;
    }
    return out[0];
}

static drift_expr *link(tr *a, size_t n)
{
    for (size_t k = 0; k < n; k++)
        a[k].e->next = k + 1 < n ? a[k + 1].e : NULL;
    return n ? a[0].e : NULL;
}

/* A use of the whole of v (v a data or parameter name). */
static tr translate_var(lower *L, ctx *c, const drift_expr *e, var *v,
                        int indexed)
{
    tr r = bad();
    stype t = decl_stype(v->decl);
    drift_expr *lead = lead_size(v->decl->type.t);
    if (c->datum) {
        if (v->row && !indexed && c->n_ix) {
            /* Stan's whole container, in every iteration */
            fail(L, e->loc,
                 "the whole of '%s' inside a loop over its rows couples the "
                 "rows (index it by the loop's variable)",
                 e->name);
            return r;
        }
        if (v->row) {
            r.e = mk_name(L, e->loc, e->name);
            r.t = strip(t);
            r.rw = 1;
            return r;
        }
        if (indexed || (lead && L->R && is_name(lead, L->R))) {
            fail(L, e->loc,
                 "'%s' has one value per row (its size is %s) but is not "
                 "data: drift's rows hold data only",
                 e->name, L->R);
            return r;
        }
        r.e = mk_name(L, e->loc, e->name);
        r.t = t;
        return r;
    }
    if (v->row) {
        fail(L, e->loc,
             "'%s', one of the rows, is used outside a per-row term", e->name);
        return r;
    }
    r.e = mk_name(L, e->loc, e->name);
    r.t = t;
    if (indexed) {
        if (!lead || !c->size || !same_size(L, lead, c->size)) {
            fail(L, e->loc,
                 "a loop indexes '%s' by its loop variable but does not run "
                 "over all of '%s''s first dimension (1:its size): drift "
                 "lowers such loops to one vectorised statement",
                 e->name, e->name);
            return r;
        }
        r.t = strip(t);
        r.rw = 1;
    }
    return r;
}

/* Whether ix is the loop variable plus or minus an int literal (a lag
 * or a lead); *off gets the shift. */
static int shifted_ix(const ctx *c, const drift_expr *ix, long *off)
{
    if (ix->kind != DRIFT_E_BINOP ||
        (ix->op != DRIFT_OP_ADD && ix->op != DRIFT_OP_SUB))
        return 0;
    const drift_expr *v = ix->a, *k = ix->b;
    int sign = ix->op == DRIFT_OP_SUB ? -1 : 1;
    if (v->kind == DRIFT_E_NUM && ix->op == DRIFT_OP_ADD) {
        v = ix->b;
        k = ix->a;
    }
    if (v->kind != DRIFT_E_NAME || !in_ix(c, v->name) ||
        k->kind != DRIFT_E_NUM || !k->is_int)
        return 0;
    *off = sign * (long)k->num;
    return 1;
}

static drift_expr *num(lower *L, drift_loc loc, long v)
{
    return need(L, drift_ast_num(L->A, loc, (double)v, 1));
}

/* lo + off and the loop's count hi - lo + 1, in Stan's terms. */
static void loop_span(lower *L, const ctx *c, drift_loc loc, long off,
                      drift_expr **start, drift_expr **count)
{
    const drift_expr *lo = c->lo;
    if (!lo || (lo->kind == DRIFT_E_NUM && lo->is_int)) {
        long l = lo ? (long)lo->num : 1;
        *start = num(L, loc, l + off);
        *count = l == 1 ? c->size
                        : need(L, drift_ast_binop(L->A, loc, DRIFT_OP_SUB,
                                                  c->size, num(L, loc, l - 1)));
        return;
    }
    drift_expr *lc = (drift_expr *)lo;
    *start = off ? need(L, drift_ast_binop(L->A, loc, DRIFT_OP_ADD, lc,
                                           num(L, loc, off)))
                 : lc;
    drift_expr *d = need(L, drift_ast_binop(L->A, loc, DRIFT_OP_SUB, c->size,
                                            lc));
    *count = need(L, drift_ast_binop(L->A, loc, DRIFT_OP_ADD, d,
                                     num(L, loc, 1)));
}

/* v[i + off] over a loop from lo to hi, outside the rows: the segment of
 * v the loop runs over. */
static tr translate_segment(lower *L, ctx *c, const drift_expr *e, long off)
{
    tr r = bad();
    const drift_expr *b = e->a;
    if (c->datum) {
        fail(L, e->loc, "a loop over part of the rows, or a lag or lead "
                        "(x[n - 1]), couples the rows");
        return r;
    }
    var *v = b->kind == DRIFT_E_NAME ? lookup(L, b->name) : NULL;
    if (!v || (v->kind != V_DATA && v->kind != V_PARAM) || v->row) {
        fail(L, e->loc, "a loop that does not start at 1, or a lag or lead "
                        "(x[i - 1]), applies only to data and parameters "
                        "here, not to a value computed in a loop");
        return r;
    }
    if (e->args->next) {
        fail(L, e->loc, "a second index after a shifted loop index");
        return r;
    }
    if (c->lo && c->lo->kind == DRIFT_E_NUM && c->lo->num + (double)off < 1) {
        fail(L, e->loc, "the index falls before the first element");
        return r;
    }
    drift_expr *start, *count;
    loop_span(L, c, e->loc, off, &start, &count);
    ctx top = {0};
    tr ts = translate(L, &top, start), tc = translate(L, &top, count);
    if (L->failed)
        return r;
    drift_expr *name = mk_name(L, b->loc, b->name);
    if (!name)
        return r;
    stype vt = decl_stype(v->decl), et = {vt.base, 0};
    if (vt.n_arr == 1 && scalar(et)) {
        /* an array of reals: segment takes its vector */
        name = mk_call(L, b->loc, "to_vector", name, NULL);
        if (!name)
            return r;
    }
    name->next = ts.e;
    ts.e->next = tc.e;
    tc.e->next = NULL;
    r.e = need(L, drift_ast_call(L->A, e->loc, "segment", e->loc, name, 3));
    r.t = strip(decl_stype(v->decl));
    r.rw = 1;
    return r;
}

static int is_slice(const drift_expr *e)
{
    return e && e->kind == DRIFT_E_CALL && !strcmp(e->name, ":");
}

/* v[lo:hi] of a vector v (lo, hi NULL where open): segment(v, lo,
 * hi - lo + 1). */
static drift_expr *segment_of(lower *L, drift_loc loc, drift_expr *v,
                              const drift_expr *sl, drift_expr *size)
{
    ctx top = {0};
    drift_expr *lo = NULL, *hi = NULL;
    if (sl->a)
        lo = translate(L, &top, sl->a).e;
    if (sl->b)
        hi = translate(L, &top, sl->b).e;
    if (L->failed)
        return NULL;
    if (!lo && !hi)
        return v;
    if (!lo)
        lo = num(L, loc, 1);
    if (!hi && !size) {
        fail(L, loc, "a slice open at its end of a value whose size is not "
                     "declared: write the end");
        return NULL;
    }
    if (!hi)
        hi = translate(L, &top, size).e;
    if (L->failed)
        return NULL;
    drift_expr *d = need(L, drift_ast_binop(L->A, loc, DRIFT_OP_SUB, hi, lo));
    drift_expr *count = need(L, drift_ast_binop(L->A, loc, DRIFT_OP_ADD, d,
                                                num(L, loc, 1)));
    drift_expr *lo2 = unlinked(L, lo);
    drift_expr *vc = unlinked(L, v);
    if (!count || !lo2 || !vc)
        return NULL;
    vc->next = lo2;
    lo2->next = count;
    count->next = NULL;
    return need(L, drift_ast_call(L->A, loc, "segment", loc, vc, 3));
}

/* x[a:b], x[i, :], x[:, j] and the like of a value that is not per
 * element: segments of vectors and arrays of reals, rows and columns of
 * matrices. */
static tr translate_slice(lower *L, ctx *c, const drift_expr *e)
{
    tr r = bad();
    tr base = translate(L, c, e->a);
    if (L->failed)
        return r;
    const drift_expr *i1 = e->args, *i2 = i1 ? i1->next : NULL;
    if (base.rw || (c->datum && c->n_ix)) {
        fail(L, e->loc, "a slice of a value with one entry per element of a "
                        "loop or per row");
        return r;
    }
    stype t = base.t, et = {t.base, 0};
    /* the declared sizes, for slices open at their end */
    const drift_typeexpr *dt = NULL;
    if (e->a->kind == DRIFT_E_NAME) {
        var *v = lookup(L, e->a->name);
        if (v && v->decl && (v->kind == V_DATA || v->kind == V_PARAM))
            dt = v->decl->type.t;
    }
    if (!i2 && (t.n_arr == 1 ? scalar(et)
                              : !t.n_arr && (t.base == B_VEC ||
                                             t.base == B_ROWVEC))) {
        drift_expr *v = base.e;
        if (t.n_arr)
            v = mk_call(L, e->loc, "to_vector", v, NULL);
        r.e = is_slice(i1) ? segment_of(L, e->loc, v, i1,
                                        dt ? lead_size(dt) : NULL)
                           : NULL;
        if (!is_slice(i1))
            fail(L, e->loc, "a slice index expected");
        r.t = t.n_arr ? (stype){B_VEC, 0} : t;
        return r;
    }
    if (i2 && !i2->next && !t.n_arr && t.base == B_MAT) {
        ctx top = {0};
        drift_expr *v;
        if (!is_slice(i1)) {
            /* a row, then a slice of it */
            tr ti = translate(L, &top, i1);
            if (L->failed)
                return r;
            v = need(L, drift_ast_index(L->A, e->loc, base.e, ti.e, 1));
            r.t.base = B_ROWVEC;
            if (!is_slice(i2)) {
                fail(L, e->loc, "a slice index expected");
                return r;
            }
            r.e = segment_of(L, e->loc, v, i2, dt ? dt->size[1] : NULL);
            return r;
        }
        if (!is_slice(i2)) {
            /* a column: a row of the transpose */
            tr tj = translate(L, &top, i2);
            if (L->failed)
                return r;
            drift_expr *tb = mk_call(L, e->loc, "transpose", base.e, NULL);
            v = need(L, drift_ast_index(L->A, e->loc, tb, tj.e, 1));
            r.t.base = B_VEC;
            r.e = segment_of(L, e->loc, v, i1, dt ? dt->size[0] : NULL);
            return r;
        }
        if (!i1->a && !i1->b && !i2->a && !i2->b) {
            r = base;
            return r;
        }
    }
    fail(L, e->loc, "slices (a[i:j], a[:]) are supported of vectors, "
                    "arrays of reals, and of one row or column of a matrix");
    return r;
}

static tr translate_index(lower *L, ctx *c, const drift_expr *e)
{
    tr r = bad();
    const drift_expr *first = e->args;
    for (const drift_expr *a = e->args; a; a = a->next)
        if (is_slice(a))
            return translate_slice(L, c, e);
    long off = 0;
    if (first && (shifted_ix(c, first, &off) ||
                  (c->lo && first->kind == DRIFT_E_NAME &&
                   in_ix(c, first->name))))
        return translate_segment(L, c, e, off);
    if (first && first->kind == DRIFT_E_NAME && in_ix(c, first->name)) {
        /* Element i of a container: the container, elementwise. */
        const drift_expr *b = e->a;
        if (is_elem(b)) {
            if (c->n_ix == 4) {
                fail(L, e->loc, "loops nested too deeply");
                return r;
            }
            drift_expr *size = c->size;
            if (c->lo || (c->size && b->args && !same_size(L, c->size, b->args))) {
                fail(L, e->loc, "a value set over one loop's range is used "
                                "in a loop over another");
                return bad();
            }
            if (!c->size)
                c->size = b->args;
            c->ix[c->n_ix++] = b->b->name;
            r = translate(L, c, b->a);
            c->n_ix--;
            c->size = size;
            r.rw = 1;
        } else if (b->kind == DRIFT_E_NAME) {
            var *v = lookup(L, b->name);
            if (!v || v->kind == V_LOOP || v->kind == V_LOCAL) {
                fail(L, b->loc, "'%s' cannot be indexed here", b->name);
                return r;
            }
            r = translate_var(L, c, b, v, 1);
        } else {
            /* element i of a whole expression: the expression as a
             * vectorised statement would have it */
            ctx whole = *c;
            whole.n_ix = 0;
            r = translate(L, &whole, b);
            if (!L->failed && !r.rw) {
                if (c->datum) {
                    fail(L, b->loc,
                         "a value with one entry per row that is not data "
                         "cannot be indexed by the row");
                    return bad();
                }
                r.t = strip(r.t);
                r.rw = 1;
            }
        }
        if (L->failed)
            return bad();
        if (first->next) {
            tr idx[4];
            size_t n;
            translate_list(L, c, first->next, idx, 4, &n);
            if (L->failed)
                return bad();
            for (size_t k = 0; k < n; k++)
                if (idx[k].rw) {
                    fail(L, e->loc, "indexing by two loop variables at once");
                    return bad();
                }
            if (!c->datum) {
                fail(L, e->loc,
                     "a second index after a loop's index (x[i, j]) in a "
                     "statement that is not per row");
                return bad();
            }
            drift_expr *ix = link(idx, n);
            r.e = need(L, drift_ast_index(L->A, e->loc, r.e, ix, n));
            for (size_t k = 0; k < n; k++)
                r.t = strip(r.t);
        }
        return r;
    }
    tr base = translate(L, c, e->a);
    if (L->failed)
        return bad();
    tr idx[4];
    size_t n;
    translate_list(L, c, e->args, idx, 4, &n);
    if (L->failed)
        return bad();
    int any_rw = 0;
    for (size_t k = 0; k < n; k++)
        any_rw |= idx[k].rw;
    if (any_rw && (!c->datum || base.rw)) {
        fail(L, e->loc,
             "indexing by a container of indices (a[g[i]]) is supported "
             "only in per-row terms, by an int of the rows");
        return bad();
    }
    r.e = need(L, drift_ast_index(L->A, e->loc, base.e, link(idx, n), n));
    r.t = base.t;
    for (size_t k = 0; k < n; k++)
        r.t = strip(r.t);
    r.rw = base.rw || any_rw;
    return r;
}

/* join (append_row, append_col) of n >= 1 values as a balanced tree
 * (nested log2(n) deep, however many). */
static drift_expr *join_halves(lower *L, drift_loc loc, const char *join,
                               const tr *el, size_t n)
{
    if (n == 1)
        return el[0].e;
    size_t h = n / 2;
    drift_expr *a = join_halves(L, loc, join, el, h);
    drift_expr *b = join_halves(L, loc, join, el + h, n - h);
    return a && b ? mk_call(L, loc, join, a, b) : NULL;
}

/* The vector of n scalars (n >= 1): append_row of them, one
 * rep_vector(x, 1) for a single one. */
static drift_expr *stack_scalars(lower *L, drift_loc loc, const tr *el,
                                 size_t n)
{
    if (n == 1) {
        drift_expr *one = need(L, drift_ast_num(L->A, loc, 1, 1));
        return mk_call(L, loc, "rep_vector", el[0].e, one);
    }
    return join_halves(L, loc, "append_row", el, n);
}

/* e with the name replaced by val (new nodes where anything changed). */
static drift_expr *replace_name(lower *L, drift_expr *e, const char *name,
                                drift_expr *val)
{
    if (!e || L->failed)
        return e;
    switch (e->kind) {
    case DRIFT_E_NUM:
        return e;
    case DRIFT_E_NAME:
        return strcmp(e->name, name) ? e : val;
    default:
        break;
    }
    drift_expr *c = need(L, drift_arena_alloc(L->A, sizeof *c));
    if (!c)
        return e;
    *c = *e;
    c->a = replace_name(L, e->a, name, val);
    c->b = replace_name(L, e->b, name, val);
    if (e->kind == DRIFT_E_COND) {
        c->args = replace_name(L, e->args, name, val);
        return c;
    }
    if (is_elem(e)) {
        /* an inner loop's own variable hides the name */
        if (is_name(e->b, name))
            c->a = e->a;
        c->b = e->b;
        return c;
    }
    drift_expr *first = NULL, *last = NULL;
    for (drift_expr *a = e->args; a; a = a->next) {
        drift_expr *r = unlinked(L, replace_name(L, a, name, val));
        if (!r)
            return e;
        if (last)
            last->next = r;
        else
            first = r;
        last = r;
    }
    c->args = first;
    return c;
}

static int mentions_param(lower *L, const drift_expr *e);
static void add_stmt(lower *L, slist *sl, drift_stmt *st);

/* f(arg) over the rows (arg a per-row value of the data) as a name of
 * drift's transformed block, the same reduction once: mean_x__ (Stan
 * reserves names ending in "__", so none of the program's clashes). */
static drift_expr *reduce_once(lower *L, drift_loc loc, const char *f,
                               drift_expr *arg)
{
    for (drift_stmt *st = L->transformed.first; st; st = st->next)
        if (!strcmp(st->value->name, f) && same_expr(st->value->args, arg))
            return mk_name(L, loc, st->name);
    char nm[160];
    if (arg->kind == DRIFT_E_NAME)
        snprintf(nm, sizeof nm, "%s_%s__", f, arg->name);
    else
        snprintf(nm, sizeof nm, "%s_%d__", f, ++L->n_reduced);
    drift_expr *a = need(L, drift_arena_alloc(L->A, sizeof *a));
    drift_stmt *st = need(L, drift_arena_alloc(L->A, sizeof *st));
    const char *name = need(L, drift_arena_strndup(L->A, nm, strlen(nm)));
    if (!a || !st || !name)
        return NULL;
    *a = *arg;
    a->next = NULL;
    st->kind = DRIFT_S_LET;
    st->loc = st->name_loc = loc;
    st->name = name;
    st->value = mk_call(L, loc, f, a, NULL);
    if (!st->value)
        return NULL;
    add_stmt(L, &L->transformed, st);
    return mk_name(L, loc, name);
}

static tr translate(lower *L, ctx *c, const drift_expr *e)
{
    tr r = bad();
    if (!e || L->failed)
        return r;
    switch (e->kind) {
    case DRIFT_E_NUM:
        r.e = need(L, drift_ast_num(L->A, e->loc, e->num, e->is_int));
        r.t.base = e->is_int ? B_INT : B_REAL;
        return r;
    case DRIFT_E_NAME: {
        if (L->drift && !c->datum && in_ix(c, e->name)) {
            /* drift's loops: the loop variable as a value, the vector
             * lo, lo + 1, ..., hi */
            drift_expr *start, *count;
            loop_span(L, c, e->loc, 0, &start, &count);
            drift_expr *one = need(L, drift_ast_num(L->A, e->loc, 1, 0));
            drift_expr *ones = mk_call(L, e->loc, "rep_vector", one,
                                       size_expr(L, count));
            drift_expr *seq = mk_call(L, e->loc, "cumulative_sum", ones, NULL);
            ctx top = {0};
            tr ts = translate(L, &top, start);
            drift_expr *off = ts.e ? need(L, drift_ast_binop(
                                             L->A, e->loc, DRIFT_OP_SUB, ts.e,
                                             num(L, e->loc, 1)))
                                   : NULL;
            r.e = seq && off ? need(L, drift_ast_binop(L->A, e->loc,
                                                       DRIFT_OP_ADD, seq, off))
                             : NULL;
            r.t.base = B_REAL;
            r.rw = 1;
            return r;
        }
        if (in_ix(c, e->name)) {
            fail(L, e->loc,
                 "the loop variable '%s' is used as a value: drift lowers a "
                 "loop to one vectorised statement, where '%s' may only "
                 "index the elements of the loop's containers",
                 e->name, e->name);
            return r;
        }
        var *v = lookup(L, e->name);
        if (!v) {
            fail(L, e->loc, "unknown name '%s'", e->name);
            return r;
        }
        if (v->kind == V_LOOP) {
            fail(L, e->loc, "the loop variable '%s' is used outside its loop",
                 e->name);
            return r;
        }
        if (v->kind == V_LOCAL) {
            fail(L, e->loc, "'%s' has no value here", e->name);
            return r;
        }
        if (v->kind == V_NAMED) {
            if (c->datum) {
                fail(L, e->loc, "a value of a recursion unrolled over the "
                                "data is used in a per-row term");
                return r;
            }
            r.e = need(L, drift_ast_name(L->A, e->loc, e->name));
            r.t.base = B_REAL;
            return r;
        }
        return translate_var(L, c, e, v, 0);
    }
    case DRIFT_E_INDEX:
        return translate_index(L, c, e);
    case DRIFT_E_NEG:
    case DRIFT_E_NOT: {
        tr a = translate(L, c, e->a);
        if (L->failed)
            return r;
        r = a;
        r.e = need(L, e->kind == DRIFT_E_NEG
                          ? drift_ast_neg(L->A, e->loc, a.e)
                          : drift_ast_not(L->A, e->loc, a.e));
        if (e->kind == DRIFT_E_NOT)
            r.t.base = B_INT;
        return r;
    }
    case DRIFT_E_COND: {
        tr k = translate(L, c, e->a), a = translate(L, c, e->b);
        tr b = translate(L, c, e->args);
        if (L->failed)
            return r;
        r = scalar(a.t) && !a.rw ? b : a;
        r.rw = k.rw || a.rw || b.rw;
        r.e = need(L, drift_ast_cond(L->A, e->loc, k.e, a.e, b.e));
        return r;
    }
    case DRIFT_E_BINOP: {
        tr a = translate(L, c, e->a), b = translate(L, c, e->b);
        if (L->failed)
            return r;
        drift_binop op = e->op;
        r.rw = a.rw || b.rw;
        if (op == DRIFT_OP_MUL && a.t.n_arr == 0 && b.t.n_arr == 0) {
            if (a.t.base == B_ROWVEC && b.t.base == B_VEC) {
                r.t.base = B_REAL;
                if (a.rw && !c->datum) {
                    /* the rows of a matrix times a vector */
                    r.e = need(L, drift_ast_binop(L->A, e->loc, op, a.e, b.e));
                    return r;
                }
                if (a.rw && b.rw) {
                    fail(L, e->loc, "a product of two per-element vectors");
                    return bad();
                }
                r.e = mk_call(L, e->loc, "dot", a.e, b.e);
                return r;
            }
            if (a.t.base == B_ROWVEC && b.t.base == B_MAT) {
                if (b.rw || (a.rw && !c->datum)) {
                    fail(L, e->loc, "a row vector times a matrix per element");
                    return bad();
                }
                drift_expr *tb = mk_call(L, e->loc, "transpose", b.e, NULL);
                r.e = need(L, drift_ast_binop(L->A, e->loc, op, tb, a.e));
                r.t.base = B_ROWVEC;
                return r;
            }
            if (a.t.base == B_VEC && b.t.base == B_ROWVEC) {
                fail(L, e->loc, "outer products (vector * row_vector) are not "
                                "supported");
                return bad();
            }
            if (a.t.base == B_MAT && (b.t.base == B_VEC || b.t.base == B_MAT)) {
                if (r.rw) {
                    fail(L, e->loc, "a matrix product per element");
                    return bad();
                }
                r.e = need(L, drift_ast_binop(L->A, e->loc, op, a.e, b.e));
                r.t = b.t;
                return r;
            }
        }
        if (op == DRIFT_OP_DIV && a.t.base == B_INT && b.t.base == B_INT &&
            scalar(a.t) && scalar(b.t))
            warn(L, e->loc, "integer division: Stan truncates, drift divides "
                            "as reals (write 1.0 * a / b to say so, or "
                            "compute the quotient in the data)");
        /* Elementwise, a scalar broadcast over the other side. */
        if (!c->datum && a.rw && b.rw) {
            if (op == DRIFT_OP_MUL)
                op = DRIFT_OP_EMUL;
            else if (op == DRIFT_OP_DIV)
                op = DRIFT_OP_EDIV;
        }
        if (c->datum && scalar(a.t) && scalar(b.t)) {
            if (op == DRIFT_OP_EMUL)
                op = DRIFT_OP_MUL;
            else if (op == DRIFT_OP_EDIV)
                op = DRIFT_OP_DIV;
        }
        if (!c->datum && (a.rw != b.rw) &&
            !(a.rw ? scalar(b.t) : scalar(a.t))) {
            fail(L, e->loc,
                 "a loop's element combined with a whole container");
            return bad();
        }
        r.e = need(L, drift_ast_binop(L->A, e->loc, op, a.e, b.e));
        r.t = scalar(a.t) ? b.t : a.t;
        if (op >= DRIFT_OP_LT && op <= DRIFT_OP_OR)
            r.t.base = B_INT;
        else if (scalar(a.t) && scalar(b.t))
            r.t.base = a.t.base == B_INT && b.t.base == B_INT &&
                               op != DRIFT_OP_DIV && op != DRIFT_OP_POW
                           ? B_INT
                           : B_REAL;
        return r;
    }
    case DRIFT_E_CALL: {
        if (!c->datum && L->rows_mode && e->n_args == 1 && !e->bar &&
            drift_builtin_reduces_rows(e->name) && !mentions_param(L, e->args)) {
            /* mean(y) of the rows' data outside a per-row term: the
             * argument as one value per row, reduced once */
            ctx w = {0};
            w.datum = 1;
            int failed = L->failed;
            tr a = translate(L, &w, e->args);
            if (!L->failed && a.rw && scalar(a.t)) {
                r.e = reduce_once(L, e->loc, e->name, a.e);
                r.t.base = B_REAL;
                return r;
            }
            L->failed = failed; /* not over the rows: as any call */
        }
        if (!strcmp(e->name, ":")) {
            fail(L, e->loc, "slices (a[i:j], a[:]) are not supported: index "
                            "single elements, or use head, tail or segment");
            return r;
        }
        if (is_elem(e)) {
            /* A value set element by element, used whole: Stan's whole
             * container.  Per row only as a vectorised statement over
             * the rows; otherwise the vector of its elements. */
            int rows = c->datum && L->R && is_name(e->args, L->R);
            if (rows && c->n_ix) {
                fail(L, e->loc, "the whole of a value with one entry per "
                                "row, inside a loop over the rows, couples "
                                "the rows (index it by the loop's variable)");
                return bad();
            }
            ctx w = {0};
            w.datum = rows;
            w.ix[0] = e->b->name;
            w.n_ix = 1;
            w.size = e->args;
            r = translate(L, &w, e->a);
            long n;
            if (L->failed && !L->oom && !rows && !const_int(L, e->args, &n) &&
                n >= 1 && n <= UNROLL_MAX - L->n_unrolled) {
                /* not one vectorised value: its elements one by one */
                L->failed = 0;
                L->n_unrolled += n;
                tr *el = need(L, drift_arena_alloc(L->A, (size_t)n * sizeof *el));
                for (long k = 0; el && k < n && !L->failed; k++) {
                    drift_expr *x = replace_name(L, e->a, e->b->name,
                                                 num(L, e->loc, k + 1));
                    ctx top = {0};
                    el[k] = translate(L, &top, x);
                    if (!L->failed && !scalar(el[k].t))
                        fail(L, e->loc, "a value given element by element "
                                        "whose elements are not scalars");
                }
                if (L->failed || !el)
                    return bad();
                r.e = stack_scalars(L, e->loc, el, (size_t)n);
                r.t.base = B_VEC;
                r.t.n_arr = 0;
                r.rw = 0;
                return r;
            }
            if (L->failed)
                return bad();
            if (!rows && !r.rw) {
                /* the same value in every element */
                if (!scalar(r.t)) {
                    fail(L, e->loc, "a container whose elements are all "
                                    "the same non-scalar value");
                    return bad();
                }
                drift_expr *n = size_expr(L, e->args);
                r.e = mk_call(L, e->loc, "rep_vector", r.e, n);
                r.t.base = B_VEC;
            } else if (!rows) {
                if (scalar(r.t))
                    r.t.base = B_VEC;   /* one scalar per element */
                else
                    r.t.n_arr++;
            }
            r.rw = rows;
            return r;
        }
        if (!strcmp(e->name, "transpose") && e->n_args == 1 &&
            e->args->kind == DRIFT_E_CALL && !strcmp(e->args->name, "[")) {
            /* [a', b', ...]': the matrix whose columns are a, b, ... */
            const drift_expr *lit = e->args;
            tr cols[16];
            size_t n = 0;
            for (const drift_expr *a = lit->args; a; a = a->next) {
                if (n == 16 || a->kind != DRIFT_E_CALL ||
                    strcmp(a->name, "transpose") || a->n_args != 1) {
                    fail(L, a->loc, "a matrix literal [...]' is supported "
                                    "only as [a', b', ...]' of vectors");
                    return bad();
                }
                cols[n] = translate(L, c, a->args);
                if (L->failed)
                    return bad();
                if (!scalar(strip(cols[n].t)) && !(cols[n].rw && scalar(cols[n].t))) {
                    fail(L, a->loc, "a column of [a', b', ...]' must be a vector");
                    return bad();
                }
                n++;
            }
            int rw = c->datum;
            for (size_t k = 0; k < n; k++)
                if (!cols[k].rw && c->datum) {
                    fail(L, e->loc, "a matrix literal whose columns are not "
                                    "all data of the rows");
                    return bad();
                }
            const char *join = rw ? "append_row" : "append_col";
            drift_expr *acc = cols[n - 1].e;
            for (size_t k = n - 1; k-- > 0;)
                acc = mk_call(L, e->loc, join, cols[k].e, acc);
            if (n == 1 && rw) {
                drift_expr *one = need(L, drift_ast_num(L->A, e->loc, 1, 1));
                acc = mk_call(L, e->loc, "rep_vector", cols[0].e, one);
            }
            if (n == 1 && !rw) {
                fail(L, e->loc, "a one-column matrix literal [a']' outside "
                                "the rows");
                return bad();
            }
            r.e = acc;
            r.rw = rw;
            r.t.base = rw ? B_ROWVEC : B_MAT;
            r.t.n_arr = 0;
            return r;
        }
        if (!strcmp(e->name, "{cols}")) {
            /* a matrix given column by column: append_col of them */
            tr *cl = need(L, drift_arena_alloc(L->A, e->n_args * sizeof *cl));
            if (!cl)
                return bad();
            size_t n = 0;
            for (const drift_expr *a = e->args; a && !L->failed; a = a->next) {
                cl[n] = translate(L, c, a);
                if (L->failed)
                    return bad();
                if (cl[n].rw || cl[n].t.n_arr || cl[n].t.base != B_VEC) {
                    fail(L, e->loc, "a matrix given column by column whose "
                                    "columns are not vectors");
                    return bad();
                }
                n++;
            }
            r.e = join_halves(L, e->loc, "append_col", cl, n);
            r.t.base = B_MAT;
            return r;
        }
        if (!strcmp(e->name, "{el}")) {
            /* a local's elements given one by one: the vector of them */
            tr *el = need(L, drift_arena_alloc(L->A, e->n_args * sizeof *el));
            if (!el)
                return bad();
            size_t n = 0;
            int any_rw = 0;
            for (const drift_expr *a = e->args; a && !L->failed; a = a->next) {
                el[n] = translate(L, c, a);
                if (L->failed)
                    return bad();
                if (!scalar(el[n].t)) {
                    fail(L, e->loc, "a value given element by element whose "
                                    "elements are not scalars");
                    return bad();
                }
                any_rw |= el[n].rw;
                n++;
            }
            if (any_rw && !c->datum) {
                fail(L, e->loc, "a value given element by element from a "
                                "loop's elements");
                return bad();
            }
            r.e = stack_scalars(L, e->loc, el, n);
            r.rw = any_rw;
            r.t.base = B_VEC;
            return r;
        }
        if (!strcmp(e->name, "{")) {
            /* an array of scalars: drift's vector of them */
            tr el[64];
            size_t n = 0;
            translate_list(L, c, e->args, el, 64, &n);
            if (L->failed)
                return bad();
            int any_rw = 0, all_int = 1;
            for (size_t k = 0; k < n; k++) {
                any_rw |= el[k].rw;
                all_int &= el[k].t.base == B_INT;
                if (!scalar(el[k].t)) {
                    fail(L, e->loc, "an array expression {...} of "
                                    "non-scalars is not supported");
                    return bad();
                }
            }
            if (all_int) {
                fail(L, e->loc, "an array expression {...} of ints is not "
                                "supported (drift would make it a vector of "
                                "reals)");
                return bad();
            }
            if (any_rw && !c->datum) {
                fail(L, e->loc, "an array expression of a loop's elements");
                return bad();
            }
            r.e = stack_scalars(L, e->loc, el, n);
            r.rw = any_rw;
            r.t.base = B_VEC;
            return r;
        }
        if (!strcmp(e->name, "[")) {
            tr el[16];
            size_t n = 0;
            translate_list(L, c, e->args, el, 16, &n);
            if (L->failed)
                return bad();
            int any_rw = 0;
            for (size_t k = 0; k < n; k++) {
                any_rw |= el[k].rw;
                if (!scalar(el[k].t)) {
                    fail(L, e->loc, "a row vector literal [...] of "
                                    "non-scalars");
                    return bad();
                }
            }
            if (any_rw && !c->datum) {
                fail(L, e->loc, "a row vector literal of a loop's elements");
                return bad();
            }
            r.e = stack_scalars(L, e->loc, el, n);
            r.rw = any_rw;
            r.t.base = B_ROWVEC;
            return r;
        }
        if (!strcmp(e->name, "target")) {
            fail(L, e->loc, "target() is not supported");
            return r;
        }
        tr args[16];
        size_t n = 0;
        if (e->args)
            translate_list(L, c, e->args, args, 16, &n);
        if (L->failed)
            return bad();
        int any_rw = 0;
        for (size_t k = 0; k < n; k++)
            any_rw |= args[k].rw;
        const char *f = drift_name(e->name);
        if (!strcmp(f, "dot") && n == 2 && any_rw) {
            if (c->datum) {
                r.e = mk_call(L, e->loc, "dot", args[0].e, args[1].e);
            } else {
                int first_rw = args[0].rw;
                if (args[0].rw && args[1].rw) {
                    fail(L, e->loc, "dot_product of two per-element vectors");
                    return bad();
                }
                r.e = need(L, drift_ast_binop(L->A, e->loc, DRIFT_OP_MUL,
                                              first_rw ? args[0].e : args[1].e,
                                              first_rw ? args[1].e : args[0].e));
            }
            r.t.base = B_REAL;
            r.rw = 1;
            return r;
        }
        if ((!strcmp(f, "transpose") || !strcmp(f, "to_row_vector")) &&
            n == 1 && args[0].t.n_arr == 0 &&
            (args[0].t.base == B_VEC || args[0].t.base == B_ROWVEC)) {
            /* drift has no row vectors: a transposed vector is itself,
             * its type remembered for products */
            r = args[0];
            r.t.base = !strcmp(f, "to_row_vector") || args[0].t.base == B_VEC
                           ? B_ROWVEC
                           : B_VEC;
            return r;
        }
        if (!strcmp(f, "rep_row_vector") && n == 2) {
            r.e = need(L, drift_ast_call(L->A, e->loc, "rep_vector",
                                         e->name_loc, link(args, n), n));
            r.t.base = B_ROWVEC;
            r.rw = any_rw;
            return r;
        }
        if (!strcmp(f, "append_row") && n == 2 && !any_rw &&
            ((args[0].t.base == B_ROWVEC && args[1].t.base == B_MAT) ||
             (args[0].t.base == B_MAT && args[1].t.base == B_ROWVEC)) &&
            !args[0].t.n_arr && !args[1].t.n_arr) {
            /* a row on a matrix: drift has no row vectors, so through
             * the columns of the transposes */
            drift_expr *a0 = args[0].t.base == B_MAT
                                 ? mk_call(L, e->loc, "transpose", args[0].e,
                                           NULL)
                                 : args[0].e;
            drift_expr *a1 = args[1].t.base == B_MAT
                                 ? mk_call(L, e->loc, "transpose", args[1].e,
                                           NULL)
                                 : args[1].e;
            drift_expr *cols = mk_call(L, e->loc, "append_col", a0, a1);
            r.e = mk_call(L, e->loc, "transpose", cols, NULL);
            r.t.base = B_MAT;
            return r;
        }
        if (c->datum && !strcmp(f, "rep_vector") && n == 2 &&
            scalar(args[0].t) && L->R && is_name(e->args->next, L->R)) {
            /* one value per row: the value itself in each row */
            r = args[0];
            r.rw = 1;
            return r;
        }
        if (c->datum && !strcmp(f, "append_col") && n == 2 && any_rw) {
            /* a row of [a, B]: the row's values one after the other */
            for (size_t k = 0; k < 2; k++)
                if (!args[k].rw || !(scalar(args[k].t) ||
                                     (args[k].t.base == B_ROWVEC &&
                                      !args[k].t.n_arr))) {
                    fail(L, e->loc, "append_col of the rows' values and "
                                    "something else");
                    return bad();
                }
            r.e = mk_call(L, e->loc, "append_row", args[0].e, args[1].e);
            r.t.base = B_ROWVEC;
            r.rw = 1;
            return r;
        }
        if (c->datum && !strcmp(f, "to_vector") && n == 1 && args[0].rw &&
            scalar(args[0].t)) {
            /* one element per row: the row's value */
            r = args[0];
            r.t.base = B_REAL;
            return r;
        }
        if (!strcmp(f, "to_vector") && n == 1 &&
            (args[0].t.base == B_VEC || args[0].t.base == B_ROWVEC) &&
            args[0].t.n_arr == 0) {
            r = args[0];
            r.t.base = B_VEC;
            return r;
        }
        if (c->datum && n == 1 && args[0].rw && scalar(args[0].t) &&
            drift_builtin_reduces_rows(f) && !mentions_param(L, args[0].e)) {
            /* a value of the data over every row: computed once, in
             * drift's transformed block */
            r.e = reduce_once(L, e->loc, f, args[0].e);
            r.t.base = B_REAL;
            r.t.n_arr = 0;
            r.rw = 0;
            return r;
        }
        if (any_rw && !elementwise_call(f, n) &&
            !(c->datum && (is_density(f) || has_suffix(f, "_rng"))) &&
            !(!c->datum && has_suffix(f, "_rng"))) {
            if (c->datum)
                fail(L, e->loc,
                     "'%s' over the rows couples them: its value is not a "
                     "sum of one term per row", e->name);
            else
                fail(L, e->loc,
                     "'%s' of a loop's elements cannot be vectorised", e->name);
            return bad();
        }
        r.t = call_type(f, args, n);
        if (any_rw && (elementwise_call(f, n) || has_suffix(f, "_rng")))
            r.t = args[0].rw ? args[0].t : r.t;
        if (any_rw && has_suffix(f, "_rng") && c->datum) {
            r.t.n_arr = 0;
        }
        r.rw = any_rw;
        r.e = need(L, drift_ast_call(L->A, e->loc, f, e->name_loc,
                                     link(args, n), n));
        if (r.e)
            r.e->bar = e->bar;
        return r;
    }
    }
    return r;
}

/* ---- declarations ------------------------------------------------------- */

static drift_expr *size_expr(lower *L, drift_expr *e)
{
    if (!e)
        return NULL;
    ctx c = {0};
    /* a size may be a transformed datum: int J = 100; */
    drift_expr *v = subst(L, e);
    tr r = translate(L, &c, v);
    return r.e;
}

/* drift's type for a Stan declaration; rows: without its leading size. */
static drift_typeexpr *lower_type(lower *L, const stan_stmt *d, int row)
{
    const drift_typeexpr *s = d->type.t;
    drift_typeexpr *t = need(L, drift_arena_alloc(L->A, sizeof *t));
    if (!t)
        return NULL;
    *t = *s;
    int skip = row;
    t->n_arr = 0;
    for (int k = 0; k < s->n_arr; k++) {
        if (skip) {
            skip = 0;
            continue;
        }
        t->arr_size[t->n_arr++] = size_expr(L, s->arr_size[k]);
    }
    t->size[0] = size_expr(L, s->size[0]);
    t->size[1] = size_expr(L, s->size[1]);
    if (skip) {
        if (s->kind == DRIFT_T_VECTOR) {
            t->kind = DRIFT_T_REAL;
            t->size[0] = NULL;
        } else if (s->kind == DRIFT_T_MATRIX) {
            t->kind = DRIFT_T_VECTOR;
            t->size[0] = t->size[1];
            t->size[1] = NULL;
        }
    }
    t->lower = size_expr(L, s->lower);
    t->upper = size_expr(L, s->upper);
    return t;
}

static void add_decl(lower *L, dlist *dl, const stan_stmt *d, int row)
{
    drift_decl *dc = need(L, drift_arena_alloc(L->A, sizeof *dc));
    if (!dc)
        return;
    dc->name = d->name;
    dc->loc = d->name_loc;
    dc->type = lower_type(L, d, row);
    if (dl->last)
        dl->last->next = dc;
    else
        dl->first = dc;
    dl->last = dc;
}

static void add_stmt(lower *L, slist *sl, drift_stmt *st)
{
    (void)L;
    if (!st)
        return;
    if (sl->last)
        sl->last->next = st;
    else
        sl->first = st;
    sl->last = st;
}

/* ---- statements ------------------------------------------------------- */

typedef enum xblock { X_TDATA, X_TPARAMS, X_MODEL, X_GQ, X_FUNC } xblock;

static void exec(lower *L, xblock xb, ctx *c, const stan_stmt *s);

static void exec_list(lower *L, xblock xb, ctx *c, const stan_stmt *s)
{
    for (; s && !L->failed && !L->ret_done; s = s->next)
        exec(L, xb, c, s);
}

static drift_expr *and_cond(lower *L, drift_loc loc, drift_expr *a,
                            drift_expr *b)
{
    if (!a)
        return b;
    return need(L, drift_ast_binop(L->A, loc, DRIFT_OP_AND, a, b));
}

/* A call of a user function: its body executed with the parameters bound
 * to the arguments, its value what it returns. */
static drift_expr *inline_call(lower *L, const stan_stmt *f, drift_expr *call)
{
    if (L->failed)
        return NULL;
    if (f->op == 1) {
        fail(L, call->loc, "'%s' returns void: void functions are not "
                           "supported", f->name);
        return NULL;
    }
    if (L->fdepth >= 32) {
        fail(L, call->loc, "'%s' calls itself: recursive functions are not "
                           "supported", f->name);
        return NULL;
    }
    for (const stan_stmt *g = f->next; g; g = g->next)
        if (g->name && g->body && !strcmp(g->name, f->name)) {
            fail(L, g->name_loc, "'%s' is defined twice: overloaded "
                                 "functions are not supported", f->name);
            return NULL;
        }
    size_t np = 0;
    for (const stan_stmt *p = f->els; p; p = p->next)
        np++;
    if (np != call->n_args) {
        fail(L, call->loc, "'%s' takes %zu arguments, not %zu", f->name, np,
             call->n_args);
        return NULL;
    }
    var *saved = L->vars;
    drift_expr *saved_cond = L->cond, *saved_ret = L->ret;
    drift_expr *saved_rc = L->ret_cond;
    int saved_done = L->ret_done;
    L->cond = NULL;
    L->ret = L->ret_cond = NULL;
    L->ret_done = 0;
    L->fdepth++;
    drift_expr *a = call->args;
    for (const stan_stmt *p = f->els; p && a; p = p->next, a = a->next) {
        var *v = push_var(L, p->name, V_LOCAL);
        if (!v)
            break;
        v->def = a;
    }
    ctx top = {0};
    exec(L, X_FUNC, &top, f->body);
    drift_expr *r = L->ret;
    if (!L->failed && r)
        too_large(L, f->name, r, call->loc);
    if (!L->failed && (!r || L->ret_cond))
        fail(L, f->name_loc, "'%s' does not end in a return drift can follow "
                             "(one return at its end, or if (...) return a; "
                             "followed by return b;)", f->name);
    L->fdepth--;
    L->vars = saved;
    L->cond = saved_cond;
    L->ret = saved_ret;
    L->ret_cond = saved_rc;
    L->ret_done = saved_done;
    return L->failed ? NULL : r;
}

/* y ~ dist(args) as the expression dist_lpdf(y | args). */
static drift_expr *density_call(lower *L, const stan_stmt *s,
                                drift_expr *lhs, drift_expr *args, size_t n)
{
    const drift_dist *d = drift_dist_find(s->dist);
    char name[160];
    snprintf(name, sizeof name, "%s_%s", s->dist,
             d && d->discrete ? "lpmf" : "lpdf");
    if (!d) {
        char t[160];
        snprintf(t, sizeof t, "%s_lpmf", s->dist);
        if (find_fun(L, t))
            snprintf(name, sizeof name, "%s", t);
    }
    char *nm = need(L, drift_arena_strndup(L->A, name, strlen(name)));
    if (!nm || !lhs)
        return NULL;
    drift_expr *y = need(L, drift_arena_alloc(L->A, sizeof *y));
    if (!y)
        return NULL;
    *y = *lhs;
    y->next = args;
    drift_expr *c = need(L, drift_ast_call(L->A, s->loc, nm, s->dist_loc, y,
                                           n + 1));
    if (c)
        c->bar = 1;
    return c;
}

/* name_SUFFIX(at | the statement's arguments), at a fresh copy of at. */
static drift_expr *cdf_call(lower *L, const stan_stmt *s, const char *suffix,
                            drift_expr *at)
{
    char name[160];
    snprintf(name, sizeof name, "%s_%s", s->dist, suffix);
    char *nm = need(L, drift_arena_strndup(L->A, name, strlen(name)));
    size_t n = 0;
    drift_expr *args = s->args ? subst_list(L, s->args, &n) : NULL;
    drift_expr *y = at ? need(L, drift_arena_alloc(L->A, sizeof *y)) : NULL;
    if (!nm || !y || L->failed)
        return NULL;
    *y = *at;
    y->next = args;
    drift_expr *c = need(L, drift_ast_call(L->A, s->loc, nm, s->dist_loc, y,
                                           n + 1));
    if (c)
        c->bar = 1;
    return c;
}

/* The log probability of the truncation's interval under the statement's
 * distribution, log P(lo <= y <= hi): log_diff_exp of the log CDFs at the
 * bounds, or the log CCDF at lo (T[lo, ]), or the log CDF at hi (T[, hi]).
 * For a discrete distribution the lower bound counts: P(y >= lo) is the
 * CCDF at lo - 1. */
static drift_expr *trunc_norm(lower *L, const stan_stmt *s, int discrete)
{
    drift_loc loc = s->trunc_loc;
    drift_expr *lo = NULL, *hi = NULL;
    if (s->trunc_lo) {
        lo = subst(L, s->trunc_lo);
        if (lo && discrete) {
            drift_expr *one = need(L, drift_ast_num(L->A, loc, 1, 1));
            lo = one ? need(L, drift_ast_binop(L->A, loc, DRIFT_OP_SUB, lo,
                                               one))
                     : NULL;
        }
    }
    if (s->trunc_hi)
        hi = subst(L, s->trunc_hi);
    if (L->failed)
        return NULL;
    if (lo && hi) {
        drift_expr *a = cdf_call(L, s, "lcdf", hi), *b = cdf_call(L, s, "lcdf", lo);
        if (!a || !b)
            return NULL;
        a->next = b;
        return need(L, drift_ast_call(L->A, loc, "log_diff_exp", loc, a, 2));
    }
    return lo ? cdf_call(L, s, "lccdf", lo) : cdf_call(L, s, "lcdf", hi);
}

/* v plus log(step(y - lo)) and log(step(hi - y)): -inf for an outcome
 * outside the truncation's bounds (a draw Stan rejects), 0 within them
 * (both bounds included, as Stan's), with no derivative. */
static drift_expr *trunc_check(lower *L, const stan_stmt *s, drift_expr *y,
                               drift_expr *v)
{
    drift_loc loc = s->trunc_loc;
    for (int side = 0; side < 2 && v; side++) {
        const drift_expr *b = side ? s->trunc_hi : s->trunc_lo;
        if (!b)
            continue;
        drift_expr *bb = subst(L, (drift_expr *)b);
        if (!bb)
            return NULL;
        drift_expr *d = side ? drift_ast_binop(L->A, loc, DRIFT_OP_SUB, bb, y)
                             : drift_ast_binop(L->A, loc, DRIFT_OP_SUB, y, bb);
        drift_expr *st = mk_call(L, loc, "step", need(L, d), NULL);
        drift_expr *lg = mk_call(L, loc, "log", st, NULL);
        v = lg ? need(L, drift_ast_binop(L->A, loc, DRIFT_OP_ADD, v, lg))
               : NULL;
    }
    return v;
}

/* A truncated outcome that is a scalar of the data or the rows, with
 * bounds that are literals or data scalars: the bounds become its
 * declaration's constraint, so that a value outside them is refused
 * when the data are read, naming the file and row. */
static void trunc_data_bounds(lower *L, const ctx *c, const stan_stmt *s,
                              var *v)
{
    if (!v || v->kind != V_DATA || !v->decl || !v->decl->type.t)
        return;
    drift_typeexpr *t = v->decl->type.t;
    /* y, or x[k] in a loop over all of x (1:K, as the loop's
     * vectorisation requires): every element has the bounds */
    const drift_expr *y = s->lhs;
    int whole = y->kind == DRIFT_E_NAME && !t->n_arr &&
                (t->kind == DRIFT_T_INT || t->kind == DRIFT_T_REAL);
    int elems = y->kind == DRIFT_E_INDEX && y->a->kind == DRIFT_E_NAME &&
                y->n_args == 1 && y->args->kind == DRIFT_E_NAME &&
                in_ix(c, y->args->name) && !c->lo &&
                ((t->n_arr == 1 &&
                  (t->kind == DRIFT_T_INT || t->kind == DRIFT_T_REAL)) ||
                 (!t->n_arr && t->kind == DRIFT_T_VECTOR));
    if ((!whole && !elems) || t->con)
        return;
    for (int side = 0; side < 2; side++) {
        drift_expr *b = side ? s->trunc_hi : s->trunc_lo;
        if (!b)
            continue;
        var *bv = b->kind == DRIFT_E_NAME ? lookup(L, b->name) : NULL;
        int ok = (b->kind == DRIFT_E_NUM ||
                  (b->kind == DRIFT_E_NEG && b->a->kind == DRIFT_E_NUM) ||
                  (bv && bv->kind == V_DATA && !bv->in_rows && bv->decl &&
                   bv->decl->type.t && !bv->decl->type.t->n_arr &&
                   (bv->decl->type.t->kind == DRIFT_T_INT ||
                    bv->decl->type.t->kind == DRIFT_T_REAL)));
        if (!ok)
            continue;
        if (side && !t->upper) {
            t->upper = b;
            t->upper_loc = s->trunc_loc;
        } else if (!side && !t->lower) {
            t->lower = b;
            t->lower_loc = s->trunc_loc;
        }
    }
}

static drift_stmt *new_dstmt(lower *L, drift_stmt_kind k, drift_loc loc)
{
    drift_stmt *st = need(L, drift_arena_alloc(L->A, sizeof *st));
    if (st) {
        st->kind = k;
        st->loc = loc;
    }
    return st;
}

/* The sum over a loop's iterations of a term of the log density (drift's
 * own loops): a density or log cdf of the loop's elements is already that
 * sum (drift's densities add over vectors); another value of the elements
 * is summed; a value the same in every iteration counts once for each.
 * Sums and differences are taken apart, a condition the same in every
 * iteration chooses between sums. */
static drift_expr *loop_sum(lower *L, ctx *c, const drift_expr *e)
{
    if (!e || L->failed)
        return NULL;
    if (e->kind == DRIFT_E_BINOP &&
        (e->op == DRIFT_OP_ADD || e->op == DRIFT_OP_SUB)) {
        drift_expr *a = loop_sum(L, c, e->a), *b = loop_sum(L, c, e->b);
        return L->failed ? NULL
                         : need(L, drift_ast_binop(L->A, e->loc, e->op, a, b));
    }
    if (e->kind == DRIFT_E_NEG) {
        drift_expr *a = loop_sum(L, c, e->a);
        return L->failed ? NULL : need(L, drift_ast_neg(L->A, e->loc, a));
    }
    if (e->kind == DRIFT_E_COND) {
        tr k = translate(L, c, e->a);
        if (L->failed)
            return NULL;
        if (k.rw) {
            fail(L, e->loc, "a condition on the loop's elements around a "
                            "term of the log density: write the condition "
                            "in the term's value (x[k] > 0 ? ... : ...) "
                            "without densities, or over whole vectors");
            return NULL;
        }
        drift_expr *a = loop_sum(L, c, e->b), *b = loop_sum(L, c, e->args);
        return L->failed ? NULL : need(L, drift_ast_cond(L->A, e->loc, k.e, a, b));
    }
    int dens = e->kind == DRIFT_E_CALL && e->bar &&
               (is_density(e->name) || has_suffix(e->name, "_lcdf") ||
                has_suffix(e->name, "_lccdf"));
    tr r = bad();
    if (dens) {
        tr args[16];
        size_t n = 0;
        translate_list(L, c, e->args, args, 16, &n);
        if (L->failed)
            return NULL;
        for (size_t k = 0; k < n; k++)
            r.rw |= args[k].rw;
        r.e = need(L, drift_ast_call(L->A, e->loc, drift_name(e->name),
                                     e->name_loc, link(args, n), n));
        if (r.e)
            r.e->bar = 1;
    } else {
        r = translate(L, c, e);
    }
    if (L->failed)
        return NULL;
    if (r.rw)
        return dens ? r.e : mk_call(L, e->loc, "sum", r.e, NULL);
    drift_expr *start, *count;
    loop_span(L, c, e->loc, 0, &start, &count);
    return need(L, drift_ast_binop(L->A, e->loc, DRIFT_OP_MUL,
                                   size_expr(L, count), r.e));
}

/* A term of the log density: a ~ statement or target +=, after
 * substitution. */
static drift_stmt *emit_term(lower *L, ctx *c, const stan_stmt *s,
                             drift_expr *lhs, drift_expr *args,
                             drift_expr *value)
{
    int per_row = 0;
    tr tl = bad(), tv = bad();
    tr ta[16];
    size_t na = 0;
    ctx dc = *c;
    if (L->rows_mode) {
        int loop_rows = c->n_ix && !c->lo && c->size &&
                        is_name(c->size, L->R);
        dc.datum = 1;
        if (!loop_rows && c->n_ix) {
            /* A loop over another size: a whole-data term. */
            dc.datum = 0;
        }
        if (dc.datum) {
            if (!loop_rows) {
                dc.n_ix = 0;
                dc.size = NULL;
            }
            if (value) {
                const drift_expr *v = value;
                if (v->kind == DRIFT_E_CALL && !strcmp(v->name, "sum") &&
                    v->n_args == 1)
                    v = v->args;
                tv = translate(L, &dc, v);
                per_row = tv.rw || loop_rows;
            } else {
                tl = translate(L, &dc, lhs);
                translate_list(L, &dc, args, ta, 16, &na);
                per_row = tl.rw || loop_rows;
                for (size_t k = 0; k < na; k++)
                    per_row |= ta[k].rw;
            }
            if (L->failed)
                return NULL;
        }
    }
    if (!per_row) {
        dc = *c;
        dc.datum = 0;
        if (value && L->drift && c->n_ix) {
            tv.e = loop_sum(L, &dc, value);
        } else if (value) {
            tv = translate(L, &dc, value);
            if (!L->failed && c->n_ix && !tv.rw) {
                /* the same term once per iteration */
                drift_expr *start, *count;
                loop_span(L, c, value->loc, 0, &start, &count);
                drift_expr *sz = size_expr(L, count);
                tv.e = need(L, drift_ast_binop(L->A, value->loc, DRIFT_OP_MUL,
                                               sz, tv.e));
            }
        } else {
            tl = translate(L, &dc, lhs);
            translate_list(L, &dc, args, ta, 16, &na);
            if (!L->failed && c->n_ix) {
                int any = tl.rw;
                for (size_t k = 0; k < na; k++)
                    any |= ta[k].rw;
                if (!any)
                    fail(L, s->loc, "a '~' statement repeated by a loop "
                                    "without touching the loop's elements");
            }
        }
        if (L->failed)
            return NULL;
    }
    drift_stmt *st;
    if (value) {
        st = new_dstmt(L, DRIFT_S_TARGET, s->loc);
        if (!st)
            return NULL;
        st->value = tv.e;
    } else {
        st = new_dstmt(L, DRIFT_S_TILDE, s->loc);
        if (!st)
            return NULL;
        st->lhs = tl.e;
        st->dist = s->dist;
        st->dist_loc = s->dist_loc;
        st->args = link(ta, na);
        st->n_args = na;
    }
    add_stmt(L, per_row ? &L->datum : &L->prior, st);
    return st;
}

/* Whether e reads a parameter (directly or through a local's value).
 * A local whose value names itself (int K = K - 1 over a K of the data,
 * names looked up again here) would recurse without end: past a depth
 * no program needs, the answer is yes, the careful one. */
static int mentions_param_at(lower *L, const drift_expr *e, int depth)
{
    if (!e)
        return 0;
    if (depth > 400)
        return 1;
    if (e->kind == DRIFT_E_NAME) {
        var *v = lookup(L, e->name);
        if (!v)
            return 0;
        if (v->kind == V_PARAM)
            return 1;
        return (v->kind == V_LOCAL || v->kind == V_NAMED) && v->def &&
               mentions_param_at(L, v->def, depth + 1);
    }
    if (mentions_param_at(L, e->a, depth + 1) ||
        mentions_param_at(L, e->b, depth + 1))
        return 1;
    for (const drift_expr *a = e->args; a; a = a->next)
        if (mentions_param_at(L, a, depth + 1))
            return 1;
    return 0;
}

static int mentions_param(lower *L, const drift_expr *e)
{
    return mentions_param_at(L, e, 0);
}

static int mentions(const drift_expr *e, const char *name)
{
    if (!e)
        return 0;
    if (e->kind == DRIFT_E_NAME)
        return !strcmp(e->name, name);
    if (mentions(e->a, name) || mentions(e->b, name))
        return 1;
    for (const drift_expr *a = e->args; a; a = a->next)
        if (mentions(a, name))
            return 1;
    return 0;
}

/* value, a scalar of the model block, as a local among the prior's
 * statements (NAME__K__, K the element's flat index from 1), so that a
 * recursion's elements are each computed once and the expressions that
 * use them stay shallow.  Returns the name to use in its place. */
static drift_expr *named_value(lower *L, var *v, long k, drift_expr *value,
                               drift_loc loc)
{
    ctx top = {0};
    tr r = translate(L, &top, value);
    if (L->failed)
        return NULL;
    if (!scalar(r.t))
        return value;
    char nm[200];
    snprintf(nm, sizeof nm, "%s__%ld__", v->name, ++L->n_named);
    (void)k;
    const char *name = need(L, drift_arena_strndup(L->A, nm, strlen(nm)));
    drift_stmt *st = new_dstmt(L, DRIFT_S_LET, loc);
    var *nv = name ? push_var(L, name, V_NAMED) : NULL;
    if (!st || !nv)
        return NULL;
    /* after the locals of the enclosing scopes, so that leaving them
     * keeps it */
    L->vars = nv->next;
    var **pp = &L->vars;
    while (*pp)
        pp = &(*pp)->next;
    nv->next = NULL;
    *pp = nv;
    nv->def = value;
    st->name = name;
    st->name_loc = loc;
    st->value = r.e;
    add_stmt(L, &L->prior, st);
    return need(L, drift_ast_name(L->A, loc, name));
}

/* x[i] = value, x[i, j] = value or x[i] = row with the indices known
 * while lowering (an unrolled loop's variable, a literal, data): the
 * element's value is kept, so that later statements read it.  Returns
 * 0 when lhs is not of that form (nothing done). */
/* M[:, j] = column with j known: the matrix local M kept column by
 * column.  Returns 0 when lhs is not of that form. */
static int assign_column(lower *L, const stan_stmt *s, drift_expr *val)
{
    const drift_expr *lhs = s->lhs, *i1 = lhs->args;
    const drift_expr *i2 = i1 ? i1->next : NULL;
    if (lhs->a->kind != DRIFT_E_NAME || lhs->n_args != 2 ||
        i1->kind != DRIFT_E_CALL || strcmp(i1->name, ":") || i1->a || i1->b)
        return 0;
    var *v = lookup(L, lhs->a->name);
    if (!v || v->kind != V_LOCAL || !v->decl)
        return 0;
    const drift_typeexpr *t = v->decl->type.t;
    long j, nc;
    drift_expr *sj = subst(L, (drift_expr *)i2);
    if (L->failed || t->kind != DRIFT_T_MATRIX || t->n_arr ||
        const_int(L, sj, &j) || decl_dim(L, t, 1, &nc))
        return 0;
    if (s->op >= 0 || L->cond) {
        fail(L, s->loc, "a column of '%s' updated or set under a condition",
             v->name);
        return 1;
    }
    if (!v->col) {
        if (v->def || v->el || nc < 1 || nc > UNROLL_MAX) {
            fail(L, s->loc, "'%s' is given columns after a value of its own, "
                            "or has %ld columns", v->name, nc);
            return 1;
        }
        v->col = need(L, drift_arena_alloc(L->A, (size_t)nc * sizeof *v->col));
        if (!v->col)
            return 1;
        memset(v->col, 0, (size_t)nc * sizeof *v->col);
        v->n_col = nc;
    }
    if (j < 1 || j > v->n_col) {
        fail(L, lhs->loc, "column %ld is out of range for '%s'", j, v->name);
        return 1;
    }
    if (too_large(L, v->name, val, s->loc))
        return 1;
    v->col[j - 1] = val;
    return 1;
}

static int assign_element(lower *L, xblock xb, ctx *c, const stan_stmt *s,
                          drift_expr *val)
{
    const drift_expr *lhs = s->lhs;
    if (lhs->kind == DRIFT_E_INDEX && assign_column(L, s, val))
        return 1;
    if (lhs->kind != DRIFT_E_INDEX || lhs->a->kind != DRIFT_E_NAME ||
        lhs->n_args > 2)
        return 0;
    var *v = lookup(L, lhs->a->name);
    if (!v || v->kind != V_LOCAL || !v->decl)
        return 0;
    long ix[2];
    size_t n = 0;
    for (const drift_expr *a = lhs->args; a; a = a->next) {
        drift_expr *sa = subst(L, (drift_expr *)a);
        if (L->failed || const_int(L, sa, &ix[n]))
            return 0;
        n++;
    }
    const drift_typeexpr *t = v->decl->type.t;
    int nd = t->n_arr + (t->kind == DRIFT_T_VECTOR) +
             2 * (t->kind == DRIFT_T_MATRIX);
    if (nd < 1 || nd > 2)
        return 0;
    if (!v->el) {
        long d1, d2 = 0;
        if (decl_dim(L, t, 0, &d1) || (nd == 2 && decl_dim(L, t, 1, &d2)))
            return 0;
        long total = 0;
        if (d1 < 1 || (nd == 2 && d2 < 1) || d1 > UNROLL_MAX ||
            d2 > UNROLL_MAX || (total = d1 * (d2 ? d2 : 1)) > UNROLL_MAX) {
            fail(L, s->loc, "'%s' has %ld x %ld elements: drift follows values "
                            "given element by element up to %ld",
                 v->name, d1, d2 ? d2 : 1, UNROLL_MAX);
            return 1;
        }
        v->el = need(L, drift_arena_alloc(L->A, (size_t)total * sizeof *v->el));
        if (!v->el)
            return 1;
        memset(v->el, 0, (size_t)total * sizeof *v->el);
        v->d1 = d1;
        v->d2 = d2;
        v->n_el = total;
        if (v->def) {
            /* what it held before, element by element */
            for (long k = 0; k < total; k++) {
                drift_expr *i1 = num(L, s->loc, d2 ? k / d2 + 1 : k + 1);
                drift_expr *i2 = d2 ? num(L, s->loc, k % d2 + 1) : NULL;
                if (i1 && i2)
                    i1->next = i2;
                v->el[k] = need(L, drift_ast_index(L->A, s->loc, v->def, i1,
                                                   d2 ? 2 : 1));
            }
            v->def = NULL;
        }
    }
    long d2 = v->d2 ? v->d2 : 1;
    if (ix[0] < 1 || ix[0] > v->d1 ||
        (n == 2 && (!v->d2 || ix[1] < 1 || ix[1] > v->d2))) {
        fail(L, lhs->loc, "index out of range for '%s'", v->name);
        return 1;
    }
    long from = (ix[0] - 1) * d2 + (n == 2 ? ix[1] - 1 : 0);
    long count = n == 1 && v->d2 ? v->d2 : 1;
    for (long k = 0; k < count && !L->failed; k++) {
        drift_expr *x = val;
        if (count > 1) {
            /* a row: its k-th element */
            x = need(L, drift_ast_index(L->A, s->loc, val,
                                        num(L, s->loc, k + 1), 1));
        }
        drift_expr *cur = v->el[from + k];
        if (s->op >= 0 || L->cond) {
            if (!cur) {
                fail(L, lhs->loc, "element of '%s' is updated before it has "
                                  "a value", v->name);
                return 1;
            }
            if (s->op >= 0)
                x = need(L, drift_ast_binop(L->A, s->loc, (drift_binop)s->op,
                                            cur, x));
            if (L->cond)
                x = need(L, drift_ast_cond(L->A, s->loc, L->cond, x, cur));
        }
        if (too_large(L, v->name, x, s->loc))
            return 1;
        if (xb == X_MODEL && !c->n_ix && x && x->kind != DRIFT_E_NUM &&
            x->kind != DRIFT_E_NAME)
            x = named_value(L, v, from + k, x, s->loc);
        v->el[from + k] = x;
    }
    return 1;
}

static void assign(lower *L, xblock xb, ctx *c, const stan_stmt *s)
{
    const drift_expr *lhs = s->lhs;
    drift_expr *val = subst(L, s->value);
    if (L->failed)
        return;
    if (assign_element(L, xb, c, s, val))
        return;
    const char *elem_ix = NULL;
    if (lhs->kind == DRIFT_E_INDEX && lhs->a->kind == DRIFT_E_NAME &&
        lhs->n_args == 1 && lhs->args->kind == DRIFT_E_NAME &&
        in_ix(c, lhs->args->name)) {
        elem_ix = lhs->args->name;
        lhs = lhs->a;
    }
    if (lhs->kind != DRIFT_E_NAME) {
        fail(L, lhs->loc,
             "assignment to part of a container outside a loop over all its "
             "elements (x[i] = ... inside for (i in 1:size))");
        return;
    }
    var *v = lookup(L, lhs->name);
    if (L->drift && !elem_ix && s->op < 0 && !L->cond &&
        (!v || (v->kind == V_LOCAL && !v->decl))) {
        /* drift's name = value: a new local (or a new value of one) */
        v = push_var(L, lhs->name, V_LOCAL);
        if (v) {
            v->def = val;
            v->loop_level = c->n_ix;
        }
        return;
    }
    if (L->drift && !v && L->cond) {
        fail(L, lhs->loc, "'%s' is given a value only under a condition: "
                          "give it one before the if (or write name = "
                          "cond ? a : b)", lhs->name);
        return;
    }
    if (!v || v->kind != V_LOCAL) {
        fail(L, lhs->loc, "'%s' cannot be assigned here", lhs->name);
        return;
    }
    if (!elem_ix && c->n_ix > v->loop_level &&
        (s->op >= 0 || mentions(s->value, lhs->name))) {
        fail(L, lhs->loc,
             "'%s' accumulates across the loop's iterations: drift lowers a "
             "loop to one vectorised statement, where each iteration's "
             "values are separate",
             lhs->name);
        return;
    }
    drift_expr *old = v->def;
    if (s->op >= 0) {
        if (!old) {
            fail(L, lhs->loc, "'%s' is updated before it has a value",
                 lhs->name);
            return;
        }
        drift_expr *cur = old;
        if (elem_ix) {
            drift_expr *i = need(L, drift_ast_name(L->A, lhs->loc, elem_ix));
            if (!i)
                return;
            cur = need(L, drift_ast_index(L->A, lhs->loc, old, i, 1));
        }
        val = need(L, drift_ast_binop(L->A, s->loc, (drift_binop)s->op, cur,
                                      val));
    }
    if (L->cond) {
        if (!old) {
            fail(L, lhs->loc, "'%s' is given a value only under a condition",
                 lhs->name);
            return;
        }
        drift_expr *cur = old;
        if (elem_ix) {
            drift_expr *i = need(L, drift_ast_name(L->A, lhs->loc, elem_ix));
            if (!i)
                return;
            cur = need(L, drift_ast_index(L->A, lhs->loc, old, i, 1));
        }
        val = need(L, drift_ast_cond(L->A, s->loc, L->cond, val, cur));
    }
    if (elem_ix) {
        if (!v->decl || !v->decl->type.t) {
            fail(L, s->loc, L->drift ? "'%s' is assigned element by element "
                                       "but is not declared: declare it "
                                       "first (%s : vector[K])"
                                     : "a function's parameter '%s' is "
                                       "assigned%s",
                 lhs->name, L->drift ? lhs->name : "");
            return;
        }
        drift_expr *lead = lead_size(v->decl->type.t);
        if (!lead || c->lo || !same_size(L, lead, c->size)) {
            fail(L, s->loc,
                 "the loop does not run over all of '%s' (1:its first size): "
                 "drift follows element assignments over whole containers",
                 lhs->name);
            return;
        }
        val = elem_node(L, val, elem_ix, c->size, s->loc);
    }
    if (too_large(L, lhs->name, val, s->loc))
        return;
    v->def = val;
    v->el = NULL;
    v->col = NULL;
}

/* for (i in lo:hi) body as one vectorised statement per statement of
 * its body. */
static void lower_loop(lower *L, xblock xb, ctx *c, const stan_stmt *s)
{
    var *v = push_var(L, s->name, V_LOOP);
    if (!v)
        return;
    v->size = s->hi;
    ctx in = *c;
    in.ix[0] = s->name;
    in.n_ix = 1;
    in.size = subst(L, s->hi);
    in.lo = s->lhs->kind == DRIFT_E_NUM && s->lhs->num == 1
                ? NULL
                : subst(L, s->lhs);
    exec(L, xb, &in, s->body);
    /* The loop variable goes out of scope; assignments stay. */
    var **pp = &L->vars;
    while (*pp && *pp != v)
        pp = &(*pp)->next;
    if (*pp)
        *pp = v->next;
}

/* What lowering a statement may change, kept to go back to it: the
 * locals' values, the statements emitted, the warnings. */
typedef struct mark {
    var *vars, *tail;           /* named values are appended at the tail */
    size_t n;
    var **v;
    drift_expr **def;
    drift_expr ***el;           /* copies of the elements */
    drift_expr ***col;          /* copies of the columns */
    long *d1, *d2, *n_el;
    drift_stmt *last[4];
    int n_warn, gq_skipped;
    long n_unrolled;
} mark;

static slist *mark_lists(lower *L, int k)
{
    slist *sl[4] = {&L->prior, &L->datum, &L->derived, &L->generated};
    return sl[k];
}

static int mark_take(lower *L, mark *m)
{
    memset(m, 0, sizeof *m);
    m->vars = L->vars;
    for (var *v = L->vars; v; v = v->next) {
        m->n++;
        m->tail = v;
    }
    m->v = need(L, drift_arena_alloc(L->A, (m->n + 1) * sizeof *m->v));
    m->def = need(L, drift_arena_alloc(L->A, (m->n + 1) * sizeof *m->def));
    m->el = need(L, drift_arena_alloc(L->A, (m->n + 1) * sizeof *m->el));
    m->col = need(L, drift_arena_alloc(L->A, (m->n + 1) * sizeof *m->col));
    m->d1 = need(L, drift_arena_alloc(L->A, (m->n + 1) * sizeof *m->d1));
    m->d2 = need(L, drift_arena_alloc(L->A, (m->n + 1) * sizeof *m->d2));
    m->n_el = need(L, drift_arena_alloc(L->A, (m->n + 1) * sizeof *m->n_el));
    if (!m->v || !m->def || !m->el || !m->col || !m->d1 || !m->d2 ||
        !m->n_el)
        return -1;
    size_t k = 0;
    for (var *v = L->vars; v; v = v->next, k++) {
        m->v[k] = v;
        m->def[k] = v->def;
        m->el[k] = NULL;
        m->col[k] = NULL;
        if (v->col) {
            m->col[k] = need(L, drift_arena_alloc(L->A, (size_t)v->n_col *
                                                          sizeof *v->col));
            if (!m->col[k])
                return -1;
            memcpy(m->col[k], v->col, (size_t)v->n_col * sizeof *v->col);
        }
        m->d1[k] = v->d1;
        m->d2[k] = v->d2;
        m->n_el[k] = v->n_el;
        L->n_work += 1 + v->n_el + v->n_col;
        if (v->el) {
            m->el[k] = need(L, drift_arena_alloc(L->A, (size_t)v->n_el *
                                                         sizeof *v->el));
            if (!m->el[k])
                return -1;
            memcpy(m->el[k], v->el, (size_t)v->n_el * sizeof *v->el);
        }
    }
    for (int j = 0; j < 4; j++)
        m->last[j] = mark_lists(L, j)->last;
    m->n_warn = L->n_warn;
    m->gq_skipped = L->gq_skipped;
    m->n_unrolled = L->n_unrolled;
    return 0;
}

static void mark_restore(lower *L, const mark *m)
{
    L->vars = m->vars;
    if (m->tail)
        m->tail->next = NULL;
    for (size_t k = 0; k < m->n; k++) {
        var *v = m->v[k];
        v->def = m->def[k];
        v->el = m->el[k];
        v->col = m->col[k];
        v->d1 = m->d1[k];
        v->d2 = m->d2[k];
        v->n_el = m->n_el[k];
    }
    for (int j = 0; j < 4; j++) {
        slist *sl = mark_lists(L, j);
        sl->last = m->last[j];
        if (sl->last)
            sl->last->next = NULL;
        else
            sl->first = NULL;
    }
    L->n_warn = m->n_warn;
    L->gq_skipped = m->gq_skipped;
    L->n_unrolled = m->n_unrolled;
    L->failed = 0;
}

/* for (i in lo:hi) body with lo and hi known while lowering, run once
 * per value of i (each iteration's locals its own). */
static void unroll(lower *L, xblock xb, ctx *c, const stan_stmt *s, long lo,
                   long hi)
{
    double count = (double)hi - (double)lo + 1;
    if (count > (double)(UNROLL_MAX - L->n_unrolled)) {
        fail(L, s->loc, "the loop runs %.0f times, more than the %ld "
                        "iterations drift unrolls in one program (it cannot "
                        "be written as one vectorised statement)",
             count, UNROLL_MAX);
        return;
    }
    for (long i = lo; i <= hi && !L->failed && !L->ret_done; i++) {
        L->n_unrolled++;
        if (++L->n_work > UNROLL_WORK) {
            fail(L, s->loc, "unrolling this program's loops takes more than "
                            "%ld steps (loops nested deeply, each tried as a "
                            "vectorised statement first)", UNROLL_WORK);
            return;
        }
        var *saved = L->vars;
        var *v = push_var(L, s->name, V_LOCAL);
        if (!v)
            return;
        v->def = num(L, s->loc, i);
        v->loop_level = c->n_ix;
        exec(L, xb, c, s->body);
        L->vars = saved;
    }
}

/* A Stan print at the top of transformed parameters or generated
 * quantities: drift's print of the values as they are there, when they
 * are values of the draw (not of each row).  0 when it cannot be. */
static int stan_print(lower *L, const stan_stmt *s, slist *out)
{
    drift_stmt *st = new_dstmt(L, DRIFT_S_PRINT, s->loc);
    drift_pitem *first = NULL, **tail = &first;
    drift_expr *args = NULL, **at = &args;
    size_t n = 0;
    for (const drift_pitem *p = s->items; p && st && !L->failed; p = p->next) {
        drift_pitem *q = need(L, drift_arena_alloc(L->A, sizeof *q));
        if (!q)
            return 0;
        q->str = p->str;
        if (p->e) {
            ctx top = {0};
            drift_expr *v = subst(L, p->e);
            tr r = translate(L, &top, v);
            if (L->failed) {
                if (!L->oom)
                    L->failed = 0;
                return 0;
            }
            /* the list of values links through next: a copy heads it */
            drift_expr *cp = need(L, drift_arena_alloc(L->A, sizeof *cp));
            if (!cp)
                return 0;
            *cp = *r.e;
            cp->next = NULL;
            q->e = cp;
            *at = cp;
            at = &cp->next;
            n++;
        }
        *tail = q;
        tail = &q->next;
    }
    if (!st || L->failed)
        return 0;
    st->items = first;
    st->args = args;
    st->n_args = n;
    add_stmt(L, out, st);
    return 1;
}

/* reject(...) in drift's own model: the log density is -inf where the
 * conditions around it hold, so that the sampler rejects the draw. */
static void reject_term(lower *L, xblock xb, ctx *c, const stan_stmt *s)
{
    if (xb == X_GQ) {
        fail(L, s->loc, "reject in the generated block: it runs once per "
                        "kept draw, after the draw was accepted; reject in "
                        "prior, datum or derived instead");
        return;
    }
    if (!L->cond) {
        fail(L, s->loc, "reject reached unconditionally: every draw would "
                        "be rejected (put it under if (...))");
        return;
    }
    drift_expr *ninf = need(L, drift_ast_call(L->A, s->loc,
                                              "negative_infinity", s->loc,
                                              NULL, 0));
    drift_expr *zero = need(L, drift_ast_num(L->A, s->loc, 0, 0));
    drift_expr *v = ninf && zero ? need(L, drift_ast_cond(L->A, s->loc,
                                                         L->cond, ninf, zero))
                                 : NULL;
    drift_stmt *st = v ? emit_term(L, c, s, NULL, NULL, v) : NULL;
    if (st)
        st->items = (drift_pitem *)s->items;
}

static void exec(lower *L, xblock xb, ctx *c, const stan_stmt *s)
{
    if (!s)
        return; /* an empty statement: for (...) ; */
    switch (s->kind) {
    case STAN_S_DECL: {
        drift_expr *val = s->value ? subst(L, s->value) : NULL;
        if (val && too_large(L, s->name, val, s->loc))
            return;
        var *v = push_var(L, s->name, V_LOCAL);
        if (!v)
            return;
        v->decl = s;
        v->def = val;
        v->loop_level = c->n_ix;
        return;
    }
    case STAN_S_ASSIGN:
        assign(L, xb, c, s);
        return;
    case STAN_S_TILDE:
    case STAN_S_TARGET: {
        if (xb != X_MODEL) {
            fail(L, s->loc, L->drift ? "'%s' belongs in prior or datum%s"
                                     : "'%s' belongs in the model block%s",
                 s->kind == STAN_S_TILDE ? "~" : "target +=",
                 xb == X_FUNC ? " (functions ending in _lp are not "
                                "supported)" : "");
            return;
        }
        int trunc_params = 0;
        if (s->truncated) {
            /* With arguments and bounds free of parameters the
             * truncation's normalising term is a constant, which the
             * posterior does not see; otherwise the term is taken away
             * from each element's log density (trunc_norm). */
            for (const drift_expr *a = s->args; a; a = a->next)
                trunc_params |= mentions_param(L, a);
            if (s->trunc_lo)
                trunc_params |= mentions_param(L, s->trunc_lo);
            if (s->trunc_hi)
                trunc_params |= mentions_param(L, s->trunc_hi);
            /* drift's own models keep the constant too, and check the
             * bounds where they are evaluated (trunc_check) */
            trunc_params |= L->drift;
            const drift_expr *top = s->lhs;
            var *tv = top->kind == DRIFT_E_NAME ? lookup(L, top->name) : NULL;
            if (trunc_params &&
                (s->kind != STAN_S_TILDE || !drift_dist_find(s->dist) ||
                 (tv && tv->decl && lead_size(tv->decl->type.t)))) {
                fail(L, s->trunc_loc,
                     "truncation T[,] whose normalising term depends on "
                     "parameters is supported for one element of a built-in "
                     "distribution at a time: write it in a loop over the "
                     "elements (for (%s in 1:%s) y[%s] ~ ... T[..]), or add "
                     "target += -log_diff_exp(...) of the bounds' log CDFs",
                     L->drift ? "k" : "n", L->drift ? "K" : "N",
                     L->drift ? "k" : "n");
                return;
            }
            /* Stan rejects an outcome outside the bounds; a parameter
             * must be declared with the same bounds for drift to agree. */
            const drift_expr *y = s->lhs;
            while (y->kind == DRIFT_E_INDEX)
                y = y->a;
            var *v = y->kind == DRIFT_E_NAME ? lookup(L, y->name) : NULL;
            if (L->drift) {
                trunc_data_bounds(L, c, s, v);
            } else if (v && v->kind == V_PARAM) {
                const drift_typeexpr *t = v->decl->type.t;
                int lo_ok = s->trunc_lo ? same_expr(t->lower, s->trunc_lo)
                                        : 1;
                int hi_ok = s->trunc_hi ? same_expr(t->upper, s->trunc_hi)
                                        : 1;
                if (!lo_ok || !hi_ok) {
                    fail(L, s->trunc_loc,
                         "the truncation's bounds must be those declared "
                         "for '%s' (declare it <lower=..., upper=...> with "
                         "the same values), as Stan rejects values outside "
                         "them",
                         v->name);
                    return;
                }
            } else if (!v || v->kind != V_DATA) {
                fail(L, s->trunc_loc, "truncation of a value that is neither "
                                      "a parameter nor data");
                return;
            }
            if (!trunc_params && !L->drift)
                warn(L, s->trunc_loc,
                     "the truncation's normalising term is a constant here "
                     "(the arguments are data) and is left out: the "
                     "posterior is the same, lp__ differs from Stan's by a "
                     "constant");
        }
        stan_stmt glm;
        if (s->kind == STAN_S_TILDE && glm_base(s->dist)) {
            glm = *s;
            glm.dist = glm_base(s->dist);
            glm.args = glm_args(L, s->args, s->loc, &glm.n_args);
            if (L->failed)
                return;
            s = &glm;
        }
        char uname[160];
        snprintf(uname, sizeof uname, "%s_lpdf", s->dist ? s->dist : "");
        int user = s->kind == STAN_S_TILDE && !drift_dist_find(s->dist);
        if (user && !find_fun(L, uname)) {
            snprintf(uname, sizeof uname, "%s_lpmf", s->dist);
            user = find_fun(L, uname) != NULL;
        }
        if (s->kind == STAN_S_TARGET || L->cond || user || trunc_params ||
            (L->drift && c->n_ix)) {
            drift_expr *v;
            if (s->kind == STAN_S_TARGET) {
                v = subst(L, s->value);
            } else {
                drift_expr *lhs = subst(L, s->lhs);
                size_t n = 0;
                drift_expr *args = s->args ? subst_list(L, s->args, &n) : NULL;
                if (L->failed)
                    return;
                drift_expr *call = density_call(L, s, lhs, args, n);
                v = user ? subst(L, call) : call;
                if (trunc_params && v) {
                    const drift_dist *d = drift_dist_find(s->dist);
                    drift_expr *norm = trunc_norm(L, s, d && d->discrete);
                    v = norm ? need(L, drift_ast_binop(L->A, s->trunc_loc,
                                                       DRIFT_OP_SUB, v, norm))
                             : NULL;
                    if (L->drift)
                        v = trunc_check(L, s, lhs, v);
                }
            }
            if (L->failed)
                return;
            if (L->cond) {
                drift_expr *zero = need(L, drift_ast_num(L->A, s->loc, 0, 0));
                v = need(L, drift_ast_cond(L->A, s->loc, L->cond, v, zero));
            }
            if (!L->failed)
                emit_term(L, c, s, NULL, NULL, v);
            return;
        }
        drift_expr *lhs = subst(L, s->lhs);
        size_t n;
        drift_expr *args = s->args ? subst_list(L, s->args, &n) : NULL;
        if (!L->failed)
            emit_term(L, c, s, lhs, args, NULL);
        return;
    }
    case STAN_S_IF: {
        drift_expr *k = subst(L, s->lhs);
        if (L->failed)
            return;
        long known;
        if (!const_int(L, k, &known)) {
            /* a condition the data decide: the branch taken alone */
            exec(L, xb, c, known ? s->body : s->els);
            return;
        }
        drift_expr *saved = L->cond;
        L->cond = and_cond(L, s->loc, saved, k);
        exec(L, xb, c, s->body);
        int done = L->ret_done;
        L->ret_done = 0;
        if (s->els && !L->failed) {
            drift_expr *nk = need(L, drift_ast_not(L->A, s->loc, k));
            L->cond = and_cond(L, s->loc, saved, nk);
            exec(L, xb, c, s->els);
        }
        if (done && L->ret_done)
            L->ret_done = 1;
        else
            L->ret_done = 0;
        L->cond = saved;
        return;
    }
    case STAN_S_RETURN: {
        if (xb != X_FUNC || !s->value) {
            fail(L, s->loc, "return outside a function, or without a value");
            return;
        }
        drift_expr *v = subst(L, s->value);
        if (L->failed)
            return;
        if (L->ret && L->ret_cond) {
            /* an earlier 'if (c) return a;': a where c holds */
            v = need(L, drift_ast_cond(L->A, s->loc, L->ret_cond, L->ret, v));
            L->ret_cond = NULL;
        } else if (L->ret) {
            fail(L, s->loc, "returns under several conditions are not "
                            "supported");
            return;
        }
        L->ret = v;
        if (L->cond)
            L->ret_cond = L->cond;
        else
            L->ret_done = 1;
        return;
    }
    case STAN_S_FOR: {
        if (mentions_param(L, s->lhs) || mentions_param(L, s->hi)) {
            fail(L, s->loc, "a loop's bounds must be ints of the data or "
                            "literals, not values of the parameters");
            return;
        }
        const char *rows_n =
            L->drift && declares_n(L->prog) ? DRIFT_ROWS_NAME : "N";
        if (L->drift && xb == X_MODEL && c->datum_block &&
            (mentions(s->hi, rows_n) || mentions(s->lhs, rows_n))) {
            fail(L, s->loc, "a loop over the rows: the datum block is "
                            "already one row's term, and the rows are "
                            "summed by drift (drop the loop and the row "
                            "index)");
            return;
        }
        long lo, hi;
        drift_expr *slo = subst(L, s->lhs), *shi = subst(L, s->hi);
        if (L->failed)
            return;
        int known = !const_int(L, slo, &lo) && !const_int(L, shi, &hi);
        if (c->n_ix) {
            /* inside a vectorised loop: unrolled */
            if (!known) {
                fail(L, s->loc, "a nested loop whose bounds are not known "
                                "while lowering (int literals, the data's "
                                "ints, or values of them): write the inner "
                                "loop as a vectorised statement");
                return;
            }
            unroll(L, xb, c, s, lo, hi);
            return;
        }
        /* One vectorised statement where it can be; otherwise, with its
         * bounds known, unrolled (loops over the rows are left to the
         * whole lowering). */
        mark m;
        int retry = known && !(L->rows_mode && L->R && mentions(s->hi, L->R));
        if (retry && mark_take(L, &m))
            return;
        lower_loop(L, xb, c, s);
        if (L->failed && retry && !L->oom) {
            mark_restore(L, &m);
            unroll(L, xb, c, s, lo, hi);
        } else if (L->failed && known && !L->oom) {
            /* a loop over the rows that must be unrolled: a recursion or
             * an accumulation over them */
            char why[sizeof L->why];
            snprintf(why, sizeof why, "%s", L->why);
            snprintf(L->why, sizeof L->why, "the loop over the rows at line "
                     "%d is no vectorised statement (%.200s): it runs unrolled, "
                     "its iterations depending on each other",
                     s->loc.first_line, why);
        }
        return;
    }
    case STAN_S_BLOCK: {
        var *saved = L->vars;
        exec_list(L, xb, c, s->body);
        L->vars = saved;
        return;
    }
    case STAN_S_FOREACH:
        fail(L, s->loc, "loops over a container's elements (for (x in v)) "
                        "are not supported: write for (i in 1:size(v))");
        return;
    case STAN_S_WHILE:
        /* Run as the data decide it: the condition folds to an int
         * while lowering (the data's ints and locals counted in the
         * loop), and the body is unrolled once a pass, as a for loop's
         * whose bounds the data give.  Its passes are not per-row terms:
         * a program with one is lowered whole. */
        if (L->rows_mode) {
            fail(L, s->loc, "a while loop runs unrolled, pass by pass, so "
                            "what it reads is not a sum of per-row terms");
            return;
        }
        for (long passes = 0;;) {
            long go;
            drift_expr *cond = subst(L, s->lhs);
            if (L->failed)
                return;
            if (const_int(L, cond, &go)) {
                fail(L, s->loc, "a while loop whose condition the data do "
                                "not decide: drift runs a while loop by "
                                "unrolling it while lowering, so its "
                                "condition must be an int expression of "
                                "the data's ints and of locals the loop "
                                "counts (not of parameters or real data)");
                return;
            }
            if (!go || L->ret_done)
                return;
            if (++passes > WHILE_MAX || ++L->n_unrolled > UNROLL_MAX ||
                ++L->n_work > UNROLL_WORK) {
                fail(L, s->loc, "the while loop runs more than %ld passes "
                                "(or its program more than the %ld "
                                "iterations drift unrolls): drift unrolls "
                                "while loops, one copy of the body a pass; "
                                "does its condition ever turn false?",
                     WHILE_MAX, UNROLL_MAX);
                return;
            }
            var *saved = L->vars;
            exec(L, xb, c, s->body);
            if (L->failed)
                return;
            L->vars = saved;
        }
    case STAN_S_PRINT:
        if (L->drift) {
            warn(L, s->loc, "%s",
                 xb == X_MODEL
                     ? "print in prior or datum is not evaluated: those "
                       "blocks run once per gradient, for whole "
                       "minibatches (print in derived or generated runs "
                       "once per draw written)"
                     : "print inside a loop or a condition is not "
                       "evaluated: put it at the top of the block");
            return;
        }
        if ((xb == X_GQ || xb == X_TPARAMS) && !c->n_ix && !L->cond &&
            !L->fdepth && stan_print(L, s, xb == X_GQ ? &L->generated
                                                      : &L->derived))
            return;
        warn(L, s->loc, "print is ignored here: drift evaluates print at "
                        "the top of transformed parameters and generated "
                        "quantities, with values the same for every row");
        return;
    case STAN_S_REJECT:
        if (L->drift || xb == X_MODEL || xb == X_TPARAMS) {
            reject_term(L, xb, c, s);
            return;
        }
        if (!L->cond) {
            fail(L, s->loc, "reject or fatal_error reached unconditionally");
            return;
        }
        warn(L, s->loc,
                           "reject is not checked here: drift evaluates it "
                           "in the model block and transformed parameters "
                           "only");
        return;
    case STAN_S_BREAK:
    case STAN_S_CONTINUE:
        fail(L, s->loc, "break and continue are not supported");
        return;
    case STAN_S_CALL:
        fail(L, s->loc, "a function call as a statement is not supported");
        return;
    case STAN_S_EMPTY:
        return;
    }
}

/* A generated quantity drift cannot write is left out with a warning
 * (the first reason is kept and reported once the lowering is chosen);
 * the failure it set is cleared. */
static void skip_generated(lower *L, const char *name)
{
    if (!L->gq_skipped) {
        L->gq_loc = L->fail_loc;
        snprintf(L->gq_why, sizeof L->gq_why,
                 "%s%s%s is not written: %s", name ? "generated quantity '" : "",
                 name ? name : "the generated quantities block",
                 name ? "'" : "", L->why);
    }
    L->gq_skipped++;
    L->failed = 0;
}

/* Top-level locals of a block that become drift's named values. */
static void emit_values(lower *L, const stan_stmt *body, slist *whole,
                        int gq)
{
    for (const stan_stmt *s = body; s && !L->failed; s = s->next) {
        if (s->kind != STAN_S_DECL)
            continue;
        var *v = lookup(L, s->name);
        if (v && !v->def && v->el && !v->d2) {
            /* given element by element: the vector of its elements */
            v->def = el_vector(L, v, 0, v->d1, s->name_loc);
            if (L->failed)
                return;
            v->el = NULL;
        }
        if (v && !v->def && v->el && !gq) {
            warn(L, s->name_loc,
                 "'%s', given values element by element in two dimensions, "
                 "is used where it appears but not written to the output",
                 s->name);
            continue;
        }
        if (!v || !v->def) {
            fail(L, s->name_loc,
                 "'%s' is never given a value that drift can follow (a value "
                 "at its declaration, or x[i] = ... in a loop over all its "
                 "elements)",
                 s->name);
            if (gq && !L->oom) {
                skip_generated(L, s->name);
                continue;
            }
            return;
        }
        ctx c = {0};
        tr r = bad();
        int per_row = 0;
        if (L->rows_mode) {
            c.datum = 1;
            r = translate(L, &c, v->def);
            if (L->failed && gq && !L->oom)
                L->failed = 0;  /* try it as one value per draw */
            else if (L->failed)
                return;
            else
                per_row = r.rw;
        }
        if (!per_row) {
            ctx w = {0};
            r = translate(L, &w, v->def);
            if (L->failed) {
                if (gq && !L->oom) {
                    skip_generated(L, s->name);
                    continue;
                }
                return;
            }
        }
        drift_stmt *st = new_dstmt(L, DRIFT_S_LET, s->loc);
        if (!st)
            return;
        st->name = s->name;
        st->name_loc = s->name_loc;
        st->value = r.e;
        add_stmt(L, per_row || gq ? &L->generated : whole, st);
    }
}

/* A scalar parameter whose bounds depend on other parameters (real<lower
 * = 0, upper = 1 - a> b), which drift's declarations cannot state: as
 * Stan does it, an unconstrained parameter NAME__free, NAME its
 * transform (a derived value, written to the output) and the
 * transform's log Jacobian added to the prior. */
static void param_bounded_by_params(lower *L, const stan_stmt *s)
{
    const drift_typeexpr *t = s->type.t;
    drift_loc loc = s->name_loc;
    if (t->kind != DRIFT_T_REAL || t->n_arr) {
        fail(L, loc, "'%s' has bounds that depend on parameters: drift "
                     "supports that for scalar reals only", s->name);
        return;
    }
    char nm[200];
    snprintf(nm, sizeof nm, "%s__free", s->name);
    const char *uname = need(L, drift_arena_strndup(L->A, nm, strlen(nm)));
    stan_stmt *ud = need(L, drift_arena_alloc(L->A, sizeof *ud));
    drift_typeexpr *ut = need(L, drift_arena_alloc(L->A, sizeof *ut));
    if (!uname || !ud || !ut)
        return;
    *ud = *s;
    *ut = *t;
    ut->lower = ut->upper = NULL;
    ud->type.t = ut;
    ud->name = uname;
    ud->type.offset = ud->type.multiplier = NULL;
    var *uv = push_var(L, uname, V_PARAM);
    if (!uv)
        return;
    uv->decl = ud;
    add_decl(L, &L->params, ud, 0);
    drift_expr *u = need(L, drift_ast_name(L->A, loc, uname));
    drift_expr *lo = t->lower ? subst(L, t->lower) : NULL;
    drift_expr *hi = t->upper ? subst(L, t->upper) : NULL;
    if (L->failed || !u)
        return;
    drift_expr *x, *jac;
    if (lo && hi) {
        drift_expr *w = need(L, drift_ast_binop(L->A, loc, DRIFT_OP_SUB, hi, lo));
        drift_expr *il = mk_call(L, loc, "inv_logit", u, NULL);
        x = need(L, drift_ast_binop(L->A, loc, DRIFT_OP_ADD, lo,
                                    need(L, drift_ast_binop(L->A, loc,
                                                            DRIFT_OP_MUL, w,
                                                            il))));
        drift_expr *u2 = need(L, drift_ast_name(L->A, loc, uname));
        drift_expr *u3 = need(L, drift_ast_name(L->A, loc, uname));
        drift_expr *a = mk_call(L, loc, "log", w, NULL);
        drift_expr *b = mk_call(L, loc, "log_inv_logit", u2, NULL);
        drift_expr *c = mk_call(L, loc, "log1m_inv_logit", u3, NULL);
        jac = need(L, drift_ast_binop(L->A, loc, DRIFT_OP_ADD, a,
                                      need(L, drift_ast_binop(L->A, loc,
                                                              DRIFT_OP_ADD, b,
                                                              c))));
    } else {
        drift_expr *eu = mk_call(L, loc, "exp", u, NULL);
        x = need(L, drift_ast_binop(L->A, loc,
                                    lo ? DRIFT_OP_ADD : DRIFT_OP_SUB,
                                    lo ? lo : hi, eu));
        jac = need(L, drift_ast_name(L->A, loc, uname));
    }
    if (L->failed)
        return;
    var *v = push_var(L, s->name, V_LOCAL);
    if (!v)
        return;
    v->decl = s;
    v->def = x;
    ctx top = {0};
    tr tx = translate(L, &top, x), tj = translate(L, &top, jac);
    if (L->failed)
        return;
    drift_stmt *let = new_dstmt(L, DRIFT_S_LET, loc);
    drift_stmt *tg = new_dstmt(L, DRIFT_S_TARGET, loc);
    if (!let || !tg)
        return;
    let->name = s->name;
    let->name_loc = loc;
    let->value = tx.e;
    add_stmt(L, &L->derived, let);
    tg->value = tj.e;
    tg->jacobian = 1;
    add_stmt(L, &L->prior, tg);
}

/* One attempt: rows mode with row size R, or whole (R NULL). */
static void lower_all(lower *L)
{
    const stan_program *sp = L->sp;
    L->funcs = sp->block[STAN_FUNCTIONS];
    for (const stan_stmt *s = sp->block[STAN_DATA]; s && !L->failed;
         s = s->next) {
        if (s->kind != STAN_S_DECL || s->value) {
            fail(L, s->loc, "the data block holds declarations only (values "
                            "computed from the data belong in transformed "
                            "data)");
            return;
        }
        var *v = push_var(L, s->name, V_DATA);
        if (!v)
            return;
        v->decl = s;
        drift_expr *lead = lead_size(s->type.t);
        if ((!strcmp(s->name, "N") && !own_n(L)) ||
            (L->R && !strcmp(s->name, L->R)))
            continue;   /* drift's N, bound from the data */
        if (L->rows_mode && lead && is_name(lead, L->R)) {
            v->row = 1;
            add_decl(L, &L->rows, s, 1);
        } else {
            add_decl(L, &L->data, s, 0);
        }
    }
    ctx top = {0};
    /* transformed data: values substituted where used */
    exec_list(L, X_TDATA, &top, sp->block[STAN_TDATA]);
    for (const stan_stmt *s = sp->block[STAN_PARAMS]; s && !L->failed;
         s = s->next) {
        if (s->kind != STAN_S_DECL || s->value) {
            fail(L, s->loc, "the parameters block holds declarations only "
                            "(values computed from parameters belong in "
                            "transformed parameters)");
            return;
        }
        if (s->type.offset || s->type.multiplier)
            warn(L, s->type.affine_loc,
                               "offset and multiplier are ignored: drift "
                               "samples '%s' on its own scale (the posterior "
                               "is the same)",
                               s->name);
        const drift_typeexpr *t = s->type.t;
        if ((t->lower && mentions_param(L, t->lower)) ||
            (t->upper && mentions_param(L, t->upper))) {
            param_bounded_by_params(L, s);
            continue;
        }
        var *v = push_var(L, s->name, V_PARAM);
        if (!v)
            return;
        v->decl = s;
        add_decl(L, &L->params, s, 0);
    }
    exec_list(L, X_TPARAMS, &top, sp->block[STAN_TPARAMS]);
    emit_values(L, sp->block[STAN_TPARAMS], &L->derived, 0);
    var *saved = L->vars;
    exec_list(L, X_MODEL, &top, sp->block[STAN_MODEL]);
    L->vars = saved;
    if (L->failed)
        return;
    exec_list(L, X_GQ, &top, sp->block[STAN_GQ]);
    if (L->failed && !L->oom) {
        skip_generated(L, NULL);
        return;
    }
    emit_values(L, sp->block[STAN_GQ], &L->generated, 1);
}

/* The row size: an int datum that is the leading size of other data,
 * N first. */
static const char *find_row_size(const stan_program *sp)
{
    const char *best = NULL;
    int best_n = 0;
    for (const stan_stmt *s = sp->block[STAN_DATA]; s; s = s->next) {
        if (s->kind != STAN_S_DECL || s->type.t->kind != DRIFT_T_INT ||
            s->type.t->n_arr)
            continue;
        int n = 0;
        for (const stan_stmt *d = sp->block[STAN_DATA]; d; d = d->next)
            if (d->kind == STAN_S_DECL &&
                is_name(lead_size(d->type.t), s->name))
                n++;
        if (n && !strcmp(s->name, "N"))
            return s->name;
        if (n > best_n) {
            best = s->name;
            best_n = n;
        }
    }
    /* Another N in the data shadows drift's N, the row count then being
     * N__ (mk_name). */
    return best;
}

static drift_block *mk_block(lower *L, drift_block_kind k, drift_loc loc,
                             drift_decl *decls, drift_stmt *stmts,
                             drift_block **last)
{
    if (!decls && !stmts)
        return NULL;
    drift_block *b = need(L, drift_arena_alloc(L->A, sizeof *b));
    if (!b)
        return NULL;
    b->kind = k;
    b->loc = loc;
    b->decls = decls;
    b->stmts = stmts;
    if (*last)
        (*last)->next = b;
    else
        L->prog->blocks = b;
    *last = b;
    return b;
}

/* What drift check says about the rows found (drift_program.origin). */
static void describe(lower *L, const char *R, const char *rows_why)
{
    char buf[1200];
    size_t n = 0, cap = sizeof buf;
    int w;
    if (L->rows_mode) {
        w = snprintf(buf, cap, "Stan program: the rows are the %s entries of",
                     R);
        n = w > 0 ? (size_t)w : 0;
        for (drift_decl *d = L->rows.first; d && n < cap; d = d->next) {
            w = snprintf(buf + n, cap - n, "%s %s", d == L->rows.first ? "" : ",",
                         d->name);
            n += w > 0 ? (size_t)w : 0;
        }
        size_t nd = 0, np = 0;
        for (drift_stmt *st = L->datum.first; st; st = st->next)
            nd++;
        for (drift_stmt *st = L->prior.first; st; st = st->next)
            np++;
        if (n < cap)
            snprintf(buf + n, cap - n, "; %zu model term%s per row, %zu in "
                                       "the prior",
                     nd, nd == 1 ? "" : "s", np);
    } else if (R) {
        snprintf(buf, cap, "Stan program: lowered whole, no rows (%s): "
                           "minibatch samplers cannot subsample it",
                 rows_why);
        L->prog->whole_why = drift_arena_strndup(L->A, rows_why,
                                                 strlen(rows_why));
    } else {
        snprintf(buf, cap, "Stan program: no data have a row size; every "
                           "model term is in the prior");
    }
    L->prog->origin = drift_arena_strndup(L->A, buf, strlen(buf));
}

size_t drift_stan_lower(const stan_program *sp, const drift_known_ints *ki,
                        drift_program *prog, drift_diag *diag)
{
    lower L;
    const char *R = find_row_size(sp);
    char rows_why[400] = "";
    drift_loc rows_loc = {0, 0, 0, 0};
    for (int attempt = R ? 0 : 1; attempt < 2; attempt++) {
        memset(&L, 0, sizeof L);
        L.sp = sp;
        L.prog = prog;
        L.A = prog->arena;
        L.diag = diag;
        L.ki = ki;
        L.rows_mode = attempt == 0;
        L.R = attempt == 0 ? R : NULL;
        lower_all(&L);
        if (L.oom) {
            drift_diag_error(diag, prog->src, sp->block_loc[STAN_DATA],
                             "out of memory");
            return 1;
        }
        if (!L.failed)
            break;
        if (attempt == 0) {
            snprintf(rows_why, sizeof rows_why, "%s", L.why);
            rows_loc = L.fail_loc;
        }
    }
    if (L.failed) {
        drift_diag_error(diag, prog->src, L.fail_loc, "%s", L.why);
        return 1;
    }
    for (int k = 0; k < L.n_warn; k++)
        drift_diag_warning(diag, prog->src, L.warn_loc[k], "%s", L.warn[k]);
    if (L.gq_skipped)
        drift_diag_warning(diag, prog->src, L.gq_loc, "%s%s", L.gq_why,
                           L.gq_skipped > 1 ? " (and others)" : "");
    if (R && !L.rows_mode)
        drift_diag_warning(diag, prog->src, rows_loc,
                           "no rows: the data indexed by '%s' are not a sum "
                           "of per-row terms (%s), so the whole data set is "
                           "one datum and minibatch samplers cannot "
                           "subsample it",
                           R, rows_why);
    describe(&L, R, rows_why);
    drift_block *last = NULL;
    drift_loc at = {1, 1, 1, 1};
    mk_block(&L, DRIFT_BLOCK_DATA, sp->have[STAN_DATA] ? sp->block_loc[STAN_DATA] : at,
             L.data.first, NULL, &last);
    mk_block(&L, DRIFT_BLOCK_ROWS, sp->have[STAN_DATA] ? sp->block_loc[STAN_DATA] : at,
             L.rows.first, NULL, &last);
    mk_block(&L, DRIFT_BLOCK_TRANSFORMED,
             sp->have[STAN_TDATA] ? sp->block_loc[STAN_TDATA] : at, NULL,
             L.transformed.first, &last);
    mk_block(&L, DRIFT_BLOCK_PARAM,
             sp->have[STAN_PARAMS] ? sp->block_loc[STAN_PARAMS] : at,
             L.params.first, NULL, &last);
    mk_block(&L, DRIFT_BLOCK_DERIVED,
             sp->have[STAN_TPARAMS] ? sp->block_loc[STAN_TPARAMS] : at, NULL,
             L.derived.first, &last);
    mk_block(&L, DRIFT_BLOCK_PRIOR,
             sp->have[STAN_MODEL] ? sp->block_loc[STAN_MODEL] : at, NULL,
             L.prior.first, &last);
    mk_block(&L, DRIFT_BLOCK_DATUM,
             sp->have[STAN_MODEL] ? sp->block_loc[STAN_MODEL] : at, NULL,
             L.datum.first, &last);
    mk_block(&L, DRIFT_BLOCK_GENERATED,
             sp->have[STAN_GQ] ? sp->block_loc[STAN_GQ] : at, NULL,
             L.generated.first, &last);
    return L.oom ? 1 : 0;
}

/* ---- drift's own control flow ------------------------------------------ */

/* A statement of drift's language as the Stan statement it spells. */
static stan_stmt *control_stmt(lower *L, const drift_stmt *st);

static stan_stmt *control_list(lower *L, const drift_stmt *st)
{
    stan_stmt *first = NULL, **tail = &first;
    for (; st && !L->failed; st = st->next) {
        *tail = control_stmt(L, st);
        if (*tail)
            tail = &(*tail)->next;
    }
    return first;
}

static stan_stmt *control_stmt(lower *L, const drift_stmt *st)
{
    stan_stmt *s = need(L, drift_arena_alloc(L->A, sizeof *s));
    if (!s)
        return NULL;
    s->loc = st->loc;
    s->op = -1;
    switch (st->kind) {
    case DRIFT_S_TILDE:
        s->kind = STAN_S_TILDE;
        s->lhs = st->lhs;
        s->dist = st->dist;
        s->dist_loc = st->dist_loc;
        s->args = st->args;
        s->n_args = st->n_args;
        s->truncated = st->truncated;
        s->trunc_loc = st->trunc_loc;
        s->trunc_lo = st->trunc_lo;
        s->trunc_hi = st->trunc_hi;
        break;
    case DRIFT_S_TARGET:
        s->kind = STAN_S_TARGET;
        s->value = st->value;
        break;
    case DRIFT_S_LET:
        s->kind = STAN_S_ASSIGN;
        s->lhs = need(L, drift_ast_name(L->A, st->name_loc, st->name));
        s->value = st->value;
        break;
    case DRIFT_S_ASSIGN:
        s->kind = STAN_S_ASSIGN;
        s->lhs = st->lhs;
        s->value = st->value;
        break;
    case DRIFT_S_DECL:
        s->kind = STAN_S_DECL;
        s->name = st->name;
        s->name_loc = st->name_loc;
        s->type.t = st->type;
        break;
    case DRIFT_S_FOR:
        s->kind = STAN_S_FOR;
        s->name = st->name;
        s->name_loc = st->name_loc;
        s->lhs = st->lhs;
        s->hi = st->value;
        s->body = st->body ? control_stmt(L, st->body) : NULL;
        break;
    case DRIFT_S_IF:
        s->kind = STAN_S_IF;
        s->lhs = st->value;
        s->body = st->body ? control_stmt(L, st->body) : NULL;
        s->els = st->els ? control_stmt(L, st->els) : NULL;
        break;
    case DRIFT_S_BLOCK:
        s->kind = STAN_S_BLOCK;
        s->body = control_list(L, st->body);
        break;
    case DRIFT_S_PRINT:
    case DRIFT_S_REJECT:
        s->kind = st->kind == DRIFT_S_PRINT ? STAN_S_PRINT : STAN_S_REJECT;
        s->items = st->items;
        s->args = st->args;
        s->n_args = st->n_args;
        s->name = st->name;
        break;
    }
    return s;
}

/* Whether a statement of block b is for drift_control_lower: a print at
 * the top of derived or generated stays, the graph evaluates it. */
static int is_control(const drift_block *b, const drift_stmt *st)
{
    if (st->kind == DRIFT_S_PRINT)
        return b->kind != DRIFT_BLOCK_DERIVED &&
               b->kind != DRIFT_BLOCK_GENERATED;
    return (st->kind != DRIFT_S_TILDE && st->kind != DRIFT_S_TARGET &&
            st->kind != DRIFT_S_LET) ||
           (st->kind == DRIFT_S_TILDE && st->truncated);
}

/* A declared name as the lowering knows it: a Stan declaration of its
 * type. */
static var *control_var(lower *L, const char *name, vkind k,
                        drift_typeexpr *t, drift_loc loc)
{
    stan_stmt *d = need(L, drift_arena_alloc(L->A, sizeof *d));
    var *v = d ? push_var(L, name, k) : NULL;
    if (!v)
        return NULL;
    d->kind = STAN_S_DECL;
    d->loc = d->name_loc = loc;
    d->name = name;
    d->type.t = t;
    v->decl = d;
    return v;
}

/* Size names used in a declaration and declared nowhere: ints of the
 * data. */
static void control_sizes(lower *L, const drift_expr *e)
{
    if (!e || L->failed)
        return;
    if (e->kind == DRIFT_E_NAME) {
        if (!lookup(L, e->name)) {
            drift_typeexpr *t = need(L, drift_arena_alloc(L->A, sizeof *t));
            if (t) {
                t->kind = DRIFT_T_INT;
                control_var(L, e->name, V_DATA, t, e->loc);
            }
        }
        return;
    }
    control_sizes(L, e->a);
    control_sizes(L, e->b);
    for (const drift_expr *a = e->args; a; a = a->next)
        control_sizes(L, a);
}

/* Declared locals of a block given their values in parts: drift's
 * name = value, once every statement before the next plain one ran. */
typedef struct pending {
    var *v[64];
    int n;
} pending;

static void flush_locals(lower *L, pending *p, slist *out)
{
    for (int k = 0; k < p->n && !L->failed; k++) {
        var *v = p->v[k];
        if (!v->def) {
            fail(L, v->decl->name_loc,
                 "'%s' is declared but never given a value that drift can "
                 "follow (x[i] = ... in a loop over all its elements, or "
                 "x = ...)", v->name);
            return;
        }
        ctx top = {0};
        tr r = translate(L, &top, v->def);
        drift_stmt *st = new_dstmt(L, DRIFT_S_LET, v->decl->loc);
        if (L->failed || !st)
            return;
        st->name = v->name;
        st->name_loc = v->decl->name_loc;
        st->value = r.e;
        add_stmt(L, out, st);
    }
    p->n = 0;
}

/* One block's statements with its control flow run symbolically; terms
 * of the log density that a derived block's reject adds go to
 * extra_prior. */
static void control_block(lower *L, drift_block *b, slist *extra_prior)
{
    xblock xb = b->kind == DRIFT_BLOCK_DERIVED     ? X_TPARAMS
                : b->kind == DRIFT_BLOCK_GENERATED ? X_GQ
                                                   : X_MODEL;
    ctx top = {0};
    top.datum_block = b->kind == DRIFT_BLOCK_DATUM;
    slist out = {NULL, NULL};
    pending p = {{NULL}, 0};
    int any = 0;
    for (drift_stmt *st = b->stmts; st; st = st->next)
        any |= is_control(b, st);
    drift_stmt *next;
    for (drift_stmt *st = b->stmts; st && !L->failed; st = next) {
        next = st->next;
        if (!is_control(b, st)) {
            flush_locals(L, &p, &out);
            st->next = NULL;
            add_stmt(L, &out, st);
            if (st->kind == DRIFT_S_LET) {
                /* known to later control flow by its value */
                drift_expr *def = subst(L, st->value);
                if (L->failed && !L->oom) {
                    L->failed = 0;
                    def = NULL;
                }
                var *v = push_var(L, st->name, V_LOCAL);
                if (v) {
                    v->def = def;
                    v->rng = drift_ast_calls(st->value, drift_ast_is_rng);
                }
            }
            continue;
        }
        stan_stmt *s = control_stmt(L, st);
        if (!s)
            break;
        L->prior.first = L->prior.last = NULL;
        exec(L, xb, &top, s);
        if (s->kind == STAN_S_DECL && !L->failed) {
            if (p.n == 64) {
                fail(L, st->loc, "more than 64 declared locals in a block");
                break;
            }
            p.v[p.n++] = lookup(L, s->name);
        }
        for (drift_stmt *t = L->prior.first, *tn; t; t = tn) {
            tn = t->next;
            t->next = NULL;
            add_stmt(L, xb == X_TPARAMS ? extra_prior : &out, t);
        }
    }
    flush_locals(L, &p, &out);
    if (any)
        b->stmts = out.first;
}

size_t drift_control_lower(drift_program *prog, drift_diag *diag)
{
    int any = 0;
    for (drift_block *b = prog->blocks; b; b = b->next)
        for (drift_stmt *st = b->stmts; st; st = st->next)
            any |= is_control(b, st);
    if (!any)
        return 0;
    lower L;
    memset(&L, 0, sizeof L);
    L.prog = prog;
    L.A = prog->arena;
    L.diag = diag;
    L.drift = 1;
    for (drift_block *b = prog->blocks; b; b = b->next)
        for (drift_decl *d = b->decls; d; d = d->next) {
            var *v = control_var(&L, d->name,
                                 b->kind == DRIFT_BLOCK_PARAM ? V_PARAM
                                                              : V_DATA,
                                 d->type, d->loc);
            if (v)
                v->in_rows = b->kind == DRIFT_BLOCK_ROWS;
        }
    for (drift_block *b = prog->blocks; b; b = b->next)
        for (drift_decl *d = b->decls; d; d = d->next) {
            control_sizes(&L, d->type->size[0]);
            control_sizes(&L, d->type->size[1]);
            for (int k = 0; k < d->type->n_arr; k++)
                control_sizes(&L, d->type->arr_size[k]);
        }
    if (!lookup(&L, "N")) {
        drift_typeexpr *t = need(&L, drift_arena_alloc(L.A, sizeof *t));
        if (t) {
            t->kind = DRIFT_T_INT;
            control_var(&L, "N", V_DATA, t, (drift_loc){1, 1, 1, 1});
        }
    }
    /* The transformed block's values, by their definitions (data only:
     * a use inside a loop is the same value), except a reduction over
     * the rows, which the graph computes once over every row and a loop
     * cannot rebuild: using one there is refused. */
    for (drift_block *b = prog->blocks; b && !L.failed; b = b->next) {
        if (b->kind != DRIFT_BLOCK_TRANSFORMED)
            continue;
        for (drift_stmt *st = b->stmts; st && !L.failed; st = st->next) {
            if (st->kind != DRIFT_S_LET)
                continue;
            drift_expr *def =
                drift_ast_calls(st->value, drift_builtin_reduces_rows)
                    ? NULL
                    : subst(&L, st->value);
            if (L.failed && !L.oom) {
                L.failed = 0;
                def = NULL;
            }
            var *v = push_var(&L, st->name, V_LOCAL);
            if (v)
                v->def = def;
        }
    }
    /* derived values are usable in every other block */
    static const drift_block_kind order[] = {
        DRIFT_BLOCK_DERIVED, DRIFT_BLOCK_PRIOR, DRIFT_BLOCK_DATUM,
        DRIFT_BLOCK_GENERATED};
    slist extra = {NULL, NULL};
    drift_block *prior = NULL;
    for (size_t k = 0; k < 4 && !L.failed; k++)
        for (drift_block *b = prog->blocks; b && !L.failed; b = b->next) {
            if (b->kind != order[k])
                continue;
            if (b->kind == DRIFT_BLOCK_PRIOR)
                prior = b;
            var *saved = L.vars;
            control_block(&L, b, &extra);
            if (b->kind != DRIFT_BLOCK_DERIVED)
                L.vars = saved;
        }
    if (!L.failed && extra.first) {
        if (!prior) {
            prior = need(&L, drift_arena_alloc(L.A, sizeof *prior));
            if (prior) {
                prior->kind = DRIFT_BLOCK_PRIOR;
                prior->loc = extra.first->loc;
                drift_block **pp = &prog->blocks;
                while (*pp)
                    pp = &(*pp)->next;
                *pp = prior;
            }
        }
        if (prior) {
            extra.last->next = prior->stmts;
            prior->stmts = extra.first;
        }
    }
    if (L.oom) {
        drift_diag_error_file(diag, prog->src->name, "out of memory");
        return 1;
    }
    if (L.failed) {
        drift_diag_error(diag, prog->src, L.fail_loc, "%s", L.why);
        return 1;
    }
    for (int k = 0; k < L.n_warn; k++)
        drift_diag_warning(diag, prog->src, L.warn_loc[k], "%s", L.warn[k]);
    return 0;
}
