/* print.c: a drift_program written back as drift's language.  Each
 * expression is written with the fewest parentheses that make grammar.y
 * build the same tree: every operator has a level (the grammar's
 * nonterminal it is reduced to), and an operand whose level is below what
 * its place admits is put in parentheses.  Not for checking names or
 * types: a program is printed as it is. */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "parser/print.h"

/* The grammar's levels, loosest first: expr (a ? b : c), or_expr,
 * and_expr, eq_expr, rel_expr, then arith's '+' '-', '*' '/' '.*' './',
 * the prefix operators, '^', postfix (a[i]) and primary. */
enum {
    L_COND = 1, L_OR, L_AND, L_EQ, L_REL, L_ADD, L_MUL, L_UNARY, L_POW,
    L_POSTFIX, L_PRIMARY
};

typedef struct printer {
    FILE *f;
    char *why;
    size_t cap;
    int failed;
} printer;

static void fail(printer *p, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void fail(printer *p, const char *fmt, ...)
{
    if (p->failed)
        return;
    p->failed = 1;
    if (p->why && p->cap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->why, p->cap, fmt, ap);
        va_end(ap);
    }
}

/* The words drift's scanner reads as keywords, never as names. */
static const char *const keywords[] = {
    "data", "rows", "param", "prior", "datum", "derived", "generated",
    "transformed", "functions", "return",
    "target", "real", "int", "vector", "sparse_vector", "matrix", "array",
    "simplex", "ordered", "positive_ordered", "cholesky_factor_corr",
    "cholesky_factor_cov", "cov_matrix", "corr_matrix", "lower", "upper"};

static int is_keyword(const char *s)
{
    for (size_t k = 0; k < sizeof keywords / sizeof keywords[0]; k++)
        if (!strcmp(s, keywords[k]))
            return 1;
    return 0;
}

static int is_ident(const char *s)
{
    if (!s || !((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
                *s == '_'))
        return 0;
    for (const char *c = s + 1; *c; c++)
        if (!((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
              (*c >= '0' && *c <= '9') || *c == '_'))
            return 0;
    return 1;
}

/* A name as written; call: the name of a call, where the grammar reads
 * 'rows' as the function. */
static void name(printer *p, const char *s, int call, drift_loc loc)
{
    if (!is_ident(s) || (is_keyword(s) && !(call && !strcmp(s, "rows")))) {
        fail(p,
             "%d:%d: the name '%s' cannot be written in drift's language%s",
             loc.first_line, loc.first_column, s ? s : "",
             is_ident(s) ? " (it is a keyword there): rename it in the "
                           "Stan program"
                         : "");
        return;
    }
    fputs(s, p->f);
}

/* A number that reads back to the same double, of the same type: ints
 * as digits, reals with a '.' or an exponent.  A value no literal
 * writes (infinite, NaN) is the builtin that gives it. */
static void number(printer *p, double v, int is_int)
{
    if (isnan(v)) {
        fputs("not_a_number()", p->f);
        return;
    }
    if (isinf(v)) {
        fputs(v > 0 ? "positive_infinity()" : "negative_infinity()", p->f);
        return;
    }
    if (v < 0 || (v == 0 && signbit(v))) {
        fputc('-', p->f);
        v = -v;
    }
    if (is_int && v <= 2147483647.0 && v == floor(v)) {
        fprintf(p->f, "%.0f", v);
        return;
    }
    char buf[64];
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(buf, sizeof buf, "%.*g", digits, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    fputs(buf, p->f);
    if (!strpbrk(buf, ".e"))
        fputs(".0", p->f);
}

static int binop_level(drift_binop op)
{
    switch (op) {
    case DRIFT_OP_ADD:
    case DRIFT_OP_SUB: return L_ADD;
    case DRIFT_OP_MUL:
    case DRIFT_OP_DIV:
    case DRIFT_OP_EMUL:
    case DRIFT_OP_EDIV: return L_MUL;
    case DRIFT_OP_POW: return L_POW;
    case DRIFT_OP_LT:
    case DRIFT_OP_LE:
    case DRIFT_OP_GT:
    case DRIFT_OP_GE: return L_REL;
    case DRIFT_OP_EQ:
    case DRIFT_OP_NE: return L_EQ;
    case DRIFT_OP_AND: return L_AND;
    case DRIFT_OP_OR: return L_OR;
    }
    return L_COND;
}

/* The level an expression is reduced to as written. */
static int level(const drift_expr *e)
{
    switch (e->kind) {
    case DRIFT_E_NUM:
        /* a negative value is written with its sign: a prefix minus */
        return (e->num < 0 || (e->num == 0 && signbit(e->num)))
                   ? L_UNARY
                   : L_PRIMARY;
    case DRIFT_E_NAME:
    case DRIFT_E_CALL: return L_PRIMARY;
    case DRIFT_E_INDEX: return L_POSTFIX;
    case DRIFT_E_BINOP: return binop_level(e->op);
    case DRIFT_E_NEG:
    case DRIFT_E_NOT: return L_UNARY;
    case DRIFT_E_COND: return L_COND;
    }
    return L_COND;
}

static void expr(printer *p, const drift_expr *e, int min);

static void list(printer *p, const drift_expr *a)
{
    for (; a && !p->failed; a = a->next) {
        expr(p, a, L_COND);
        if (a->next)
            fputs(", ", p->f);
    }
}

/* e where the grammar admits level min or tighter. */
static void expr(printer *p, const drift_expr *e, int min)
{
    if (p->failed)
        return;
    if (!e) {
        fail(p, "an expression is missing");
        return;
    }
    int lv = level(e);
    int paren = lv < min;
    if (paren)
        fputc('(', p->f);
    switch (e->kind) {
    case DRIFT_E_NUM: number(p, e->num, e->is_int); break;
    case DRIFT_E_NAME: name(p, e->name, 0, e->loc); break;
    case DRIFT_E_CALL:
        name(p, e->name, 1, e->name_loc);
        fputc('(', p->f);
        if (e->bar && e->args) {
            expr(p, e->args, L_COND);
            fputs(" | ", p->f);
            list(p, e->args->next);
        } else {
            list(p, e->args);
        }
        fputc(')', p->f);
        break;
    case DRIFT_E_INDEX:
        expr(p, e->a, L_POSTFIX);
        fputc('[', p->f);
        list(p, e->args);
        fputc(']', p->f);
        break;
    case DRIFT_E_BINOP: {
        /* Left-associative but for '^'; comparisons do not chain on the
         * right either. */
        int right = e->op == DRIFT_OP_POW;
        int lmin = right ? lv + 1 : lv;
        int rmin = right ? lv : lv + 1;
        expr(p, e->a, lmin);
        fprintf(p->f, " %s ", drift_binop_name(e->op));
        expr(p, e->b, rmin);
        break;
    }
    case DRIFT_E_NEG:
    case DRIFT_E_NOT:
        fputc(e->kind == DRIFT_E_NEG ? '-' : '!', p->f);
        /* A prefix operator's operand is itself prefixed, or '^' or
         * tighter; "- -x" in parentheses, never "--x". */
        expr(p, e->a, e->a && level(e->a) == L_UNARY ? L_POSTFIX : L_POW);
        break;
    case DRIFT_E_COND:
        expr(p, e->a, L_OR);
        fputs(" ? ", p->f);
        /* a conditional inside the first branch reads better enclosed */
        expr(p, e->b, L_OR);
        fputs(" : ", p->f);
        expr(p, e->args, L_COND);
        break;
    }
    if (paren)
        fputc(')', p->f);
}

/* A bound: the grammar reads 'lower=' arith. */
static void bounds(printer *p, const drift_typeexpr *t)
{
    if (!t->lower && !t->upper)
        return;
    fputc('<', p->f);
    if (t->lower) {
        fputs("lower=", p->f);
        expr(p, t->lower, L_ADD);
    }
    if (t->upper) {
        fputs(t->lower ? ", upper=" : "upper=", p->f);
        expr(p, t->upper, L_ADD);
    }
    fputc('>', p->f);
}

static void type(printer *p, const drift_typeexpr *t)
{
    if (t->n_arr) {
        fputs("array[", p->f);
        for (int k = 0; k < t->n_arr; k++) {
            if (k)
                fputs(", ", p->f);
            expr(p, t->arr_size[k], L_COND);
        }
        fputs("] ", p->f);
    }
    const char *con = NULL;
    switch (t->con) {
    case DRIFT_CON_NONE: break;
    case DRIFT_CON_SIMPLEX: con = "simplex"; break;
    case DRIFT_CON_ORDERED: con = "ordered"; break;
    case DRIFT_CON_POSITIVE_ORDERED: con = "positive_ordered"; break;
    case DRIFT_CON_CHOL_CORR: con = "cholesky_factor_corr"; break;
    case DRIFT_CON_CHOL_COV: con = "cholesky_factor_cov"; break;
    case DRIFT_CON_COV: con = "cov_matrix"; break;
    case DRIFT_CON_CORR: con = "corr_matrix"; break;
    }
    if (con) {
        fprintf(p->f, "%s[", con);
        expr(p, t->size[0], L_COND);
        /* cholesky_factor_cov[M, N]; the square ones take one size */
        if (t->con == DRIFT_CON_CHOL_COV && t->size[1] &&
            t->size[1] != t->size[0]) {
            fputs(", ", p->f);
            expr(p, t->size[1], L_COND);
        }
        fputc(']', p->f);
        return;
    }
    switch (t->kind) {
    case DRIFT_T_INT:
    case DRIFT_T_REAL:
        fputs(t->kind == DRIFT_T_INT ? "int" : "real", p->f);
        bounds(p, t);
        return;
    case DRIFT_T_VECTOR:
    case DRIFT_T_SPARSE:
        fputs(t->kind == DRIFT_T_VECTOR ? "vector" : "sparse_vector", p->f);
        bounds(p, t);
        fputc('[', p->f);
        expr(p, t->size[0], L_COND);
        fputc(']', p->f);
        return;
    case DRIFT_T_MATRIX:
        fputs("matrix", p->f);
        bounds(p, t);
        fputc('[', p->f);
        expr(p, t->size[0], L_COND);
        fputs(", ", p->f);
        expr(p, t->size[1], L_COND);
        fputc(']', p->f);
        return;
    case DRIFT_T_ERROR: break;
    }
    fail(p, "%d:%d: a declaration's type has no spelling in drift's "
            "language",
         t->loc.first_line, t->loc.first_column);
}

/* The outcome of a '~': a name, a call or an index of those. */
static int lhs_ok(const drift_expr *e)
{
    while (e && e->kind == DRIFT_E_INDEX)
        e = e->a;
    return e && (e->kind == DRIFT_E_NAME ||
                 (e->kind == DRIFT_E_CALL && !e->bar));
}

static void stmt(printer *p, const drift_stmt *s)
{
    fputs("  ", p->f);
    switch (s->kind) {
    case DRIFT_S_TILDE:
        if (!lhs_ok(s->lhs)) {
            fail(p, "%d:%d: the outcome of this '~' is not a name, call or "
                    "index, which drift's language needs left of '~'",
                 s->loc.first_line, s->loc.first_column);
            return;
        }
        expr(p, s->lhs, L_POSTFIX);
        fputs(" ~ ", p->f);
        name(p, s->dist, 1, s->dist_loc);
        fputc('(', p->f);
        list(p, s->args);
        fputc(')', p->f);
        break;
    case DRIFT_S_TARGET:
        fputs("target += ", p->f);
        expr(p, s->value, L_COND);
        break;
    case DRIFT_S_LET:
        name(p, s->name, 0, s->name_loc);
        fputs(" = ", p->f);
        expr(p, s->value, L_COND);
        break;
    case DRIFT_S_PRINT:
        fputs("print(", p->f);
        for (const drift_pitem *it = s->items; it; it = it->next) {
            if (it != s->items)
                fputs(", ", p->f);
            if (it->str)
                fprintf(p->f, "\"%s\"", it->str);
            else
                expr(p, it->e, L_COND);
        }
        fputc(')', p->f);
        break;
    default:
    /* control flow: replaced by drift_control_lower when parsed */
        break;
    }
    fputc('\n', p->f);
}

static int finish(printer *p)
{
    if (!p->failed && ferror(p->f))
        fail(p, "the text could not be written");
    return p->failed ? -1 : 0;
}

int drift_expr_print(const drift_expr *e, FILE *f, char *why, size_t cap)
{
    printer p = {f, why, cap, 0};
    expr(&p, e, L_COND);
    return finish(&p);
}

int drift_program_print(const drift_program *prog, FILE *f, char *why,
                        size_t cap)
{
    printer p = {f, why, cap, 0};
    for (const drift_block *b = prog->blocks; b && !p.failed; b = b->next) {
        fprintf(f, "%s {\n", drift_block_name(b->kind));
        switch (b->kind) {
        case DRIFT_BLOCK_DATA:
        case DRIFT_BLOCK_ROWS:
        case DRIFT_BLOCK_PARAM:
            for (const drift_decl *d = b->decls; d && !p.failed;
                 d = d->next) {
                fputs("  ", f);
                name(&p, d->name, 0, d->loc);
                fputs(" : ", f);
                type(&p, d->type);
                fputc('\n', f);
            }
            break;
        default:
            for (const drift_stmt *s = b->stmts; s && !p.failed; s = s->next)
                stmt(&p, s);
            break;
        }
        fputs("}\n", f);
    }
    return finish(&p);
}
