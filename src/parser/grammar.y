/* grammar.y: the grammar of drift's model language.  A pure parser with
 * locations and no conflicts; its actions only build the syntax tree
 * (ast.h).  Statements and declarations need no separator: a statement
 * starts with a name or 'target', so an expression can never run on into
 * the next one; a ';' after either is allowed.  Errors are reported with
 * what was expected, and the parser resumes at the next line, ';' or '}'
 * (see drift_yylex in parse.c).  Not for names or types. */

%code top {
#include "config.h"
}

%code requires {
#include "parser/ast.h"

typedef struct drift_parser drift_parser;

typedef struct drift_elist {
    drift_expr *first, *last;
    size_t n;
} drift_elist;

typedef struct drift_dlist {
    drift_decl *first, *last;
} drift_dlist;

typedef struct drift_slist {
    drift_stmt *first, *last;
} drift_slist;

typedef struct drift_blist {
    drift_block *first, *last;
} drift_blist;

typedef struct drift_flist {
    drift_func *first, *last;
} drift_flist;

typedef struct drift_plist {
    drift_fparam *first, *last;
    size_t n;
} drift_plist;

typedef struct drift_bounds {
    drift_expr *lower, *upper;
    drift_loc lower_loc, upper_loc;
} drift_bounds;
}

%code provides {
int drift_yylex(DRIFT_YYSTYPE *lval, drift_loc *lloc, drift_parser *ps);
void drift_yyerror(drift_loc *loc, drift_parser *ps, const char *msg);
}

%code {
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "parser/diag.h"
#include "parser/parse.h"

/* The parser's stack: deep enough for any sensible model, small enough
 * that a pathological one stops early with a message. */
#define YYMAXDEPTH 2000

#define ARENA (ps->arena)

/* Stops the parse when the arena is out of memory. */
#define NEED(p)                 \
    do {                        \
        if (!(p)) {             \
            ps->lex.oom = 1;    \
            YYNOMEM;            \
        }                       \
    } while (0)

static drift_loc span(drift_loc a, drift_loc b)
{
    drift_loc l = a;
    l.last_line = b.last_line;
    l.last_column = b.last_column;
    return l;
}

/* Checks an expression's nesting depth (see DRIFT_MAX_DEPTH). */
static void depth_check(drift_parser *ps, drift_expr *e, drift_expr *a,
                        drift_expr *b);
}

%define api.pure full
%define api.prefix {drift_yy}
%define api.location.type {drift_loc}
%define parse.error custom
%define parse.lac full
%define lr.default-reduction accepting
%locations
%expect 0
%lex-param {drift_parser *ps}
%parse-param {drift_parser *ps}

%union {
    double num;
    const char *str;
    int kind;
    drift_expr *expr;
    drift_elist elist;
    drift_decl *decl;
    drift_dlist dlist;
    drift_stmt *stmt;
    drift_slist slist;
    drift_block *block;
    drift_blist blist;
    drift_typeexpr *type;
    drift_bounds bounds;
    drift_func *func;
    drift_flist flist;
    drift_fparam *fparam;
    drift_plist plist;
    drift_ftype ftype;
    drift_pitem *pitem;
}

%token END 0 "end of input"
%token <str> IDENT "identifier"
%token <num> INT_LIT "integer"
%token <num> REAL_LIT "number"
%token DATA "'data'" ROWS "'rows'" PARAM "'param'" PRIOR "'prior'"
%token DATUM "'datum'" TARGET "'target'" REAL "'real'" INT "'int'"
%token DERIVED "'derived'" GENERATED "'generated'"
%token VECTOR "'vector'" MATRIX "'matrix'" ARRAY "'array'"
%token SPARSE_VECTOR "'sparse_vector'"
%token SIMPLEX "'simplex'" ORDERED "'ordered'"
%token POSITIVE_ORDERED "'positive_ordered'"
%token CHOLESKY_FACTOR_CORR "'cholesky_factor_corr'"
%token CHOLESKY_FACTOR_COV "'cholesky_factor_cov'"
%token COV_MATRIX "'cov_matrix'" CORR_MATRIX "'corr_matrix'"
%token LOWER "'lower'" UPPER "'upper'"
%token PLUSEQ "'+='" EMUL "'.*'" EDIV "'./'"
%token EQEQ "'=='" NOTEQ "'!='" LESSEQ "'<='" GREATEREQ "'>='"
%token ANDAND "'&&'" OROR "'||'"
%token TRANSFORMED "'transformed'"
%token FUNCTIONS "'functions'" RETURN "'return'"
%token FOR "'for'" IN "'in'" IF "'if'" ELSE "'else'"
%token WHILE "'while'" /* reserved: only to say drift has no while */
%token PRINT "'print'" KW_REJECT "'reject'" TRUNC "'T'"
%token <str> STRING "string"

%type <blist> blocks
%type <block> block
%type <kind> decl_kw stmt_kw vec_con sq_con
%type <dlist> decls
%type <decl> decl
%type <type> type elem_type
%type <bounds> bounds_opt bound_list bound
%type <slist> stmts
%type <stmt> stmt tilde pargs
%type <pitem> pitem
%type <expr> expr_opt
%type <expr> lhs expr or_expr and_expr eq_expr rel_expr arith postfix
%type <expr> primary
%type <elist> args args_opt
%type <flist> funcs
%type <func> func
%type <plist> fparams fparams_opt
%type <fparam> fparam
%type <ftype> ftype
%type <kind> commas

%left '+' '-'
%left '*' '/' EMUL EDIV
%precedence UMINUS
%right '^'
%precedence THEN
%precedence ELSE

%%

program
    : blocks                { ps->prog->blocks = $1.first; }
    ;

blocks
    : %empty                { $$.first = $$.last = NULL; }
    | blocks block
        {
            $$ = $1;
            if ($$.last)
                $$.last->next = $2;
            else
                $$.first = $2;
            $$.last = $2;
        }
    | blocks ';'            { $$ = $1; }
    | blocks error          { $$ = $1; }
    | blocks functions_block { $$ = $1; }
    ;

block
    : decl_kw '{' decls '}'
        {
            NEED($$ = drift_arena_alloc(ARENA, sizeof *$$));
            $$->kind = (drift_block_kind)$1;
            $$->loc = @1;
            $$->decls = $3.first;
        }
    | stmt_kw '{' stmts '}'
        {
            NEED($$ = drift_arena_alloc(ARENA, sizeof *$$));
            $$->kind = (drift_block_kind)$1;
            $$->loc = @1;
            $$->stmts = $3.first;
        }
    ;

decl_kw
    : DATA                  { $$ = DRIFT_BLOCK_DATA; }
    | ROWS                  { $$ = DRIFT_BLOCK_ROWS; }
    | PARAM                 { $$ = DRIFT_BLOCK_PARAM; }
    ;

stmt_kw
    : PRIOR                 { $$ = DRIFT_BLOCK_PRIOR; }
    | DATUM                 { $$ = DRIFT_BLOCK_DATUM; }
    | DERIVED               { $$ = DRIFT_BLOCK_DERIVED; }
    | GENERATED             { $$ = DRIFT_BLOCK_GENERATED; }
    | TRANSFORMED           { $$ = DRIFT_BLOCK_TRANSFORMED; }
    ;

decls
    : %empty                { $$.first = $$.last = NULL; }
    | decls decl
        {
            $$ = $1;
            if ($$.last)
                $$.last->next = $2;
            else
                $$.first = $2;
            $$.last = $2;
        }
    | decls ';'             { $$ = $1; }
    | decls error           { $$ = $1; }
    ;

decl
    : IDENT ':' type
        {
            NEED($$ = drift_arena_alloc(ARENA, sizeof *$$));
            $$->name = $1;
            $$->loc = @1;
            $$->type = $3;
        }
    ;

type
    : elem_type             { $$ = $1; }
    | ARRAY '[' args ']' type
        {
            $$ = $5;
            if ((size_t)$$->n_arr + $3.n > DRIFT_MAX_ARRAY) {
                drift_diag_error(ps->diag, ps->src, @1,
                                 "arrays have at most %d dimensions",
                                 DRIFT_MAX_ARRAY);
            } else {
                /* Outer dimensions first: shift the inner ones right. */
                int k = (int)$3.n;
                for (int j = $$->n_arr - 1; j >= 0; j--)
                    $$->arr_size[j + k] = $$->arr_size[j];
                int j = 0;
                for (drift_expr *a = $3.first; a; a = a->next)
                    $$->arr_size[j++] = a;
                $$->n_arr += k;
            }
            $$->loc = span(@1, @5);
        }
    ;

elem_type
    : REAL bounds_opt
        {
            NEED($$ = drift_arena_alloc(ARENA, sizeof *$$));
            $$->kind = DRIFT_T_REAL;
            $$->loc = span(@1, @2);
            $$->lower = $2.lower; $$->lower_loc = $2.lower_loc;
            $$->upper = $2.upper; $$->upper_loc = $2.upper_loc;
        }
    | INT bounds_opt
        {
            NEED($$ = drift_arena_alloc(ARENA, sizeof *$$));
            $$->kind = DRIFT_T_INT;
            $$->loc = span(@1, @2);
            $$->lower = $2.lower; $$->lower_loc = $2.lower_loc;
            $$->upper = $2.upper; $$->upper_loc = $2.upper_loc;
        }
    | VECTOR bounds_opt '[' expr ']'
        {
            NEED($$ = drift_arena_alloc(ARENA, sizeof *$$));
            $$->kind = DRIFT_T_VECTOR;
            $$->loc = span(@1, @5);
            $$->size[0] = $4;
            $$->lower = $2.lower; $$->lower_loc = $2.lower_loc;
            $$->upper = $2.upper; $$->upper_loc = $2.upper_loc;
        }
    | SPARSE_VECTOR bounds_opt '[' expr ']'
        {
            /* Only rows may be sparse, without bounds: typecheck.c says
             * so with the declaration's place. */
            NEED($$ = drift_arena_alloc(ARENA, sizeof *$$));
            $$->kind = DRIFT_T_SPARSE;
            $$->loc = span(@1, @5);
            $$->size[0] = $4;
            $$->lower = $2.lower; $$->lower_loc = $2.lower_loc;
            $$->upper = $2.upper; $$->upper_loc = $2.upper_loc;
        }
    | MATRIX bounds_opt '[' expr ',' expr ']'
        {
            NEED($$ = drift_arena_alloc(ARENA, sizeof *$$));
            $$->kind = DRIFT_T_MATRIX;
            $$->loc = span(@1, @7);
            $$->size[0] = $4;
            $$->size[1] = $6;
            $$->lower = $2.lower; $$->lower_loc = $2.lower_loc;
            $$->upper = $2.upper; $$->upper_loc = $2.upper_loc;
        }
    | vec_con '[' expr ']'
        {
            NEED($$ = drift_arena_alloc(ARENA, sizeof *$$));
            $$->kind = DRIFT_T_VECTOR;
            $$->con = (drift_constraint)$1;
            $$->loc = span(@1, @4);
            $$->size[0] = $3;
        }
    | sq_con '[' expr ']'
        {
            /* Square: typecheck.c copies the size to the columns. */
            NEED($$ = drift_arena_alloc(ARENA, sizeof *$$));
            $$->kind = DRIFT_T_MATRIX;
            $$->con = (drift_constraint)$1;
            $$->loc = span(@1, @4);
            $$->size[0] = $3;
        }
    | CHOLESKY_FACTOR_COV '[' args ']'
        {
            /* [K] is square: typecheck.c copies the size. */
            NEED($$ = drift_arena_alloc(ARENA, sizeof *$$));
            $$->kind = DRIFT_T_MATRIX;
            $$->con = DRIFT_CON_CHOL_COV;
            $$->loc = span(@1, @4);
            $$->size[0] = $3.first;
            if ($3.n == 2)
                $$->size[1] = $3.first->next;
            else if ($3.n > 2)
                drift_diag_error(ps->diag, ps->src, @3,
                                 "cholesky_factor_cov takes one size [K] or "
                                 "two [M, N]");
        }
    ;

vec_con
    : SIMPLEX               { $$ = DRIFT_CON_SIMPLEX; }
    | ORDERED               { $$ = DRIFT_CON_ORDERED; }
    | POSITIVE_ORDERED      { $$ = DRIFT_CON_POSITIVE_ORDERED; }
    ;

sq_con
    : CHOLESKY_FACTOR_CORR  { $$ = DRIFT_CON_CHOL_CORR; }
    | COV_MATRIX            { $$ = DRIFT_CON_COV; }
    | CORR_MATRIX           { $$ = DRIFT_CON_CORR; }
    ;

bounds_opt
    : %empty                { memset(&$$, 0, sizeof $$); }
    | '<' bound_list '>'    { $$ = $2; }
    ;

bound_list
    : bound                 { $$ = $1; }
    | bound_list ',' bound
        {
            $$ = $1;
            if ($3.lower) {
                if ($$.lower)
                    drift_diag_error(ps->diag, ps->src, $3.lower_loc,
                                     "'lower' is given twice");
                $$.lower = $3.lower;
                $$.lower_loc = $3.lower_loc;
            }
            if ($3.upper) {
                if ($$.upper)
                    drift_diag_error(ps->diag, ps->src, $3.upper_loc,
                                     "'upper' is given twice");
                $$.upper = $3.upper;
                $$.upper_loc = $3.upper_loc;
            }
        }
    ;

bound
    : LOWER '=' arith
        {
            memset(&$$, 0, sizeof $$);
            $$.lower = $3;
            $$.lower_loc = span(@1, @3);
        }
    | UPPER '=' arith
        {
            memset(&$$, 0, sizeof $$);
            $$.upper = $3;
            $$.upper_loc = span(@1, @3);
        }
    ;

stmts
    : %empty                { $$.first = $$.last = NULL; }
    | stmts stmt
        {
            $$ = $1;
            if ($$.last)
                $$.last->next = $2;
            else
                $$.first = $2;
            $$.last = $2;
        }
    | stmts ';'             { $$ = $1; }
    | stmts error           { $$ = $1; }
    ;

stmt
    : tilde                 { $$ = $1; }
    | tilde TRUNC '[' expr_opt ',' expr_opt ']'
        {
            $$ = $1;
            $$->truncated = 1;
            $$->trunc_loc = span(@2, @7);
            $$->trunc_lo = $4;
            $$->trunc_hi = $6;
            $$->loc = span(@1, @7);
        }
    | TARGET PLUSEQ expr
        {
            NEED($$ = drift_arena_alloc(ARENA, sizeof *$$));
            $$->kind = DRIFT_S_TARGET;
            $$->loc = span(@1, @3);
            $$->value = $3;
        }
    | lhs '=' expr
        {
            /* name = value, or one element of a declared local. */
            NEED($$ = drift_arena_alloc(ARENA, sizeof *$$));
            $$->loc = span(@1, @3);
            $$->value = $3;
            if ($1->kind == DRIFT_E_NAME) {
                $$->kind = DRIFT_S_LET;
                $$->name = $1->name;
                $$->name_loc = @1;
            } else {
                $$->kind = DRIFT_S_ASSIGN;
                $$->lhs = $1;
                if ($1->kind != DRIFT_E_INDEX)
                    drift_diag_error(ps->diag, ps->src, @1,
                                     "only a name or an element of one "
                                     "(x[i] = ...) can be assigned");
            }
        }
    | IDENT ':' type
        {
            NEED($$ = drift_arena_alloc(ARENA, sizeof *$$));
            $$->kind = DRIFT_S_DECL;
            $$->loc = span(@1, @3);
            $$->name = $1;
            $$->name_loc = @1;
            $$->type = $3;
        }
    | FOR '(' IDENT IN or_expr ':' expr ')' stmt
        {
            NEED($$ = drift_arena_alloc(ARENA, sizeof *$$));
            $$->kind = DRIFT_S_FOR;
            $$->loc = span(@1, @8);
            $$->name = $3;
            $$->name_loc = @3;
            $$->lhs = $5;
            $$->value = $7;
            $$->body = $9;
        }
    | IF '(' expr ')' stmt %prec THEN
        {
            NEED($$ = drift_arena_alloc(ARENA, sizeof *$$));
            $$->kind = DRIFT_S_IF;
            $$->loc = span(@1, @4);
            $$->value = $3;
            $$->body = $5;
        }
    | IF '(' expr ')' stmt ELSE stmt
        {
            NEED($$ = drift_arena_alloc(ARENA, sizeof *$$));
            $$->kind = DRIFT_S_IF;
            $$->loc = span(@1, @4);
            $$->value = $3;
            $$->body = $5;
            $$->els = $7;
        }
    | '{' stmts '}'
        {
            NEED($$ = drift_arena_alloc(ARENA, sizeof *$$));
            $$->kind = DRIFT_S_BLOCK;
            $$->loc = span(@1, @3);
            $$->body = $2.first;
        }
    | PRINT '(' pargs ')'
        {
            $$ = $3;
            $$->kind = DRIFT_S_PRINT;
            $$->loc = span(@1, @4);
        }
    | KW_REJECT '(' pargs ')'
        {
            $$ = $3;
            $$->kind = DRIFT_S_REJECT;
            $$->loc = span(@1, @4);
        }
    ;

tilde
    : lhs '~' IDENT '(' args_opt ')'
        {
            NEED($$ = drift_arena_alloc(ARENA, sizeof *$$));
            $$->kind = DRIFT_S_TILDE;
            $$->loc = span(@1, @6);
            $$->lhs = $1;
            $$->dist = $3;
            $$->dist_loc = @3;
            $$->args = $5.first;
            $$->n_args = $5.n;
        }
    ;

expr_opt
    : %empty                { $$ = NULL; }
    | expr                  { $$ = $1; }
    ;

/* print and reject's arguments: the items in order, the values also
 * in args (the statement's kind is set by the rule that uses it). */
pargs
    : pitem
        {
            NEED($$ = drift_arena_alloc(ARENA, sizeof *$$));
            $$->items = $1;
            if ($1->e) {
                $$->args = $1->e;
                $$->n_args = 1;
            }
        }
    | pargs ',' pitem
        {
            $$ = $1;
            drift_pitem **p = &$$->items;
            while (*p)
                p = &(*p)->next;
            *p = $3;
            if ($3->e) {
                drift_expr **a = &$$->args;
                while (*a)
                    a = &(*a)->next;
                *a = $3->e;
                $$->n_args++;
            }
        }
    ;

pitem
    : STRING
        {
            NEED($$ = drift_arena_alloc(ARENA, sizeof *$$));
            $$->str = $1;
        }
    | expr
        {
            NEED($$ = drift_arena_alloc(ARENA, sizeof *$$));
            $$->e = $1;
        }
    ;

lhs
    : IDENT                 { NEED($$ = drift_ast_name(ARENA, @1, $1)); }
    | IDENT '(' args_opt ')'
        {
            NEED($$ = drift_ast_call(ARENA, span(@1, @4), $1, @1, $3.first,
                                     $3.n));
            for (drift_expr *a = $3.first; a; a = a->next)
                depth_check(ps, $$, a, NULL);
        }
    | lhs '[' args ']'
        {
            NEED($$ = drift_ast_index(ARENA, span(@1, @4), $1, $3.first,
                                      $3.n));
            depth_check(ps, $$, $1, NULL);
        }
    ;

expr
    : or_expr               { $$ = $1; }
    | or_expr '?' expr ':' expr
        {
            NEED($$ = drift_ast_cond(ARENA, span(@1, @5), $1, $3, $5));
            depth_check(ps, $$, $1, $3);
            depth_check(ps, $$, $5, NULL);
        }
    ;

or_expr
    : and_expr              { $$ = $1; }
    | or_expr OROR and_expr
        {
            NEED($$ = drift_ast_binop(ARENA, span(@1, @3), DRIFT_OP_OR, $1, $3));
            depth_check(ps, $$, $1, $3);
        }
    ;

and_expr
    : eq_expr               { $$ = $1; }
    | and_expr ANDAND eq_expr
        {
            NEED($$ = drift_ast_binop(ARENA, span(@1, @3), DRIFT_OP_AND, $1, $3));
            depth_check(ps, $$, $1, $3);
        }
    ;

eq_expr
    : rel_expr              { $$ = $1; }
    | eq_expr EQEQ rel_expr
        {
            NEED($$ = drift_ast_binop(ARENA, span(@1, @3), DRIFT_OP_EQ, $1, $3));
            depth_check(ps, $$, $1, $3);
        }
    | eq_expr NOTEQ rel_expr
        {
            NEED($$ = drift_ast_binop(ARENA, span(@1, @3), DRIFT_OP_NE, $1, $3));
            depth_check(ps, $$, $1, $3);
        }
    ;

rel_expr
    : arith                 { $$ = $1; }
    | rel_expr '<' arith
        {
            NEED($$ = drift_ast_binop(ARENA, span(@1, @3), DRIFT_OP_LT, $1, $3));
            depth_check(ps, $$, $1, $3);
        }
    | rel_expr LESSEQ arith
        {
            NEED($$ = drift_ast_binop(ARENA, span(@1, @3), DRIFT_OP_LE, $1, $3));
            depth_check(ps, $$, $1, $3);
        }
    | rel_expr '>' arith
        {
            NEED($$ = drift_ast_binop(ARENA, span(@1, @3), DRIFT_OP_GT, $1, $3));
            depth_check(ps, $$, $1, $3);
        }
    | rel_expr GREATEREQ arith
        {
            NEED($$ = drift_ast_binop(ARENA, span(@1, @3), DRIFT_OP_GE, $1, $3));
            depth_check(ps, $$, $1, $3);
        }
    ;

arith
    : arith '+' arith
        {
            NEED($$ = drift_ast_binop(ARENA, span(@1, @3), DRIFT_OP_ADD, $1, $3));
            depth_check(ps, $$, $1, $3);
        }
    | arith '-' arith
        {
            NEED($$ = drift_ast_binop(ARENA, span(@1, @3), DRIFT_OP_SUB, $1, $3));
            depth_check(ps, $$, $1, $3);
        }
    | arith '*' arith
        {
            NEED($$ = drift_ast_binop(ARENA, span(@1, @3), DRIFT_OP_MUL, $1, $3));
            depth_check(ps, $$, $1, $3);
        }
    | arith '/' arith
        {
            NEED($$ = drift_ast_binop(ARENA, span(@1, @3), DRIFT_OP_DIV, $1, $3));
            depth_check(ps, $$, $1, $3);
        }
    | arith EMUL arith
        {
            NEED($$ = drift_ast_binop(ARENA, span(@1, @3), DRIFT_OP_EMUL, $1, $3));
            depth_check(ps, $$, $1, $3);
        }
    | arith EDIV arith
        {
            NEED($$ = drift_ast_binop(ARENA, span(@1, @3), DRIFT_OP_EDIV, $1, $3));
            depth_check(ps, $$, $1, $3);
        }
    | arith '^' arith
        {
            NEED($$ = drift_ast_binop(ARENA, span(@1, @3), DRIFT_OP_POW, $1, $3));
            depth_check(ps, $$, $1, $3);
        }
    | '-' arith %prec UMINUS
        {
            NEED($$ = drift_ast_neg(ARENA, span(@1, @2), $2));
            depth_check(ps, $$, $2, NULL);
        }
    | '+' arith %prec UMINUS { $$ = $2; }
    | '!' arith %prec UMINUS
        {
            NEED($$ = drift_ast_not(ARENA, span(@1, @2), $2));
            depth_check(ps, $$, $2, NULL);
        }
    | postfix               { $$ = $1; }
    ;

postfix
    : primary               { $$ = $1; }
    | postfix '[' args ']'
        {
            NEED($$ = drift_ast_index(ARENA, span(@1, @4), $1, $3.first,
                                      $3.n));
            depth_check(ps, $$, $1, NULL);
            for (drift_expr *a = $3.first; a; a = a->next)
                depth_check(ps, $$, a, NULL);
        }
    ;

primary
    : INT_LIT               { NEED($$ = drift_ast_num(ARENA, @1, $1, 1)); }
    | REAL_LIT              { NEED($$ = drift_ast_num(ARENA, @1, $1, 0)); }
    | IDENT                 { NEED($$ = drift_ast_name(ARENA, @1, $1)); }
    | IDENT '(' args_opt ')'
        {
            NEED($$ = drift_ast_call(ARENA, span(@1, @4), $1, @1, $3.first,
                                     $3.n));
            for (drift_expr *a = $3.first; a; a = a->next)
                depth_check(ps, $$, a, NULL);
        }
    | ROWS '(' args_opt ')'
        {
            /* rows(x), the function, though 'rows' names a block. */
            NEED($$ = drift_ast_call(ARENA, span(@1, @4), "rows", @1,
                                     $3.first, $3.n));
            for (drift_expr *a = $3.first; a; a = a->next)
                depth_check(ps, $$, a, NULL);
        }
    | IDENT '(' expr '|' args_opt ')'
        {
            /* A density: normal_lpdf(y | mu, sigma). */
            $3->next = $5.first;
            NEED($$ = drift_ast_call(ARENA, span(@1, @6), $1, @1, $3,
                                     $5.n + 1));
            $$->bar = 1;
            for (drift_expr *a = $3; a; a = a->next)
                depth_check(ps, $$, a, NULL);
        }
    | '(' expr ')'
        {
            $$ = $2;
            $$->loc = span(@1, @3);
        }
    ;

args_opt
    : %empty                { $$.first = $$.last = NULL; $$.n = 0; }
    | args                  { $$ = $1; }
    ;

args
    : expr                  { $$.first = $$.last = $1; $$.n = 1; }
    | args ',' expr
        {
            $$ = $1;
            $$.last->next = $3;
            $$.last = $3;
            $$.n++;
        }
    ;

/* The functions block, kept apart from the blocks: funcs.c inlines
 * its functions where they are called. */
functions_block
    : FUNCTIONS '{' funcs '}'
        {
            drift_func **tail = &ps->prog->funcs;
            while (*tail)
                tail = &(*tail)->next;
            *tail = $3.first;
        }
    ;

funcs
    : %empty                { $$.first = $$.last = NULL; }
    | funcs func
        {
            $$ = $1;
            if ($$.last)
                $$.last->next = $2;
            else
                $$.first = $2;
            $$.last = $2;
        }
    | funcs ';'             { $$ = $1; }
    | funcs error           { $$ = $1; }
    ;

func
    : IDENT '(' fparams_opt ')' ':' ftype '=' expr
        {
            NEED($$ = drift_arena_alloc(ARENA, sizeof *$$));
            $$->name = $1;
            $$->name_loc = @1;
            $$->params = $3.first;
            $$->n_params = $3.n;
            $$->ret = $6;
            $$->value = $8;
        }
    | IDENT '(' fparams_opt ')' ':' ftype '{' stmts RETURN expr '}'
        {
            NEED($$ = drift_arena_alloc(ARENA, sizeof *$$));
            $$->name = $1;
            $$->name_loc = @1;
            $$->params = $3.first;
            $$->n_params = $3.n;
            $$->ret = $6;
            $$->body = $8.first;
            $$->value = $10;
        }
    | IDENT '(' fparams_opt ')' ':' ftype '{' stmts RETURN expr ';' '}'
        {
            NEED($$ = drift_arena_alloc(ARENA, sizeof *$$));
            $$->name = $1;
            $$->name_loc = @1;
            $$->params = $3.first;
            $$->n_params = $3.n;
            $$->ret = $6;
            $$->body = $8.first;
            $$->value = $10;
        }
    ;

fparams_opt
    : %empty                { $$.first = $$.last = NULL; $$.n = 0; }
    | fparams               { $$ = $1; }
    ;

fparams
    : fparam                { $$.first = $$.last = $1; $$.n = 1; }
    | fparams ',' fparam
        {
            $$ = $1;
            $$.last->next = $3;
            $$.last = $3;
            $$.n++;
        }
    ;

fparam
    : IDENT ':' ftype
        {
            NEED($$ = drift_arena_alloc(ARENA, sizeof *$$));
            $$->name = $1;
            $$->loc = @1;
            $$->type = $3;
        }
    ;

ftype
    : REAL      { $$.kind = DRIFT_T_REAL; $$.n_arr = 0; $$.loc = @1; }
    | INT       { $$.kind = DRIFT_T_INT; $$.n_arr = 0; $$.loc = @1; }
    | VECTOR    { $$.kind = DRIFT_T_VECTOR; $$.n_arr = 0; $$.loc = @1; }
    | MATRIX    { $$.kind = DRIFT_T_MATRIX; $$.n_arr = 0; $$.loc = @1; }
    | ARRAY '[' commas ']' ftype
        {
            $$ = $5;
            $$.n_arr += $3 + 1;
            $$.loc = span(@1, @5);
            if ($$.n_arr > DRIFT_MAX_ARRAY)
                drift_diag_error(ps->diag, ps->src, @1,
                                 "arrays have at most %d dimensions",
                                 DRIFT_MAX_ARRAY);
        }
    ;

commas
    : %empty                { $$ = 0; }
    | commas ','            { $$ = $1 + 1; }
    ;

%%

static void depth_check(drift_parser *ps, drift_expr *e, drift_expr *a,
                        drift_expr *b)
{
    int d = a ? a->depth : 0;
    if (b && b->depth > d)
        d = b->depth;
    if (d + 1 > e->depth)
        e->depth = d + 1;
    if (e->depth == DRIFT_MAX_DEPTH + 1)
        drift_diag_error(ps->diag, ps->src, e->loc,
                         "expression nested more than %d levels deep",
                         DRIFT_MAX_DEPTH);
}

/* How a token is named in messages: the alias without its double
 * quotes. */
static void token_name(yysymbol_kind_t k, char *buf, size_t cap)
{
    const char *n = yysymbol_name(k);
    size_t len = strlen(n);
    if (len >= 2 && n[0] == '"' && n[len - 1] == '"')
        snprintf(buf, cap, "%.*s", (int)(len - 2), n + 1);
    else
        snprintf(buf, cap, "%s", n);
}

/* Whether k is the character token written c (bison numbers them
 * internally, so compare names). */
static int is_char(yysymbol_kind_t k, char c)
{
    const char *n = yysymbol_name(k);
    return n[0] == '\'' && n[1] == c && n[2] == '\'' && n[3] == '\0';
}

static int starts_expr(yysymbol_kind_t k)
{
    return k == YYSYMBOL_IDENT || k == YYSYMBOL_INT_LIT ||
           k == YYSYMBOL_REAL_LIT || is_char(k, '(') || is_char(k, '-') ||
           is_char(k, '+') || is_char(k, '!') || k == YYSYMBOL_ROWS;
}

/* An infix operator or '[': what may continue an expression. */
static int continues_expr(yysymbol_kind_t k)
{
    return k == YYSYMBOL_EMUL || k == YYSYMBOL_EDIV || is_char(k, '+') ||
           is_char(k, '-') || is_char(k, '*') || is_char(k, '/') ||
           is_char(k, '^') || is_char(k, '[') || is_char(k, '<') ||
           is_char(k, '>') || is_char(k, '?') || k == YYSYMBOL_EQEQ ||
           k == YYSYMBOL_NOTEQ || k == YYSYMBOL_LESSEQ ||
           k == YYSYMBOL_GREATEREQ || k == YYSYMBOL_ANDAND ||
           k == YYSYMBOL_OROR;
}

static int starts_block(yysymbol_kind_t k)
{
    return k == YYSYMBOL_DATA || k == YYSYMBOL_ROWS || k == YYSYMBOL_PARAM ||
           k == YYSYMBOL_PRIOR || k == YYSYMBOL_DATUM ||
           k == YYSYMBOL_DERIVED || k == YYSYMBOL_GENERATED ||
           k == YYSYMBOL_TRANSFORMED || k == YYSYMBOL_FUNCTIONS;
}

static int starts_type(yysymbol_kind_t k)
{
    return k == YYSYMBOL_REAL || k == YYSYMBOL_INT || k == YYSYMBOL_VECTOR ||
           k == YYSYMBOL_MATRIX || k == YYSYMBOL_ARRAY ||
           k == YYSYMBOL_SPARSE_VECTOR || k == YYSYMBOL_SIMPLEX ||
           k == YYSYMBOL_ORDERED || k == YYSYMBOL_POSITIVE_ORDERED ||
           k == YYSYMBOL_CHOLESKY_FACTOR_CORR ||
           k == YYSYMBOL_CHOLESKY_FACTOR_COV || k == YYSYMBOL_COV_MATRIX ||
           k == YYSYMBOL_CORR_MATRIX;
}

static int yyreport_syntax_error(const yypcontext_t *ctx, drift_parser *ps)
{
    enum { MAX_EXP = 40 };
    yysymbol_kind_t exp[MAX_EXP];
    int n = yypcontext_expected_tokens(ctx, exp, MAX_EXP);
    if (n < 0)
        return n;
    yysymbol_kind_t tok = yypcontext_token(ctx);
    drift_loc loc = *yypcontext_location(ctx);

    /* Group the expected tokens into what a user thinks in. */
    int has_expr = 0, has_stmt = 0, has_block = 0, has_type = 0;
    /* At the end of an expression every infix operator is expected; '+'
     * stands for them. */
    int has_op = 0, n_other = 0;
    for (int k = 0; k < n; k++) {
        has_op |= is_char(exp[k], '+');
        n_other += !continues_expr(exp[k]);
        has_expr |= exp[k] == YYSYMBOL_INT_LIT;
        has_stmt |= exp[k] == YYSYMBOL_TARGET;
        has_block |= exp[k] == YYSYMBOL_DATA;
        has_type |= exp[k] == YYSYMBOL_VECTOR;
    }
    if (has_expr)
        has_op = 0; /* '+' is then unary: an expression may start */
    char want[512];
    size_t used = 0;
    const char *items[MAX_EXP + 4];
    char names[MAX_EXP][40];
    int n_items = 0;
    if (has_block)
        items[n_items++] = "a block (data, rows, param, prior, datum, "
                           "derived, generated, transformed or functions)";
    if (has_stmt)
        items[n_items++] = "a statement (x ~ dist(...), target += ..., or "
                           "name = ...)";
    if (has_type)
        items[n_items++] = "a type (real, int, vector[n], matrix[r, c], "
                           "sparse_vector[n], simplex[K], ... or array[n] "
                           "...)";
    if (has_expr && !has_stmt)
        items[n_items++] = "an expression";
    for (int k = 0; k < n; k++) {
        if ((has_expr || has_stmt) && starts_expr(exp[k]))
            continue;
        if (has_stmt && (exp[k] == YYSYMBOL_TARGET || exp[k] == YYSYMBOL_FOR ||
                         exp[k] == YYSYMBOL_IF || exp[k] == YYSYMBOL_PRINT ||
                         exp[k] == YYSYMBOL_KW_REJECT || is_char(exp[k], '{')))
            continue;
        if (exp[k] == YYSYMBOL_TRUNC)
            continue;   /* optional after '~', and rare */
        if (has_block && (starts_block(exp[k]) || is_char(exp[k], ';')))
            continue;
        if (has_type && starts_type(exp[k]))
            continue;
        if (exp[k] == YYSYMBOL_YYEOF && n > 1)
            continue;
        /* Operators that could continue an expression are noise next to
         * the punctuation that would end it. */
        if (has_op && n_other && continues_expr(exp[k]))
            continue;
        token_name(exp[k], names[k], sizeof names[k]);
        items[n_items++] = names[k];
    }
    want[0] = '\0';
    for (int k = 0; k < n_items; k++) {
        const char *sep = k == 0 ? "" : (k == n_items - 1 ? " or " : ", ");
        int w = snprintf(want + used, sizeof want - used, "%s%s", sep,
                         items[k]);
        if (w < 0 || (size_t)w >= sizeof want - used)
            break;
        used += (size_t)w;
    }

    char found[96];
    if (tok == YYSYMBOL_YYEOF)
        snprintf(found, sizeof found, "the end of the file");
    else if (tok == YYSYMBOL_IDENT)
        snprintf(found, sizeof found, "'%s'", ps->lex.last);
    else if (tok == YYSYMBOL_INT_LIT || tok == YYSYMBOL_REAL_LIT)
        snprintf(found, sizeof found, "number %s", ps->lex.last);
    else {
        char t[40];
        token_name(tok, t, sizeof t);
        snprintf(found, sizeof found, "%s", t);
    }

    char hint[320] = "";
    /* Stan's spellings, which users bring: the drift spelling, and that a
     * Stan program runs as it is from a .stan file. */
    static const char *const stan_blocks[] = {
        "parameters", "model", "functions", "transformed", "quantities"};
    int stan_block = 0;
    for (size_t k = 0; tok == YYSYMBOL_IDENT && k < 5; k++)
        stan_block |= !strcmp(ps->lex.last, stan_blocks[k]);
    if (stan_block && !strcmp(ps->lex.last, "quantities")) {
        snprintf(hint, sizeof hint,
                 "; Stan's 'generated quantities' is drift's 'generated' (a "
                 "Stan program runs as it is from a file named NAME.stan)");
    } else if (stan_block) {
        snprintf(hint, sizeof hint,
                 "; '%s' is a Stan block: a Stan program runs as it is "
                 "from a file named NAME.stan, and drift's own blocks are "
                 "data, rows, param, prior, datum, derived, generated, "
                 "transformed and functions",
                 ps->lex.last);
    } else if (n == 1 && is_char(exp[0], '{') &&
               (tok == YYSYMBOL_DATA ||
                (tok == YYSYMBOL_IDENT &&
                 !strcmp(ps->lex.last, "parameters")))) {
        snprintf(hint, sizeof hint,
                 "; Stan's 'transformed data' is drift's 'transformed { "
                 "name = value }', Stan's 'transformed parameters' drift's "
                 "'derived'");
    } else if (starts_type(tok) && !has_type && !has_expr &&
               !(n == 1 && is_char(exp[0], ':'))) {
        snprintf(hint, sizeof hint,
                 "; drift declares the name first, as in "
                 "'J : int<lower=0>' (Stan's 'int<lower=0> J;' runs as it "
                 "is from a .stan file)");
    } else if (tok == YYSYMBOL_WHILE) {
        snprintf(hint, sizeof hint,
                 "; drift has no while loops: for (i in a:b) with bounds "
                 "known when the data are read, or a statement over whole "
                 "vectors");
    } else if (tok == YYSYMBOL_TRUNC) {
        snprintf(hint, sizeof hint,
                 "; T[lo, hi] truncates a '~' statement (y ~ dist(...) "
                 "T[lo, hi]); after target += subtract the log CDFs");
    } else if (tok == YYSYMBOL_STRING) {
        snprintf(hint, sizeof hint,
                 "; strings appear only in print(...) and reject(...)");
    } else if (tok == YYSYMBOL_PLUSEQ) {
        snprintf(hint, sizeof hint,
                 "; only target += adds in place: write x = x + ... (a "
                 "new local), or sum over a vector");
    } else if (tok == YYSYMBOL_IDENT && has_block) {
        static const char *const kws[] = {"data",      "rows",
                                          "param",     "prior",
                                          "datum",     "derived",
                                          "generated", "transformed",
                                          "functions"};
        const char *near = drift_closest(ps->lex.last, kws, 9);
        if (near)
            snprintf(hint, sizeof hint, " (did you mean '%s'?)", near);
    } else if (n == 1 && is_char(exp[0], ':') && tok != YYSYMBOL_YYEOF) {
        snprintf(hint, sizeof hint,
                 "; a declaration reads 'name : type', e.g. w : vector[D]");
    } else if (has_stmt && (is_char(tok, '(') || is_char(tok, '-') ||
                            tok == YYSYMBOL_INT_LIT ||
                            tok == YYSYMBOL_REAL_LIT)) {
        snprintf(hint, sizeof hint,
                 "; a statement starts with a name or 'target' (put an "
                 "expression left of '~' inside a function, or use "
                 "target +=)");
    }
    if (n_items)
        drift_diag_error(ps->diag, ps->src, loc, "expected %s, found %s%s",
                         want, found, hint);
    else
        drift_diag_error(ps->diag, ps->src, loc, "unexpected %s%s", found,
                         hint);
    /* Resume at the next line unless the offending token starts one. */
    ps->resync = !(ps->lex.bol || tok == YYSYMBOL_YYEOF ||
                   is_char(tok, '}') || is_char(tok, ';'));
    return 0;
}

void drift_yyerror(drift_loc *loc, drift_parser *ps, const char *msg)
{
    if (ps->lex.oom)
        drift_diag_error(ps->diag, ps->src, *loc, "out of memory");
    else if (!strcmp(msg, "memory exhausted"))
        drift_diag_error(ps->diag, ps->src, *loc,
                         "the model is nested too deeply to parse");
    else
        drift_diag_error(ps->diag, ps->src, *loc, "%s", msg);
}
