/* parse.c: runs the scanner and the parser over a model source, and the
 * token filter that makes error recovery resume at a line start.  Not
 * for the grammar itself (grammar.y). */
#include "config.h"

#include <string.h>

#include "base/util.h"
#include "parser/grammar.h"
#include "parse.h"
#include "stan.h"

/* The scanner's interface (lexer.l, prefix drift_lex_). */
typedef void *yyscan_t;
int drift_lex_lex_init_extra(drift_lexstate *extra, yyscan_t *scanner);
int drift_lex_lex_destroy(yyscan_t scanner);
void *drift_lex__scan_buffer(char *base, size_t size, yyscan_t scanner);
int drift_lex_lex(DRIFT_YYSTYPE *lval, drift_loc *lloc, yyscan_t scanner);

void drift_lex_remember(drift_lexstate *s, const char *text, size_t n)
{
    if (n >= sizeof s->last) {
        memcpy(s->last, text, sizeof s->last - 4);
        memcpy(s->last + sizeof s->last - 4, "...", 4);
    } else {
        memcpy(s->last, text, n);
        s->last[n] = '\0';
    }
}

int drift_yylex(DRIFT_YYSTYPE *lval, drift_loc *lloc, drift_parser *ps)
{
    for (;;) {
        int t = drift_lex_lex(lval, lloc, ps->scanner);
        if (t == 0) {
            /* The end of input is shown just after the last token. */
            if (ps->lex.end_line) {
                lloc->first_line = lloc->last_line = ps->lex.end_line;
                lloc->first_column = lloc->last_column = ps->lex.end_col + 1;
            } else {
                lloc->first_line = lloc->last_line = 1;
                lloc->first_column = lloc->last_column = 1;
            }
            ps->lex.bol = 1;
            ps->resync = 0;
            return 0;
        }
        if (!ps->resync || ps->lex.bol || t == '}' || t == ';') {
            ps->resync = 0;
            return t;
        }
    }
}

drift_sym *drift_program_add_sym(drift_program *p, drift_sym_kind kind,
                                 const char *name, drift_loc loc)
{
    if (p->n_syms == p->cap_syms) {
        size_t cap = p->cap_syms ? 2 * p->cap_syms : 32;
        drift_sym **ns = drift_arena_alloc(p->arena, cap * sizeof *ns);
        if (!ns)
            return NULL;
        if (p->n_syms)
            memcpy(ns, p->syms, p->n_syms * sizeof *ns);
        p->syms = ns;
        p->cap_syms = cap;
    }
    drift_sym *s = drift_arena_alloc(p->arena, sizeof *s);
    if (!s)
        return NULL;
    s->kind = kind;
    s->name = name;
    s->loc = loc;
    s->id = p->n_syms;
    p->syms[p->n_syms++] = s;
    return s;
}

void drift_program_free(drift_program *p)
{
    if (p)
        drift_arena_free(p->arena);
}

drift_program *drift_parse(const drift_source *src, drift_diag *diag)
{
    return drift_parse_known(src, NULL, diag);
}

drift_program *drift_parse_known(const drift_source *src,
                                 const drift_known_ints *ki,
                                 drift_diag *diag)
{
    if (drift_stan_is_file(src->name))
        return drift_stan_parse(src, ki, diag);
    drift_arena *arena = drift_arena_new();
    if (!arena) {
        drift_diag_error_file(diag, src->name, "out of memory");
        return NULL;
    }
    drift_program *prog = drift_arena_alloc(arena, sizeof *prog);
    /* The scanner reads a copy ending in the two NULs flex requires. */
    char *buf = drift_arena_alloc(arena, src->len + 2);
    if (!prog || !buf) {
        drift_arena_free(arena);
        drift_diag_error_file(diag, src->name, "out of memory");
        return NULL;
    }
    memcpy(buf, src->text, src->len);
    prog->arena = arena;
    prog->src = src;

    size_t errors_before = diag->n_errors;
    drift_parser ps;
    memset(&ps, 0, sizeof ps);
    ps.arena = arena;
    ps.diag = diag;
    ps.src = src;
    ps.prog = prog;
    ps.lex.arena = arena;
    ps.lex.diag = diag;
    ps.lex.src = src;
    ps.lex.line = 1;
    ps.lex.col = 1;
    ps.lex.pending_bol = 1;
    jmp_buf fatal;
    ps.lex.fatal = &fatal;
    /* What the handler reads must be volatile: it is set after setjmp. */
    void *volatile scanner = NULL;
    if (setjmp(fatal)) {
        /* The scanner ran out of memory (its only fatal error). */
        if (scanner)
            drift_lex_lex_destroy(scanner);
        drift_arena_free(arena);
        drift_diag_error_file(diag, src->name, "out of memory");
        return NULL;
    }
    if (drift_lex_lex_init_extra(&ps.lex, &ps.scanner)) {
        drift_arena_free(arena);
        drift_diag_error_file(diag, src->name, "out of memory");
        return NULL;
    }
    scanner = ps.scanner;
    drift_lex__scan_buffer(buf, src->len + 2, ps.scanner);
    int rc = drift_yyparse(&ps);
    drift_lex_lex_destroy(ps.scanner);
    if (ps.lex.oom || (rc == 2 && ps.lex.oom)) {
        drift_arena_free(arena);
        return NULL;
    }
    /* User functions are inlined, then for, if and the like become
     * loop-free statements; after a syntax error the tree may be
     * partial, and its errors are enough. */
    if (diag->n_errors == errors_before)
        drift_funcs_inline(prog, diag);
    if (diag->n_errors == errors_before)
        drift_control_lower(prog, diag);
    return prog;
}
