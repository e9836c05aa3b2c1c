/* stan_parse.c: runs the Stan scanner and parser over a source and hands
 * the statement tree to the lowering pass, so that a .stan file enters
 * drift as a drift_program like any .drift file.  Not for the grammar
 * (stan_grammar.y) or the lowering (stan_lower.c). */
#include "config.h"

#include <string.h>

#include "base/util.h"
#include "parser/stan.h"
#include "parser/stan_grammar.h"

typedef void *yyscan_t;
int stan_lex_lex_init_extra(drift_lexstate *extra, yyscan_t *scanner);
int stan_lex_lex_destroy(yyscan_t scanner);
void *stan_lex__scan_buffer(char *base, size_t size, yyscan_t scanner);
int stan_lex_lex(STAN_YYSTYPE *lval, drift_loc *lloc, yyscan_t scanner);

int drift_stan_is_file(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    return n > 5 && !strcmp(name + n - 5, ".stan");
}

/* Whether a '{' after token prev opens a block (else an array
 * expression): blocks follow a block's keyword, ')' of a control
 * statement or a function's signature, else, or another statement's
 * end; an array expression follows '=', '(', ',', an operator... */
static int opens_block(int prev)
{
    return prev == 0 || prev == ';' || prev == '{' || prev == '}' ||
           prev == ')' || prev == ELSE || prev == FUNCTIONS ||
           prev == DATA || prev == PARAMETERS || prev == MODEL ||
           prev == QUANTITIES;
}

int stan_yylex(STAN_YYSTYPE *lval, drift_loc *lloc, stan_parser *ps)
{
    int t = stan_lex_lex(lval, lloc, ps->scanner);
    if (t == '{' && !opens_block(ps->last_tok))
        t = ARRAY_OPEN;
    ps->last_tok = t;
    if (t == 0) {
        if (ps->lex.end_line) {
            lloc->first_line = lloc->last_line = ps->lex.end_line;
            lloc->first_column = lloc->last_column = ps->lex.end_col + 1;
        } else {
            lloc->first_line = lloc->last_line = 1;
            lloc->first_column = lloc->last_column = 1;
        }
    }
    return t;
}

drift_program *drift_stan_parse(const drift_source *src,
                                const drift_known_ints *ki, drift_diag *diag)
{
    drift_arena *arena = drift_arena_new();
    if (!arena) {
        drift_diag_error_file(diag, src->name, "out of memory");
        return NULL;
    }
    drift_program *prog = drift_arena_alloc(arena, sizeof *prog);
    stan_program *sp = drift_arena_alloc(arena, sizeof *sp);
    char *buf = drift_arena_alloc(arena, src->len + 2);
    if (!prog || !sp || !buf) {
        drift_arena_free(arena);
        drift_diag_error_file(diag, src->name, "out of memory");
        return NULL;
    }
    memcpy(buf, src->text, src->len);
    prog->arena = arena;
    prog->src = src;

    stan_parser ps;
    memset(&ps, 0, sizeof ps);
    ps.arena = arena;
    ps.diag = diag;
    ps.src = src;
    ps.prog = sp;
    ps.lex.arena = arena;
    ps.lex.diag = diag;
    ps.lex.src = src;
    ps.lex.line = 1;
    ps.lex.col = 1;
    jmp_buf fatal;
    ps.lex.fatal = &fatal;
    void *volatile scanner = NULL;
    if (setjmp(fatal)) {
        if (scanner)
            stan_lex_lex_destroy(scanner);
        drift_arena_free(arena);
        drift_diag_error_file(diag, src->name, "out of memory");
        return NULL;
    }
    if (stan_lex_lex_init_extra(&ps.lex, &ps.scanner)) {
        drift_arena_free(arena);
        drift_diag_error_file(diag, src->name, "out of memory");
        return NULL;
    }
    scanner = ps.scanner;
    stan_lex__scan_buffer(buf, src->len + 2, ps.scanner);
    size_t before = diag->n_errors;
    stan_yyparse(&ps);
    stan_lex_lex_destroy(ps.scanner);
    if (ps.lex.oom) {
        drift_arena_free(arena);
        return NULL;
    }
    /* Lowering a program with syntax errors would only add noise. */
    if (diag->n_errors == before)
        drift_stan_lower(sp, ki, prog, diag);
    return prog;
}
