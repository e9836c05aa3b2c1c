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
           "datum, derived or generated), found 'paramm' (did you mean "
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
    golden("param { mu : real }\nprior {\n  for (j in 1:3) mu ~ normal(0, 1)"
           "\n}\n",
           "m.drift:3:10: error: expected ',', '(' or ')', found 'in'; drift's "
           "language has no for loops: write the statement over whole "
           "vectors (distributions and arithmetic apply elementwise), or run "
           "the Stan program from a .stan file\n"
           "    3 |   for (j in 1:3) mu ~ normal(0, 1)\n"
           "      |          ^~\n");
    golden("parameters { real mu; }\n",
           "m.drift:1:1: error: expected a block (data, rows, param, prior, "
           "datum, derived or generated), found 'parameters'; 'parameters' is "
           "a Stan block: a Stan program runs as it is from a file named "
           "NAME.stan, and drift's own blocks are data, rows, param, prior, "
           "datum, derived and generated\n"
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
           "a param block, e.g. param { w : vector[D] }\n"
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
        cmocka_unit_test(test_depth_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
