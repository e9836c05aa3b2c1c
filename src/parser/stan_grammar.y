/* stan_grammar.y: the grammar of Stan programs (CmdStan 2.3x), for the
 * Stan front end.  A pure parser with locations and no conflicts, as
 * grammar.y; its actions only build the Stan statement tree (stan.h),
 * whose expressions are drift's.  What drift cannot run is parsed all the
 * same and refused by stan_lower.c with a message naming it, so a syntax
 * error always means the text is not Stan.  Not for names or types. */

%code top {
#include "config.h"
}

%code requires {
#include "parser/ast.h"
#include "parser/stan.h"

typedef struct stan_elist {
    drift_expr *first, *last;
    size_t n;
} stan_elist;

typedef struct stan_slist {
    stan_stmt *first, *last;
} stan_slist;

typedef struct stan_bounds {
    drift_expr *lower, *upper, *offset, *multiplier;
    drift_loc lower_loc, upper_loc, affine_loc;
    int bad;
} stan_bounds;
}

%code provides {
int stan_yylex(STAN_YYSTYPE *lval, drift_loc *lloc, stan_parser *ps);
void stan_yyerror(drift_loc *loc, stan_parser *ps, const char *msg);
}

%code {
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "parser/diag.h"

#define YYMAXDEPTH 2000
#define ARENA (ps->arena)

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

static stan_stmt *new_stmt(stan_parser *ps, stan_stmt_kind k, drift_loc loc)
{
    stan_stmt *s = drift_arena_alloc(ps->arena, sizeof *s);
    if (s) {
        s->kind = k;
        s->loc = loc;
        s->op = -1;
    }
    return s;
}

static drift_typeexpr *new_type(stan_parser *ps, drift_tkind k, drift_loc loc)
{
    drift_typeexpr *t = drift_arena_alloc(ps->arena, sizeof *t);
    if (t) {
        t->kind = k;
        t->loc = loc;
    }
    return t;
}

static void set_bounds(stan_type *st, const stan_bounds *b)
{
    st->t->lower = b->lower;
    st->t->upper = b->upper;
    st->t->lower_loc = b->lower_loc;
    st->t->upper_loc = b->upper_loc;
    st->offset = b->offset;
    st->multiplier = b->multiplier;
    st->affine_loc = b->affine_loc;
}

static drift_expr *unsupported(stan_parser *ps, drift_loc loc,
                               const char *what, drift_expr *a,
                               drift_expr *b);
static void set_block(stan_parser *ps, stan_block_kind k, drift_loc loc,
                      stan_stmt *body);
static void depth_check(stan_parser *ps, drift_expr *e, drift_expr *a,
                        drift_expr *b);
}

%define api.pure full
%define api.prefix {stan_yy}
%define api.location.type {drift_loc}
%define parse.error custom
%define parse.lac full
%define lr.default-reduction accepting
%locations
%expect 0
%lex-param {stan_parser *ps}
%parse-param {stan_parser *ps}

%union {
    double num;
    const char *str;
    drift_expr *expr;
    stan_elist elist;
    stan_stmt *stmt;
    stan_slist slist;
    stan_type stype;
    stan_bounds bounds;
    int kind;
    drift_pitem *pitem;
}

%token END 0 "end of input"
%token <str> IDENT "identifier"
%token <num> INT_LIT "integer"
%token <num> REAL_LIT "number"
%token IMAG_LIT "imaginary number"
%token <str> STRING "string"
%token <str> OTHER_TYPE "type"
%token FUNCTIONS "'functions'" DATA "'data'" TRANSFORMED "'transformed'"
%token PARAMETERS "'parameters'" MODEL "'model'" GENERATED "'generated'"
%token QUANTITIES "'quantities'" TARGET "'target'"
%token REAL "'real'" INT "'int'" VECTOR "'vector'" ROW_VECTOR "'row_vector'"
%token MATRIX "'matrix'" ARRAY "'array'" SIMPLEX "'simplex'"
%token ORDERED "'ordered'" POSITIVE_ORDERED "'positive_ordered'"
%token CHOLESKY_FACTOR_CORR "'cholesky_factor_corr'"
%token CHOLESKY_FACTOR_COV "'cholesky_factor_cov'"
%token COV_MATRIX "'cov_matrix'" CORR_MATRIX "'corr_matrix'"
%token VOID "'void'" FOR "'for'" IN "'in'" WHILE "'while'" IF "'if'"
%token ELSE "'else'" BREAK "'break'" CONTINUE "'continue'"
%token RETURN "'return'" PRINT "'print'" KW_REJECT "'reject'"
%token PROFILE "'profile'"
%token <num> OPEQ "'+='"
%token OLDASSIGN "'<-'" EQEQ "'=='" NOTEQ "'!='" LESSEQ "'<='"
%token GREATEREQ "'>='" ANDAND "'&&'" OROR "'||'" EMUL "'.*'" EDIV "'./'"
%token EPOW "'.^'" INTDIV "'%/%'"
%token ARRAY_OPEN "'{' (of an array expression)"

%type <stmt> stmt decl fundef
%type <slist> stmts fundefs fparams fparams_opt
%type <stmt> fparam
%type <stype> type elem_type
%type <bounds> bounds_opt bound_list bound trunc
%type <expr> expr or_expr and_expr eq_expr rel_expr arith postfix primary
%type <expr> idx
%type <elist> args args_opt idxs
%type <pitem> pargs pitem
%type <kind> vec_con sq_con

%precedence THEN
%precedence ELSE
%left '+' '-'
%left '*' '/' '%' INTDIV EMUL EDIV
%left '\\'
%precedence UMINUS
%right '^' EPOW

%%

program
    : blocks
    ;

blocks
    : %empty
    | blocks block
    | blocks error
    ;

block
    : FUNCTIONS '{' fundefs '}'      { set_block(ps, STAN_FUNCTIONS, @1, $3.first); }
    | DATA '{' stmts '}'             { set_block(ps, STAN_DATA, @1, $3.first); }
    | TRANSFORMED DATA '{' stmts '}' { set_block(ps, STAN_TDATA, span(@1, @2), $4.first); }
    | PARAMETERS '{' stmts '}'       { set_block(ps, STAN_PARAMS, @1, $3.first); }
    | TRANSFORMED PARAMETERS '{' stmts '}'
                                     { set_block(ps, STAN_TPARAMS, span(@1, @2), $4.first); }
    | MODEL '{' stmts '}'            { set_block(ps, STAN_MODEL, @1, $3.first); }
    | GENERATED QUANTITIES '{' stmts '}'
                                     { set_block(ps, STAN_GQ, span(@1, @2), $4.first); }
    ;

fundefs
    : %empty                { $$.first = $$.last = NULL; }
    | fundefs fundef
        {
            $$ = $1;
            if ($$.last)
                $$.last->next = $2;
            else
                $$.first = $2;
            $$.last = $2;
        }
    ;

/* A function is parsed loosely (its signature's types are not checked)
 * and refused when lowered. */
fundef
    : ftype IDENT '(' fparams_opt ')' stmt
        {
            NEED($$ = new_stmt(ps, STAN_S_EMPTY, @2));
            $$->name = $2;
            $$->name_loc = @2;
            $$->els = $4.first;
            $$->body = $6;
            $$->op = ps->ftype_void;
        }
    ;

ftype
    : VOID                  { ps->ftype_void = 1; }
    | fbase                 { ps->ftype_void = 0; }
    | fbase '[' commas ']'  { ps->ftype_void = 0; }
    | ARRAY '[' commas ']' fbase { ps->ftype_void = 0; }
    ;

fbase
    : REAL | INT | VECTOR | ROW_VECTOR | MATRIX | OTHER_TYPE
    ;

commas
    : %empty
    | commas ','
    ;

fparams_opt
    : %empty                { $$.first = $$.last = NULL; }
    | fparams               { $$ = $1; }
    ;

fparams
    : fparam                { $$.first = $$.last = $1; }
    | fparams ',' fparam
        {
            $$ = $1;
            $$.last->next = $3;
            $$.last = $3;
        }
    ;

fparam
    : ftype IDENT
        {
            NEED($$ = new_stmt(ps, STAN_S_DECL, @2));
            $$->name = $2;
            $$->name_loc = @2;
        }
    | DATA ftype IDENT
        {
            NEED($$ = new_stmt(ps, STAN_S_DECL, @3));
            $$->name = $3;
            $$->name_loc = @3;
        }
    ;

stmts
    : %empty                { $$.first = $$.last = NULL; }
    | stmts stmt
        {
            $$ = $1;
            if ($2) {
                if ($$.last)
                    $$.last->next = $2;
                else
                    $$.first = $2;
                $$.last = $2;
            }
        }
    ;

stmt
    : decl                  { $$ = $1; }
    | expr '=' expr ';'
        {
            NEED($$ = new_stmt(ps, STAN_S_ASSIGN, span(@1, @4)));
            $$->lhs = $1;
            $$->value = $3;
        }
    | expr OLDASSIGN expr ';'
        {
            drift_diag_error(ps->diag, ps->src, @2,
                             "'<-' was removed from Stan; write '='");
            $$ = NULL;
        }
    | expr OPEQ expr ';'
        {
            NEED($$ = new_stmt(ps, STAN_S_ASSIGN, span(@1, @4)));
            $$->lhs = $1;
            $$->op = (int)$2;
            $$->value = $3;
        }
    | expr '~' IDENT '(' args_opt ')' ';'
        {
            NEED($$ = new_stmt(ps, STAN_S_TILDE, span(@1, @6)));
            $$->lhs = $1;
            $$->dist = $3;
            $$->dist_loc = @3;
            $$->args = $5.first;
            $$->n_args = $5.n;
        }
    | expr '~' IDENT '(' args_opt ')' IDENT '[' trunc ']' ';'
        {
            NEED($$ = new_stmt(ps, STAN_S_TILDE, span(@1, @10)));
            $$->lhs = $1;
            $$->dist = $3;
            $$->dist_loc = @3;
            $$->args = $5.first;
            $$->n_args = $5.n;
            $$->truncated = 1;
            $$->trunc_loc = span(@7, @10);
            $$->trunc_lo = $9.lower;
            $$->trunc_hi = $9.upper;
            if (strcmp($7, "T"))
                drift_diag_error(ps->diag, ps->src, @7,
                                 "expected ';' or a truncation T[lower, "
                                 "upper] after the distribution, found "
                                 "'%s'", $7);
        }
    | TARGET OPEQ expr ';'
        {
            NEED($$ = new_stmt(ps, STAN_S_TARGET, span(@1, @4)));
            $$->value = $3;
            if ((int)$2 != DRIFT_OP_ADD)
                drift_diag_error(ps->diag, ps->src, @2,
                                 "target is only incremented, with "
                                 "'target +='");
        }
    | FOR '(' IDENT IN expr ':' expr ')' stmt
        {
            NEED($$ = new_stmt(ps, STAN_S_FOR, span(@1, @8)));
            $$->name = $3;
            $$->name_loc = @3;
            $$->lhs = $5;
            $$->hi = $7;
            $$->body = $9;
        }
    | FOR '(' IDENT IN expr ')' stmt
        {
            NEED($$ = new_stmt(ps, STAN_S_FOREACH, span(@1, @6)));
            $$->name = $3;
            $$->name_loc = @3;
            $$->lhs = $5;
            $$->body = $7;
        }
    | WHILE '(' expr ')' stmt
        {
            NEED($$ = new_stmt(ps, STAN_S_WHILE, span(@1, @4)));
            $$->lhs = $3;
            $$->body = $5;
        }
    | IF '(' expr ')' stmt %prec THEN
        {
            NEED($$ = new_stmt(ps, STAN_S_IF, span(@1, @4)));
            $$->lhs = $3;
            $$->body = $5;
        }
    | IF '(' expr ')' stmt ELSE stmt
        {
            NEED($$ = new_stmt(ps, STAN_S_IF, span(@1, @4)));
            $$->lhs = $3;
            $$->body = $5;
            $$->els = $7;
        }
    | '{' stmts '}'
        {
            NEED($$ = new_stmt(ps, STAN_S_BLOCK, @1));
            $$->body = $2.first;
        }
    | PROFILE '(' STRING ')' '{' stmts '}'
        {
            NEED($$ = new_stmt(ps, STAN_S_BLOCK, @1));
            $$->body = $6.first;
        }
    | PRINT '(' pargs ')' ';'
        {
            NEED($$ = new_stmt(ps, STAN_S_PRINT, span(@1, @4)));
            $$->items = $3;
        }
    | KW_REJECT '(' pargs ')' ';'
        {
            NEED($$ = new_stmt(ps, STAN_S_REJECT, span(@1, @4)));
            $$->items = $3;
        }
    | BREAK ';'             { NEED($$ = new_stmt(ps, STAN_S_BREAK, @1)); }
    | CONTINUE ';'          { NEED($$ = new_stmt(ps, STAN_S_CONTINUE, @1)); }
    | RETURN ';'            { NEED($$ = new_stmt(ps, STAN_S_RETURN, @1)); }
    | RETURN expr ';'
        {
            NEED($$ = new_stmt(ps, STAN_S_RETURN, span(@1, @2)));
            $$->value = $2;
        }
    | expr ';'
        {
            NEED($$ = new_stmt(ps, STAN_S_CALL, @1));
            $$->value = $1;
        }
    | ';'                   { $$ = NULL; }
    | error ';'             { $$ = NULL; }
    | error '}'             { $$ = NULL; }
    ;

trunc
    : expr ',' expr
        {
            memset(&$$, 0, sizeof $$);
            $$.lower = $1;
            $$.upper = $3;
        }
    | ',' expr              { memset(&$$, 0, sizeof $$); $$.upper = $2; }
    | expr ','              { memset(&$$, 0, sizeof $$); $$.lower = $1; }
    ;

decl
    : type IDENT ';'
        {
            NEED($$ = new_stmt(ps, STAN_S_DECL, span(@1, @2)));
            $$->type = $1;
            $$->name = $2;
            $$->name_loc = @2;
        }
    | type IDENT '=' expr ';'
        {
            NEED($$ = new_stmt(ps, STAN_S_DECL, span(@1, @4)));
            $$->type = $1;
            $$->name = $2;
            $$->name_loc = @2;
            $$->value = $4;
        }
    | type IDENT '[' args ']' ';'
        {
            /* The old array syntax: real y[N]. */
            NEED($$ = new_stmt(ps, STAN_S_DECL, span(@1, @5)));
            $$->type = $1;
            $$->name = $2;
            $$->name_loc = @2;
            if ($1.t->n_arr + (int)$4.n > DRIFT_MAX_ARRAY)
                drift_diag_error(ps->diag, ps->src, @4,
                                 "arrays of more than %d dimensions are not "
                                 "supported", DRIFT_MAX_ARRAY);
            else
                for (drift_expr *a = $4.first; a; a = a->next)
                    $1.t->arr_size[$1.t->n_arr++] = a;
            $$->type = $1;
        }
    | type IDENT '[' args ']' '=' expr ';'
        {
            NEED($$ = new_stmt(ps, STAN_S_DECL, span(@1, @7)));
            $$->name = $2;
            $$->name_loc = @2;
            if ($1.t->n_arr + (int)$4.n > DRIFT_MAX_ARRAY)
                drift_diag_error(ps->diag, ps->src, @4,
                                 "arrays of more than %d dimensions are not "
                                 "supported", DRIFT_MAX_ARRAY);
            else
                for (drift_expr *a = $4.first; a; a = a->next)
                    $1.t->arr_size[$1.t->n_arr++] = a;
            $$->type = $1;
            $$->value = $7;
        }
    ;

type
    : elem_type             { $$ = $1; }
    | ARRAY '[' args ']' elem_type
        {
            $$ = $5;
            if ($3.n > DRIFT_MAX_ARRAY)
                drift_diag_error(ps->diag, ps->src, @3,
                                 "arrays of more than %d dimensions are not "
                                 "supported", DRIFT_MAX_ARRAY);
            else
                for (drift_expr *a = $3.first; a; a = a->next)
                    $$.t->arr_size[$$.t->n_arr++] = a;
            $$.t->loc = span(@1, @5);
        }
    ;

elem_type
    : REAL bounds_opt
        {
            memset(&$$, 0, sizeof $$);
            NEED($$.t = new_type(ps, DRIFT_T_REAL, @1));
            set_bounds(&$$, &$2);
        }
    | INT bounds_opt
        {
            memset(&$$, 0, sizeof $$);
            NEED($$.t = new_type(ps, DRIFT_T_INT, @1));
            set_bounds(&$$, &$2);
        }
    | VECTOR bounds_opt '[' expr ']'
        {
            memset(&$$, 0, sizeof $$);
            NEED($$.t = new_type(ps, DRIFT_T_VECTOR, span(@1, @5)));
            $$.t->size[0] = $4;
            set_bounds(&$$, &$2);
        }
    | ROW_VECTOR bounds_opt '[' expr ']'
        {
            memset(&$$, 0, sizeof $$);
            NEED($$.t = new_type(ps, DRIFT_T_VECTOR, span(@1, @5)));
            $$.t->size[0] = $4;
            $$.rowvec = 1;
            set_bounds(&$$, &$2);
        }
    | MATRIX bounds_opt '[' expr ',' expr ']'
        {
            memset(&$$, 0, sizeof $$);
            NEED($$.t = new_type(ps, DRIFT_T_MATRIX, span(@1, @7)));
            $$.t->size[0] = $4;
            $$.t->size[1] = $6;
            set_bounds(&$$, &$2);
        }
    | vec_con '[' expr ']'
        {
            memset(&$$, 0, sizeof $$);
            NEED($$.t = new_type(ps, DRIFT_T_VECTOR, span(@1, @4)));
            $$.t->size[0] = $3;
            $$.t->con = (drift_constraint)$1;
        }
    | sq_con '[' expr ']'
        {
            memset(&$$, 0, sizeof $$);
            NEED($$.t = new_type(ps, DRIFT_T_MATRIX, span(@1, @4)));
            $$.t->size[0] = $$.t->size[1] = $3;
            $$.t->con = (drift_constraint)$1;
        }
    | CHOLESKY_FACTOR_COV '[' expr ',' expr ']'
        {
            memset(&$$, 0, sizeof $$);
            NEED($$.t = new_type(ps, DRIFT_T_MATRIX, span(@1, @6)));
            $$.t->size[0] = $3;
            $$.t->size[1] = $5;
            $$.t->con = DRIFT_CON_CHOL_COV;
        }
    | OTHER_TYPE bounds_opt '[' args ']'
        {
            drift_diag_error(ps->diag, ps->src, @1,
                             "the Stan type '%s' is not supported by drift",
                             $1);
            memset(&$$, 0, sizeof $$);
            NEED($$.t = new_type(ps, DRIFT_T_REAL, @1));
        }
    | OTHER_TYPE bounds_opt
        {
            drift_diag_error(ps->diag, ps->src, @1,
                             "the Stan type '%s' is not supported by drift",
                             $1);
            memset(&$$, 0, sizeof $$);
            NEED($$.t = new_type(ps, DRIFT_T_REAL, @1));
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
            if ($3.lower) { $$.lower = $3.lower; $$.lower_loc = $3.lower_loc; }
            if ($3.upper) { $$.upper = $3.upper; $$.upper_loc = $3.upper_loc; }
            if ($3.offset) { $$.offset = $3.offset; $$.affine_loc = $3.affine_loc; }
            if ($3.multiplier) { $$.multiplier = $3.multiplier; $$.affine_loc = $3.affine_loc; }
        }
    ;

bound
    : IDENT '=' arith
        {
            memset(&$$, 0, sizeof $$);
            if (!strcmp($1, "lower")) {
                $$.lower = $3;
                $$.lower_loc = span(@1, @3);
            } else if (!strcmp($1, "upper")) {
                $$.upper = $3;
                $$.upper_loc = span(@1, @3);
            } else if (!strcmp($1, "offset")) {
                $$.offset = $3;
                $$.affine_loc = span(@1, @3);
            } else if (!strcmp($1, "multiplier")) {
                $$.multiplier = $3;
                $$.affine_loc = span(@1, @3);
            } else {
                drift_diag_error(ps->diag, ps->src, @1,
                                 "expected lower, upper, offset or "
                                 "multiplier, found '%s'", $1);
            }
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
    | arith EPOW arith
        {
            NEED($$ = drift_ast_binop(ARENA, span(@1, @3), DRIFT_OP_POW, $1, $3));
            depth_check(ps, $$, $1, $3);
        }
    | arith '%' arith
        { NEED($$ = unsupported(ps, @2, "%", $1, $3)); }
    | arith INTDIV arith
        { NEED($$ = unsupported(ps, @2, "%/%", $1, $3)); }
    | arith '\\' arith
        { NEED($$ = unsupported(ps, @2, "\\", $1, $3)); }
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
    | postfix '[' idxs ']'
        {
            NEED($$ = drift_ast_index(ARENA, span(@1, @4), $1, $3.first,
                                      $3.n));
            depth_check(ps, $$, $1, NULL);
            for (drift_expr *a = $3.first; a; a = a->next)
                depth_check(ps, $$, a, NULL);
        }
    | postfix '\''
        {
            NEED($$ = drift_ast_call(ARENA, span(@1, @2), "transpose", @2,
                                     $1, 1));
            depth_check(ps, $$, $1, NULL);
        }
    ;

primary
    : INT_LIT               { NEED($$ = drift_ast_num(ARENA, @1, $1, 1)); }
    | REAL_LIT              { NEED($$ = drift_ast_num(ARENA, @1, $1, 0)); }
    | IMAG_LIT              { NEED($$ = unsupported(ps, @1, "complex numbers", NULL, NULL)); }
    | IDENT                 { NEED($$ = drift_ast_name(ARENA, @1, $1)); }
    | IDENT '(' args_opt ')'
        {
            NEED($$ = drift_ast_call(ARENA, span(@1, @4), $1, @1, $3.first,
                                     $3.n));
            for (drift_expr *a = $3.first; a; a = a->next)
                depth_check(ps, $$, a, NULL);
        }
    | IDENT '(' expr '|' args_opt ')'
        {
            $3->next = $5.first;
            NEED($$ = drift_ast_call(ARENA, span(@1, @6), $1, @1, $3,
                                     $5.n + 1));
            $$->bar = 1;
            for (drift_expr *a = $3; a; a = a->next)
                depth_check(ps, $$, a, NULL);
        }
    | TARGET '(' ')'
        { NEED($$ = unsupported(ps, @1, "target()", NULL, NULL)); }
    | ARRAY_OPEN args '}'
        {
            /* An array {a, b, ...}, kept as a call of '{'. */
            NEED($$ = drift_ast_call(ARENA, span(@1, @3), "{", @1, $2.first,
                                     $2.n));
            for (drift_expr *a = $2.first; a; a = a->next)
                depth_check(ps, $$, a, NULL);
        }
    | '[' args ']'
        {
            /* A row vector [a, b, ...], kept as a call of '['. */
            NEED($$ = drift_ast_call(ARENA, span(@1, @3), "[", @1, $2.first,
                                     $2.n));
            for (drift_expr *a = $2.first; a; a = a->next)
                depth_check(ps, $$, a, NULL);
        }
    | '(' expr ')'
        {
            $$ = $2;
            $$->loc = span(@1, @3);
        }
    ;

idxs
    : idx                   { $$.first = $$.last = $1; $$.n = 1; }
    | idxs ',' idx
        {
            $$ = $1;
            $$.last->next = $3;
            $$.last = $3;
            $$.n++;
        }
    ;

/* A slice is kept as a call of ':' whose a and b are its bounds (NULL
 * where open). */
idx
    : expr                  { $$ = $1; }
    | expr ':' expr
        {
            NEED($$ = drift_ast_call(ARENA, span(@1, @3), ":", @2, NULL, 0));
            $$->a = $1;
            $$->b = $3;
        }
    | ':' expr
        {
            NEED($$ = drift_ast_call(ARENA, span(@1, @2), ":", @1, NULL, 0));
            $$->b = $2;
        }
    | expr ':'
        {
            NEED($$ = drift_ast_call(ARENA, span(@1, @2), ":", @2, NULL, 0));
            $$->a = $1;
        }
    | ':'
        { NEED($$ = drift_ast_call(ARENA, @1, ":", @1, NULL, 0)); }
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

/* print's and reject's arguments in order (a reject's strings are its
 * message). */
pargs
    : pitem                 { $$ = $1; }
    | pargs ',' pitem
        {
            $$ = $1;
            drift_pitem **p = &$$;
            while (*p)
                p = &(*p)->next;
            *p = $3;
        }
    ;

pitem
    : STRING
        {
            NEED($$ = drift_arena_alloc(ps->arena, sizeof *$$));
            $$->str = $1;
        }
    | expr
        {
            NEED($$ = drift_arena_alloc(ps->arena, sizeof *$$));
            $$->e = $1;
        }
    ;

%%

static drift_expr *unsupported(stan_parser *ps, drift_loc loc,
                               const char *what, drift_expr *a,
                               drift_expr *b)
{
    (void)a;
    (void)b;
    drift_diag_error(ps->diag, ps->src, loc,
                     "%s is not supported by drift's Stan front end", what);
    return drift_ast_num(ps->arena, loc, 0, 0);
}

static void set_block(stan_parser *ps, stan_block_kind k, drift_loc loc,
                      stan_stmt *body)
{
    static const char *const names[] = {
        "functions", "data", "transformed data", "parameters",
        "transformed parameters", "model", "generated quantities"};
    if (ps->prog->have[k]) {
        drift_diag_error(ps->diag, ps->src, loc,
                         "block '%s' appears twice", names[k]);
        return;
    }
    ps->prog->have[k] = 1;
    ps->prog->block[k] = body;
    ps->prog->block_loc[k] = loc;
}

static void depth_check(stan_parser *ps, drift_expr *e, drift_expr *a,
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

static void token_name(yysymbol_kind_t k, char *buf, size_t cap)
{
    const char *n = yysymbol_name(k);
    size_t len = strlen(n);
    if (len >= 2 && n[0] == '"' && n[len - 1] == '"')
        snprintf(buf, cap, "%.*s", (int)(len - 2), n + 1);
    else
        snprintf(buf, cap, "%s", n);
}

static int yyreport_syntax_error(const yypcontext_t *ctx, stan_parser *ps)
{
    enum { MAX_EXP = 8 };
    yysymbol_kind_t exp[MAX_EXP];
    int n = yypcontext_expected_tokens(ctx, exp, MAX_EXP);
    if (n < 0)
        return n;
    yysymbol_kind_t tok = yypcontext_token(ctx);
    drift_loc loc = *yypcontext_location(ctx);
    char found[96];
    if (tok == YYSYMBOL_YYEOF)
        snprintf(found, sizeof found, "the end of the file");
    else if (tok == YYSYMBOL_IDENT)
        snprintf(found, sizeof found, "'%s'", ps->lex.last);
    else if (tok == YYSYMBOL_INT_LIT || tok == YYSYMBOL_REAL_LIT)
        snprintf(found, sizeof found, "number %s", ps->lex.last);
    else
        token_name(tok, found, sizeof found);
    /* Many expected tokens (an expression may start): name none. */
    if (n == 0 || n >= 6) {
        drift_diag_error(ps->diag, ps->src, loc, "unexpected %s", found);
        return 0;
    }
    /* After a statement's last token the truncation's T is possible
     * too; ';' is what the user forgot. */
    int semi = 0;
    for (int k = 0; k < n; k++)
        semi |= exp[k] == YYSYMBOL_YYACCEPT ? 0 : !strcmp(yysymbol_name(exp[k]), "';'");
    if (semi) {
        int m = 0;
        for (int k = 0; k < n; k++)
            if (exp[k] != YYSYMBOL_IDENT)
                exp[m++] = exp[k];
        n = m;
    }
    char want[400] = "";
    size_t used = 0;
    for (int k = 0; k < n; k++) {
        char t[48];
        token_name(exp[k], t, sizeof t);
        const char *sep = k == 0 ? "" : (k == n - 1 ? " or " : ", ");
        int w = snprintf(want + used, sizeof want - used, "%s%s", sep, t);
        if (w < 0 || (size_t)w >= sizeof want - used)
            break;
        used += (size_t)w;
    }
    drift_diag_error(ps->diag, ps->src, loc, "expected %s, found %s", want,
                     found);
    return 0;
}

void stan_yyerror(drift_loc *loc, stan_parser *ps, const char *msg)
{
    if (ps->lex.oom)
        drift_diag_error(ps->diag, ps->src, *loc, "out of memory");
    else if (!strcmp(msg, "memory exhausted"))
        drift_diag_error(ps->diag, ps->src, *loc,
                         "the program is nested too deeply to parse");
    else
        drift_diag_error(ps->diag, ps->src, *loc, "%s", msg);
}
