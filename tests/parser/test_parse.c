/* test_parse.c: the language's front end: what parses (statements without
 * separators, optional ';', comments, precedence), and golden tests of
 * every kind of error report: file:line:col, the message, the source line
 * and the caret, for syntax errors (several per file, with recovery),
 * unknown names with suggestions, type and shape mismatches naming both
 * shapes, wrong argument counts, and the scanner's errors. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "parser/front.h"
#include "parser/parse.h"

typedef struct front {
    drift_source *src;
    drift_program *prog;
    char *report;
    size_t errors;
} front;

/* Parses, resolves and type-checks text named "m.drift", collecting the
 * reports. */
static void run_front(front *f, const char *text)
{
    memset(f, 0, sizeof *f);
    drift_err e;
    assert_int_equal(drift_source_new("m.drift", text, strlen(text), &f->src,
                                      &e),
                     0);
    size_t len;
    FILE *out = open_memstream(&f->report, &len);
    drift_diag d;
    drift_diag_init(&d, out);
    f->prog = drift_parse(f->src, &d);
    assert_non_null(f->prog);
    if (!d.n_errors && !drift_resolve(f->prog, &d))
        drift_typecheck(f->prog, &d);
    f->errors = d.n_errors;
    fclose(out);
}

static void free_front(front *f)
{
    drift_program_free(f->prog);
    drift_source_free(f->src);
    free(f->report);
}

static void golden(const char *text, const char *want)
{
    front f;
    run_front(&f, text);
    if (strcmp(f.report, want)) {
        /* cmocka truncates long messages: print the whole report. */
        fprintf(stderr, "--- got:\n%s--- want:\n%s", f.report, want);
        fail_msg("report differs (printed above)");
    }
    free_front(&f);
}

static void parses(const char *text)
{
    front f;
    run_front(&f, text);
    if (f.errors)
        fail_msg("expected no errors, got:\n%s", f.report);
    free_front(&f);
}

static void test_accepts(void **state)
{
    (void)state;
    /* The DESIGN.md example, separators optional, comments of three
     * kinds. */
    parses("# Bayesian logistic regression\n"
           "data  { }                          # shared\n"
           "rows  { x : vector[D]  y : int }   // per datum\n"
           "param { w : vector[D] }\n"
           "/* a block\n comment */\n"
           "prior { w ~ normal(0, sqrt(10)) }\n"
           "datum { y ~ bernoulli_logit(dot(x, w)) }\n");
    parses("param { a : real; b : vector<lower=0>[3]; };\n"
           "prior { a ~ normal(0, 1); b ~ exponential(1);; }\n");
    parses("param { t : real } prior { target += -t^2/2 target += -t }");
    parses("data { K : int<lower=1>  m : array[K] vector[2]  s : real<upper=3> }\n"
           "param { z : array[2, K] real  u : matrix<lower=-1, upper=1>[K, 2] }\n"
           "prior { h = m[1] + u[1]  target += sum(h) - z[1][1] ^ 2\n"
           "        target += -z[2, K] * z[2, K] }\n");
    /* Control flow: else-if chains (else binds to the nearest if),
     * blocks with ';', truncation on either side, T as a name, print. */
    parses("data { T : real  K : int }\n"
           "param { a : vector[K]  b : real<lower=0> }\n"
           "prior { for (k in 1:K) { a[k] ~ normal(T, 1); }\n"
           "        if (b > 2) b ~ exponential(1) else if (b > 1)\n"
           "          target += -b else { b ~ normal(0, 1) T[0, ] }\n"
           "        T ~ normal(b, 1) T[, 5] }\n"
           "generated { m : vector[K]\n"
           "            for (k in 1:K) m[k] = a[k] * T\n"
           "            print(\"m = \", m, \"; b = \", b) }\n");
    /* Precedence: -a^2 is -(a^2); a - b - c is (a - b) - c. */
    front f;
    run_front(&f, "param { a : real } prior { target += -a^2 - a - 1 }");
    assert_int_equal(f.errors, 0);
    drift_expr *e = f.prog->block[DRIFT_BLOCK_PRIOR]->stmts->value;
    assert_int_equal(e->kind, DRIFT_E_BINOP);
    assert_int_equal(e->op, DRIFT_OP_SUB);
    assert_int_equal(e->a->kind, DRIFT_E_BINOP);
    assert_int_equal(e->a->a->kind, DRIFT_E_NEG);
    assert_int_equal(e->a->a->a->kind, DRIFT_E_BINOP);
    assert_int_equal(e->a->a->a->op, DRIFT_OP_POW);
    free_front(&f);
}

static void test_syntax_errors(void **state)
{
    (void)state;
    golden("param { w : real }\n"
           "prior { w ~ normal(0 1) }\n",
           "m.drift:2:22: error: expected ',' or ')', found number 1\n"
           "    2 | prior { w ~ normal(0 1) }\n"
           "      |                      ^\n");
    /* Several errors in one file: recovery at line starts. */
    golden("param { w : real\n"
           "        v real }\n"
           "prior {\n"
           "  w ~ normal(0, )\n"
           "  v ~ normal(0, 1)\n"
           "  target += * w\n"
           "}\n",
           "m.drift:2:11: error: expected ':', found 'real'; a declaration "
           "reads 'name : type', e.g. w : vector[D]\n"
           "    2 |         v real }\n"
           "      |           ^~~~\n"
           "m.drift:4:17: error: expected an expression, found ')'\n"
           "    4 |   w ~ normal(0, )\n"
           "      |                 ^\n"
           "m.drift:6:13: error: expected an expression, found '*'\n"
           "    6 |   target += * w\n"
           "      |             ^\n");
    golden("paramm { w : real }\n",
           "m.drift:1:1: error: expected a block (data, rows, param, prior, "
           "datum, derived, generated, transformed or functions), found "
           "'paramm' (did you mean "
           "'param'?)\n"
           "    1 | paramm { w : real }\n"
           "      | ^~~~~~\n");
    golden("param { w : real }\nprior { w ~ normal(0, 1)\n",
           "m.drift:2:25: error: expected a statement (x ~ dist(...), target "
           "+= ..., or name = ...), ';' or '}', found the end of the file\n"
           "    2 | prior { w ~ normal(0, 1)\n"
           "      |                         ^\n");
    golden("param { w : real }\nprior { (w) ~ normal(0, 1) }\n",
           "m.drift:2:9: error: expected a statement (x ~ dist(...), target "
           "+= ..., or name = ...), ';' or '}', found '('; a statement "
           "starts with a name or 'target' (put an expression left of '~' "
           "inside a function, or use target +=)\n"
           "    2 | prior { (w) ~ normal(0, 1) }\n"
           "      |         ^\n");
    golden("param { w : vector }\n",
           "m.drift:1:20: error: expected '[' or '<', found '}'\n"
           "    1 | param { w : vector }\n"
           "      |                    ^\n");
}

/* Stan's spellings, which a Stan user writes from habit, are answered
 * with drift's and with the .stan route. */
static void test_stan_spellings(void **state)
{
    (void)state;
    golden("data {\n  int<lower=0> J;\n}\n",
           "m.drift:2:3: error: expected identifier, ';' or '}', found 'int'; "
           "drift declares the name first, as in 'J : int<lower=0>' (Stan's "
           "'int<lower=0> J;' runs as it is from a .stan file)\n"
           "    2 |   int<lower=0> J;\n"
           "      |   ^~~\n");
    golden("param { mu : real }\nprior {\n  while (mu > 0) mu ~ normal(0, 1)"
           "\n}\n",
           "m.drift:3:3: error: expected a statement (x ~ dist(...), target "
           "+= ..., or name = ...), ';' or '}', found 'while'; drift has no "
           "while loops: for (i in a:b) with bounds known when the data are "
           "read, or a statement over whole vectors\n"
           "    3 |   while (mu > 0) mu ~ normal(0, 1)\n"
           "      |   ^~~~~\n");
    golden("param { mu : real }\nprior {\n  lp = 0\n  lp += mu\n}\n",
           "m.drift:4:6: error: expected ':', '[', '=', '(' or '~', found "
           "'+='; only target += adds in place: write x = x + ... (a new "
           "local), or sum over a vector\n"
           "    4 |   lp += mu\n"
           "      |      ^~\n");
    golden("rows { y : real }\nparam { mu : real }\n"
           "datum { target += normal_lpdf(y | mu, 1) T[0, ] }\n",
           "m.drift:3:42: error: expected a statement (x ~ dist(...), target "
           "+= ..., or name = ...), ';' or '}', found 'T'; T[lo, hi] "
           "truncates a '~' statement (y ~ dist(...) T[lo, hi]); after "
           "target += subtract the log CDFs\n"
           "    3 | datum { target += normal_lpdf(y | mu, 1) T[0, ] }\n"
           "      |                                          ^\n");
    golden("param { mu : real }\nprior { if (mu < 0) fatal_error(\"neg\") }\n",
           "m.drift:2:33: error: expected an expression or ')', found string; "
           "strings appear only in print(...) and reject(...)\n"
           "    2 | prior { if (mu < 0) fatal_error(\"neg\") }\n"
           "      |                                 ^~~~~\n");
    golden("param { mu : vector[3] }\nderived {\n  vector[3] m;\n}\n",
           "m.drift:3:3: error: expected a statement (x ~ dist(...), target "
           "+= ..., or name = ...), ';' or '}', found 'vector'; drift "
           "declares the name first, as in 'J : int<lower=0>' (Stan's "
           "'int<lower=0> J;' runs as it is from a .stan file)\n"
           "    3 |   vector[3] m;\n"
           "      |   ^~~~~~\n");
    golden("parameters { real mu; }\n",
           "m.drift:1:1: error: expected a block (data, rows, param, prior, "
           "datum, derived, generated, transformed or functions), found "
           "'parameters'; 'parameters' is a Stan block: a Stan program runs "
           "as it is from a file named NAME.stan, and drift's own blocks are "
           "data, rows, param, prior, datum, derived, generated, transformed "
           "and functions\n"
           "    1 | parameters { real mu; }\n"
           "      | ^~~~~~~~~~\n");
    golden("param { mu : real }\ngenerated quantities { }\n",
           "m.drift:2:11: error: expected '{', found 'quantities'; Stan's "
           "'generated quantities' is drift's 'generated' (a Stan program "
           "runs as it is from a file named NAME.stan)\n"
           "    2 | generated quantities { }\n"
           "      |           ^~~~~~~~~~\n");
}

static void test_scanner_errors(void **state)
{
    (void)state;
    golden("param { w : real }\nprior { w ~ normal(0, 1) @ }\n",
           "m.drift:2:26: error: unexpected character '@'\n"
           "    2 | prior { w ~ normal(0, 1) @ }\n"
           "      |                          ^\n");
    golden("param { w : real }\n/* never closed\nprior { }\n",
           "m.drift:2:1: error: comment opened here is never closed with "
           "'*/'\n"
           "    2 | /* never closed\n"
           "      | ^~\n");
    golden("param { w : real } prior { target += 99999999999 }\n",
           "m.drift:1:38: error: integer 99999999999 is too large (at most "
           "2147483647); write 99999999999.0 for a real\n"
           "    1 | param { w : real } prior { target += 99999999999 }\n"
           "      |                                      ^~~~~~~~~~~\n");
    golden("param { w\x01 : real }\n",
           "m.drift:1:10: error: unexpected byte 0x01 (the model language "
           "is ASCII outside comments)\n"
           "    1 | param { w? : real }\n"
           "      |          ^\n");
}

static void test_name_errors(void **state)
{
    (void)state;
    golden("data { lambda : real }\n"
           "rows { x : vector[D]  y : int }\n"
           "param { w : vector[D]  sigma : real<lower=0> }\n"
           "prior {\n"
           "  w ~ normal(0, sqrt(lamda))\n"
           "  sigam ~ exponential(1)\n"
           "  target += x[1]\n"
           "}\n"
           "datum {\n"
           "  y ~ bernoulli_logt(dot(x, w))\n"
           "  target += squared_nrm(w) + normal(w)\n"
           "  w = 3\n"
           "}\n",
           "m.drift:5:22: error: unknown name 'lamda' (did you mean "
           "'lambda'?)\n"
           "    5 |   w ~ normal(0, sqrt(lamda))\n"
           "      |                      ^~~~~\n"
           "m.drift:6:3: error: unknown name 'sigam' (did you mean 'sigma'?)\n"
           "    6 |   sigam ~ exponential(1)\n"
           "      |   ^~~~~\n"
           "m.drift:7:13: error: 'x' is a rows variable (one value per "
           "datum): it can only be used in the datum and generated blocks\n"
           "    7 |   target += x[1]\n"
           "      |             ^\n"
           "m.drift:10:7: error: unknown distribution 'bernoulli_logt' (did "
           "you mean 'bernoulli_logit'?)\n"
           "   10 |   y ~ bernoulli_logt(dot(x, w))\n"
           "      |       ^~~~~~~~~~~~~~\n"
           "m.drift:11:13: error: unknown function 'squared_nrm' (did you "
           "mean 'squared_norm'?)\n"
           "   11 |   target += squared_nrm(w) + normal(w)\n"
           "      |             ^~~~~~~~~~~\n"
           "m.drift:11:30: error: unknown function 'normal' ('normal' is a "
           "distribution: write x ~ normal(...), or normal_lpdf(x | ...) for "
           "its log density)\n"
           "   11 |   target += squared_nrm(w) + normal(w)\n"
           "      |                              ^~~~~~\n"
           "m.drift:12:3: error: 'w' is already declared; a local needs a new "
           "name\n"
           "   12 |   w = 3\n"
           "      |   ^\n"
           "m.drift:3:9: note: 'w' is declared here\n"
           "    3 | param { w : vector[D]  sigma : real<lower=0> }\n"
           "      |         ^\n");
    golden("param { a : real }\nparam { b : real }\ndata { a : real  N__ : int }\n",
           "m.drift:2:1: error: block 'param' appears twice; write all its "
           "entries in one block\n"
           "    2 | param { b : real }\n"
           "      | ^~~~~\n"
           "m.drift:1:1: note: the first 'param' block is here\n"
           "    1 | param { a : real }\n"
           "      | ^~~~~\n"
           "m.drift:3:8: error: 'a' is declared twice\n"
           "    3 | data { a : real  N__ : int }\n"
           "      |        ^\n"
           "m.drift:1:9: note: the first declaration of 'a' is here\n"
           "    1 | param { a : real }\n"
           "      |         ^\n"
           "m.drift:3:18: error: 'N__' is the number of rows and cannot be "
           "declared here (data and rows may declare an N of their own; the "
           "number of rows is then N__)\n"
           "    3 | data { a : real  N__ : int }\n"
           "      |                  ^~~\n");
}

static void test_type_errors(void **state)
{
    (void)state;
    /* Sizes known only from the data (D against K) are compared once the
     * data are bound (test_langdata.c); here the kinds must agree. */
    golden("rows { x : vector[D]  z : vector[K]  y : real }\n"
           "param { w : vector[D]  M : matrix[K, D]  k : int }\n"
           "datum {\n"
           "  target += sum(x + z)\n"
           "  target += sum(x * M)\n"
           "  target += dot(x, z) + dot(x, 2)\n"
           "  y ~ bernoulli_logit(dot(x, w))\n"
           "  y ~ normal(w)\n"
           "  target += sum(M * z) + exp(1, 2)\n"
           "  target += w[1.5] + M[1, 2, 3]\n"
           "  x ~ normal(w, z)\n"
           "}\n",
           "m.drift:2:46: error: parameter 'k' is declared int; parameters "
           "are real-valued (declare it real, or move it to the data "
           "block)\n"
           "    2 | param { w : vector[D]  M : matrix[K, D]  k : int }\n"
           "      |                                              ^~~\n"
           "m.drift:5:17: error: vector[D] * matrix[K, D] is not defined "
           "(vectors are columns): write matrix * vector, or use .* for "
           "elementwise products\n"
           "    5 |   target += sum(x * M)\n"
           "      |                 ^~~~~\n"
           "m.drift:6:25: error: function 'dot' takes two vectors, given "
           "vector[D] and int\n"
           "    6 |   target += dot(x, z) + dot(x, 2)\n"
           "      |                         ^~~~~~~~~\n"
           "m.drift:7:3: error: the outcome of bernoulli_logit must be an "
           "int, but 'y' is real (declare it int)\n"
           "    7 |   y ~ bernoulli_logit(dot(x, w))\n"
           "      |   ^\n"
           "m.drift:8:7: error: distribution 'normal' takes 2 arguments (mu, "
           "sigma), given 1\n"
           "    8 |   y ~ normal(w)\n"
           "      |       ^~~~~~\n"
           "m.drift:9:26: error: function 'exp' takes 1 argument, given 2\n"
           "    9 |   target += sum(M * z) + exp(1, 2)\n"
           "      |                          ^~~~~~~~~\n"
           "m.drift:10:15: error: an index must be an int, found real\n"
           "   10 |   target += w[1.5] + M[1, 2, 3]\n"
           "      |               ^~~\n"
           "m.drift:10:30: error: too many indices: the value indexed is "
           "real\n"
           "   10 |   target += w[1.5] + M[1, 2, 3]\n"
           "      |                              ^\n");
    /* Literal sizes are compared before any data. */
    golden("param { a : vector[3]  b : vector[4]  M : matrix[2, 3] }\n"
           "prior { target += sum(a + b) + sum(M * b) + a[4] }\n",
           "m.drift:2:23: error: the operands of '+' have different shapes: "
           "vector[3] and vector[4]\n"
           "    2 | prior { target += sum(a + b) + sum(M * b) + a[4] }\n"
           "      |                       ^~~~~\n"
           "m.drift:2:36: error: matrix times vector needs as many matrix "
           "columns as vector entries: matrix[2, 3] * vector[4]\n"
           "    2 | prior { target += sum(a + b) + sum(M * b) + a[4] }\n"
           "      |                                    ^~~~~\n"
           "m.drift:2:47: error: index 4 is out of range for vector[3] "
           "(indices run from 1 to 3)\n"
           "    2 | prior { target += sum(a + b) + sum(M * b) + a[4] }\n"
           "      |                                               ^\n");
    golden("data { K : int }\nparam { w : vector[2.5]  v : vector[K] }\n"
           "prior { target += v[3] }\n",
           "m.drift:2:20: error: the size of 'w' must be an int, found "
           "real\n"
           "    2 | param { w : vector[2.5]  v : vector[K] }\n"
           "      |                    ^~~\n");
    golden("data { x : real }\n",
           "m.drift:1:1: error: the model has no parameters: declare them in "
           "a param block, e.g. param { w : vector[D] } (a model that only "
           "simulates needs a generated block)\n"
           "    1 | data { x : real }\n"
           "      | ^\n");
}

/* sparse_vector: where it may be declared, and that dot() is
 * its only use, each misuse reported where it occurs with the allowed
 * uses named. */
static void test_sparse_types(void **state)
{
    (void)state;
    parses("rows  { x : sparse_vector[D]  y : int }\n"
           "param { w : vector[D]  b : real }\n"
           "prior { w ~ normal(0, 1)  b ~ normal(0, 1) }\n"
           "datum { y ~ bernoulli_logit(dot(x, w) + dot(exp(w), x) + b) }\n");
    const char *head = "rows  { x : sparse_vector[D]  y : real }\n"
                       "param { w : vector[D] }\n";
    char text[512];
    snprintf(text, sizeof text,
             "%sdatum { y ~ normal(sum(x) + dot(x, x), 1)\n"
             "        target += -x[1]\n"
             "        h = x .* w\n"
             "        x ~ normal(0, 1) }\n",
             head);
    golden(text,
           "m.drift:3:24: error: 'x' is a sparse_vector[D]: a sparse_vector "
           "can only be an argument of dot(), as dot(x, v) or dot(v, x) with "
           "v a vector of the same length\n"
           "    3 | datum { y ~ normal(sum(x) + dot(x, x), 1)\n"
           "      |                        ^\n"
           "m.drift:3:29: error: function 'dot' of two sparse_vectors is not "
           "supported: one argument must be a dense vector (usually the "
           "parameters), as in dot(x, w)\n"
           "    3 | datum { y ~ normal(sum(x) + dot(x, x), 1)\n"
           "      |                             ^~~~~~~~~\n"
           "m.drift:4:20: error: 'x' is a sparse_vector[D]: a sparse_vector "
           "can only be an argument of dot(), as dot(x, v) or dot(v, x) with "
           "v a vector of the same length\n"
           "    4 |         target += -x[1]\n"
           "      |                    ^\n"
           "m.drift:5:13: error: 'x' is a sparse_vector[D]: a sparse_vector "
           "can only be an argument of dot(), as dot(x, v) or dot(v, x) with "
           "v a vector of the same length\n"
           "    5 |         h = x .* w\n"
           "      |             ^\n"
           "m.drift:6:9: error: 'x' is a sparse_vector[D]: a sparse_vector "
           "can only be an argument of dot(), as dot(x, v) or dot(v, x) with "
           "v a vector of the same length\n"
           "    6 |         x ~ normal(0, 1) }\n"
           "      |         ^\n");
    golden("rows  { x : sparse_vector[4]  y : real }\n"
           "param { w : vector[3] }\n"
           "datum { y ~ normal(dot(w, x), 1) }\n",
           "m.drift:3:20: error: function 'dot' needs two vectors of the same "
           "length, given vector[3] and sparse_vector[4]\n"
           "    3 | datum { y ~ normal(dot(w, x), 1) }\n"
           "      |                    ^~~~~~~~~\n");
    golden("data  { s : sparse_vector[3] }\n"
           "rows  { x : array[2] sparse_vector[4]  z : sparse_vector<lower=0>[4] }\n"
           "param { w : sparse_vector[4] }\n"
           "prior { w ~ normal(0, 1) }\n",
           "m.drift:1:13: error: 's' is declared sparse_vector in the data "
           "block; a sparse_vector is a rows variable (one sparse row per "
           "datum, e.g. LIBSVM features): declare it in the rows block, or "
           "declare a vector\n"
           "    1 | data  { s : sparse_vector[3] }\n"
           "      |             ^~~~~~~~~~~~~~~~\n"
           "m.drift:2:13: error: 'x': arrays of sparse_vector are not "
           "supported; a rows variable holds one sparse_vector per datum\n"
           "    2 | rows  { x : array[2] sparse_vector[4]  z : "
           "sparse_vector<lower=0>[4] }\n"
           "      |             ^~~~~~~~~~~~~~~~~~~~~~~~~\n"
           "m.drift:2:58: error: 'z': a sparse_vector takes no bounds\n"
           "    2 | rows  { x : array[2] sparse_vector[4]  z : "
           "sparse_vector<lower=0>[4] }\n"
           "      |                                                          "
           "^~~~~~~\n"
           "m.drift:3:13: error: 'w' is declared sparse_vector in the param "
           "block; a sparse_vector is a rows variable (one sparse row per "
           "datum, e.g. LIBSVM features): declare it in the rows block, or "
           "declare a vector\n"
           "    3 | param { w : sparse_vector[4] }\n"
           "      |             ^~~~~~~~~~~~~~~~\n");
    /* The keyword in the parser's list of types. */
    golden("param { w : spars_vector[3] }\n",
           "m.drift:1:13: error: expected a type (real, int, vector[n], "
           "matrix[r, c], sparse_vector[n], simplex[K], ... or array[n] "
           "...), found 'spars_vector'\n"
           "    1 | param { w : spars_vector[3] }\n"
           "      |             ^~~~~~~~~~~~\n");
}

/* vector * vector is refused as Stan refuses it (it once meant the
 * elementwise product, which turned a linear predictor into a vector and
 * a scalar outcome into one term per element); .* and ./ are the
 * elementwise operators. */
static void test_vector_product(void **state)
{
    (void)state;
    parses("rows { x : vector[D]  y : int }\n"
           "param { b : vector[D]  a : array[2] real }\n"
           "datum { y ~ poisson_log(dot(x, b))  target += sum(x .* b)\n"
           "        target += sum(x ./ exp(b)) + sum(2 * b) + sum(b * 2) }\n");
    golden("rows { x : vector[D]  y : int }\n"
           "param { beta : vector[D]  a : array[2] real }\n"
           "datum { y ~ poisson_log(x * beta)\n"
           "        target += sum(a * a) }\n",
           "m.drift:3:25: error: vector[D] * vector[D] is not defined "
           "(vectors are columns): write dot(a, b) for the inner product, "
           "or a .* b for the elementwise product\n"
           "    3 | datum { y ~ poisson_log(x * beta)\n"
           "      |                         ^~~~~~~~\n"
           "m.drift:4:23: error: array[2] real * array[2] real is not "
           "defined: '*' does not apply to arrays; use .* for elementwise "
           "products\n"
           "    4 |         target += sum(a * a) }\n"
           "      |                       ^~~~~\n");
}

/* The structured types: vectors and matrices with Stan's constraints. */
static void test_structured_types(void **state)
{
    (void)state;
    parses("data  { K : int  a : simplex[K] }\n"
           "param { th : simplex[K]  c : ordered[K]  p : positive_ordered[3]\n"
           "        L : cholesky_factor_corr[K]  F : cholesky_factor_cov[4, 2]\n"
           "        G : cholesky_factor_cov[K]  S : cov_matrix[K]\n"
           "        R : corr_matrix[K]  ths : array[2] simplex[K] }\n"
           "prior { target += dot(th, c) + sum(L * F) + sum(S * R * th)\n"
           "        target += sum(G) + dot(ths[1], a) + sum(p) }\n");
    golden("param { a : simplex<lower=0>[3]  F : cholesky_factor_cov[2, 3]\n"
           "        G : cholesky_factor_cov[2, 3, 4] }\n"
           "prior { target += sum(F) + dot(a, a) }\n",
           "m.drift:1:20: error: expected '[', found '<'\n"
           "    1 | param { a : simplex<lower=0>[3]  F : "
           "cholesky_factor_cov[2, 3]\n"
           "      |                    ^\n"
           "m.drift:2:33: error: cholesky_factor_cov takes one size [K] or two "
           "[M, N]\n"
           "    2 |         G : cholesky_factor_cov[2, 3, 4] }\n"
           "      |                                 ^~~~~~~\n");
    golden("param { F : cholesky_factor_cov[2, 3] }\n"
           "prior { target += sum(F) }\n",
           "m.drift:1:13: error: 'F' is cholesky_factor_cov[2, 3]: a Cholesky "
           "factor needs at least as many rows as columns\n"
           "    1 | param { F : cholesky_factor_cov[2, 3] }\n"
           "      |             ^~~~~~~~~~~~~~~~~~~~~~~~~\n");
}

/* Densities as expressions, conditionals, comparisons, and the shapes
 * of the multivariate distributions. */
static void test_expressions_16(void **state)
{
    (void)state;
    parses("rows  { y : real  k : int  v : vector[3] }\n"
           "param { mu : real  s : real<lower=0>  L : cholesky_factor_corr[3]\n"
           "        th : simplex[3] }\n"
           "prior { L ~ lkj_corr_cholesky(2)  th ~ dirichlet(rep_vector(1, 3)) }\n"
           "datum { target += normal_lpdf(y | mu, s) + poisson_lpmf(k | 3)\n"
           "        target += y > 0 && k != 2 || !(mu <= 1) ? mu : -mu\n"
           "        target += k == 1 ? 0 : k == 2 ? 1 : 2\n"
           "        v ~ multi_normal_cholesky(rep_vector(mu, 3), L)\n"
           "        target += categorical_lpmf(k | th) + rows(v)\n"
           "        mu ~ std_normal()  target += std_normal_lpdf(y) + pi() }\n");
    golden("rows  { y : real  k : int  v : vector[3] }\n"
           "param { mu : real  s : real<lower=0> }\n"
           "datum { target += normal_lpdf(y, mu, s) + normal_lpmf(y | mu, s)\n"
           "        target += poisson_lpdf(k | mu) + normals_lpdf(y | mu, s)\n"
           "        target += exp(y | mu) }\n",
           "m.drift:3:19: error: write normal_lpdf(y | ...): a density's "
           "outcome is separated from its arguments by '|'\n"
           "    3 | datum { target += normal_lpdf(y, mu, s) + "
           "normal_lpmf(y | mu, s)\n"
           "      |                   ^~~~~~~~~~~\n"
           "m.drift:3:43: error: normal is continuous: write normal_lpdf\n"
           "    3 | datum { target += normal_lpdf(y, mu, s) + "
           "normal_lpmf(y | mu, s)\n"
           "      |                                           ^~~~~~~~~~~\n"
           "m.drift:4:19: error: poisson is discrete: write poisson_lpmf\n"
           "    4 |         target += poisson_lpdf(k | mu) + "
           "normals_lpdf(y | mu, s)\n"
           "      |                   ^~~~~~~~~~~~\n"
           "m.drift:4:42: error: unknown distribution 'normals' in "
           "'normals_lpdf' (did you mean 'normal_lpdf'?)\n"
           "    4 |         target += poisson_lpdf(k | mu) + "
           "normals_lpdf(y | mu, s)\n"
           "      |                                          ^~~~~~~~~~~~\n"
           "m.drift:5:19: error: '|' separates a density's outcome from its "
           "arguments, as in normal_lpdf(y | mu, sigma); 'exp' is not a "
           "density\n"
           "    5 |         target += exp(y | mu) }\n"
           "      |                   ^~~\n");
    golden("rows  { y : real  v : vector[3] }\n"
           "param { mu : vector[3]  s : real<lower=0>  S : matrix[2, 2] }\n"
           "datum { target += y > mu ? 1 : 0\n"
           "        target += y ? 1 : 0\n"
           "        target += y > 0 ? mu : s\n"
           "        v ~ multi_normal(mu, S)\n"
           "        target += normal_lpdf(v | mu) }\n",
           "m.drift:3:19: error: '>' takes scalars (int or real), given real "
           "and vector[3]\n"
           "    3 | datum { target += y > mu ? 1 : 0\n"
           "      |                   ^~~~~~\n"
           "m.drift:4:19: error: the condition of '? :' must be an int (a "
           "comparison, say), given real\n"
           "    4 |         target += y ? 1 : 0\n"
           "      |                   ^\n"
           "m.drift:5:19: error: the two branches of '? :' have different "
           "shapes: vector[3] and real\n"
           "    5 |         target += y > 0 ? mu : s\n"
           "      |                   ^~~~~~~~~~~~~~\n"
           "m.drift:6:30: error: Sigma of multi_normal must be a square "
           "matrix of the outcome's size, given matrix[2, 2] for vector[3]\n"
           "    6 |         v ~ multi_normal(mu, S)\n"
           "      |                              ^\n"
           "m.drift:7:19: error: distribution 'normal' takes 2 arguments (mu, "
           "sigma), given 1\n"
           "    7 |         target += normal_lpdf(v | mu) }\n"
           "      |                   ^~~~~~~~~~~\n");
}

/* derived and generated blocks: what each may hold and see. */
static void test_derived_generated_blocks(void **state)
{
    (void)state;
    parses("rows  { y : real  x : real }\n"
           "param { a : real  s : real<lower=0> }\n"
           "derived { mu = 2 * a  v = mu + s }\n"
           "prior { mu ~ normal(0, 1)  target += -v }\n"
           "datum { y ~ normal(mu * x, s) }\n"
           "generated { ll = normal_lpdf(y | mu * x, s)\n"
           "            yr = normal_rng(mu * x, s)  k = poisson_rng(exp(v)) }\n");
    golden("rows  { y : real }\n"
           "param { a : real }\n"
           "derived { b = a * y  a ~ normal(0, 1)  c = normal_rng(a, 1) }\n"
           "prior { target += -a * a  z = normal_rng(0, 1) }\n"
           "generated { q = bad_rng(1)  b = 1  target += a }\n",
           "m.drift:3:19: error: 'y' is a rows variable (one value per datum): "
           "it can only be used in the datum and generated blocks\n"
           "    3 | derived { b = a * y  a ~ normal(0, 1)  c = normal_rng(a, 1) "
           "}\n"
           "      |                   ^\n"
           "m.drift:3:22: error: the derived block holds named values (name = "
           "expression); '~' belongs in prior or datum\n"
           "    3 | derived { b = a * y  a ~ normal(0, 1)  c = normal_rng(a, 1) "
           "}\n"
           "      |                      ^~~~~~~~~~~~~~~~\n"
           "m.drift:3:44: error: normal_rng draws at random: it belongs in the "
           "generated block (the derived block is part of the density)\n"
           "    3 | derived { b = a * y  a ~ normal(0, 1)  c = normal_rng(a, 1) "
           "}\n"
           "      |                                            ^~~~~~~~~~\n"
           "m.drift:4:31: error: normal_rng draws at random: it belongs in the "
           "generated block (the prior block is part of the density)\n"
           "    4 | prior { target += -a * a  z = normal_rng(0, 1) }\n"
           "      |                               ^~~~~~~~~~\n"
           "m.drift:5:17: error: unknown distribution 'bad' in 'bad_rng'\n"
           "    5 | generated { q = bad_rng(1)  b = 1  target += a }\n"
           "      |                 ^~~~~~~\n"
           "m.drift:5:29: error: 'b' is already declared; a local needs a new "
           "name\n"
           "    5 | generated { q = bad_rng(1)  b = 1  target += a }\n"
           "      |                             ^\n"
           "m.drift:3:11: note: 'b' is declared here\n"
           "    3 | derived { b = a * y  a ~ normal(0, 1)  c = normal_rng(a, 1) "
           "}\n"
           "      |           ^\n"
           "m.drift:5:36: error: the generated block holds named values (name "
           "= expression); 'target +=' belongs in prior or datum\n"
           "    5 | generated { q = bad_rng(1)  b = 1  target += a }\n"
           "      |                                    ^~~~~~~~~~~\n");
}

/* The functions block: definitions in both forms, calls from every
 * block, user densities after '~'; recursion, free names and wrong
 * types refused where they are written. */
static void test_functions(void **state)
{
    (void)state;
    parses("functions {\n"
           "  sq(x : real) : real = x * x\n"
           "  lin(a : real, v : vector, M : matrix) : vector {\n"
           "    t = sq(a)\n"
           "    return t * v + M * v;\n"
           "  }\n"
           "  second(z : array[] real, k : int) : real = z[2] * k\n"
           "  pairs(z : array[,] real) : real = z[1, 2]\n"
           "  half_lpdf(y : real, s : real) : real = normal_lpdf(y | 0, s)\n"
           "  cnt_lpmf(k : int, l : real) : real = poisson_lpmf(k | l)\n"
           "}\n"
           "data  { zs : array[3] real  zz : array[2, 2] real  M : matrix[2, 2] }\n"
           "rows  { y : real  k : int }\n"
           "param { a : real<lower=0>  v : vector[2] }\n"
           "derived { w = lin(a, v, M) }\n"
           "prior { a ~ half(second(zs, 2))  v ~ normal(0, pairs(zz)) }\n"
           "datum { y ~ normal(sum(w), 1)  k ~ cnt(sq(a))\n"
           "        target += half_lpdf(y | a) + cnt_lupmf(k | a) }\n"
           "generated { r = normal_rng(0, a)  s = sq(r) }\n");
    golden("functions {\n"
           "  f(x : real) : real = 2 * g(x)\n"
           "  g(x : real) : real {\n"
           "    h = f(x) + 1\n"
           "    return h\n"
           "  }\n"
           "  r(n : real) : real = n > 0 ? r(n - 1) : 0\n"
           "}\n"
           "param { a : real }\n"
           "prior { a ~ normal(f(1), 1) }\n",
           "m.drift:4:9: error: 'f' calls itself through other functions (f "
           "-> g -> f): recursive functions are not supported (drift inlines "
           "every call)\n"
           "    4 |     h = f(x) + 1\n"
           "      |         ^~~~\n"
           "m.drift:7:32: error: 'r' calls itself: recursive functions are not "
           "supported (drift inlines every call)\n"
           "    7 |   r(n : real) : real = n > 0 ? r(n - 1) : 0\n"
           "      |                                ^~~~~~~~\n");
    golden("functions {\n"
           "  f(x : real, x : vector) : real = x + w\n"
           "  normal_lpdf(y : real) : real = y\n"
           "  g() : vector {\n"
           "    a ~ normal(0, 1)\n"
           "    return 1\n"
           "  }\n"
           "  bad_lpdf(y : real) : vector = y\n"
           "}\n"
           "param { a : real }\n"
           "prior { a ~ normal(0, 1) }\n",
           "m.drift:2:15: error: 'x' names two parameters of 'f'\n"
           "    2 |   f(x : real, x : vector) : real = x + w\n"
           "      |               ^\n"
           "m.drift:3:3: error: 'normal_lpdf' is one of drift's own functions "
           "or distributions: a function needs a new name\n"
           "    3 |   normal_lpdf(y : real) : real = y\n"
           "      |   ^~~~~~~~~~~\n"
           "m.drift:5:5: error: a function's body holds named values (name = "
           "expression) and ends in return; '~' belongs in prior or datum\n"
           "    5 |     a ~ normal(0, 1)\n"
           "      |     ^~~~~~~~~~~~~~~~\n"
           "m.drift:8:24: error: the density 'bad_lpdf' returns a log density: "
           "its type is real\n"
           "    8 |   bad_lpdf(y : real) : vector = y\n"
           "      |                        ^~~~~~\n"
           "m.drift:2:40: error: 'w' is not a parameter or local of 'f': a "
           "function sees only its arguments (pass 'w' in)\n"
           "    2 |   f(x : real, x : vector) : real = x + w\n"
           "      |                                        ^\n");
    golden("functions {\n"
           "  f(x : vector) : real = sum(x)\n"
           "  g(x : real) : vector = x\n"
           "}\n"
           "param { a : real }\n"
           "prior { a ~ normal(f(a), 1)  target += g(a) + f(a, a) }\n",
           "m.drift:6:47: error: 'f' takes 1 argument, given 2\n"
           "    6 | prior { a ~ normal(f(a), 1)  target += g(a) + f(a, a) }\n"
           "      |                                               ^~~~~~~\n");
    golden("functions {\n"
           "  f(x : vector) : real = sum(x)\n"
           "  g(x : real) : vector = x\n"
           "}\n"
           "param { a : real }\n"
           "prior { a ~ normal(f(a), 1)  target += g(a) }\n",
           "m.drift:6:40: error: 'g' returns real, but is declared to return "
           "vector\n"
           "    6 | prior { a ~ normal(f(a), 1)  target += g(a) }\n"
           "      |                                        ^~~~\n"
           "m.drift:6:22: error: argument 'x' of 'f' is real, but 'f' declares "
           "it vector\n"
           "    6 | prior { a ~ normal(f(a), 1)  target += g(a) }\n"
           "      |                      ^\n");
}

/* '|' after the first argument of a function that is not a density. */
static void test_function_bar(void **state)
{
    (void)state;
    golden("functions { f(x : real, y : real) : real = x + y }\n"
           "param { a : real }\n"
           "prior { target += f(a | 1) }\n",
           "m.drift:3:19: error: '|' separates a density's outcome from its "
           "arguments, and 'f' is not a density (a name ending in _lpdf or "
           "_lpmf): separate its arguments with ','\n"
           "    3 | prior { target += f(a | 1) }\n"
           "      |                   ^~~~~~~~\n");
}

/* The transformed block: values of the data alone, visible from every
 * later block. */
static void test_transformed_block(void **state)
{
    (void)state;
    parses("data  { xs : vector[3] }\n"
           "rows  { y : real }\n"
           "param { a : real }\n"
           "transformed { m = mean(xs)  s = sd(xs)  c = (xs - m) / s }\n"
           "derived { d = a * s }\n"
           "prior { a ~ normal(m, s) }\n"
           "datum { y ~ normal(a + sum(c), 1) }\n"
           "generated { g = m + d }\n");
    golden("data { xs : vector[3] }\n"
           "rows { y : real }\n"
           "param { a : real }\n"
           "derived { d = 2 * a }\n"
           "transformed { m = mean(xs)  u = y + d  v = a\n"
           "              z = normal_rng(0, 1)  target += m }\n"
           "prior { a ~ normal(m, 1) }\n",
           "m.drift:5:37: error: unknown name 'd'\n"
           "    5 | transformed { m = mean(xs)  u = y + d  v = a\n"
           "      |                                     ^\n"
           "m.drift:5:44: error: 'a' is a parameter: the transformed block "
           "holds values of the data alone, computed once (a value of the "
           "parameters belongs in derived)\n"
           "    5 | transformed { m = mean(xs)  u = y + d  v = a\n"
           "      |                                            ^\n"
           "m.drift:6:19: error: normal_rng draws at random: the transformed "
           "block is computed once from the data alone, without random draws "
           "(draw in the generated block, or pass the values in as data)\n"
           "    6 |               z = normal_rng(0, 1)  target += m }\n"
           "      |                   ^~~~~~~~~~\n"
           "m.drift:6:37: error: the transformed block holds named values (name "
           "= expression); 'target +=' belongs in prior or datum\n"
           "    6 |               z = normal_rng(0, 1)  target += m }\n"
           "      |                                     ^~~~~~~~~~~\n");
    /* Reductions over the rows: a per-row real or int, reduced. */
    parses("rows  { y : real  x : real  k : int }\n"
           "param { a : real }\n"
           "transformed { mx = mean(x)  sx = 2 * sd(log(x))  n1 = sum(k)\n"
           "              z = mean((x - mean(x)) / sd(x))  v = variance(x * k)\n"
           "              lo = min(x)  hi = max(x) }\n"
           "prior { a ~ normal(0, 1) }\n"
           "datum { y ~ normal(a * (x - mx) / sx, hi - lo) }\n");
    /* A value per row (it reads rows variables outside a reduction):
     * for datum and generated only. */
    parses("rows  { y : real  x : real  v : vector[2] }\n"
           "param { a : real }\n"
           "transformed { xc = x - mean(x)  e = exp(v)  m = mean(xc * xc) }\n"
           "prior { a ~ normal(m, 1) }\n"
           "datum { y ~ normal(a * xc + sum(e), 1) }\n"
           "generated { g = xc * a }\n");
    golden("rows  { x : real }\n"
           "param { a : real }\n"
           "transformed { xc = x - mean(x) }\n"
           "derived { d = a * xc }\n"
           "prior { a ~ normal(xc, 1) }\n",
           "m.drift:4:19: error: 'xc' is one value per row (it reads rows "
           "variables): it can only be used in the datum and generated "
           "blocks\n"
           "    4 | derived { d = a * xc }\n"
           "      |                   ^~\n"
           "m.drift:5:20: error: 'xc' is one value per row (it reads rows "
           "variables): it can only be used in the datum and generated "
           "blocks\n"
           "    5 | prior { a ~ normal(xc, 1) }\n"
           "      |                    ^~\n");
    golden("rows  { v : vector[2] }\n"
           "param { a : real }\n"
           "transformed { m = mean(v) }\n"
           "prior { a ~ normal(m, 1) }\n",
           "m.drift:3:24: error: mean over the rows takes one real or int per "
           "row, given vector[2] per row\n"
           "    3 | transformed { m = mean(v) }\n"
           "      |                        ^\n");
    /* Stan's two words are answered with drift's block. */
    golden("param { a : real }\ntransformed data { m = 1 }\n",
           "m.drift:2:13: error: expected '{', found 'data'; Stan's "
           "'transformed data' is drift's 'transformed { name = value }', "
           "Stan's 'transformed parameters' drift's 'derived'\n"
           "    2 | transformed data { m = 1 }\n"
           "      |             ^~~~\n");
}

/* Inlining copies bodies: calls of calls, and locals used twice, that
 * would multiply a model past a bound are refused at the call. */
static void test_function_limits(void **state)
{
    (void)state;
    char text[4096];
    size_t used = 0;
    used += (size_t)snprintf(text + used, sizeof text - used,
                             "functions {\n  f0(x : real) : real = x * 2\n");
    for (int k = 1; k < 40; k++)
        used += (size_t)snprintf(text + used, sizeof text - used,
                                 "  f%d(x : real) : real = f%d(x) + f%d(x)\n",
                                 k, k - 1, k - 1);
    snprintf(text + used, sizeof text - used,
             "}\nparam { a : real }\nprior { target += f39(a) }\n");
    front f;
    run_front(&f, text);
    assert_int_equal(f.errors, 1);
    assert_non_null(strstr(f.report, "error: inlining 'f"));
    free_front(&f);
    used = (size_t)snprintf(text, sizeof text,
                            "functions {\n  f(x : real) : real {\n"
                            "    h0 = x * 2\n");
    for (int k = 1; k < 40; k++)
        used += (size_t)snprintf(text + used, sizeof text - used,
                                 "    h%d = h%d + h%d\n", k, k - 1, k - 1);
    snprintf(text + used, sizeof text - used,
             "    return h39\n  }\n}\nparam { a : real }\n"
             "prior { target += f(a) }\n");
    run_front(&f, text);
    assert_int_equal(f.errors, 1);
    assert_non_null(strstr(f.report, "m.drift:47:19: error: inlining 'f' "
                                     "here makes the model larger than"));
    free_front(&f);
}

static void test_depth_limit(void **state)
{
    (void)state;
    /* Deep nesting is refused with a message, not a crash. */
    size_t n = 5000;
    char *text = malloc(n * 2 + 100);
    strcpy(text, "param { a : real } prior { target += ");
    size_t used = strlen(text);
    for (size_t k = 0; k < n; k++)
        text[used++] = '(';
    text[used++] = 'a';
    for (size_t k = 0; k < n; k++)
        text[used++] = ')';
    strcpy(text + used, " }\n");
    front f;
    run_front(&f, text);
    assert_true(f.errors > 0);
    assert_non_null(strstr(f.report, "nested too deeply"));
    free_front(&f);
    /* A long flat sum: the tree is deep though the parser's stack is not. */
    used = strlen("param { a : real } prior { target += ");
    strcpy(text, "param { a : real } prior { target += ");
    for (size_t k = 0; k < 1000; k++) {
        memcpy(text + used, "a+", 2);
        used += 2;
    }
    strcpy(text + used, "a }\n");
    run_front(&f, text);
    assert_true(f.errors > 0);
    assert_non_null(strstr(f.report, "expression nested more than 400 levels"));
    free_front(&f);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accepts),
        cmocka_unit_test(test_syntax_errors),
        cmocka_unit_test(test_stan_spellings),
        cmocka_unit_test(test_scanner_errors),
        cmocka_unit_test(test_name_errors),
        cmocka_unit_test(test_type_errors),
        cmocka_unit_test(test_sparse_types),
        cmocka_unit_test(test_vector_product),
        cmocka_unit_test(test_structured_types),
        cmocka_unit_test(test_expressions_16),
        cmocka_unit_test(test_derived_generated_blocks),
        cmocka_unit_test(test_functions),
        cmocka_unit_test(test_function_bar),
        cmocka_unit_test(test_transformed_block),
        cmocka_unit_test(test_function_limits),
        cmocka_unit_test(test_depth_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
