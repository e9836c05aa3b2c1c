/* funcs.c: the functions block of drift's language.  Checks the
 * definitions (names, parameters, bodies, no recursion) and inlines
 * every call, so that the passes after it (resolve.c, typecheck.c, the
 * graph builder) see plain expressions and gradients come from the
 * graph's own differentiation; y ~ foo(...) with a user density foo_lpdf
 * becomes target += foo_lpdf(y | ...).  Argument and value types are
 * recorded (drift_fcheck) for typecheck.c to compare.  Not for Stan's
 * functions (stan_lower.c executes those). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "builtins.h"
#include "parse.h"

/* A name bound inside a function being inlined: a parameter to its
 * argument, a local to its value. */
typedef struct binding {
    const char *name;
    drift_expr *value;
    drift_fcheck *check;        /* a parameter's: its first use typed */
    struct binding *next;
} binding;

/* A call being inlined, innermost first. */
typedef struct frame {
    const drift_func *f;
    binding *names;
    struct frame *up;
} frame;

typedef struct inliner {
    drift_rewriter rw;      /* first: the callbacks reach the inliner */
    drift_program *p;
    drift_diag *d;
    size_t errors;
    frame *top;
    size_t n_inlined;       /* calls inlined so far */
    size_t expanded;        /* nodes of their values, shared ones counted
                               once per use */
} inliner;

/* Inlining copies a body per call, so calls of calls multiply, and a
 * local used twice is its value twice to every later pass: a model that
 * would need more than these is refused rather than built. */
#define MAX_INLINED 100000
#define MAX_EXPANDED 2000000

/* The nodes of e as the later passes walk it (a shared node once per
 * use), counted up to cap. */
static void count_nodes(const drift_expr *e, size_t *n, size_t cap)
{
    if (!e || *n >= cap)
        return;
    (*n)++;
    count_nodes(e->a, n, cap);
    count_nodes(e->b, n, cap);
    for (const drift_expr *a = e->args; a && *n < cap; a = a->next)
        count_nodes(a, n, cap);
}

static void oom(inliner *in)
{
    drift_diag_error_file(in->d, in->p->src->name, "out of memory");
    in->errors++;
}

/* A user density's function: name_lpdf or name_lpmf (name_lupdf and
 * name_lupmf are the same function, drift's densities being
 * normalised). */
static const drift_func *find_func(const drift_program *p, const char *name)
{
    char want[160];
    size_t n = strlen(name);
    const char *sfx = n > 6 ? name + n - 6 : "";
    if (!strcmp(sfx, "_lupdf") || !strcmp(sfx, "_lupmf")) {
        snprintf(want, sizeof want, "%.*s_lp%s", (int)(n - 6), name,
                 sfx + 4);
        name = want;
    }
    for (const drift_func *f = p->funcs; f; f = f->next)
        if (!strcmp(f->name, name))
            return f;
    return NULL;
}

/* The density function for y ~ name(...): name_lpdf or name_lpmf. */
static const drift_func *find_density(const drift_program *p,
                                      const char *name)
{
    char want[160];
    snprintf(want, sizeof want, "%s_lpdf", name);
    const drift_func *f = find_func(p, want);
    if (f)
        return f;
    snprintf(want, sizeof want, "%s_lpmf", name);
    return find_func(p, want);
}

/* ---- checking the definitions --------------------------------------- */

/* The first call in e (args included) of a user function. */
static const drift_expr *first_user_call(const drift_program *p,
                                         const drift_expr *e,
                                         const drift_func *to)
{
    for (; e; e = e->next) {
        if (e->kind == DRIFT_E_CALL && find_func(p, e->name) == to)
            return e;
        const drift_expr *r = first_user_call(p, e->a, to);
        if (!r && e->kind != DRIFT_E_NAME)
            r = first_user_call(p, e->b, to);
        if (!r)
            r = first_user_call(p, e->args, to);
        if (r)
            return r;
    }
    return NULL;
}

/* Where f's body calls g directly, or NULL. */
static const drift_expr *calls(const drift_program *p, const drift_func *f,
                               const drift_func *g)
{
    for (const drift_stmt *st = f->body; st; st = st->next) {
        const drift_expr *c = first_user_call(p, st->value, g);
        if (c)
            return c;
    }
    return first_user_call(p, f->value, g);
}

/* Whether from reaches f through calls (depth-first, over the functions
 * not yet on the path); path[] receives the chain. */
static int reaches(const drift_program *p, const drift_func *from,
                   const drift_func *f, const drift_func **path, int depth,
                   int max)
{
    if (depth >= max)
        return 0;
    path[depth] = from;
    for (const drift_func *g = p->funcs; g; g = g->next) {
        if (!calls(p, from, g))
            continue;
        if (g == f) {
            path[depth + 1] = f;
            return depth + 2;
        }
        int seen = 0;
        for (int k = 0; k <= depth; k++)
            seen |= path[k] == g;
        if (seen)
            continue;
        int n = reaches(p, g, f, path, depth + 1, max);
        if (n)
            return n;
    }
    return 0;
}

/* Reports each name in e that is neither a parameter of f nor one of
 * the locals before stop. */
static void free_names(inliner *in, const drift_func *f, const drift_stmt *stop,
                       const drift_expr *e)
{
    if (!e)
        return;
    if (e->kind == DRIFT_E_NAME) {
        int known = 0;
        for (const drift_fparam *a = f->params; a; a = a->next)
            known |= !strcmp(a->name, e->name);
        for (const drift_stmt *st = f->body; st != stop; st = st->next)
            known |= st->kind == DRIFT_S_LET && !strcmp(st->name, e->name);
        if (!known) {
            drift_diag_error(in->d, in->p->src, e->loc,
                             "'%s' is not a parameter or local of '%s': a "
                             "function sees only its arguments (pass '%s' "
                             "in)",
                             e->name, f->name, e->name);
            in->errors++;
        }
        return;
    }
    free_names(in, f, stop, e->a);
    free_names(in, f, stop, e->b);
    for (const drift_expr *a = e->args; a; a = a->next)
        free_names(in, f, stop, a);
}

static void check_defs(inliner *in)
{
    drift_program *p = in->p;
    for (drift_func *f = p->funcs; f; f = f->next) {
        for (drift_func *g = p->funcs; g != f; g = g->next)
            if (!strcmp(g->name, f->name)) {
                drift_diag_error(in->d, p->src, f->name_loc,
                                 "function '%s' is defined twice: "
                                 "overloaded functions are not supported",
                                 f->name);
                drift_diag_note(in->d, p->src, g->name_loc,
                                "the first definition is here");
                in->errors++;
            }
        char base[160];
        size_t n = strlen(f->name);
        snprintf(base, sizeof base, "%.*s", n > 5 ? (int)(n - 5) : 0,
                 f->name);
        int density = n > 5 && (!strcmp(f->name + n - 5, "_lpdf") ||
                                !strcmp(f->name + n - 5, "_lpmf"));
        if (drift_builtin_find(f->name) || drift_dist_find(f->name) ||
            (density && drift_dist_find(base))) {
            drift_diag_error(in->d, p->src, f->name_loc,
                             "'%s' is one of drift's own functions or "
                             "distributions: a function needs a new name",
                             f->name);
            in->errors++;
        }
        if (density && !f->params) {
            drift_diag_error(in->d, p->src, f->name_loc,
                             "the density '%s' needs its outcome as its "
                             "first parameter",
                             f->name);
            in->errors++;
        }
        if (density && f->ret.kind != DRIFT_T_REAL) {
            drift_diag_error(in->d, p->src, f->ret.loc,
                             "the density '%s' returns a log density: its "
                             "type is real",
                             f->name);
            in->errors++;
        }
        for (drift_fparam *a = f->params; a; a = a->next)
            for (drift_fparam *b = f->params; b != a; b = b->next)
                if (!strcmp(a->name, b->name)) {
                    drift_diag_error(in->d, p->src, a->loc,
                                     "'%s' names two parameters of '%s'",
                                     a->name, f->name);
                    in->errors++;
                }
        for (drift_stmt *st = f->body; st; st = st->next) {
            if (st->kind != DRIFT_S_LET) {
                drift_diag_error(in->d, p->src, st->loc,
                                 "a function's body holds named values "
                                 "(name = expression) and ends in return; "
                                 "'%s' belongs in prior or datum",
                                 st->kind == DRIFT_S_TILDE ? "~"
                                                           : "target +=");
                in->errors++;
                continue;
            }
            int dup = 0;
            for (drift_fparam *a = f->params; a; a = a->next)
                dup |= !strcmp(a->name, st->name);
            for (drift_stmt *o = f->body; o != st; o = o->next)
                dup |= o->kind == DRIFT_S_LET && !strcmp(o->name, st->name);
            if (dup) {
                drift_diag_error(in->d, p->src, st->name_loc,
                                 "'%s' is already a parameter or local of "
                                 "'%s'; a local needs a new name",
                                 st->name, f->name);
                in->errors++;
            }
            free_names(in, f, st, st->value);
            if (drift_ast_calls(st->value, drift_ast_is_rng)) {
                drift_diag_error(in->d, p->src, st->value->loc,
                                 "a random draw (_rng) in a function's "
                                 "local: draw it in the return value, or "
                                 "in the generated block and pass it in");
                in->errors++;
            }
        }
    }
    for (drift_func *f = p->funcs; f; f = f->next)
        free_names(in, f, NULL, f->value);
    /* Recursion, direct or through other functions: inlining would not
     * end. */
    enum { MAX_PATH = 64 };
    const drift_func *path[MAX_PATH + 1];
    for (drift_func *f = p->funcs; f; f = f->next) {
        int n = reaches(p, f, f, path, 0, MAX_PATH - 1);
        if (!n)
            continue;
        /* Report a cycle once, at its first function in the source. */
        int first = 1;
        for (int k = 1; k < n - 1; k++)
            for (const drift_func *g = p->funcs; g != f; g = g->next)
                first &= g != path[k];
        if (!first)
            continue;
        char chain[400];
        size_t used = 0;
        chain[0] = '\0';
        for (int k = 0; k < n && used < sizeof chain; k++) {
            int w = snprintf(chain + used, sizeof chain - used, "%s%s",
                             k ? " -> " : "", path[k]->name);
            if (w < 0)
                break;
            used += (size_t)w;
        }
        const drift_expr *at = calls(p, path[n - 2], f);
        if (n == 2)
            drift_diag_error(in->d, p->src, at->loc,
                             "'%s' calls itself: recursive functions are "
                             "not supported (drift inlines every call)",
                             f->name);
        else
            drift_diag_error(in->d, p->src, at->loc,
                             "'%s' calls itself through other functions "
                             "(%s): recursive functions are not supported "
                             "(drift inlines every call)",
                             f->name, chain);
        in->errors++;
    }
}

/* ---- inlining ------------------------------------------------------------ */

static drift_fcheck *record(inliner *in, const drift_func *f,
                            const drift_fparam *pa, drift_expr *value,
                            drift_loc call_loc)
{
    drift_fcheck *c = drift_arena_alloc(in->p->arena, sizeof *c);
    if (!c)
        return NULL;
    c->f = f;
    c->param = pa;
    c->value = value;
    c->call_loc = call_loc;
    c->next = in->p->fchecks;
    in->p->fchecks = c;
    return c;
}

static drift_expr *inline_name(drift_rewriter *rw, drift_expr *e)
{
    inliner *in = (inliner *)rw;
    if (!in->top)
        return e;
    binding *b = in->top->names;
    while (b && strcmp(b->name, e->name))
        b = b->next;
    if (!b)
        return e; /* not reached: check_defs refuses free names */
    /* A node of its own for each use (lists link it in place). */
    drift_expr *v = drift_arena_alloc(in->p->arena, sizeof *v);
    if (!v) {
        oom(in);
        return NULL;
    }
    *v = *b->value;
    v->next = NULL;
    if (b->check && !b->check->value)
        b->check->value = v;
    return v;
}

static binding *bind(inliner *in, frame *fr, const char *name,
                     drift_expr *value)
{
    binding *b = drift_arena_alloc(in->p->arena, sizeof *b);
    if (!b)
        return NULL;
    b->name = name;
    b->value = value;
    b->next = fr->names;
    fr->names = b;
    return b;
}

/* f's body with its parameters bound to call's arguments (already
 * inlined themselves). */
static drift_expr *inline_call(drift_rewriter *rw, drift_expr *call)
{
    inliner *in = (inliner *)rw;
    const drift_func *f = find_func(in->p, call->name);
    if (!f)
        return call;
    if (++in->n_inlined > MAX_INLINED) {
        if (in->n_inlined == MAX_INLINED + 1) {
            drift_diag_error(in->d, in->p->src, call->loc,
                             "inlining '%s' here makes more than %d copies "
                             "of function bodies (calls of calls multiply "
                             "them): compute shared values once, as a local "
                             "or in the derived block, and pass them in",
                             f->name, MAX_INLINED);
            in->errors++;
        }
        return NULL;
    }
    size_t len = strlen(f->name);
    if (call->bar && !(len > 5 && (!strcmp(f->name + len - 5, "_lpdf") ||
                                   !strcmp(f->name + len - 5, "_lpmf")))) {
        drift_diag_error(in->d, in->p->src, call->loc,
                         "'|' separates a density's outcome from its "
                         "arguments, and '%s' is not a density (a name "
                         "ending in _lpdf or _lpmf): separate its arguments "
                         "with ','",
                         f->name);
        in->errors++;
        return NULL;
    }
    if (call->n_args != f->n_params) {
        drift_diag_error(in->d, in->p->src, call->loc,
                         "'%s' takes %zu argument%s, given %zu", f->name,
                         f->n_params, f->n_params == 1 ? "" : "s",
                         call->n_args);
        in->errors++;
        return NULL;
    }
    frame fr = {f, NULL, in->top};
    const drift_fparam *pa = f->params;
    for (drift_expr *a = call->args; a; a = a->next, pa = pa->next) {
        if (drift_ast_calls(a, drift_ast_is_rng)) {
            drift_diag_error(in->d, in->p->src, a->loc,
                             "a random draw (_rng) as an argument of '%s': "
                             "name it first (z = ..._rng(...)) and pass "
                             "the name",
                             f->name);
            in->errors++;
            return NULL;
        }
        if (!bind(in, &fr, pa->name, a) ||
            !(fr.names->check = record(in, f, pa, NULL, call->loc))) {
            oom(in);
            return NULL;
        }
    }
    in->top = &fr;
    drift_expr *r = NULL;
    int ok = 1;
    for (drift_stmt *st = f->body; st && ok; st = st->next) {
        drift_expr *v = drift_ast_rewrite(rw, st->value);
        ok = v && bind(in, &fr, st->name, v);
    }
    if (ok)
        r = drift_ast_rewrite(rw, f->value);
    in->top = fr.up;
    if (!r)
        return NULL;
    size_t n = 0, left = MAX_EXPANDED - in->expanded;
    count_nodes(r, &n, left + 1);
    if (n > left) {
        drift_diag_error(in->d, in->p->src, call->loc,
                         "inlining '%s' here makes the model larger than "
                         "%d nodes (a local used several times is copied "
                         "into each use, and calls of calls multiply): "
                         "compute shared values once, in the derived block, "
                         "and pass them in",
                         f->name, MAX_EXPANDED);
        in->errors++;
        in->expanded = MAX_EXPANDED;
        return NULL;
    }
    in->expanded += n;
    /* The value stands where the call stood: messages about it point
     * there. */
    drift_expr *c = drift_arena_alloc(in->p->arena, sizeof *c);
    if (!c || !record(in, f, NULL, c, call->loc)) {
        oom(in);
        return NULL;
    }
    *c = *r;
    c->next = NULL;
    c->loc = call->loc;
    return c;
}

static void inline_expr(inliner *in, drift_expr **e)
{
    if (!*e)
        return;
    in->rw.failed = 0;
    drift_expr *r = drift_ast_rewrite(&in->rw, *e);
    if (r)
        *e = r;
    else if (!in->errors)
        oom(in);
}

static void inline_list(inliner *in, drift_expr **args, size_t *n)
{
    if (!*args)
        return;
    in->rw.failed = 0;
    drift_expr *r = drift_ast_rewrite_list(&in->rw, *args, n);
    if (r)
        *args = r;
    else if (!in->errors)
        oom(in);
}

static void inline_type(inliner *in, drift_typeexpr *t)
{
    for (int k = 0; k < 2; k++)
        inline_expr(in, &t->size[k]);
    for (int k = 0; k < t->n_arr; k++)
        inline_expr(in, &t->arr_size[k]);
    inline_expr(in, &t->lower);
    inline_expr(in, &t->upper);
}


/* y ~ foo(args) with foo_lpdf a user function: target += foo_lpdf(y |
 * args). */
static void tilde_to_target(inliner *in, drift_stmt *st)
{
    const drift_func *f = find_density(in->p, st->dist);
    if (!f)
        return;
    drift_expr *y = drift_arena_alloc(in->p->arena, sizeof *y);
    drift_expr *call = y ? drift_ast_call(in->p->arena, st->loc, f->name,
                                          st->dist_loc, y, st->n_args + 1)
                         : NULL;
    if (!call) {
        oom(in);
        return;
    }
    *y = *st->lhs;
    y->next = st->args;
    call->bar = 1;
    st->kind = DRIFT_S_TARGET;
    st->value = call;
    st->lhs = NULL;
    st->args = NULL;
    st->n_args = 0;
}

/* Every call in the statements, those inside loops, conditions and
 * blocks too (inlining runs before the control flow is lowered, so
 * loops see the functions' bodies). */
static void inline_stmts(inliner *in, drift_stmt *st)
{
    for (; st; st = st->next) {
        if (st->kind == DRIFT_S_TILDE)
            tilde_to_target(in, st);
        inline_expr(in, &st->lhs);
        inline_list(in, &st->args, &st->n_args);
        inline_expr(in, &st->value);
        inline_expr(in, &st->trunc_lo);
        inline_expr(in, &st->trunc_hi);
        if (st->type)
            inline_type(in, st->type);
        /* print's and reject's items name their values in args */
        drift_expr *a = st->args;
        for (drift_pitem *it = st->items; it && a; it = it->next)
            if (it->e) {
                it->e = a;
                a = a->next;
            }
        inline_stmts(in, st->body);
        inline_stmts(in, st->els);
    }
}

size_t drift_funcs_inline(drift_program *p, drift_diag *d)
{
    inliner in;
    memset(&in, 0, sizeof in);
    in.rw.A = p->arena;
    in.rw.name = inline_name;
    in.rw.call = inline_call;
    in.rw.fresh = 1;
    in.p = p;
    in.d = d;
    if (!p->funcs)
        return 0;
    check_defs(&in);
    if (in.errors)
        return in.errors;
    for (drift_block *b = p->blocks; b; b = b->next) {
        for (drift_decl *dc = b->decls; dc; dc = dc->next)
            inline_type(&in, dc->type);
        inline_stmts(&in, b->stmts);
    }
    return in.errors;
}
