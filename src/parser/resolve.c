/* resolve.c: name resolution, the first pass after parsing.  Binds names
 * to symbols, calls to builtins and '~' statements to distributions, and
 * suggests the closest known name for every unknown one.  Not for types
 * (typecheck.c). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "front.h"
#include "parse.h"

typedef struct resolver {
    drift_program *p;
    drift_diag *d;
    size_t errors;
    drift_block_kind block;     /* the block being resolved */
    int in_decl;                /* resolving a type (sizes, bounds) */
    int in_reduce;              /* inside a reduction over the rows */
    size_t rows_seen;           /* rows variables it read */
    size_t rows_outside;        /* rows variables read outside reductions
                                   (a transformed value per row) */
    int oom;
} resolver;

static void error_oom(resolver *r)
{
    if (!r->oom)
        drift_diag_error_file(r->d, r->p->src->name, "out of memory");
    r->oom = 1;
    r->errors++;
}

/* Whether a local of block `home` is visible from the current block:
 * its own block's, the transformed block's from every statement block,
 * and the derived block's from every statement block but transformed. */
static int local_visible(const resolver *r, drift_block_kind home)
{
    int stmts = !r->in_decl && r->block >= DRIFT_BLOCK_PRIOR;
    return home == r->block ||
           (home == DRIFT_BLOCK_TRANSFORMED && stmts) ||
           (home == DRIFT_BLOCK_DERIVED && stmts &&
            r->block != DRIFT_BLOCK_TRANSFORMED);
}

static drift_sym *lookup(resolver *r, const char *name)
{
    for (size_t k = 0; k < r->p->n_syms; k++) {
        drift_sym *s = r->p->syms[k];
        /* N__ is the number of rows whether or not N is */
        if (s->kind == DRIFT_SYM_N && !strcmp(name, DRIFT_ROWS_NAME))
            return s;
        if (strcmp(s->name, name))
            continue;
        if (s->kind == DRIFT_SYM_LOCAL && !local_visible(r, s->block))
            continue;
        return s;
    }
    return NULL;
}

/* The closest visible name to name, for "did you mean". */
static const char *closest_sym(resolver *r, const char *name)
{
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    for (size_t k = 0; k < r->p->n_syms; k++) {
        drift_sym *s = r->p->syms[k];
        if (s->kind == DRIFT_SYM_LOCAL && !local_visible(r, s->block))
            continue;
        if (s->kind == DRIFT_SYM_SIZE && !r->in_decl)
            continue;
        size_t dist = drift_edit_distance(name, s->name);
        if (dist < best_d) {
            best_d = dist;
            best = s->name;
        }
    }
    size_t limit = strlen(name) / 3;
    if (limit < 2)
        limit = 2;
    /* A one-letter name is as close to every other short name. */
    return best_d <= limit && best_d < strlen(name) ? best : NULL;
}

static const char *closest_builtin(const char *name)
{
    const char *names[256];
    size_t n = drift_n_builtins < 256 ? drift_n_builtins : 256;
    for (size_t k = 0; k < n; k++)
        names[k] = drift_builtins[k].name;
    return drift_closest(name, names, n);
}

static const char *closest_dist(const char *name)
{
    const char *names[DRIFT_N_DISTS];
    for (size_t k = 0; k < DRIFT_N_DISTS; k++)
        names[k] = drift_dists[k].name;
    return drift_closest(name, names, DRIFT_N_DISTS);
}

static void resolve_expr(resolver *r, drift_expr *e);

static void resolve_name(resolver *r, drift_expr *e)
{
    drift_sym *s = lookup(r, e->name);
    if (!s && r->in_decl == 2) {
        /* A size nobody declared: an int bound from the data. */
        s = drift_program_add_sym(r->p, DRIFT_SYM_SIZE, e->name, e->loc);
        if (!s) {
            error_oom(r);
            return;
        }
    }
    if (!s) {
        const char *near = closest_sym(r, e->name);
        char hint[160] = "";
        if (near)
            snprintf(hint, sizeof hint, " (did you mean '%s'?)", near);
        else if (drift_builtin_find(e->name))
            snprintf(hint, sizeof hint,
                     " ('%s' is a function: call it as %s(...))", e->name,
                     e->name);
        drift_diag_error(r->d, r->p->src, e->loc, "unknown name '%s'%s",
                         e->name, hint);
        r->errors++;
        return;
    }
    /* A transformed value that reads rows variables outside a reduction
     * is one value per row. */
    int per_row = s->kind == DRIFT_SYM_ROWS ||
                  (s->kind == DRIFT_SYM_LOCAL &&
                   s->block == DRIFT_BLOCK_TRANSFORMED && s->rows);
    if (per_row && s->kind == DRIFT_SYM_LOCAL &&
        r->block != DRIFT_BLOCK_TRANSFORMED && r->block != DRIFT_BLOCK_DATUM &&
        r->block != DRIFT_BLOCK_GENERATED) {
        drift_diag_error(r->d, r->p->src, e->loc,
                         "'%s' is one value per row (it reads rows "
                         "variables): it can only be used in the datum and "
                         "generated blocks",
                         e->name);
        r->errors++;
        return;
    }
    if (per_row && r->block == DRIFT_BLOCK_TRANSFORMED && !r->in_decl) {
        if (r->in_reduce)
            r->rows_seen++;
        else
            r->rows_outside++;
    } else if (s->kind == DRIFT_SYM_ROWS && r->block != DRIFT_BLOCK_DATUM &&
               r->block != DRIFT_BLOCK_GENERATED) {
        if (r->in_decl)
            drift_diag_error(r->d, r->p->src, e->loc,
                             "'%s' is a rows variable (one value per datum) "
                             "and cannot appear in a declaration",
                             e->name);
        else
            drift_diag_error(r->d, r->p->src, e->loc,
                             "'%s' is a rows variable (one value per datum): "
                             "it can only be used in the datum and generated "
                             "blocks",
                             e->name);
        r->errors++;
        return;
    }
    if (s->kind == DRIFT_SYM_PARAM && r->block == DRIFT_BLOCK_TRANSFORMED) {
        drift_diag_error(r->d, r->p->src, e->loc,
                         "'%s' is a parameter: the transformed block holds "
                         "values of the data alone, computed once (a value "
                         "of the parameters belongs in derived)",
                         e->name);
        r->errors++;
        return;
    }
    if (s->kind == DRIFT_SYM_PARAM && r->in_decl) {
        drift_diag_error(r->d, r->p->src, e->loc,
                         "'%s' is a parameter and cannot appear in a "
                         "declaration (sizes and bounds come from the data)",
                         e->name);
        r->errors++;
        return;
    }
    s->used = 1;
    e->sym = s;
}

/* What a call name_lpdf(y | ...) resolves to. */
static const drift_builtin density_fn = {"(density)", DRIFT_FN_DENSITY, 1,
                                         DRIFT_DIST_MAX_ARGS + 1,
                                         DRIFT_RULE_SPECIAL};

/* The suffix of a density's name (_lpdf, _lpmf, _lupdf, _lupmf), or
 * NULL. */
static const char *density_suffix(const char *name)
{
    static const char *const sfx[] = {"_lpdf", "_lpmf", "_lupdf", "_lupmf"};
    size_t n = strlen(name);
    for (size_t k = 0; k < 4; k++) {
        size_t m = strlen(sfx[k]);
        if (n > m && !strcmp(name + n - m, sfx[k]))
            return name + n - m;
    }
    return NULL;
}

/* What a call name_rng(...) resolves to. */
static const drift_builtin rng_fn = {"(rng)", DRIFT_FN_RNG, 1,
                                     DRIFT_DIST_MAX_ARGS, DRIFT_RULE_SPECIAL};

/* name_rng(args): a random draw, in the generated block only.  Returns 1
 * when the name ends in _rng (reported if wrong). */
static int resolve_rng(resolver *r, drift_expr *e)
{
    size_t n = strlen(e->name);
    if (n <= 4 || strcmp(e->name + n - 4, "_rng"))
        return 0;
    char base[128];
    snprintf(base, sizeof base, "%.*s", (int)(n - 4), e->name);
    const drift_dist *d = drift_dist_find(base);
    if (!d) {
        const char *near = closest_dist(base);
        char hint[160] = "";
        if (near)
            snprintf(hint, sizeof hint, " (did you mean '%s_rng'?)", near);
        drift_diag_error(r->d, r->p->src, e->name_loc,
                         "unknown distribution '%s' in '%s'%s", base,
                         e->name, hint);
        r->errors++;
        return 1;
    }
    if (r->block == DRIFT_BLOCK_TRANSFORMED) {
        drift_diag_error(r->d, r->p->src, e->name_loc,
                         "%s draws at random: the transformed block is "
                         "computed once from the data alone, without "
                         "random draws (draw in the generated block, or "
                         "pass the values in as data)",
                         e->name);
        r->errors++;
        return 1;
    }
    if (r->block != DRIFT_BLOCK_GENERATED) {
        drift_diag_error(r->d, r->p->src, e->name_loc,
                         "%s draws at random: it belongs in the generated "
                         "block (the %s block is part of the density)",
                         e->name, drift_block_name(r->block));
        r->errors++;
        return 1;
    }
    e->fn = &rng_fn;
    e->dist = d;
    return 1;
}

/* name_lpdf(y | args): binds the call to its distribution.  Returns 1
 * when the name has a density's suffix (reported if wrong). */
static int resolve_density(resolver *r, drift_expr *e)
{
    const char *sfx = density_suffix(e->name);
    if (!sfx) {
        if (e->bar) {
            drift_diag_error(r->d, r->p->src, e->name_loc,
                             "'|' separates a density's outcome from its "
                             "arguments, as in normal_lpdf(y | mu, sigma); "
                             "'%s' is not a density",
                             e->name);
            r->errors++;
            return 1;
        }
        return 0;
    }
    char base[128];
    snprintf(base, sizeof base, "%.*s", (int)(sfx - e->name), e->name);
    const drift_dist *d = drift_dist_find(base);
    if (!d) {
        const char *near = closest_dist(base);
        char hint[160] = "";
        if (near)
            snprintf(hint, sizeof hint, " (did you mean '%s%s'?)", near,
                     sfx);
        drift_diag_error(r->d, r->p->src, e->name_loc,
                         "unknown distribution '%s' in '%s'%s", base,
                         e->name, hint);
        r->errors++;
        return 1;
    }
    int pmf = sfx[strlen(sfx) - 2] == 'm';
    if (pmf != d->discrete) {
        drift_diag_error(r->d, r->p->src, e->name_loc,
                         "%s is %s: write %s_%s", base,
                         d->discrete ? "discrete" : "continuous", base,
                         d->discrete ? "lpmf" : "lpdf");
        r->errors++;
        return 1;
    }
    if (!e->bar && d->n_args > 0) {
        drift_diag_error(r->d, r->p->src, e->name_loc,
                         "write %s(y | ...): a density's outcome is "
                         "separated from its arguments by '|'",
                         e->name);
        r->errors++;
        return 1;
    }
    e->fn = &density_fn;
    e->dist = d;
    return 1;
}

/* What calls name_lcdf(y | ...), name_lccdf(y | ...) and name_cdf(y |
 * ...) resolve to. */
static const drift_builtin lcdf_fn = {"(lcdf)", DRIFT_FN_LCDF, 1,
                                      DRIFT_DIST_MAX_ARGS + 1,
                                      DRIFT_RULE_SPECIAL};
static const drift_builtin lccdf_fn = {"(lccdf)", DRIFT_FN_LCCDF, 1,
                                       DRIFT_DIST_MAX_ARGS + 1,
                                       DRIFT_RULE_SPECIAL};
static const drift_builtin cdf_fn = {"(cdf)", DRIFT_FN_CDF, 1,
                                     DRIFT_DIST_MAX_ARGS + 1,
                                     DRIFT_RULE_SPECIAL};

/* name_lcdf, name_lccdf, name_cdf (and Stan's older name_cdf_log and
 * name_ccdf_log): binds the call to its distribution.  The outcome may
 * be separated by '|' or ','.  Returns 1 when the name has a cdf's
 * suffix (reported if wrong). */
static int resolve_cdf(resolver *r, drift_expr *e)
{
    static const struct {
        const char *sfx;
        const drift_builtin *fn;
    } forms[] = {{"_lccdf", &lccdf_fn}, {"_lcdf", &lcdf_fn},
                 {"_ccdf_log", &lccdf_fn}, {"_cdf_log", &lcdf_fn},
                 {"_cdf", &cdf_fn}};
    size_t n = strlen(e->name), k, m = 0;
    for (k = 0; k < sizeof forms / sizeof forms[0]; k++) {
        m = strlen(forms[k].sfx);
        if (n > m && !strcmp(e->name + n - m, forms[k].sfx))
            break;
    }
    if (k == sizeof forms / sizeof forms[0])
        return 0;
    char base[128];
    snprintf(base, sizeof base, "%.*s", (int)(n - m), e->name);
    const drift_dist *d = drift_dist_find(base);
    if (!d) {
        const char *near = closest_dist(base);
        char hint[160] = "";
        if (near)
            snprintf(hint, sizeof hint, " (did you mean '%s%s'?)", near,
                     forms[k].sfx);
        drift_diag_error(r->d, r->p->src, e->name_loc,
                         "unknown distribution '%s' in '%s'%s", base,
                         e->name, hint);
        r->errors++;
        return 1;
    }
    if (!drift_dist_has_cdf(d->id)) {
        drift_diag_error(r->d, r->p->src, e->name_loc,
                         "%s has no cdf in drift: cdfs exist for normal, "
                         "std_normal, student_t, cauchy, double_exponential, "
                         "logistic, lognormal, exponential, gamma, "
                         "inv_gamma, beta, uniform, weibull, gumbel, "
                         "chi_square, inv_chi_square, scaled_inv_chi_square, "
                         "rayleigh, frechet, bernoulli, poisson, binomial, "
                         "neg_binomial and neg_binomial_2",
                         base);
        r->errors++;
        return 1;
    }
    if (e->n_args == 0) {
        drift_diag_error(r->d, r->p->src, e->name_loc,
                         "%s needs an outcome: write %s(y | ...)", e->name,
                         e->name);
        r->errors++;
        return 1;
    }
    e->fn = forms[k].fn;
    e->dist = d;
    return 1;
}

static void resolve_call(resolver *r, drift_expr *e)
{
    for (drift_expr *a = e->args; a; a = a->next)
        resolve_expr(r, a);
    if (resolve_cdf(r, e) || resolve_density(r, e) || resolve_rng(r, e))
        return;
    const drift_builtin *fn = drift_builtin_find(e->name);
    if (fn) {
        e->fn = fn;
        return;
    }
    char hint[200] = "";
    const char *near = closest_builtin(e->name);
    if (drift_dist_find(e->name))
        snprintf(hint, sizeof hint,
                 " ('%s' is a distribution: write x ~ %s(...), or "
                 "%s_lpdf(x | ...) for its log density)",
                 e->name, e->name, e->name);
    else if (lookup(r, e->name))
        snprintf(hint, sizeof hint,
                 " ('%s' is a variable; index it with [ ])", e->name);
    else if (near)
        snprintf(hint, sizeof hint, " (did you mean '%s'?)", near);
    drift_diag_error(r->d, r->p->src, e->name_loc, "unknown function '%s'%s",
                     e->name, hint);
    r->errors++;
}

/* A reduction that may run over the rows in the transformed block: one
 * argument, a value per row. */
static int reduces(const drift_expr *e)
{
    return e->n_args == 1 && !e->bar && drift_builtin_reduces_rows(e->name);
}

static void resolve_expr(resolver *r, drift_expr *e)
{
    switch (e->kind) {
    case DRIFT_E_NUM:
        break;
    case DRIFT_E_NAME:
        resolve_name(r, e);
        break;
    case DRIFT_E_CALL:
        if (r->block == DRIFT_BLOCK_TRANSFORMED && reduces(e)) {
            /* Over the rows when its argument reads a rows variable. */
            size_t before = r->rows_seen;
            r->in_reduce++;
            resolve_call(r, e);
            r->in_reduce--;
            e->over_rows = r->rows_seen > before;
            if (!r->in_reduce)
                r->rows_seen = before;
        } else {
            resolve_call(r, e);
        }
        break;
    case DRIFT_E_INDEX: {
        resolve_expr(r, e->a);
        /* Indices are never sizes: resolve them as expressions. */
        int saved = r->in_decl;
        if (r->in_decl == 2)
            r->in_decl = 1;
        for (drift_expr *a = e->args; a; a = a->next)
            resolve_expr(r, a);
        r->in_decl = saved;
        break;
    }
    case DRIFT_E_BINOP:
        resolve_expr(r, e->a);
        resolve_expr(r, e->b);
        break;
    case DRIFT_E_NEG:
    case DRIFT_E_NOT:
        resolve_expr(r, e->a);
        break;
    case DRIFT_E_COND:
        resolve_expr(r, e->a);
        resolve_expr(r, e->b);
        resolve_expr(r, e->args);
        break;
    }
}

static void resolve_type(resolver *r, drift_typeexpr *t)
{
    r->in_decl = 2;
    for (int k = 0; k < 2; k++)
        if (t->size[k])
            resolve_expr(r, t->size[k]);
    for (int k = 0; k < t->n_arr; k++)
        if (t->arr_size[k])
            resolve_expr(r, t->arr_size[k]);
    r->in_decl = 1;
    if (t->lower)
        resolve_expr(r, t->lower);
    if (t->upper)
        resolve_expr(r, t->upper);
    r->in_decl = 0;
}

static void declare(resolver *r, drift_decl *dc)
{
    if ((!strcmp(dc->name, "N") && dc->block == DRIFT_BLOCK_PARAM) ||
        !strcmp(dc->name, DRIFT_ROWS_NAME)) {
        drift_diag_error(r->d, r->p->src, dc->loc,
                         "'%s' is the number of rows and cannot be declared "
                         "here (data and rows may declare an N of their "
                         "own; the number of rows is then " DRIFT_ROWS_NAME
                         ")",
                         dc->name);
        r->errors++;
        return;
    }
    for (size_t k = 0; k < r->p->n_syms; k++) {
        drift_sym *s = r->p->syms[k];
        if (s->kind != DRIFT_SYM_SIZE && s->kind != DRIFT_SYM_N &&
            !strcmp(s->name, dc->name)) {
            drift_diag_error(r->d, r->p->src, dc->loc,
                             "'%s' is declared twice", dc->name);
            drift_diag_note(r->d, r->p->src, s->loc,
                            "the first declaration of '%s' is here",
                            dc->name);
            r->errors++;
            return;
        }
    }
    static const drift_sym_kind kinds[] = {DRIFT_SYM_DATA, DRIFT_SYM_ROWS,
                                           DRIFT_SYM_PARAM};
    drift_sym *s = drift_program_add_sym(r->p, kinds[dc->block], dc->name,
                                         dc->loc);
    if (!s) {
        error_oom(r);
        return;
    }
    s->decl = dc;
    dc->sym = s;
}

static void resolve_stmts(resolver *r, drift_block *b)
{
    r->block = b->kind;
    for (drift_stmt *st = b->stmts; st; st = st->next) {
        if (st->kind != DRIFT_S_LET && st->kind != DRIFT_S_PRINT &&
            (b->kind == DRIFT_BLOCK_DERIVED ||
             b->kind == DRIFT_BLOCK_GENERATED ||
             b->kind == DRIFT_BLOCK_TRANSFORMED)) {
            drift_diag_error(r->d, r->p->src, st->loc,
                             "the %s block holds named values (name = "
                             "expression); '%s' belongs in prior or datum",
                             drift_block_name(b->kind),
                             st->kind == DRIFT_S_TILDE ? "~" : "target +=");
            r->errors++;
            continue;
        }
        switch (st->kind) {
        case DRIFT_S_TILDE: {
            resolve_expr(r, st->lhs);
            for (drift_expr *a = st->args; a; a = a->next)
                resolve_expr(r, a);
            st->d = drift_dist_find(st->dist);
            if (!st->d) {
                char hint[200] = "";
                const char *near = closest_dist(st->dist);
                if (near)
                    snprintf(hint, sizeof hint, " (did you mean '%s'?)",
                             near);
                else if (drift_builtin_find(st->dist))
                    snprintf(hint, sizeof hint,
                             " ('%s' is a function; after '~' comes a "
                             "distribution such as normal)",
                             st->dist);
                drift_diag_error(r->d, r->p->src, st->dist_loc,
                                 "unknown distribution '%s'%s", st->dist,
                                 hint);
                r->errors++;
            }
            break;
        }
        case DRIFT_S_TARGET:
            resolve_expr(r, st->value);
            break;
        case DRIFT_S_PRINT:
            for (drift_expr *a = st->args; a; a = a->next)
                resolve_expr(r, a);
            break;
        default:
        /* control flow: replaced by drift_control_lower when parsed */
            break;
        case DRIFT_S_LET: {
            r->rows_outside = 0;
            resolve_expr(r, st->value);
            drift_sym *old = lookup(r, st->name);
            if (old || !strcmp(st->name, "N") ||
                !strcmp(st->name, DRIFT_ROWS_NAME)) {
                drift_diag_error(r->d, r->p->src, st->name_loc,
                                 "'%s' is already declared; a local needs a "
                                 "new name",
                                 st->name);
                if (old && old->kind != DRIFT_SYM_N)
                    drift_diag_note(r->d, r->p->src, old->loc,
                                    "'%s' is declared here", st->name);
                r->errors++;
                break;
            }
            drift_sym *s = drift_program_add_sym(r->p, DRIFT_SYM_LOCAL,
                                                 st->name, st->name_loc);
            if (!s) {
                error_oom(r);
                break;
            }
            s->let = st;
            s->block = b->kind;
            s->rows = b->kind == DRIFT_BLOCK_TRANSFORMED && r->rows_outside;
            st->sym = s;
            break;
        }
        }
    }
}

size_t drift_resolve(drift_program *p, drift_diag *d)
{
    resolver r;
    memset(&r, 0, sizeof r);
    r.p = p;
    r.d = d;
    for (drift_block *b = p->blocks; b; b = b->next) {
        if (p->block[b->kind]) {
            drift_diag_error(d, p->src, b->loc,
                             "block '%s' appears twice; write all its "
                             "entries in one block",
                             drift_block_name(b->kind));
            drift_diag_note(d, p->src, p->block[b->kind]->loc,
                            "the first '%s' block is here",
                            drift_block_name(b->kind));
            r.errors++;
            continue;
        }
        p->block[b->kind] = b;
    }
    drift_loc nowhere = {0, 0, 0, 0};
    /* N names the number of rows unless the data declare an N of their
     * own, which then shadows it; N__ always names it. */
    const char *n_name = "N";
    for (drift_block *b = p->blocks; b; b = b->next)
        if ((b->kind == DRIFT_BLOCK_DATA || b->kind == DRIFT_BLOCK_ROWS) &&
            p->block[b->kind] == b)
            for (drift_decl *dc = b->decls; dc; dc = dc->next)
                if (!strcmp(dc->name, "N"))
                    n_name = DRIFT_ROWS_NAME;
    drift_sym *n = drift_program_add_sym(p, DRIFT_SYM_N, n_name, nowhere);
    if (!n) {
        error_oom(&r);
        return r.errors;
    }
    n->type.kind = DRIFT_T_INT;
    /* Declarations first (in source order), so that every block sees
     * every declared name. */
    for (drift_block *b = p->blocks; b; b = b->next) {
        if (b->kind > DRIFT_BLOCK_PARAM || p->block[b->kind] != b)
            continue;
        for (drift_decl *dc = b->decls; dc; dc = dc->next) {
            dc->block = b->kind;
            declare(&r, dc);
        }
    }
    for (int k = DRIFT_BLOCK_DATA; k <= DRIFT_BLOCK_PARAM; k++) {
        drift_block *b = p->block[k];
        if (!b)
            continue;
        r.block = b->kind;
        for (drift_decl *dc = b->decls; dc; dc = dc->next)
            resolve_type(&r, dc->type);
    }
    /* transformed and derived first: their names are visible in every
     * later block. */
    static const drift_block_kind order[] = {
        DRIFT_BLOCK_TRANSFORMED, DRIFT_BLOCK_DERIVED, DRIFT_BLOCK_PRIOR, DRIFT_BLOCK_DATUM,
        DRIFT_BLOCK_GENERATED};
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++)
        if (p->block[order[k]])
            resolve_stmts(&r, p->block[order[k]]);
    return r.errors;
}
