/* ast.c: the arena, AST constructors and the printing of types.  Not for
 * any pass over the tree. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "ast.h"
#include "base/util.h"

/* Chunks of at least this many bytes; a larger request gets its own. */
#define ARENA_CHUNK 16384

typedef struct chunk {
    struct chunk *next;
    size_t used, cap;
    /* max_align_t alignment for what follows */
    union {
        long double ld;
        void *p;
        long long ll;
    } align[];
} chunk;

struct drift_arena {
    chunk *head;
};

drift_arena *drift_arena_new(void)
{
    return drift_calloc(1, sizeof(drift_arena));
}

void drift_arena_free(drift_arena *a)
{
    if (!a)
        return;
    for (chunk *c = a->head, *n; c; c = n) {
        n = c->next;
        drift_free(c);
    }
    drift_free(a);
}

void *drift_arena_alloc(drift_arena *a, size_t n)
{
    const size_t al = sizeof(((chunk *)0)->align[0]);
    if (n > SIZE_MAX / 2)
        return NULL;
    n = (n + al - 1) / al * al;
    chunk *c = a->head;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > ARENA_CHUNK ? n : ARENA_CHUNK;
        chunk *nc = drift_malloc(sizeof(chunk) + cap);
        if (!nc)
            return NULL;
        nc->used = 0;
        nc->cap = cap;
        nc->next = a->head;
        a->head = nc;
        c = nc;
    }
    void *p = (char *)c->align + c->used;
    c->used += n;
    memset(p, 0, n);
    return p;
}

char *drift_arena_strndup(drift_arena *a, const char *s, size_t n)
{
    char *p = drift_arena_alloc(a, n + 1);
    if (!p)
        return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

static void dim_format(const drift_dim *d, char *buf, size_t cap)
{
    if (d->sym && d->n >= 0)
        snprintf(buf, cap, "%s=%ld", d->sym, d->n);
    else if (d->sym)
        snprintf(buf, cap, "%s", d->sym);
    else if (d->n >= 0)
        snprintf(buf, cap, "%ld", d->n);
    else
        snprintf(buf, cap, "?");
}

void drift_type_format(const drift_type *t, char *buf, size_t cap)
{
    char a[64], b[64];
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < t->n_arr && used < cap; k++) {
        dim_format(&t->arr[k], a, sizeof a);
        int n = snprintf(buf + used, cap - used, "array[%s] ", a);
        used += n > 0 ? (size_t)n : 0;
    }
    if (used >= cap)
        return;
    switch (t->kind) {
    case DRIFT_T_ERROR: snprintf(buf + used, cap - used, "(error)"); break;
    case DRIFT_T_INT: snprintf(buf + used, cap - used, "int"); break;
    case DRIFT_T_REAL: snprintf(buf + used, cap - used, "real"); break;
    case DRIFT_T_VECTOR:
        dim_format(&t->dim[0], a, sizeof a);
        snprintf(buf + used, cap - used, "vector[%s]", a);
        break;
    case DRIFT_T_SPARSE:
        dim_format(&t->dim[0], a, sizeof a);
        snprintf(buf + used, cap - used, "sparse_vector[%s]", a);
        break;
    case DRIFT_T_MATRIX:
        dim_format(&t->dim[0], a, sizeof a);
        dim_format(&t->dim[1], b, sizeof b);
        snprintf(buf + used, cap - used, "matrix[%s, %s]", a, b);
        break;
    }
}

const char *drift_block_name(drift_block_kind k)
{
    static const char *const names[] = {"data",  "rows",    "param",
                                        "prior", "datum",   "derived",
                                        "generated", "transformed"};
    return k < DRIFT_N_BLOCKS ? names[k] : "?";
}

const char *drift_binop_name(drift_binop op)
{
    static const char *const names[] = {"+",  "-",  "*", "/",  ".*",
                                        "./", "^",  "<", "<=", ">",
                                        ">=", "==", "!=", "&&", "||"};
    return (unsigned)op < sizeof names / sizeof names[0] ? names[op] : "?";
}

static drift_expr *expr_new(drift_arena *a, drift_expr_kind k, drift_loc loc)
{
    drift_expr *e = drift_arena_alloc(a, sizeof *e);
    if (e) {
        e->kind = k;
        e->loc = loc;
    }
    return e;
}

drift_expr *drift_ast_num(drift_arena *a, drift_loc loc, double v, int is_int)
{
    drift_expr *e = expr_new(a, DRIFT_E_NUM, loc);
    if (e) {
        e->num = v;
        e->is_int = is_int;
    }
    return e;
}

drift_expr *drift_ast_name(drift_arena *a, drift_loc loc, const char *name)
{
    drift_expr *e = expr_new(a, DRIFT_E_NAME, loc);
    if (e) {
        e->name = name;
        e->name_loc = loc;
    }
    return e;
}

drift_expr *drift_ast_call(drift_arena *a, drift_loc loc, const char *name,
                           drift_loc name_loc, drift_expr *args,
                           size_t n_args)
{
    drift_expr *e = expr_new(a, DRIFT_E_CALL, loc);
    if (e) {
        e->name = name;
        e->name_loc = name_loc;
        e->args = args;
        e->n_args = n_args;
    }
    return e;
}

drift_expr *drift_ast_index(drift_arena *a, drift_loc loc, drift_expr *base,
                            drift_expr *args, size_t n_args)
{
    drift_expr *e = expr_new(a, DRIFT_E_INDEX, loc);
    if (e) {
        e->a = base;
        e->args = args;
        e->n_args = n_args;
    }
    return e;
}

drift_expr *drift_ast_binop(drift_arena *a, drift_loc loc, drift_binop op,
                            drift_expr *x, drift_expr *y)
{
    drift_expr *e = expr_new(a, DRIFT_E_BINOP, loc);
    if (e) {
        e->op = op;
        e->a = x;
        e->b = y;
    }
    return e;
}

drift_expr *drift_ast_neg(drift_arena *a, drift_loc loc, drift_expr *x)
{
    drift_expr *e = expr_new(a, DRIFT_E_NEG, loc);
    if (e)
        e->a = x;
    return e;
}

drift_expr *drift_ast_not(drift_arena *a, drift_loc loc, drift_expr *x)
{
    drift_expr *e = expr_new(a, DRIFT_E_NOT, loc);
    if (e)
        e->a = x;
    return e;
}

drift_expr *drift_ast_cond(drift_arena *a, drift_loc loc, drift_expr *c,
                           drift_expr *x, drift_expr *y)
{
    drift_expr *e = expr_new(a, DRIFT_E_COND, loc);
    if (e) {
        e->a = c;
        e->b = x;
        e->args = y;
        e->n_args = 1;
    }
    return e;
}

/* ---- rewriting -------------------------------------------------------- */

static drift_expr *rewrite(drift_rewriter *rw, drift_expr *e);

/* A list rewritten element by element; each element is a fresh node, as
 * lists link through next. */
static drift_expr *rewrite_list(drift_rewriter *rw, drift_expr *args,
                                size_t *n)
{
    drift_expr *first = NULL, *last = NULL;
    *n = 0;
    for (drift_expr *a = args; a; a = a->next) {
        drift_expr *s = rewrite(rw, a);
        drift_expr *c = s && rw->fresh && s != a
                            ? s
                            : s ? drift_arena_alloc(rw->A, sizeof *c) : NULL;
        if (!c) {
            rw->failed = 1;
            return NULL;
        }
        if (c != s)
            *c = *s;
        c->next = NULL;
        if (last)
            last->next = c;
        else
            first = c;
        last = c;
        (*n)++;
    }
    return first;
}

static drift_expr *rewrite(drift_rewriter *rw, drift_expr *e)
{
    if (!e || rw->failed)
        return NULL;
    if (rw->keep && rw->keep(e))
        return e;
    drift_expr *r = NULL;
    switch (e->kind) {
    case DRIFT_E_NUM:
        return e;
    case DRIFT_E_NAME:
        r = rw->name ? rw->name(rw, e) : e;
        break;
    case DRIFT_E_CALL: {
        size_t n;
        drift_expr *args = rewrite_list(rw, e->args, &n);
        if (rw->failed || (e->args && !args))
            break;
        drift_expr *c = drift_arena_alloc(rw->A, sizeof *c);
        if (!c)
            break;
        *c = *e;
        c->args = args;
        c->n_args = n;
        c->next = NULL;
        r = rw->call ? rw->call(rw, c) : c;
        break;
    }
    case DRIFT_E_INDEX: {
        if (rw->index && (r = rw->index(rw, e)) != NULL)
            break;
        if (rw->failed)
            return NULL;
        drift_expr *b = rewrite(rw, e->a);
        size_t n;
        drift_expr *args = rewrite_list(rw, e->args, &n);
        if (b && args)
            r = drift_ast_index(rw->A, e->loc, b, args, n);
        break;
    }
    case DRIFT_E_BINOP: {
        drift_expr *a = rewrite(rw, e->a), *b = rewrite(rw, e->b);
        if (a && b)
            r = drift_ast_binop(rw->A, e->loc, e->op, a, b);
        break;
    }
    case DRIFT_E_NEG:
    case DRIFT_E_NOT: {
        drift_expr *a = rewrite(rw, e->a);
        if (a)
            r = e->kind == DRIFT_E_NEG ? drift_ast_neg(rw->A, e->loc, a)
                                       : drift_ast_not(rw->A, e->loc, a);
        break;
    }
    case DRIFT_E_COND: {
        drift_expr *c = rewrite(rw, e->a), *a = rewrite(rw, e->b);
        drift_expr *b = rewrite(rw, e->args);
        if (c && a && b)
            r = drift_ast_cond(rw->A, e->loc, c, a, b);
        break;
    }
    }
    if (!r)
        rw->failed = 1;
    return r;
}

drift_expr *drift_ast_rewrite(drift_rewriter *rw, drift_expr *e)
{
    return rewrite(rw, e);
}

drift_expr *drift_ast_rewrite_list(drift_rewriter *rw, drift_expr *args,
                                   size_t *n)
{
    drift_expr *r = rewrite_list(rw, args, n);
    if (args && !r)
        rw->failed = 1;
    return r;
}

int drift_ast_calls(const drift_expr *e, int (*pred)(const char *name))
{
    if (!e)
        return 0;
    if (e->kind == DRIFT_E_CALL && e->name && pred(e->name))
        return 1;
    if (drift_ast_calls(e->a, pred) || drift_ast_calls(e->b, pred))
        return 1;
    for (const drift_expr *a = e->args; a; a = a->next)
        if (drift_ast_calls(a, pred))
            return 1;
    return 0;
}

int drift_ast_is_rng(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && !strcmp(name + n - 4, "_rng");
}
