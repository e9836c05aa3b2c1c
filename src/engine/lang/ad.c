/* ad.c: the kernels of the likelihood graph (forward values, reverse
 * adjoints, forward tangents), each over a whole batch, and the passes
 * that run them (see ad.h).  Arrays are row-major with explicit row
 * strides; a stride of 0 marks a value shared by every row, so that one
 * kernel serves batched and shared operands, and adjoints accumulate
 * over rows simply by writing to the same place.  Not for building
 * graphs. */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <cblas.h>

#include "ad.h"
#include "base/lapack.h"
#include "base/msg.h"
#include "base/util.h"
#include "cdf.h"
#include "dist.h"
#include "kern.h"
#include "rand.h"
#include "transform.h"
#include "vmath.h"

/* Bound on the per-row adjoint memory of shared nodes (bytes): beyond
 * it, per-row gradients are computed in smaller sub-batches. */
#define PERROW_BYTES ((size_t)64 << 20)

/* Rows of a tile of the full passes in generalised linear form (see
 * glm_lik): at most GLM_TILE (a multiple of 8), as many as fit in
 * GLM_TILE_BYTES of row data (in the second-level cache when the
 * gradient reads them again), at least GLM_TILE_MIN, or GLM_TILE_MIN_TOP
 * when the interpreter evaluates the nodes above the linear predictor.
 * Measured on Covertype-shaped rows and on N = 10^4, d = 20: the larger
 * the tile, the less its fixed cost, up to 256 rows; tiles that fit the
 * first-level cache (16 KB) were 5 to 15% slower. */
#define GLM_TILE 256
#ifndef GLM_TILE_BYTES
#define GLM_TILE_BYTES 131072
#endif
#define GLM_TILE_MIN 16
#define GLM_TILE_MIN_TOP 64

struct drift_ad_ws {
    drift_ad_ctx c;
    size_t cap;
    size_t n_nodes;
    double **own_val, **own_adj, **own_tan, **own_part, **own_adjpr;
    size_t pr_cap;              /* rows per sub-batch for per-row grads */
    int pr_ready;
    unsigned char *mark;
    double *glm_buf;            /* generalised linear form: 7 x GLM_TILE
                                   for the full passes */
};

#define NODE(c, id) (&(c)->g->nodes[(id)])

static inline size_t vrows(const drift_ad_ctx *c, const drift_gnode *n)
{
    return n->batched ? c->B : 1;
}

static inline size_t row_id(const drift_ad_ctx *c, size_t r)
{
    return c->rows ? c->rows[r] : c->first + r;
}

/* The sparse rows of node n when it is a sparse_vector rows variable,
 * else NULL. */
static inline const drift_sparse *sparse_rows(const drift_gnode *n)
{
    return n->op == DRIFT_G_ROWVAR && n->rb ? n->rb->sp : NULL;
}

/* out[r * ol] = x_i . v_r over row i's non-zeros, for the batch's R rows
 * (v_r at v + r * vl: a dense operand's values or its tangents). */
static void sparse_dot_rows(const drift_ad_ctx *c, const drift_sparse *sp,
                            const double *v, size_t vl, size_t R, double *out,
                            size_t ol)
{
    drift_kern_sparse_dot_rows(R, c->rows, c->first, sp->row_ptr, sp->idx,
                               sp->val, v, vl, out, ol);
}

static int node_error(drift_ad_ctx *c, int id, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static int node_error(drift_ad_ctx *c, int id, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const drift_gnode *n = NODE(c, id);
    const char *file = c->g->src ? c->g->src->name : "model";
    drift_err_set(c->e, DRIFT_ENUMERIC, "%.200s:%d:%d: %s", file,
                  n->loc.first_line, n->loc.first_column, msg);
    return DRIFT_ENUMERIC;
}

/* ---- elementwise functions -------------------------------------------- */

/* exp, log1p, tanh and the logistic function come from vmath.c, one
 * element here as over whole blocks below: the same results either way. */
static inline double unary_f(int fn, double x)
{
    switch (fn) {
    case DRIFT_FN_EXP: return drift_vmath_exp1(x);
    case DRIFT_FN_LOG: return log(x);
    case DRIFT_FN_LOG1P: return drift_vmath_log1p1(x);
    case DRIFT_FN_EXPM1: return expm1(x);
    case DRIFT_FN_SQRT: return sqrt(x);
    case DRIFT_FN_SQUARE: return x * x;
    case DRIFT_FN_FABS: return fabs(x);
    case DRIFT_FN_TANH: return drift_vmath_tanh1(x);
    case DRIFT_FN_LOGISTIC: return drift_inv_logit(x);
    case DRIFT_FN_LOG1P_EXP: return drift_log1p_exp(x);
    case DRIFT_FN_RELU: return x > 0 ? x : 0;
    case DRIFT_FN_SIN: return sin(x);
    case DRIFT_FN_COS: return cos(x);
    case DRIFT_FN_LOG1M: return drift_vmath_log1p1(-x);
    case DRIFT_FN_LOG_INV_LOGIT: return -drift_log1p_exp(-x);
    case DRIFT_FN_LGAMMA: return drift_lgamma(x);
    case DRIFT_FN_PHI: return 0.5 * erfc(-x * M_SQRT1_2);
    case DRIFT_FN_PHI_APPROX:
        return drift_inv_logit(0.07056 * x * x * x + 1.5976 * x);
    case DRIFT_FN_LOGIT: return log(x) - log1p(-x);
    case DRIFT_FN_LOG1M_EXP:
        return x > -M_LN2 ? log(-expm1(x)) : log1p(-exp(x));
    case DRIFT_FN_LOG1M_INV_LOGIT: return -drift_log1p_exp(x);
    case DRIFT_FN_INV: return 1 / x;
    case DRIFT_FN_INV_SQRT: return 1 / sqrt(x);
    case DRIFT_FN_INV_SQUARE: return 1 / (x * x);
    case DRIFT_FN_LOG2: return log2(x);
    case DRIFT_FN_LOG10: return log10(x);
    case DRIFT_FN_EXP2: return exp2(x);
    case DRIFT_FN_CBRT: return cbrt(x);
    case DRIFT_FN_TAN: return tan(x);
    case DRIFT_FN_ASIN: return asin(x);
    case DRIFT_FN_ACOS: return acos(x);
    case DRIFT_FN_ATAN: return atan(x);
    case DRIFT_FN_SINH: return sinh(x);
    case DRIFT_FN_COSH: return cosh(x);
    case DRIFT_FN_ASINH: return asinh(x);
    case DRIFT_FN_ACOSH: return acosh(x);
    case DRIFT_FN_ATANH: return atanh(x);
    case DRIFT_FN_ERF: return erf(x);
    case DRIFT_FN_ERFC: return erfc(x);
    case DRIFT_FN_TGAMMA: return tgamma(x);
    case DRIFT_FN_INV_CLOGLOG: return -expm1(-exp(x));
    case DRIFT_FN_STEP: return x < 0 ? 0 : 1;
    case DRIFT_FN_FLOOR: return floor(x);
    case DRIFT_FN_CEIL: return ceil(x);
    case DRIFT_FN_ROUND: return round(x);
    case DRIFT_FN_TRUNC: return trunc(x);
    case DRIFT_FN_NOT: return x == 0;
    default: return NAN;
    }
}

/* dy/dx at x, with y = f(x). */
static inline double unary_d(int fn, double x, double y)
{
    switch (fn) {
    case DRIFT_FN_EXP: return y;
    case DRIFT_FN_LOG: return 1 / x;
    case DRIFT_FN_LOG1P: return 1 / (1 + x);
    case DRIFT_FN_EXPM1: return y + 1;
    case DRIFT_FN_SQRT: return 0.5 / y;
    case DRIFT_FN_SQUARE: return 2 * x;
    case DRIFT_FN_FABS: return (x > 0) - (x < 0);
    case DRIFT_FN_TANH: return 1 - y * y;
    case DRIFT_FN_LOGISTIC: return y * (1 - y);
    case DRIFT_FN_LOG1P_EXP: return drift_inv_logit(x);
    case DRIFT_FN_RELU: return x > 0;
    case DRIFT_FN_SIN: return cos(x);
    case DRIFT_FN_COS: return -sin(x);
    case DRIFT_FN_LOG1M: return -1 / (1 - x);
    case DRIFT_FN_LOG_INV_LOGIT: return drift_inv_logit(-x);
    case DRIFT_FN_LGAMMA: return drift_digamma(x);
    case DRIFT_FN_PHI: return exp(-0.5 * x * x) * 0.39894228040143267794;
    case DRIFT_FN_PHI_APPROX: return y * (1 - y) * (0.21168 * x * x + 1.5976);
    case DRIFT_FN_LOGIT: return 1 / (x * (1 - x));
    case DRIFT_FN_LOG1M_EXP: return -1 / expm1(-x);
    case DRIFT_FN_LOG1M_INV_LOGIT: return -drift_inv_logit(x);
    case DRIFT_FN_INV: return -1 / (x * x);
    case DRIFT_FN_INV_SQRT: return -0.5 * y / x;
    case DRIFT_FN_INV_SQUARE: return -2 * y / x;
    case DRIFT_FN_LOG2: return 1 / (x * M_LN2);
    case DRIFT_FN_LOG10: return 1 / (x * M_LN10);
    case DRIFT_FN_EXP2: return y * M_LN2;
    case DRIFT_FN_CBRT: return 1 / (3 * y * y);
    case DRIFT_FN_TAN: return 1 + y * y;
    case DRIFT_FN_ASIN: return 1 / sqrt(1 - x * x);
    case DRIFT_FN_ACOS: return -1 / sqrt(1 - x * x);
    case DRIFT_FN_ATAN: return 1 / (1 + x * x);
    case DRIFT_FN_SINH: return cosh(x);
    case DRIFT_FN_COSH: return sinh(x);
    case DRIFT_FN_ASINH: return 1 / sqrt(x * x + 1);
    case DRIFT_FN_ACOSH: return 1 / sqrt(x * x - 1);
    case DRIFT_FN_ATANH: return 1 / (1 - x * x);
    case DRIFT_FN_ERF: return 1.12837916709551257390 * exp(-x * x);
    case DRIFT_FN_ERFC: return -1.12837916709551257390 * exp(-x * x);
    case DRIFT_FN_TGAMMA: return y * drift_digamma(x);
    case DRIFT_FN_INV_CLOGLOG: return exp(x - exp(x));
    case DRIFT_FN_STEP: case DRIFT_FN_FLOOR: case DRIFT_FN_CEIL:
    case DRIFT_FN_ROUND: case DRIFT_FN_TRUNC: case DRIFT_FN_NOT: return 0;
    default: return NAN;
    }
}

/* Constraint transforms, as unary functions of u with bounds a, b. */
static inline double trans_f(int op, double u, double a, double b)
{
    switch (op) {
    case DRIFT_G_LOWER: return a + exp(u);
    case DRIFT_G_UPPER: return b - exp(u);
    default: return a + (b - a) * drift_inv_logit(u);
    }
}

static inline double trans_d(int op, double u, double a, double b)
{
    switch (op) {
    case DRIFT_G_LOWER: return exp(u);
    case DRIFT_G_UPPER: return -exp(u);
    default: {
        double s = drift_inv_logit(u);
        return (b - a) * s * (1 - s);
    }
    }
}

/* log |dx/du| and its derivative in u. */
static inline double logjac_f(int op, double u, double a, double b)
{
    if (op == DRIFT_G_LOWER || op == DRIFT_G_UPPER)
        return u;
    return log(b - a) - drift_log1p_exp(-u) - drift_log1p_exp(u);
}

static inline double logjac_d(int op, double u)
{
    if (op == DRIFT_G_LOWER || op == DRIFT_G_UPPER)
        return 1;
    return 1 - 2 * drift_inv_logit(u);
}

static inline double binary_f(int op, double a, double b)
{
    switch (op) {
    case DRIFT_G_ADD: return a + b;
    case DRIFT_G_SUB: return a - b;
    case DRIFT_G_MUL: return a * b;
    case DRIFT_G_DIV: return a / b;
    case DRIFT_G_POW: return pow(a, b);
    case DRIFT_G_FMIN: return fmin(a, b);
    case DRIFT_G_FMAX: return fmax(a, b);
    case DRIFT_G_LDE:
        return b == -INFINITY ? a : a + log(-expm1(b - a));
    case DRIFT_G_LT: return a < b;
    case DRIFT_G_LE: return a <= b;
    case DRIFT_G_GT: return a > b;
    case DRIFT_G_GE: return a >= b;
    case DRIFT_G_EQ: return a == b;
    case DRIFT_G_NE: return a != b;
    case DRIFT_G_AND: return a != 0 && b != 0;
    case DRIFT_G_OR: return a != 0 || b != 0;
    default: {
        double m = a > b ? a : b;
        if (m == -INFINITY)
            return -INFINITY;
        return m + log1p(exp(-fabs(a - b)));
    }
    }
}

/* The functions with a loop of their own in unary1_rows and unary1_adj
 * (the others share one loop through unary_f's and unary_d's switch). */
#define UNARY1_CASES(M)                                                      \
    case DRIFT_FN_LOG: M(DRIFT_FN_LOG);                                       \
    case DRIFT_FN_SQUARE: M(DRIFT_FN_SQUARE);                                 \
    case DRIFT_FN_SQRT: M(DRIFT_FN_SQRT);                                     \
    case DRIFT_FN_LOG1M: M(DRIFT_FN_LOG1M);                                   \
    case DRIFT_FN_INV: M(DRIFT_FN_INV);                                       \
    case DRIFT_FN_FABS: M(DRIFT_FN_FABS);                                     \
    case DRIFT_FN_LOG1P_EXP: M(DRIFT_FN_LOG1P_EXP);                           \
    case DRIFT_FN_LOG_INV_LOGIT: M(DRIFT_FN_LOG_INV_LOGIT);                   \
    case DRIFT_FN_LOG1M_INV_LOGIT: M(DRIFT_FN_LOG1M_INV_LOGIT);               \
    case DRIFT_FN_EXP: M(DRIFT_FN_EXP);                                       \
    case DRIFT_FN_LOGISTIC: M(DRIFT_FN_LOGISTIC);                             \
    case DRIFT_FN_LGAMMA: M(DRIFT_FN_LGAMMA)

/* o[r * ol] = f(X[r * xl]) for R rows of one value, f = unary_f(fn): a
 * loop per common function, unary_f's switch folded in it. */
static void unary1_rows(int fn, size_t R, const double *X, size_t xl,
                        double *o, size_t ol)
{
#define UNARY1_ROWS(FN)                                                      \
    for (size_t r = 0; r < R; r++)                                            \
        o[r * ol] = unary_f(FN, X[r * xl]);                                   \
    return
    switch (fn) {
        UNARY1_CASES(UNARY1_ROWS);
    default: UNARY1_ROWS(fn);
    }
#undef UNARY1_ROWS
}

/* GA[r * gal] += G[r * gl] f'(X[r * xl]) for R rows of one value (O the
 * values f(X)), rows in order, so that rows sharing one adjoint (gal 0)
 * add up as the general loop adds them. */
static void unary1_adj(int fn, size_t R, const double *X, size_t xl,
                       const double *O, size_t ol, const double *G,
                       size_t gl, double *GA, size_t gal)
{
#define UNARY1_ADJ(FN)                                                       \
    for (size_t r = 0; r < R; r++)                                            \
        GA[r * gal] += G[r * gl] * unary_d(FN, X[r * xl], O[r * ol]);         \
    return
    switch (fn) {
        UNARY1_CASES(UNARY1_ADJ);
    default: UNARY1_ADJ(fn);
    }
#undef UNARY1_ADJ
}

/* o[r * ol] = X[r * xl] op Y[r * yl] for R rows of one value: a loop per
 * operator, in which binary_f's switch folds to the operator's
 * arithmetic (the same, element by element, as binary_f's). */
static void binary1_rows(int op, size_t R, const double *X, size_t xl,
                         const double *Y, size_t yl, double *o, size_t ol)
{
#define BINARY1_ROWS(OP)                                                     \
    for (size_t r = 0; r < R; r++)                                            \
        o[r * ol] = binary_f(OP, X[r * xl], Y[r * yl]);                       \
    return
    switch (op) {
    case DRIFT_G_ADD: BINARY1_ROWS(DRIFT_G_ADD);
    case DRIFT_G_SUB: BINARY1_ROWS(DRIFT_G_SUB);
    case DRIFT_G_MUL: BINARY1_ROWS(DRIFT_G_MUL);
    case DRIFT_G_DIV: BINARY1_ROWS(DRIFT_G_DIV);
    case DRIFT_G_LSE2: BINARY1_ROWS(DRIFT_G_LSE2);
    default: BINARY1_ROWS(op);
    }
#undef BINARY1_ROWS
}

/* out = x op y over sz elements for the four arithmetic operators when
 * one side is a scalar broadcast (its stride sx or sy 0): loops the
 * compiler vectorises, where binary_f goes through a switch an element.
 * Returns 0, writing nothing, for any other case. */
static int binary_scalar_f(int op, const double *x, size_t sx,
                           const double *y, size_t sy, double *out, size_t sz)
{
    if (sx == sy)
        return 0;
    double s = sx ? y[0] : x[0];
    const double *v = sx ? x : y;
    switch (op) {
    case DRIFT_G_ADD:
        for (size_t j = 0; j < sz; j++)
            out[j] = v[j] + s;
        return 1;
    case DRIFT_G_MUL:
        for (size_t j = 0; j < sz; j++)
            out[j] = v[j] * s;
        return 1;
    case DRIFT_G_SUB:
        if (sx)
            for (size_t j = 0; j < sz; j++)
                out[j] = v[j] - s;
        else
            for (size_t j = 0; j < sz; j++)
                out[j] = s - v[j];
        return 1;
    case DRIFT_G_DIV:
        if (sx)
            for (size_t j = 0; j < sz; j++)
                out[j] = v[j] / s;
        else
            for (size_t j = 0; j < sz; j++)
                out[j] = s / v[j];
        return 1;
    default:
        return 0;
    }
}

/* Partial derivatives in a and b, with y = f(a, b). */
static inline void binary_d(int op, double a, double b, double y, double *da,
                            double *db)
{
    switch (op) {
    case DRIFT_G_ADD: *da = 1; *db = 1; return;
    case DRIFT_G_SUB: *da = 1; *db = -1; return;
    case DRIFT_G_MUL: *da = b; *db = a; return;
    case DRIFT_G_DIV: *da = 1 / b; *db = -a / (b * b); return;
    case DRIFT_G_POW:
        *da = b == 0 ? 0 : b * pow(a, b - 1);
        *db = a > 0 ? y * log(a) : 0;
        return;
    case DRIFT_G_FMIN: *da = a <= b || isnan(b); *db = 1 - *da; return;
    case DRIFT_G_FMAX: *da = a >= b || isnan(b); *db = 1 - *da; return;
    case DRIFT_G_LDE:
        *da = b == -INFINITY ? 1 : -1 / expm1(b - a);
        *db = 1 - *da;
        return;
    case DRIFT_G_LT: case DRIFT_G_LE: case DRIFT_G_GT: case DRIFT_G_GE:
    case DRIFT_G_EQ: case DRIFT_G_NE: case DRIFT_G_AND: case DRIFT_G_OR:
        *da = *db = 0;
        return;
    default:
        *da = exp(a - y);
        *db = exp(b - y);
        return;
    }
}

/* ---- forward kernels ---------------------------------------------------------- */

static int fwd_dist(drift_ad_ctx *c, int id)
{
    const drift_gnode *n = NODE(c, id);
    size_t R = vrows(c, n), m = n->m;
    const double *in[DRIFT_DIST_MAX_ARGS + 1];
    size_t ld[DRIFT_DIST_MAX_ARGS + 1], st[DRIFT_DIST_MAX_ARGS + 1];
    double *part[DRIFT_DIST_MAX_ARGS + 1];
    size_t prow = n->batched ? c->B : 1;
    for (int k = 0; k < n->n_in; k++) {
        int a = drift_gin(n, k);
        in[k] = c->val[a];
        ld[k] = c->vld[a];
        st[k] = NODE(c, a)->sz == m ? 1 : 0;
        part[k] = c->need_part && NODE(c, a)->param && c->part
                      ? c->part[id] + (size_t)k * prow * m
                      : NULL;
    }
    size_t bad_r = 0, bad_j = 0;
    int rc = n->tail ? drift_cdf_rows((drift_dist_id)n->fn,
                                      (drift_cdf_tail)n->tail, R, m, n->n_in,
                                      in, ld, st, c->val[id],
                                      c->need_part ? part : NULL, &bad_r,
                                      &bad_j)
                     : drift_dist_rows((drift_dist_id)n->fn, R, m, n->n_in,
                                       in, ld, st, c->val[id],
                                       c->need_part ? part : NULL, &bad_r,
                                       &bad_j);
    if (rc == 0 || n->guard)
        return DRIFT_OK; /* in a branch of '? :': maybe not taken */
    double a[DRIFT_DIST_MAX_ARGS + 1];
    for (int k = 0; k < n->n_in; k++)
        a[k] = in[k][bad_r * ld[k] + bad_j * st[k]];
    char why[200];
    double lc = n->tail ? drift_cdf_log((drift_dist_id)n->fn,
                                        (drift_cdf_tail)n->tail, a, NULL)
                        : NAN;
    if (n->tail && !isnan(lc))
        snprintf(why, sizeof why, "the log %scdf is %g at outcome %g",
                 n->tail == DRIFT_CDF_UPPER ? "complementary " : "", lc,
                 a[0]);
    else
        drift_dist_explain((drift_dist_id)n->fn, a, why, sizeof why);
    char where[200] = "", of[140] = "";
    if (c->g->mapped_source)
        snprintf(of, sizeof of, " of %.120s", c->g->mapped_source);
    if (n->batched && m > 1)
        snprintf(where, sizeof where, " (data row %zu%s, element %zu)",
                 row_id(c, bad_r) + 1, of, bad_j + 1);
    else if (n->batched)
        snprintf(where, sizeof where, " (data row %zu%s)",
                 row_id(c, bad_r) + 1, of);
    else if (m > 1)
        snprintf(where, sizeof where, " (element %zu)", bad_j + 1);
    return node_error(c, id, "%s%s: %s%s", drift_dists[n->fn].name,
                      !n->tail ? ""
                      : n->tail == DRIFT_CDF_UPPER ? "_lccdf"
                                                   : "_lcdf",
                      why, where);
}

/* ordered_logistic / ordered_probit over a block: per row the sum over
 * the m elements, the partials (in eta, the lower and the upper
 * cutpoint) in part, three per element. */
static int fwd_ordered(drift_ad_ctx *c, int id)
{
    const drift_gnode *n = NODE(c, id);
    int y = drift_gin(n, 0), eta = drift_gin(n, 1), cp = drift_gin(n, 2);
    size_t R = vrows(c, n), m = n->m, K1 = NODE(c, cp)->sz;
    size_t sy = NODE(c, y)->sz == m ? 1 : 0;
    size_t se = NODE(c, eta)->sz == m ? 1 : 0;
    double *part = c->part ? c->part[id] : NULL;
    for (size_t r = 0; r < R; r++) {
        const double *cv = c->val[cp] + r * c->vld[cp];
        double s = 0;
        for (size_t j = 0; j < m; j++) {
            double yv = c->val[y][r * c->vld[y] + j * sy];
            double ev = c->val[eta][r * c->vld[eta] + j * se];
            double *d = part ? part + (r * m + j) * 3 : NULL;
            double lp = drift_dist_ordered(n->fn, yv, ev, cv, K1, d);
            s += lp;
            if (!isfinite(lp) && !n->guard) {
                char where[80] = "";
                if (n->batched)
                    snprintf(where, sizeof where, " (data row %zu%s",
                             row_id(c, r) + 1, m > 1 ? ", " : ")");
                if (m > 1)
                    snprintf(where + strlen(where),
                             sizeof where - strlen(where), "%selement %zu)",
                             n->batched ? "" : " (", j + 1);
                const char *name = n->fn ? "ordered_probit"
                                         : "ordered_logistic";
                if (!(yv >= 1 && yv <= (double)K1 + 1 && yv == floor(yv)))
                    return node_error(c, id,
                                      "%s: the outcome must be a category "
                                      "from 1 to K = %zu, got %g%s",
                                      name, K1 + 1, yv, where);
                return node_error(c, id,
                                  "%s: the log probability is %g (eta %g; "
                                  "are the cutpoints increasing?)%s",
                                  name, lp, ev, where);
            }
        }
        c->val[id][r * c->vld[id]] = s;
    }
    return DRIFT_OK;
}

static int fwd_catlogit(drift_ad_ctx *c, int id)
{
    const drift_gnode *n = NODE(c, id);
    int y = drift_gin(n, 0), eta = drift_gin(n, 1);
    size_t R = vrows(c, n), K = NODE(c, eta)->sz, bad = 0;
    double *soft = c->part ? c->part[id] : NULL;
    if (drift_dist_catlogit(R, K, c->val[y], c->vld[y], c->val[eta],
                            c->vld[eta], c->val[id], soft, &bad) == 0 ||
        n->guard)
        return DRIFT_OK;
    double yv = c->val[y][bad * c->vld[y]];
    char where[64] = "";
    if (n->batched)
        snprintf(where, sizeof where, " (data row %zu)", row_id(c, bad) + 1);
    if (!(yv >= 1 && yv <= (double)K && yv == floor(yv)))
        return node_error(c, id,
                          "categorical_logit: the outcome must be a "
                          "category from 1 to %zu, got %g%s",
                          K, yv, where);
    return node_error(c, id,
                      "categorical_logit: the log-odds are not finite%s",
                      where);
}

/* ---- structured types ------------------------------------------------------- */

/* A structured type's transform node: its free and constrained sizes
 * per element, and the scratch its kernels share (part: x, tx, work). */
static void xform_sizes(const drift_gnode *n, size_t *fs, size_t *os)
{
    drift_constraint con = (drift_constraint)n->fn;
    *fs = drift_transform_free_size(con, n->m, n->n);
    *os = drift_transform_size(con, n->m, n->n);
}

static size_t xform_part_size(const drift_gnode *n)
{
    size_t fs, os;
    xform_sizes(n, &fs, &os);
    return 2 * os + drift_transform_work((drift_constraint)n->fn, n->m, n->n);
}

/* Values (XFORM) or summed log-Jacobians (XFORM_LJ); with tangents when
 * tan is set. */
static void xform_forward(drift_ad_ctx *c, int id, int tangent)
{
    const drift_gnode *n = NODE(c, id);
    drift_constraint con = (drift_constraint)n->fn;
    int a = drift_gin(n, 0);
    size_t fs, os, R = vrows(c, n);
    xform_sizes(n, &fs, &os);
    double *xs = c->part[id], *txs = xs + os, *work = xs + 2 * os;
    for (size_t r = 0; r < R; r++) {
        const double *u = c->val[a] + r * c->vld[a];
        const double *tu = tangent ? c->tan[a] + r * c->tld[a] : NULL;
        double lj = 0, tlj = 0;
        for (size_t e = 0; e < n->k; e++) {
            double *x = n->op == DRIFT_G_XFORM ? c->val[id] + r * c->vld[id] +
                                                     e * os
                                               : xs;
            double *tx = n->op == DRIFT_G_XFORM && tangent
                             ? c->tan[id] + r * c->tld[id] + e * os
                             : txs;
            double t = 0;
            lj += drift_transform_forward(con, n->m, n->n, u + e * fs, x,
                                          tu ? tu + e * fs : NULL, tx, &t,
                                          work);
            tlj += t;
        }
        if (n->op == DRIFT_G_XFORM_LJ) {
            if (tangent)
                c->tan[id][r * c->tld[id]] = tlj;
            else
                c->val[id][r * c->vld[id]] = lj;
        }
    }
}

/* ---- linear algebra ------------------------------------------------------------- */

/* Rows of a diagonal block in the blocked reverse pass of the Cholesky
 * factorisation of an m x m matrix: the off-diagonal work goes through
 * dgemm on panels this wide, the diagonal block through the unblocked
 * formula.  32 below m = 512 and 64 from there were fastest on one
 * core (reverse pass alone, block sizes 16..128 at m = 100..1000: at
 * m = 400, 1.32 ms at 32 and 1.57 at 64; at m = 1000, 21.7 and 19.6). */
#define CHOL_NB_MAX 64

static size_t chol_nb(size_t m)
{
    return m < 512 ? 32 : CHOL_NB_MAX;
}

/* Side of the tiles the symmetry check reads a matrix in. */
#define CHOL_TILE 32

/* Below this size the factor comes from chol_small's loops, which beat
 * dpotrf's call (0.01 against 0.19 us at m = 3, 0.7 against 1.6 us at
 * m = 16); the two are about even at 32, and dpotrf ahead from 48. */
#define CHOL_SMALL 32

/* The factor L (lower, zeros above) of the m x m A's lower triangle:
 * 0, or 2 when A is not positive definite. */
static int chol_small(const double *A, size_t m, double *L)
{
    return drift_cholesky_small(m, A, L) ? 2 : 0;
}

/* The Cholesky factor L (lower, zeros above) of the m x m matrix A,
 * whose lower triangle is read.  Returns 0, 1 when A is not symmetric,
 * 2 when it is not positive definite (or not finite). */
static int chol_factor(const double *A, size_t m, double *L)
{
    /* In tiles, so that the column read stays in cache at large m; a
     * tile's comparisons without a branch (a NaN is asymmetric). */
    for (size_t i0 = 0; i0 < m; i0 += CHOL_TILE)
        for (size_t j0 = 0; j0 <= i0; j0 += CHOL_TILE) {
            size_t i1 = i0 + CHOL_TILE < m ? i0 + CHOL_TILE : m;
            int bad = 0;
            for (size_t i = i0; i < i1; i++) {
                size_t j1 = j0 + CHOL_TILE < i ? j0 + CHOL_TILE : i;
                for (size_t j = j0; j < j1; j++) {
                    double u = A[i * m + j], v = A[j * m + i];
                    double au = fabs(u), scale = au > 1.0 ? au : 1.0;
                    bad |= !(fabs(u - v) <= 1e-8 * scale);
                }
            }
            if (bad)
                return 1;
        }
    if (m < CHOL_SMALL) {
        if (chol_small(A, m, L))
            return 2;
    } else {
        /* Row-major lower is column-major upper: LAPACK's 'U' factor of
         * the same memory is L. */
        for (size_t i = 0; i < m; i++) {
            memcpy(L + i * m, A + i * m, (i + 1) * sizeof *L);
            memset(L + i * m + i + 1, 0, (m - i - 1) * sizeof *L);
        }
        blasint n = (blasint)m, info = 0;
        dpotrf_("U", &n, L, &n, &info);
        if (info)
            return 2;
    }
    /* A non-finite entry of A reaches some diagonal entry of L (each
     * entry of a row feeds that row's diagonal); dpotrf need not stop on
     * NaN. */
    for (size_t j = 0; j < m; j++)
        if (!(L[j * m + j] > 0) || !isfinite(L[j * m + j]))
            return 2;
    return 0;
}

static int fwd_chol(drift_ad_ctx *c, int id)
{
    const drift_gnode *n = NODE(c, id);
    int a = drift_gin(n, 0);
    size_t m = n->m, R = vrows(c, n);
    for (size_t r = 0; r < R; r++) {
        int rc = chol_factor(c->val[a] + r * c->vld[a], m,
                             c->val[id] + r * c->vld[id]);
        if (rc && n->guard) {
            for (size_t k = 0; k < m * m; k++)
                c->val[id][r * c->vld[id] + k] = NAN;
            continue;
        }
        if (rc) {
            char where[64] = "";
            if (n->batched)
                snprintf(where, sizeof where, " (data row %zu)",
                         row_id(c, r) + 1);
            return node_error(c, id, "cholesky_decompose: the matrix is not "
                                     "%s%s",
                              rc == 1 ? "symmetric" : "positive definite",
                              where);
        }
    }
    return DRIFT_OK;
}

/* Doubles of scratch the Cholesky node's kernels need for an m x m
 * factor: the adjoint being transformed, and one diagonal block. */
static size_t chol_part_size(size_t m)
{
    size_t nb = m < CHOL_NB_MAX ? m : CHOL_NB_MAX;
    return m * m + nb * nb;
}

/* The reverse of the unblocked factorisation D = chol(A) of a b x b
 * block (leading dimension ld), in place: on entry Db holds the lower
 * triangle of Dbar, on exit the lower triangle of Abar with the
 * convention of rev_chol.  Column by column from the last, the reverse
 * of chol_small's steps (Murray's unblocked algorithm): scalar loops,
 * which at every block size up to 128 beat the same work through
 * dtrmm and two dtrsm calls (0.02 against 0.5 us at b = 3, 32 against
 * 54 us at b = 64). */
static void chol_rev_diag(const double *D, double *Db, size_t b, size_t ld)
{
    for (size_t j = b; j-- > 0;) {
        const double *Dj = D + j * ld;
        double *Pj = Db + j * ld, d = Dj[j];
        /* D[i, j] = (A[i, j] - D[i, :j] . D[j, :j]) / d, i > j. */
        for (size_t i = b - 1; i > j; i--) {
            const double *Di = D + i * ld;
            double *Pi = Db + i * ld, t = Pi[j] / d;
            Pi[j] = t;
            Pj[j] -= t * Di[j];
            for (size_t k = 0; k < j; k++) {
                Pi[k] -= t * Dj[k];
                Pj[k] -= t * Di[k];
            }
        }
        /* d = sqrt(A[j, j] - D[j, :j] . D[j, :j]). */
        double t = 0.5 * Pj[j] / d;
        Pj[j] = t;
        for (size_t k = 0; k < j; k++)
            Pj[k] -= 2 * t * Dj[k];
    }
}

/* The reverse of L = chol(A) for an m x m L, in place in P (leading
 * dimension m): on entry P's lower triangle holds Lbar, on exit Abar's
 * lower triangle, the derivative with respect to A's lower triangle with
 * the upper one its mirror (off-diagonal entries count both halves).
 * The blocked algorithm of Murray (2016, "Differentiation of the Cholesky
 * decomposition"): diagonal blocks from the last to the first, the panel
 * below each and the rows left of it updated through dtrsm and dgemm, so
 * that almost all of the m^3 work is level-3 BLAS.  S holds a block of
 * chol_nb(m) x chol_nb(m). */
static void chol_rev_blocked(const double *L, double *P, size_t m, double *S)
{
    size_t nb = chol_nb(m);
    for (size_t end = m; end > 0;) {
        size_t j0 = end > nb ? end - nb : 0;
        size_t b = end - j0, t = m - end;
        int ib = (int)b, it = (int)t, ij = (int)j0, im = (int)m;
        /* The block's rows j0..end-1: R = L[blk, 0:j0], D = L[blk, blk];
         * below it B = L[end:m, 0:j0], C = L[end:m, blk]. */
        const double *R = L + j0 * m, *D = L + j0 * m + j0;
        const double *B = L + end * m, *C = L + end * m + j0;
        double *Rb = P + j0 * m, *Db = P + j0 * m + j0;
        double *Bb = P + end * m, *Cb = P + end * m + j0;
        if (t) {
            /* C = (A_C - B R^T) D^-T: the adjoint of A_C is Cbar D^-1. */
            cblas_dtrsm(CblasRowMajor, CblasRight, CblasLower, CblasNoTrans,
                        CblasNonUnit, it, ib, 1.0, D, im, Cb, im);
            if (j0)
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, it, ij,
                            ib, -1.0, Cb, im, R, im, 1.0, Bb, im);
            cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, ib, ib, it,
                        1.0, Cb, im, C, im, 0.0, S, ib);
            for (size_t i = 0; i < b; i++)
                for (size_t j = 0; j <= i; j++)
                    Db[i * m + j] -= S[i * b + j];
            if (j0)
                cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, ib, ij,
                            it, -1.0, Cb, im, B, im, 1.0, Rb, im);
        }
        /* D = chol(A_D - R R^T). */
        chol_rev_diag(D, Db, b, m);
        if (j0) {
            for (size_t i = 0; i < b; i++)
                for (size_t j = 0; j <= i; j++)
                    S[i * b + j] = S[j * b + i] =
                        i == j ? 2 * Db[i * m + i] : Db[i * m + j];
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ib, ij, ib,
                        -1.0, S, ib, R, im, 1.0, Rb, im);
        }
        end = j0;
    }
}

/* The reverse of L = chol(A), row by row of the adjoints: Abar's lower
 * triangle (see chol_rev_blocked) is added to A's adjoint. */
static void rev_chol(drift_ad_ctx *c, int id)
{
    const drift_gnode *n = NODE(c, id);
    int a = drift_gin(n, 0);
    size_t m = n->m, RA = c->arows[id];
    double *P = c->part[id], *S = P + m * m;
    for (size_t r = 0; r < RA; r++) {
        const double *L = c->val[id] + (n->batched ? r : 0) * c->vld[id];
        const double *G = c->adj[id] + r * c->ald[id];
        for (size_t i = 0; i < m; i++)
            memcpy(P + i * m, G + i * m, (i + 1) * sizeof *P);
        chol_rev_blocked(L, P, m, S);
        double *gA = c->adj[a] + r * c->ald[a];
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j <= i; j++)
                gA[i * m + j] += P[i * m + j];
    }
}

/* tL = L Phi(L^-1 tA L^-T), tA the symmetric matrix of tangents read
 * from the lower triangle, Phi the lower triangle with the diagonal
 * halved. */
static void tan_chol(drift_ad_ctx *c, int id)
{
    const drift_gnode *n = NODE(c, id);
    int a = drift_gin(n, 0);
    size_t m = n->m, R = vrows(c, n);
    double *M = c->part[id];
    for (size_t r = 0; r < R; r++) {
        const double *L = c->val[id] + r * c->vld[id];
        const double *tA = c->tan[a] + r * c->tld[a];
        double *T = c->tan[id] + r * c->tld[id];
        if (m == 0)
            continue;
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j <= i; j++)
                M[i * m + j] = M[j * m + i] = tA[i * m + j];
        cblas_dtrsm(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans,
                    CblasNonUnit, (int)m, (int)m, 1.0, L, (int)m, M, (int)m);
        cblas_dtrsm(CblasRowMajor, CblasRight, CblasLower, CblasTrans,
                    CblasNonUnit, (int)m, (int)m, 1.0, L, (int)m, M, (int)m);
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < m; j++)
                T[i * m + j] = j < i ? M[i * m + j]
                               : j == i ? 0.5 * M[i * m + j] : 0;
        cblas_dtrmm(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans,
                    CblasNonUnit, (int)m, (int)m, 1.0, L, (int)m, T, (int)m);
    }
}

/* Z = B L^-T row by row (z_i = L^-1 b_i): one triangular solve over the
 * whole batch when L is shared. */
static void fwd_trisolve(drift_ad_ctx *c, int id)
{
    const drift_gnode *n = NODE(c, id);
    int a = drift_gin(n, 0), b = drift_gin(n, 1);
    size_t m = n->m, nr = n->n, R = vrows(c, n), ol = c->vld[id];
    double *Z = c->val[id];
    for (size_t r = 0; r < R; r++)
        memcpy(Z + r * ol, c->val[b] + r * c->vld[b], nr * m * sizeof *Z);
    if (m == 0 || nr == 0)
        return;
    if (c->vld[a] == 0 && (R == 1 || ol == nr * m)) {
        cblas_dtrsm(CblasRowMajor, CblasRight, CblasLower, CblasTrans,
                    CblasNonUnit, (int)(R * nr), (int)m, 1.0, c->val[a],
                    (int)m, Z, (int)m);
        return;
    }
    for (size_t r = 0; r < R; r++)
        cblas_dtrsm(CblasRowMajor, CblasRight, CblasLower, CblasTrans,
                    CblasNonUnit, (int)nr, (int)m, 1.0,
                    c->val[a] + r * c->vld[a], (int)m, Z + r * ol, (int)m);
}

/* Bbar = Zbar L^-1; Lbar = -(Bbar^T Z), lower triangle. */
static void rev_trisolve(drift_ad_ctx *c, int id)
{
    const drift_gnode *n = NODE(c, id);
    int a = drift_gin(n, 0), b = drift_gin(n, 1);
    const drift_gnode *na = NODE(c, a), *nb = NODE(c, b);
    size_t m = n->m, nr = n->n, RA = c->arows[id], gl = c->ald[id];
    if (m == 0 || nr == 0)
        return;
    double *Bb = c->part[id], *Lb = Bb + (n->batched ? c->B : 1) * nr * m;
    int all = c->vld[a] == 0 && c->ald[a] == 0 && RA == vrows(c, n);
    size_t step = all ? RA : 1;
    for (size_t r0 = 0; r0 < RA; r0 += step) {
        size_t rows = all ? RA : 1;
        for (size_t r = 0; r < rows; r++)
            memcpy(Bb + r * nr * m, c->adj[id] + (r0 + r) * gl,
                   nr * m * sizeof *Bb);
        const double *L = c->val[a] + r0 * c->vld[a];
        cblas_dtrsm(CblasRowMajor, CblasRight, CblasLower, CblasNoTrans,
                    CblasNonUnit, (int)(rows * nr), (int)m, 1.0, L, (int)m,
                    Bb, (int)m);
        if (nb->param)
            for (size_t r = 0; r < rows; r++) {
                double *gb = c->adj[b] + (r0 + r) * c->ald[b];
                const double *bb = Bb + r * nr * m;
                for (size_t k = 0; k < nr * m; k++)
                    gb[k] += bb[k];
            }
        if (!na->param)
            continue;
        /* Z's rows for these adjoint rows: the node's own when batched. */
        const double *Z = c->val[id] + (n->batched ? r0 : 0) * c->vld[id];
        size_t zrows = n->batched ? rows : 1;
        if (!n->batched && rows > 1) {
            /* Shared Z, per-row adjoints summed: Bbar's rows add up. */
            for (size_t r = 1; r < rows; r++)
                for (size_t k = 0; k < nr * m; k++)
                    Bb[k] += Bb[r * nr * m + k];
        }
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)m, (int)m,
                    (int)(zrows * nr), 1.0, Bb, (int)m, Z, (int)m, 0.0, Lb,
                    (int)m);
        double *gL = c->adj[a] + r0 * c->ald[a];
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j <= i; j++)
                gL[i * m + j] -= Lb[i * m + j];
    }
}

/* tZ = (tB - Z tL^T) L^-T, tL's lower triangle (dgemm, then dtrsm). */
static void tan_trisolve(drift_ad_ctx *c, int id)
{
    const drift_gnode *n = NODE(c, id);
    int a = drift_gin(n, 0), b = drift_gin(n, 1);
    const drift_gnode *na = NODE(c, a), *nb = NODE(c, b);
    size_t m = n->m, nr = n->n, R = vrows(c, n), tl = c->tld[id];
    double *T = c->tan[id];
    /* tL's lower triangle, zeros above: the m x m scratch after the
     * reverse pass's rows. */
    double *Tl = c->part[id] + (n->batched ? c->B : 1) * nr * m;
    for (size_t r = 0; r < R; r++) {
        double *t = T + r * tl;
        if (nb->param)
            memcpy(t, c->tan[b] + r * c->tld[b], nr * m * sizeof *t);
        else
            memset(t, 0, nr * m * sizeof *t);
        if (na->param && m && nr) {
            const double *Z = c->val[id] + r * c->vld[id];
            const double *tL = c->tan[a] + r * c->tld[a];
            for (size_t i = 0; i < m; i++)
                for (size_t j = 0; j < m; j++)
                    Tl[i * m + j] = j <= i ? tL[i * m + j] : 0;
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nr,
                        (int)m, (int)m, -1.0, Z, (int)m, Tl, (int)m, 1.0, t,
                        (int)m);
        }
        if (m && nr)
            cblas_dtrsm(CblasRowMajor, CblasRight, CblasLower, CblasTrans,
                        CblasNonUnit, (int)nr, (int)m, 1.0,
                        c->val[a] + r * c->vld[a], (int)m, t, (int)m);
    }
}

/* ---- reshaping, running sums, extremes, selection ----------------------------------- */

static void fwd_assemble(drift_ad_ctx *c, int id)
{
    const drift_gnode *n = NODE(c, id);
    size_t R = vrows(c, n), ni = (size_t)n->n_in;
    for (size_t r = 0; r < R; r++) {
        double *o = c->val[id] + r * c->vld[id];
        for (size_t j = 0; j < n->sz; j++) {
            int64_t e = n->amap[j];
            if (e < 0) {
                o[j] = 0;
                continue;
            }
            int k = drift_gin(n, (int)((size_t)e % ni));
            o[j] = c->val[k][r * c->vld[k] + (size_t)e / ni];
        }
    }
}

static void rev_assemble(drift_ad_ctx *c, int id)
{
    const drift_gnode *n = NODE(c, id);
    size_t RA = c->arows[id], ni = (size_t)n->n_in;
    for (size_t r = 0; r < RA; r++) {
        const double *g = c->adj[id] + r * c->ald[id];
        for (size_t j = 0; j < n->sz; j++) {
            int64_t e = n->amap[j];
            if (e < 0)
                continue;
            int k = drift_gin(n, (int)((size_t)e % ni));
            if (NODE(c, k)->param)
                c->adj[k][r * c->ald[k] + (size_t)e / ni] += g[j];
        }
    }
}

static void tan_assemble(drift_ad_ctx *c, int id)
{
    const drift_gnode *n = NODE(c, id);
    size_t R = vrows(c, n), ni = (size_t)n->n_in;
    for (size_t r = 0; r < R; r++) {
        double *t = c->tan[id] + r * c->tld[id];
        for (size_t j = 0; j < n->sz; j++) {
            int64_t e = n->amap[j];
            int k = e < 0 ? -1 : drift_gin(n, (int)((size_t)e % ni));
            t[j] = k >= 0 && NODE(c, k)->param
                       ? c->tan[k][r * c->tld[k] + (size_t)e / ni]
                       : 0;
        }
    }
}

/* ROWSUM, CUMSUM, RMAX, RMIN forward over values or tangents (x: the
 * input's, at stride xl; the extremes' tangent follows the input's
 * value at the arg-extreme). */
static void fwd_reduce(drift_ad_ctx *c, int id, int tangent)
{
    const drift_gnode *n = NODE(c, id);
    int a = drift_gin(n, 0);
    size_t R = vrows(c, n), k = NODE(c, a)->sz;
    for (size_t r = 0; r < R; r++) {
        const double *v = c->val[a] + r * c->vld[a];
        const double *x = tangent ? c->tan[a] + r * c->tld[a] : v;
        double *o = tangent ? c->tan[id] + r * c->tld[id]
                            : c->val[id] + r * c->vld[id];
        switch (n->op) {
        case DRIFT_G_ROWSUM:
            for (size_t j = 0; j < n->sz; j++) {
                double s = 0;
                for (size_t t = 0; t < n->k; t++)
                    s += x[j * n->k + t];
                o[j] = s;
            }
            break;
        case DRIFT_G_CUMSUM: {
            double s = 0;
            for (size_t j = 0; j < k; j++)
                o[j] = s += x[j];
            break;
        }
        default: {
            size_t best = 0;
            for (size_t j = 1; j < k; j++)
                if (n->op == DRIFT_G_RMAX ? v[j] > v[best] : v[j] < v[best])
                    best = j;
            o[0] = k ? x[best] : (n->op == DRIFT_G_RMAX ? -INFINITY
                                                        : INFINITY);
            break;
        }
        }
    }
}

/* prod: the value, or its tangent sum_j t_j prod_{k != j} x_k (prefix
 * and suffix products, so zeros need no division). */
static void fwd_prod(drift_ad_ctx *c, int id, int tangent)
{
    const drift_gnode *n = NODE(c, id);
    int a = drift_gin(n, 0);
    size_t R = vrows(c, n), k = NODE(c, a)->sz;
    for (size_t r = 0; r < R; r++) {
        const double *x = c->val[a] + r * c->vld[a];
        if (!tangent) {
            double p = 1;
            for (size_t j = 0; j < k; j++)
                p *= x[j];
            c->val[id][r * c->vld[id]] = p;
            continue;
        }
        const double *t = c->tan[a] + r * c->tld[a];
        double s = 0, pre = 1;
        for (size_t j = 0; j < k; j++) {
            double suf = 1;
            for (size_t q = j + 1; q < k; q++)
                suf *= x[q];
            s += t[j] * pre * suf;
            pre *= x[j];
        }
        c->tan[id][r * c->tld[id]] = s;
    }
}

static void rev_prod(drift_ad_ctx *c, int id)
{
    const drift_gnode *n = NODE(c, id);
    int a = drift_gin(n, 0);
    size_t RA = c->arows[id], k = NODE(c, a)->sz;
    double *suf = c->part[id]; /* k: products of the elements after j */
    for (size_t r = 0; r < RA; r++) {
        const double *x = c->val[a] + (n->batched ? r : 0) * c->vld[a];
        double g = c->adj[id][r * c->ald[id]];
        double *ga = c->adj[a] + r * c->ald[a];
        double p = 1;
        for (size_t j = k; j-- > 0;) {
            suf[j] = p;
            p *= x[j];
        }
        double pre = 1;
        for (size_t j = 0; j < k; j++) {
            ga[j] += g * pre * suf[j];
            pre *= x[j];
        }
    }
}

static void rev_reduce(drift_ad_ctx *c, int id)
{
    const drift_gnode *n = NODE(c, id);
    int a = drift_gin(n, 0);
    size_t RA = c->arows[id], k = NODE(c, a)->sz;
    for (size_t r = 0; r < RA; r++) {
        const double *g = c->adj[id] + r * c->ald[id];
        double *ga = c->adj[a] + r * c->ald[a];
        switch (n->op) {
        case DRIFT_G_ROWSUM:
            for (size_t j = 0; j < n->sz; j++)
                for (size_t t = 0; t < n->k; t++)
                    ga[j * n->k + t] += g[j];
            break;
        case DRIFT_G_CUMSUM: {
            double s = 0;
            for (size_t j = k; j-- > 0;)
                ga[j] += s += g[j];
            break;
        }
        default: {
            const double *v = c->val[a] + (n->batched ? r : 0) * c->vld[a];
            size_t best = 0;
            for (size_t j = 1; j < k; j++)
                if (n->op == DRIFT_G_RMAX ? v[j] > v[best] : v[j] < v[best])
                    best = j;
            if (k)
                ga[best] += g[0];
            break;
        }
        }
    }
}

/* cond ? a : b; stride 0 for broadcast scalars. */
static void fwd_select(drift_ad_ctx *c, int id, int tangent)
{
    const drift_gnode *n = NODE(c, id);
    size_t R = vrows(c, n), sz = n->sz;
    int k0 = drift_gin(n, 0), k1 = drift_gin(n, 1), k2 = drift_gin(n, 2);
    size_t s0 = NODE(c, k0)->sz == sz ? 1 : 0;
    size_t s1 = NODE(c, k1)->sz == sz ? 1 : 0;
    size_t s2 = NODE(c, k2)->sz == sz ? 1 : 0;
    for (size_t r = 0; r < R; r++) {
        const double *cv = c->val[k0] + r * c->vld[k0];
        const double *x = tangent ? (NODE(c, k1)->param
                                         ? c->tan[k1] + r * c->tld[k1]
                                         : NULL)
                                  : c->val[k1] + r * c->vld[k1];
        const double *y = tangent ? (NODE(c, k2)->param
                                         ? c->tan[k2] + r * c->tld[k2]
                                         : NULL)
                                  : c->val[k2] + r * c->vld[k2];
        double *o = tangent ? c->tan[id] + r * c->tld[id]
                            : c->val[id] + r * c->vld[id];
        for (size_t j = 0; j < sz; j++) {
            const double *src = cv[j * s0] != 0 ? x : y;
            size_t st = cv[j * s0] != 0 ? s1 : s2;
            o[j] = src ? src[j * st] : 0;
        }
    }
}

static void rev_select(drift_ad_ctx *c, int id)
{
    const drift_gnode *n = NODE(c, id);
    size_t RA = c->arows[id], sz = n->sz;
    int k0 = drift_gin(n, 0), k1 = drift_gin(n, 1), k2 = drift_gin(n, 2);
    size_t s0 = NODE(c, k0)->sz == sz ? 1 : 0;
    size_t s1 = NODE(c, k1)->sz == sz ? 1 : 0;
    size_t s2 = NODE(c, k2)->sz == sz ? 1 : 0;
    int p1 = NODE(c, k1)->param, p2 = NODE(c, k2)->param;
    for (size_t r = 0; r < RA; r++) {
        const double *cv = c->val[k0] + (NODE(c, k0)->batched ? r : 0) *
                                            c->vld[k0];
        const double *g = c->adj[id] + r * c->ald[id];
        for (size_t j = 0; j < sz; j++) {
            if (cv[j * s0] != 0) {
                if (p1)
                    c->adj[k1][r * c->ald[k1] + j * s1] += g[j];
            } else if (p2) {
                c->adj[k2][r * c->ald[k2] + j * s2] += g[j];
            }
        }
    }
}

/* ---- random draws (the generated block) ------------------------------------------ */

static int fwd_rng(drift_ad_ctx *c, int id)
{
    const drift_gnode *n = NODE(c, id);
    size_t R = vrows(c, n), sz = n->sz;
    drift_dist_id di = (drift_dist_id)n->fn;
    if (!c->rng)
        return node_error(c, id, "%s_rng: no random stream here",
                          drift_dists[di].name);
    for (size_t r = 0; r < R; r++) {
        double *o = c->val[id] + r * c->vld[id];
        if (di == DRIFT_D_CATEGORICAL) {
            int a = drift_gin(n, 0);
            o[0] = drift_rand_categorical(c->rng, c->val[a] + r * c->vld[a],
                                          NODE(c, a)->sz);
            if (isnan(o[0]))
                return node_error(c, id,
                                  "categorical_rng: the probabilities must "
                                  "be non-negative and sum to 1");
            continue;
        }
        if (di == DRIFT_D_ORDERED_LOGISTIC || di == DRIFT_D_ORDERED_PROBIT) {
            int a = drift_gin(n, 0), cp = drift_gin(n, 1);
            size_t se = NODE(c, a)->sz == sz ? 1 : 0;
            for (size_t j = 0; j < sz; j++) {
                o[j] = drift_rand_ordered(
                    c->rng, di == DRIFT_D_ORDERED_PROBIT,
                    c->val[a][r * c->vld[a] + j * se],
                    c->val[cp] + r * c->vld[cp], NODE(c, cp)->sz);
                if (isnan(o[j]))
                    return node_error(c, id,
                                      "%s_rng: eta must be finite and the "
                                      "cutpoints increasing",
                                      drift_dists[di].name);
            }
            continue;
        }
        if (di == DRIFT_D_MULTI_NORMAL ||
            di == DRIFT_D_MULTI_NORMAL_CHOLESKY) {
            /* the draw mu + L z, built from normal draws, checked */
            int a = drift_gin(n, 0);
            const double *x = c->val[a] + r * c->vld[a];
            for (size_t j = 0; j < sz; j++) {
                o[j] = x[j];
                if (!isfinite(x[j]))
                    return node_error(c, id,
                                      "%s_rng: element %zu of the draw is "
                                      "%g: the arguments are not finite, "
                                      "or put the draw past a double's "
                                      "range%s",
                                      drift_dists[di].name, j + 1, x[j],
                                      n->batched ? " (a row's arguments)"
                                                 : "");
            }
            continue;
        }
        if (di == DRIFT_D_LKJ_CORR_CHOLESKY) {
            int a = drift_gin(n, 0);
            double eta = c->val[a][r * c->vld[a]];
            if (drift_rand_lkj_cholesky(c->rng, n->m, eta, o))
                return node_error(c, id,
                                  "lkj_corr_cholesky_rng: the shape eta must "
                                  "be positive and finite, got %g",
                                  eta);
            continue;
        }
        for (size_t j = 0; j < sz; j++) {
            double a[DRIFT_DIST_MAX_ARGS + 1];
            a[0] = 0;
            for (int k = 0; k < n->n_in; k++) {
                int x = drift_gin(n, k);
                size_t st = NODE(c, x)->sz == sz ? 1 : 0;
                a[k + 1] = c->val[x][r * c->vld[x] + j * st];
            }
            if (di == DRIFT_D_GAMMA && n->m == 1) {
                /* dirichlet_rng's gamma draws, as logs */
                o[j] = drift_rand_log_gamma(c->rng, a[1]);
                if (isinf(o[j]))
                    return node_error(c, id,
                                      "dirichlet_rng: alpha %g is too %s "
                                      "to draw from (its gamma draw "
                                      "%s even in logs)",
                                      a[1], o[j] < 0 ? "small" : "large",
                                      o[j] < 0 ? "underflows" : "overflows");
            } else {
                o[j] = drift_rand_dist(c->rng, di, a + 1);
            }
            if (isinf(o[j])) {
                char why[200], args[200] = "", where[64] = "";
                drift_rand_range_explain(di, a + 1, why, sizeof why);
                for (int k = 0, at = 0; k < n->n_in && at < (int)sizeof args;
                     k++)
                    at += snprintf(args + at, sizeof args - (size_t)at,
                                   "%s%g", k ? ", " : "", a[k + 1]);
                if (n->batched)
                    snprintf(where, sizeof where, " (data row %zu)",
                             row_id(c, r) + 1);
                return node_error(c, id, "%s_rng(%s): %s%s",
                                  drift_dists[di].name, args, why, where);
            }
            if (isnan(o[j])) {
                char why[200], where[64] = "";
                drift_dist_explain(di, a, why, sizeof why);
                if (!strncmp(why, "the outcome", 11) ||
                    !strncmp(why, "the log density", 15))
                    snprintf(why, sizeof why,
                             "the arguments lie outside their domain");
                if (n->batched)
                    snprintf(where, sizeof where, " (data row %zu)",
                             row_id(c, r) + 1);
                return node_error(c, id, "%s_rng: %s%s",
                                  drift_dists[di].name, why, where);
            }
        }
    }
    return DRIFT_OK;
}

int drift_ad_forward_node(drift_ad_ctx *c, int id)
{
    const drift_gnode *n = NODE(c, id);
    size_t R = vrows(c, n), sz = n->sz;
    double *o = c->val[id];
    size_t ol = c->vld[id];
    int a = n->n_in > 0 ? drift_gin(n, 0) : -1;
    int b = n->n_in > 1 ? drift_gin(n, 1) : -1;
    switch (n->op) {
    case DRIFT_G_CONST:
    case DRIFT_G_ROWVAR:
    case DRIFT_G_THETA:
        return DRIFT_OK;
    case DRIFT_G_LOWER:
    case DRIFT_G_UPPER:
    case DRIFT_G_BOUNDED:
        for (size_t r = 0; r < R; r++) {
            const double *u = c->val[a] + r * c->vld[a];
            for (size_t j = 0; j < sz; j++)
                o[r * ol + j] = trans_f(n->op, u[j], n->a, n->b);
        }
        return DRIFT_OK;
    case DRIFT_G_LOGJAC: {
        size_t k = NODE(c, a)->sz;
        for (size_t r = 0; r < R; r++) {
            const double *u = c->val[a] + r * c->vld[a];
            double s = 0;
            for (size_t j = 0; j < k; j++)
                s += logjac_f(n->fn, u[j], n->a, n->b);
            o[r * ol] = s;
        }
        return DRIFT_OK;
    }
    case DRIFT_G_NEG:
        for (size_t r = 0; r < R; r++) {
            const double *x = c->val[a] + r * c->vld[a];
            for (size_t j = 0; j < sz; j++)
                o[r * ol + j] = -x[j];
        }
        return DRIFT_OK;
    case DRIFT_G_ADD:
    case DRIFT_G_SUB:
    case DRIFT_G_MUL:
    case DRIFT_G_DIV:
    case DRIFT_G_POW:
    case DRIFT_G_LSE2:
    case DRIFT_G_FMIN: case DRIFT_G_FMAX: case DRIFT_G_LDE:
    case DRIFT_G_LT: case DRIFT_G_LE: case DRIFT_G_GT: case DRIFT_G_GE:
    case DRIFT_G_EQ: case DRIFT_G_NE: case DRIFT_G_AND: case DRIFT_G_OR: {
        size_t sa = NODE(c, a)->sz == sz ? 1 : 0;
        size_t sb = NODE(c, b)->sz == sz ? 1 : 0;
        if (sz == 1) {
            /* One value a row: the loop below without its inner loop. */
            const double *X = c->val[a], *Y = c->val[b];
            size_t xl = c->vld[a], yl = c->vld[b];
            binary1_rows(n->op, R, X, xl, Y, yl, o, ol);
            return DRIFT_OK;
        }
        for (size_t r = 0; r < R; r++) {
            const double *x = c->val[a] + r * c->vld[a];
            const double *y = c->val[b] + r * c->vld[b];
            double *out = o + r * ol;
            if (n->op == DRIFT_G_ADD && sa && sb)
                for (size_t j = 0; j < sz; j++)
                    out[j] = x[j] + y[j];
            else if (n->op == DRIFT_G_MUL && sa && sb)
                for (size_t j = 0; j < sz; j++)
                    out[j] = x[j] * y[j];
            else if (!binary_scalar_f(n->op, x, sa, y, sb, out, sz))
                for (size_t j = 0; j < sz; j++)
                    out[j] = binary_f(n->op, x[j * sa], y[j * sb]);
        }
        return DRIFT_OK;
    }
    case DRIFT_G_UNARY: {
        void (*vf)(size_t, const double *, double *) =
            n->fn == DRIFT_FN_EXP        ? drift_vmath_exp
            : n->fn == DRIFT_FN_LOG1P    ? drift_vmath_log1p
            : n->fn == DRIFT_FN_TANH     ? drift_vmath_tanh
            : n->fn == DRIFT_FN_LOGISTIC ? drift_vmath_logistic
                                         : NULL;
        /* The vector functions over the whole block when its rows lie
         * back to back, else row by row. */
        if (vf && R > 1 && c->vld[a] == sz && ol == sz) {
            vf(R * sz, c->val[a], o);
            return DRIFT_OK;
        }
        if (!vf && sz == 1) {
            unary1_rows(n->fn, R, c->val[a], c->vld[a], o, ol);
            return DRIFT_OK;
        }
        for (size_t r = 0; r < R; r++) {
            const double *x = c->val[a] + r * c->vld[a];
            double *out = o + r * ol;
            if (vf)
                vf(sz, x, out);
            else
                for (size_t j = 0; j < sz; j++)
                    out[j] = unary_f(n->fn, x[j]);
        }
        return DRIFT_OK;
    }
    case DRIFT_G_SUM:
    case DRIFT_G_SQNORM:
    case DRIFT_G_LSE: {
        size_t k = NODE(c, a)->sz;
        for (size_t r = 0; r < R; r++) {
            const double *x = c->val[a] + r * c->vld[a];
            double s = 0;
            if (n->op == DRIFT_G_SUM) {
                for (size_t j = 0; j < k; j++)
                    s += x[j];
                s *= n->a;
            } else if (n->op == DRIFT_G_SQNORM) {
                for (size_t j = 0; j < k; j++)
                    s += x[j] * x[j];
            } else {
                double mx = -INFINITY;
                for (size_t j = 0; j < k; j++)
                    if (x[j] > mx)
                        mx = x[j];
                if (mx == -INFINITY || mx == INFINITY) {
                    s = mx;
                } else {
                    for (size_t j = 0; j < k; j++)
                        s += exp(x[j] - mx);
                    s = mx + log(s);
                }
            }
            o[r * ol] = s;
        }
        return DRIFT_OK;
    }
    case DRIFT_G_DOT: {
        size_t k = n->k;
        const drift_gnode *na = NODE(c, a), *nb = NODE(c, b);
        const drift_sparse *sp = sparse_rows(na) ? sparse_rows(na)
                                                 : sparse_rows(nb);
        if (sp) {
            /* x_i . v over row i's non-zeros only. */
            int dv = sparse_rows(na) ? b : a;
            sparse_dot_rows(c, sp, c->val[dv], c->vld[dv], R, o, ol);
            return DRIFT_OK;
        }
        if (!na->batched && !nb->batched)
            o[0] = cblas_ddot((int)k, c->val[a], 1, c->val[b], 1);
        else if (na->batched != nb->batched && ol == 1) {
            /* Rows against one vector: the row kernel (kern.h), whose
             * order of additions the full passes' linear predictor
             * shares. */
            int x = na->batched ? a : b, v = na->batched ? b : a;
            drift_kern_dot_rows(c->B, k, c->val[x], c->vld[x], c->val[v], o);
        } else if (na->batched && !nb->batched && k > 0)
            cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)c->B, (int)k, 1.0,
                        c->val[a], (int)c->vld[a], c->val[b], 1, 0.0, o,
                        (int)ol);
        else if (!na->batched && nb->batched && k > 0)
            cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)c->B, (int)k, 1.0,
                        c->val[b], (int)c->vld[b], c->val[a], 1, 0.0, o,
                        (int)ol);
        else
            for (size_t r = 0; r < R; r++)
                o[r * ol] = cblas_ddot((int)k, c->val[a] + r * c->vld[a], 1,
                                       c->val[b] + r * c->vld[b], 1);
        return DRIFT_OK;
    }
    case DRIFT_G_MATVEC: {
        size_t m = n->m, k = n->k;
        const drift_gnode *nw = NODE(c, a), *nx = NODE(c, b);
        if (m == 0)
            return DRIFT_OK;
        if (k == 0) {
            for (size_t r = 0; r < R; r++)
                memset(o + r * ol, 0, m * sizeof *o);
            return DRIFT_OK;
        }
        if (!nw->batched && nx->batched)
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)c->B,
                        (int)m, (int)k, 1.0, c->val[b], (int)c->vld[b],
                        c->val[a], (int)k, 0.0, o, (int)ol);
        else
            for (size_t r = 0; r < R; r++)
                cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)m, (int)k, 1.0,
                            c->val[a] + r * c->vld[a], (int)k,
                            c->val[b] + r * c->vld[b], 1, 0.0, o + r * ol, 1);
        return DRIFT_OK;
    }
    case DRIFT_G_MATMUL: {
        size_t m = n->m, k = n->k, nn = n->n;
        if (m == 0 || nn == 0)
            return DRIFT_OK;
        for (size_t r = 0; r < R; r++) {
            if (k == 0) {
                memset(o + r * ol, 0, m * nn * sizeof *o);
                continue;
            }
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m,
                        (int)nn, (int)k, 1.0, c->val[a] + r * c->vld[a],
                        (int)k, c->val[b] + r * c->vld[b], (int)nn, 0.0,
                        o + r * ol, (int)nn);
        }
        return DRIFT_OK;
    }
    case DRIFT_G_SLICE:
        for (size_t r = 0; r < R; r++)
            memcpy(o + r * ol, c->val[a] + r * c->vld[a] + n->off,
                   sz * sizeof *o);
        return DRIFT_OK;
    case DRIFT_G_GATHER:
        for (size_t r = 0; r < R; r++) {
            size_t i = (size_t)n->idx[row_id(c, r)];
            memcpy(o + r * ol, c->val[a] + r * c->vld[a] + i * sz,
                   sz * sizeof *o);
        }
        return DRIFT_OK;
    case DRIFT_G_DIST:
        return fwd_dist(c, id);
    case DRIFT_G_CATLOGIT:
        return fwd_catlogit(c, id);
    case DRIFT_G_ORDERED:
        return fwd_ordered(c, id);
    case DRIFT_G_XFORM:
    case DRIFT_G_XFORM_LJ:
        xform_forward(c, id, 0);
        return DRIFT_OK;
    case DRIFT_G_CHOL:
        return fwd_chol(c, id);
    case DRIFT_G_TRISOLVE:
        fwd_trisolve(c, id);
        return DRIFT_OK;
    case DRIFT_G_ASSEMBLE:
        fwd_assemble(c, id);
        return DRIFT_OK;
    case DRIFT_G_ROWSUM:
    case DRIFT_G_CUMSUM:
    case DRIFT_G_RMAX:
    case DRIFT_G_RMIN:
        fwd_reduce(c, id, 0);
        return DRIFT_OK;
    case DRIFT_G_SELECT:
        fwd_select(c, id, 0);
        return DRIFT_OK;
    case DRIFT_G_RPROD:
        fwd_prod(c, id, 0);
        return DRIFT_OK;
    case DRIFT_G_RNG:
        return fwd_rng(c, id);
    case DRIFT_G_TERMS:
        for (size_t r = 0; r < R; r++) {
            double s = 0;
            for (int k = 0; k < n->n_in; k++) {
                int t = drift_gin(n, k);
                s += c->val[t][r * c->vld[t]];
            }
            o[r * ol] = s;
        }
        return DRIFT_OK;
    }
    return drift_err_set(c->e, DRIFT_EINTERNAL, "unknown graph operation %d",
                         (int)n->op);
}

/* ---- reverse kernels ---------------------------------------------------------- */

/* Adds the adjoint of node id into its inputs' adjoints. */
/* Rows a backward step of one value a row handles at once. */
#define BWD_CHUNK 256

/* t[0] + ... + t[m-1] in four interleaved partial sums (their order fixed,
 * whatever the machine): a shared adjoint's terms summed without one long
 * chain of dependent additions. */
static double sum_terms(const double *t, size_t m)
{
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t k = 0;
    for (; k + 4 <= m; k += 4) {
        s0 += t[k];
        s1 += t[k + 1];
        s2 += t[k + 2];
        s3 += t[k + 3];
    }
    for (; k < m; k++)
        s0 += t[k];
    return (s0 + s1) + (s2 + s3);
}

/* Adds the terms t[0..m-1] of rows r0 ... to the adjoint ga of row stride
 * al: row by row, or, for an input shared by the rows (al 0, as a
 * parameter is), their sum at once. */
static void add_terms(double *ga, size_t al, size_t r0, const double *t,
                      size_t m)
{
    if (!al) {
        ga[0] += sum_terms(t, m);
        return;
    }
    for (size_t k = 0; k < m; k++)
        ga[(r0 + k) * al] += t[k];
}

/* The backward step of a binary operation of one value a row (sz 1) with
 * inputs a != b: each input's terms g * da (g * db) for a stretch of rows,
 * then added to its adjoint by add_terms. */
static void backward_binary1(drift_ad_ctx *c, int id, size_t RA,
                             const double *G, size_t gl, int a, int b)
{
    const drift_gnode *n = NODE(c, id), *na = NODE(c, a), *nb = NODE(c, b);
    const double *X = c->val[a], *Y = c->val[b], *O = c->val[id];
    size_t xl = c->vld[a], yl = c->vld[b], ol = c->vld[id];
    double *ga = na->param ? c->adj[a] : NULL;
    double *gb = nb->param ? c->adj[b] : NULL;
    double ta[BWD_CHUNK], tb[BWD_CHUNK];
    for (size_t r0 = 0; r0 < RA; r0 += BWD_CHUNK) {
        size_t m = RA - r0 < BWD_CHUNK ? RA - r0 : BWD_CHUNK;
        if (n->op == DRIFT_G_ADD) {
            /* g * 1 is g: the general loop's ADD adds g itself */
            for (size_t k = 0; k < m; k++)
                ta[k] = tb[k] = G[(r0 + k) * gl];
        } else if (n->op == DRIFT_G_MUL && !n->guard) {
            for (size_t k = 0; k < m; k++) {
                size_t r = r0 + k;
                double g = G[r * gl];
                ta[k] = g * Y[r * yl];
                tb[k] = g * X[r * xl];
            }
        } else {
            /* a loop per operator, binary_d's switch folded in each */
#define BINARY1_ADJ(OP)                                                      \
    for (size_t k = 0; k < m; k++) {                                          \
        size_t r = r0 + k;                                                    \
        double g = G[r * gl], da, db;                                         \
        if (n->guard && g == 0) {                                             \
            ta[k] = tb[k] = 0;                                                \
            continue;                                                         \
        }                                                                     \
        binary_d(OP, X[r * xl], Y[r * yl], O[r * ol], &da, &db);              \
        ta[k] = g * da;                                                       \
        tb[k] = g * db;                                                       \
    }                                                                         \
    break
            switch (n->op) {
            case DRIFT_G_SUB: BINARY1_ADJ(DRIFT_G_SUB);
            case DRIFT_G_MUL: BINARY1_ADJ(DRIFT_G_MUL);
            case DRIFT_G_DIV: BINARY1_ADJ(DRIFT_G_DIV);
            case DRIFT_G_LSE2: BINARY1_ADJ(DRIFT_G_LSE2);
            default: BINARY1_ADJ(n->op);
            }
#undef BINARY1_ADJ
        }
        if (ga)
            add_terms(ga, c->ald[a], r0, ta, m);
        if (gb)
            add_terms(gb, c->ald[b], r0, tb, m);
    }
}

static void backward_node(drift_ad_ctx *c, int id)
{
    const drift_gnode *n = NODE(c, id);
    size_t RA = c->arows[id], sz = n->sz;
    const double *G = c->adj[id];
    size_t gl = c->ald[id];
    int a = n->n_in > 0 ? drift_gin(n, 0) : -1;
    int b = n->n_in > 1 ? drift_gin(n, 1) : -1;
    const drift_gnode *na = a >= 0 ? NODE(c, a) : NULL;
    const drift_gnode *nb = b >= 0 ? NODE(c, b) : NULL;
    switch (n->op) {
    case DRIFT_G_CONST:
    case DRIFT_G_ROWVAR:
    case DRIFT_G_THETA:
        return;
    case DRIFT_G_LOWER:
    case DRIFT_G_UPPER:
    case DRIFT_G_BOUNDED:
        if (!na->param)
            return;
        for (size_t r = 0; r < RA; r++) {
            const double *u = c->val[a] + r * c->vld[a];
            double *gu = c->adj[a] + r * c->ald[a];
            const double *g = G + r * gl;
            for (size_t j = 0; j < sz; j++)
                gu[j] += g[j] * trans_d(n->op, u[j], n->a, n->b);
        }
        return;
    case DRIFT_G_LOGJAC: {
        if (!na->param)
            return;
        size_t k = na->sz;
        for (size_t r = 0; r < RA; r++) {
            const double *u = c->val[a] + r * c->vld[a];
            double *gu = c->adj[a] + r * c->ald[a];
            double g = G[r * gl];
            for (size_t j = 0; j < k; j++)
                gu[j] += g * logjac_d(n->fn, u[j]);
        }
        return;
    }
    case DRIFT_G_NEG:
        if (!na->param)
            return;
        for (size_t r = 0; r < RA; r++) {
            double *ga = c->adj[a] + r * c->ald[a];
            const double *g = G + r * gl;
            for (size_t j = 0; j < sz; j++)
                ga[j] -= g[j];
        }
        return;
    case DRIFT_G_ADD:
    case DRIFT_G_SUB:
    case DRIFT_G_MUL:
    case DRIFT_G_DIV:
    case DRIFT_G_POW:
    case DRIFT_G_LSE2:
    case DRIFT_G_FMIN: case DRIFT_G_FMAX: case DRIFT_G_LDE:
    case DRIFT_G_LT: case DRIFT_G_LE: case DRIFT_G_GT: case DRIFT_G_GE:
    case DRIFT_G_EQ: case DRIFT_G_NE: case DRIFT_G_AND: case DRIFT_G_OR: {
        size_t sa = na->sz == sz ? 1 : 0, sb = nb->sz == sz ? 1 : 0;
        if (sz == 1 && a != b) {
            backward_binary1(c, id, RA, G, gl, a, b);
            return;
        }
        for (size_t r = 0; r < RA; r++) {
            const double *x = c->val[a] + r * c->vld[a];
            const double *y = c->val[b] + r * c->vld[b];
            const double *o = c->val[id] + r * c->vld[id];
            const double *g = G + r * gl;
            double *ga = na->param ? c->adj[a] + r * c->ald[a] : NULL;
            double *gb = nb->param ? c->adj[b] + r * c->ald[b] : NULL;
            if (n->op == DRIFT_G_ADD && sa && sb) {
                if (ga)
                    for (size_t j = 0; j < sz; j++)
                        ga[j] += g[j];
                if (gb)
                    for (size_t j = 0; j < sz; j++)
                        gb[j] += g[j];
                continue;
            }
            if (n->op == DRIFT_G_MUL && !n->guard && sa != sb) {
                /* A scalar times a vector v: v's adjoint is g s, the
                 * scalar's the dot product of g and v (BLAS: a plain
                 * loop's sum cannot be reordered to vectorise). */
                double s = sa ? y[0] : x[0], *gv = sa ? ga : gb;
                double *gs = sa ? gb : ga;
                const double *v = sa ? x : y;
                if (gv)
                    cblas_daxpy((int)sz, s, g, 1, gv, 1);
                if (gs)
                    gs[0] += cblas_ddot((int)sz, g, 1, v, 1);
                continue;
            }
            /* A broadcast scalar's adjoint is summed here and added once,
             * not carried through memory an element at a time. */
            double ta = 0, tb = 0;
            for (size_t j = 0; j < sz; j++) {
                double da, db;
                if (n->guard && g[j] == 0)
                    continue;
                binary_d(n->op, x[j * sa], y[j * sb], o[j], &da, &db);
                if (ga) {
                    if (sa)
                        ga[j] += g[j] * da;
                    else
                        ta += g[j] * da;
                }
                if (gb) {
                    if (sb)
                        gb[j] += g[j] * db;
                    else
                        tb += g[j] * db;
                }
            }
            if (ga && !sa)
                ga[0] += ta;
            if (gb && !sb)
                gb[0] += tb;
        }
        return;
    }
    case DRIFT_G_UNARY:
        if (!na->param)
            return;
        if (sz == 1 && !n->guard) {
            unary1_adj(n->fn, RA, c->val[a], c->vld[a], c->val[id],
                       c->vld[id], G, gl, c->adj[a], c->ald[a]);
            return;
        }
        for (size_t r = 0; r < RA; r++) {
            const double *x = c->val[a] + r * c->vld[a];
            const double *o = c->val[id] + r * c->vld[id];
            const double *g = G + r * gl;
            double *ga = c->adj[a] + r * c->ald[a];
            if (n->guard) {
                for (size_t j = 0; j < sz; j++)
                    if (g[j] != 0)
                        ga[j] += g[j] * unary_d(n->fn, x[j], o[j]);
                continue;
            }
            if (n->fn == DRIFT_FN_EXP)
                for (size_t j = 0; j < sz; j++)
                    ga[j] += g[j] * o[j];
            else
                for (size_t j = 0; j < sz; j++)
                    ga[j] += g[j] * unary_d(n->fn, x[j], o[j]);
        }
        return;
    case DRIFT_G_SUM:
    case DRIFT_G_SQNORM:
    case DRIFT_G_LSE: {
        if (!na->param)
            return;
        size_t k = na->sz;
        for (size_t r = 0; r < RA; r++) {
            const double *x = c->val[a] + r * c->vld[a];
            double y = c->val[id][r * c->vld[id]];
            double g = G[r * gl];
            double *ga = c->adj[a] + r * c->ald[a];
            if (n->op == DRIFT_G_SUM)
                for (size_t j = 0; j < k; j++)
                    ga[j] += g * n->a;
            else if (n->op == DRIFT_G_SQNORM)
                for (size_t j = 0; j < k; j++)
                    ga[j] += 2 * g * x[j];
            else if (isfinite(y) && !(n->guard && g == 0))
                for (size_t j = 0; j < k; j++)
                    ga[j] += g * exp(x[j] - y);
        }
        return;
    }
    case DRIFT_G_DOT: {
        size_t k = n->k;
        const drift_sparse *sp = sparse_rows(na) ? sparse_rows(na)
                                                 : sparse_rows(nb);
        if (sp) {
            /* Scatter g_r x_i into the dense operand's adjoint: O(non-
             * zeros), one row's or the batch's sum alike. */
            int x = sparse_rows(na) ? b : a;
            if (!NODE(c, x)->param)
                return;
            drift_kern_sparse_axpy_rows(RA, c->rows, c->first, sp->row_ptr,
                                        sp->idx, sp->val, G, gl, c->adj[x],
                                        c->ald[x]);
            return;
        }
        for (int side = 0; side < 2; side++) {
            int x = side ? b : a, other = side ? a : b;
            const drift_gnode *nx = NODE(c, x), *no = NODE(c, other);
            if (!nx->param || k == 0)
                continue;
            if (c->ald[x] == 0 && no->batched && RA == c->B && RA > 1) {
                /* Sum over the batch: g += sum_r G_r x_r, row after row
                 * (the row kernel, as the full passes). */
                drift_kern_axpy_rows(RA, k, c->val[other], c->vld[other], G,
                                     gl, c->adj[x]);
                continue;
            }
            for (size_t r = 0; r < RA; r++)
                cblas_daxpy((int)k, G[r * gl], c->val[other] + r * c->vld[other],
                            1, c->adj[x] + r * c->ald[x], 1);
        }
        return;
    }
    case DRIFT_G_MATVEC: {
        size_t m = n->m, k = n->k;
        if (m == 0 || k == 0)
            return;
        if (nb->param) {
            if (!na->batched && RA == c->B && RA > 1 && c->ald[b] == k)
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans,
                            (int)RA, (int)k, (int)m, 1.0, G, (int)gl,
                            c->val[a], (int)k, 1.0, c->adj[b], (int)k);
            else
                for (size_t r = 0; r < RA; r++)
                    cblas_dgemv(CblasRowMajor, CblasTrans, (int)m, (int)k,
                                1.0, c->val[a] + r * c->vld[a], (int)k,
                                G + r * gl, 1, 1.0,
                                c->adj[b] + r * c->ald[b], 1);
        }
        if (na->param) {
            if (c->ald[a] == 0 && nb->batched && RA == c->B && RA > 1)
                cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)m,
                            (int)k, (int)RA, 1.0, G, (int)gl, c->val[b],
                            (int)c->vld[b], 1.0, c->adj[a], (int)k);
            else
                for (size_t r = 0; r < RA; r++)
                    cblas_dger(CblasRowMajor, (int)m, (int)k, 1.0,
                               G + r * gl, 1, c->val[b] + r * c->vld[b], 1,
                               c->adj[a] + r * c->ald[a], (int)k);
        }
        return;
    }
    case DRIFT_G_MATMUL: {
        size_t m = n->m, k = n->k, nn = n->n;
        if (m == 0 || k == 0 || nn == 0)
            return;
        for (size_t r = 0; r < RA; r++) {
            const double *A = c->val[a] + r * c->vld[a];
            const double *Bm = c->val[b] + r * c->vld[b];
            const double *g = G + r * gl;
            if (na->param)
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)m,
                            (int)k, (int)nn, 1.0, g, (int)nn, Bm, (int)nn,
                            1.0, c->adj[a] + r * c->ald[a], (int)k);
            if (nb->param)
                cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)k,
                            (int)nn, (int)m, 1.0, A, (int)k, g, (int)nn, 1.0,
                            c->adj[b] + r * c->ald[b], (int)nn);
        }
        return;
    }
    case DRIFT_G_SLICE:
        if (!na->param)
            return;
        for (size_t r = 0; r < RA; r++) {
            double *ga = c->adj[a] + r * c->ald[a] + n->off;
            const double *g = G + r * gl;
            for (size_t j = 0; j < sz; j++)
                ga[j] += g[j];
        }
        return;
    case DRIFT_G_GATHER:
        if (!na->param)
            return;
        for (size_t r = 0; r < RA; r++) {
            size_t i = (size_t)n->idx[row_id(c, r)];
            double *ga = c->adj[a] + r * c->ald[a] + i * sz;
            const double *g = G + r * gl;
            for (size_t j = 0; j < sz; j++)
                ga[j] += g[j];
        }
        return;
    case DRIFT_G_DIST: {
        size_t m = n->m, prow = n->batched ? c->B : 1;
        for (int k = 0; k < n->n_in; k++) {
            int x = drift_gin(n, k);
            const drift_gnode *nx = NODE(c, x);
            if (!nx->param)
                continue;
            size_t st = nx->sz == m ? 1 : 0;
            const double *P = c->part[id] + (size_t)k * prow * m;
            if (m == 1 && st) {
                /* One term a row (y ~ bernoulli_logit(z), y ~ normal(mu,
                 * sigma) over a batch): the terms of a stretch of rows,
                 * then added by add_terms. */
                size_t pl = n->batched ? 1 : 0;
                double t[BWD_CHUNK];
                for (size_t r0 = 0; r0 < RA; r0 += BWD_CHUNK) {
                    size_t mm = RA - r0 < BWD_CHUNK ? RA - r0 : BWD_CHUNK;
                    const double *Gr = G + r0 * gl, *Pr = P + r0 * pl;
                    if (n->guard)
                        for (size_t q = 0; q < mm; q++) {
                            double g = Gr[q * gl];
                            t[q] = g == 0 ? 0 : g * Pr[q * pl];
                        }
                    else if (gl == 1 && pl == 1)
                        for (size_t q = 0; q < mm; q++)
                            t[q] = Gr[q] * Pr[q];
                    else
                        for (size_t q = 0; q < mm; q++)
                            t[q] = Gr[q * gl] * Pr[q * pl];
                    add_terms(c->adj[x], c->ald[x], r0, t, mm);
                }
                continue;
            }
            for (size_t r = 0; r < RA; r++) {
                const double *p = P + (n->batched ? r : 0) * m;
                double g = G[r * gl];
                double *gx = c->adj[x] + r * c->ald[x];
                if (n->guard && g == 0)
                    continue;
                if (st)
                    for (size_t j = 0; j < m; j++)
                        gx[j] += g * p[j];
                else {
                    double s = 0;
                    for (size_t j = 0; j < m; j++)
                        s += p[j];
                    gx[0] += g * s;
                }
            }
        }
        return;
    }
    case DRIFT_G_ORDERED: {
        int cp = drift_gin(n, 2);
        const drift_gnode *nc = NODE(c, cp);
        if (!nb->param && !nc->param)
            return;
        size_t m = n->m, sy = na->sz == m ? 1 : 0, se = nb->sz == m ? 1 : 0;
        for (size_t r = 0; r < RA; r++) {
            double g = G[r * gl];
            if (n->guard && g == 0)
                continue;
            const double *P = c->part[id] + (n->batched ? r : 0) * m * 3;
            double *ge = nb->param ? c->adj[b] + r * c->ald[b] : NULL;
            double *gc = nc->param ? c->adj[cp] + r * c->ald[cp] : NULL;
            for (size_t j = 0; j < m; j++) {
                const double *p = P + j * 3;
                if (ge)
                    ge[j * se] += g * p[0];
                if (gc) {
                    size_t k = (size_t)c->val[a][r * c->vld[a] + j * sy];
                    if (k > 1)
                        gc[k - 2] += g * p[1];
                    if (k <= nc->sz)
                        gc[k - 1] += g * p[2];
                }
            }
        }
        return;
    }
    case DRIFT_G_CATLOGIT: {
        if (!nb->param)
            return;
        size_t K = nb->sz;
        for (size_t r = 0; r < RA; r++) {
            size_t vr = n->batched ? r : 0;
            const double *soft = c->part[id] + vr * K;
            size_t y = (size_t)c->val[a][r * c->vld[a]] - 1;
            double g = G[r * gl];
            double *ge = c->adj[b] + r * c->ald[b];
            for (size_t j = 0; j < K; j++)
                ge[j] -= g * soft[j];
            ge[y] += g;
        }
        return;
    }
    case DRIFT_G_TERMS:
        for (int k = 0; k < n->n_in; k++) {
            int t = drift_gin(n, k);
            if (!NODE(c, t)->param)
                continue;
            for (size_t r = 0; r < RA; r++)
                c->adj[t][r * c->ald[t]] += G[r * gl];
        }
        return;
    case DRIFT_G_XFORM:
    case DRIFT_G_XFORM_LJ: {
        if (!na->param)
            return;
        size_t fs, os;
        xform_sizes(n, &fs, &os);
        double *work = c->part[id] + 2 * os;
        drift_constraint con = (drift_constraint)n->fn;
        for (size_t r = 0; r < RA; r++) {
            const double *u = c->val[a] + r * c->vld[a];
            double *gu = c->adj[a] + r * c->ald[a];
            for (size_t e = 0; e < n->k; e++) {
                if (n->op == DRIFT_G_XFORM)
                    drift_transform_reverse(con, n->m, n->n, u + e * fs, NULL,
                                            G + r * gl + e * os, 0,
                                            gu + e * fs, work);
                else
                    drift_transform_reverse(con, n->m, n->n, u + e * fs, NULL,
                                            NULL, G[r * gl], gu + e * fs,
                                            work);
            }
        }
        return;
    }
    case DRIFT_G_CHOL:
        if (na->param)
            rev_chol(c, id);
        return;
    case DRIFT_G_TRISOLVE:
        rev_trisolve(c, id);
        return;
    case DRIFT_G_ASSEMBLE:
        rev_assemble(c, id);
        return;
    case DRIFT_G_ROWSUM:
    case DRIFT_G_CUMSUM:
    case DRIFT_G_RMAX:
    case DRIFT_G_RMIN:
        if (na->param)
            rev_reduce(c, id);
        return;
    case DRIFT_G_SELECT:
        rev_select(c, id);
        return;
    case DRIFT_G_RPROD:
        if (na->param)
            rev_prod(c, id);
        return;
    case DRIFT_G_RNG:
        return;
    }
}

/* ---- forward-mode kernels ------------------------------------------------------ */

/* Tangent of node id from its inputs' (values already computed). */
static void tangent_node(drift_ad_ctx *c, int id)
{
    const drift_gnode *n = NODE(c, id);
    size_t R = vrows(c, n), sz = n->sz;
    double *T = c->tan[id];
    size_t tl = c->tld[id];
    int a = n->n_in > 0 ? drift_gin(n, 0) : -1;
    int b = n->n_in > 1 ? drift_gin(n, 1) : -1;
    const drift_gnode *na = a >= 0 ? NODE(c, a) : NULL;
    const drift_gnode *nb = b >= 0 ? NODE(c, b) : NULL;
    switch (n->op) {
    case DRIFT_G_CONST:
    case DRIFT_G_ROWVAR:
    case DRIFT_G_THETA:
        return;
    case DRIFT_G_LOWER:
    case DRIFT_G_UPPER:
    case DRIFT_G_BOUNDED:
        for (size_t r = 0; r < R; r++) {
            const double *u = c->val[a] + r * c->vld[a];
            const double *tu = c->tan[a] + r * c->tld[a];
            for (size_t j = 0; j < sz; j++)
                T[r * tl + j] = tu[j] * trans_d(n->op, u[j], n->a, n->b);
        }
        return;
    case DRIFT_G_LOGJAC:
        for (size_t r = 0; r < R; r++) {
            const double *u = c->val[a] + r * c->vld[a];
            const double *tu = c->tan[a] + r * c->tld[a];
            double s = 0;
            for (size_t j = 0; j < na->sz; j++)
                s += tu[j] * logjac_d(n->fn, u[j]);
            T[r * tl] = s;
        }
        return;
    case DRIFT_G_NEG:
        for (size_t r = 0; r < R; r++)
            for (size_t j = 0; j < sz; j++)
                T[r * tl + j] = -c->tan[a][r * c->tld[a] + j];
        return;
    case DRIFT_G_ADD:
    case DRIFT_G_SUB:
    case DRIFT_G_MUL:
    case DRIFT_G_DIV:
    case DRIFT_G_POW:
    case DRIFT_G_LSE2:
    case DRIFT_G_FMIN: case DRIFT_G_FMAX: case DRIFT_G_LDE:
    case DRIFT_G_LT: case DRIFT_G_LE: case DRIFT_G_GT: case DRIFT_G_GE:
    case DRIFT_G_EQ: case DRIFT_G_NE: case DRIFT_G_AND: case DRIFT_G_OR: {
        size_t sa = na->sz == sz ? 1 : 0, sb = nb->sz == sz ? 1 : 0;
        for (size_t r = 0; r < R; r++) {
            const double *x = c->val[a] + r * c->vld[a];
            const double *y = c->val[b] + r * c->vld[b];
            const double *o = c->val[id] + r * c->vld[id];
            const double *tx = na->param ? c->tan[a] + r * c->tld[a] : NULL;
            const double *ty = nb->param ? c->tan[b] + r * c->tld[b] : NULL;
            for (size_t j = 0; j < sz; j++) {
                double da, db, t = 0;
                binary_d(n->op, x[j * sa], y[j * sb], o[j], &da, &db);
                if (tx)
                    t += da * tx[j * sa];
                if (ty)
                    t += db * ty[j * sb];
                T[r * tl + j] = t;
            }
        }
        return;
    }
    case DRIFT_G_UNARY:
        for (size_t r = 0; r < R; r++) {
            const double *x = c->val[a] + r * c->vld[a];
            const double *o = c->val[id] + r * c->vld[id];
            const double *tx = c->tan[a] + r * c->tld[a];
            for (size_t j = 0; j < sz; j++)
                T[r * tl + j] = tx[j] * unary_d(n->fn, x[j], o[j]);
        }
        return;
    case DRIFT_G_SUM:
    case DRIFT_G_SQNORM:
    case DRIFT_G_LSE: {
        size_t k = na->sz;
        for (size_t r = 0; r < R; r++) {
            const double *x = c->val[a] + r * c->vld[a];
            const double *tx = c->tan[a] + r * c->tld[a];
            double y = c->val[id][r * c->vld[id]], t = 0;
            if (n->op == DRIFT_G_SUM) {
                for (size_t j = 0; j < k; j++)
                    t += tx[j];
                t *= n->a;
            } else if (n->op == DRIFT_G_SQNORM) {
                for (size_t j = 0; j < k; j++)
                    t += 2 * x[j] * tx[j];
            } else if (isfinite(y)) {
                for (size_t j = 0; j < k; j++)
                    t += exp(x[j] - y) * tx[j];
            }
            T[r * tl] = t;
        }
        return;
    }
    case DRIFT_G_DOT: {
        size_t k = n->k;
        const drift_sparse *sp = sparse_rows(na) ? sparse_rows(na)
                                                 : sparse_rows(nb);
        if (sp) {
            /* x_i . t over row i's non-zeros (t: the dense operand's
             * tangent; the data have none). */
            int x = sparse_rows(na) ? b : a;
            sparse_dot_rows(c, sp, c->tan[x], c->tld[x], R, T, tl);
            return;
        }
        int first = 1;
        for (int side = 0; side < 2; side++) {
            int x = side ? b : a, other = side ? a : b;
            const drift_gnode *nx = NODE(c, x), *no = NODE(c, other);
            if (!nx->param)
                continue;
            double beta = first ? 0.0 : 1.0;
            first = 0;
            if (!nx->batched && no->batched && k > 0) {
                cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)c->B, (int)k,
                            1.0, c->val[other], (int)c->vld[other],
                            c->tan[x], 1, beta, T, (int)tl);
                continue;
            }
            for (size_t r = 0; r < R; r++) {
                double t = cblas_ddot((int)k, c->tan[x] + r * c->tld[x], 1,
                                      c->val[other] + r * c->vld[other], 1);
                T[r * tl] = beta * T[r * tl] + t;
            }
        }
        return;
    }
    case DRIFT_G_MATVEC: {
        size_t m = n->m, k = n->k;
        if (m == 0)
            return;
        for (size_t r = 0; r < R; r++)
            memset(T + r * tl, 0, m * sizeof *T);
        if (k == 0)
            return;
        if (!na->batched && nb->batched) {
            if (na->param)
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans,
                            (int)c->B, (int)m, (int)k, 1.0, c->val[b],
                            (int)c->vld[b], c->tan[a], (int)k, 1.0, T,
                            (int)tl);
            if (nb->param)
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans,
                            (int)c->B, (int)m, (int)k, 1.0, c->tan[b],
                            (int)c->tld[b], c->val[a], (int)k, 1.0, T,
                            (int)tl);
            return;
        }
        for (size_t r = 0; r < R; r++) {
            if (na->param)
                cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)m, (int)k, 1.0,
                            c->tan[a] + r * c->tld[a], (int)k,
                            c->val[b] + r * c->vld[b], 1, 1.0, T + r * tl, 1);
            if (nb->param)
                cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)m, (int)k, 1.0,
                            c->val[a] + r * c->vld[a], (int)k,
                            c->tan[b] + r * c->tld[b], 1, 1.0, T + r * tl, 1);
        }
        return;
    }
    case DRIFT_G_MATMUL: {
        size_t m = n->m, k = n->k, nn = n->n;
        for (size_t r = 0; r < R; r++) {
            memset(T + r * tl, 0, m * nn * sizeof *T);
            if (m == 0 || k == 0 || nn == 0)
                continue;
            if (na->param)
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m,
                            (int)nn, (int)k, 1.0, c->tan[a] + r * c->tld[a],
                            (int)k, c->val[b] + r * c->vld[b], (int)nn, 1.0,
                            T + r * tl, (int)nn);
            if (nb->param)
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m,
                            (int)nn, (int)k, 1.0, c->val[a] + r * c->vld[a],
                            (int)k, c->tan[b] + r * c->tld[b], (int)nn, 1.0,
                            T + r * tl, (int)nn);
        }
        return;
    }
    case DRIFT_G_SLICE:
        for (size_t r = 0; r < R; r++)
            memcpy(T + r * tl, c->tan[a] + r * c->tld[a] + n->off,
                   sz * sizeof *T);
        return;
    case DRIFT_G_GATHER:
        for (size_t r = 0; r < R; r++) {
            size_t i = (size_t)n->idx[row_id(c, r)];
            memcpy(T + r * tl, c->tan[a] + r * c->tld[a] + i * sz,
                   sz * sizeof *T);
        }
        return;
    case DRIFT_G_DIST: {
        size_t m = n->m, prow = n->batched ? c->B : 1;
        for (size_t r = 0; r < R; r++)
            T[r * tl] = 0;
        for (int k = 0; k < n->n_in; k++) {
            int x = drift_gin(n, k);
            const drift_gnode *nx = NODE(c, x);
            if (!nx->param)
                continue;
            size_t st = nx->sz == m ? 1 : 0;
            const double *P = c->part[id] + (size_t)k * prow * m;
            for (size_t r = 0; r < R; r++) {
                const double *p = P + r * m;
                const double *tx = c->tan[x] + r * c->tld[x];
                double t = 0;
                for (size_t j = 0; j < m; j++)
                    t += p[j] * tx[j * st];
                T[r * tl] += t;
            }
        }
        return;
    }
    case DRIFT_G_ORDERED: {
        int cp = drift_gin(n, 2);
        const drift_gnode *nc = NODE(c, cp);
        size_t m = n->m, sy = na->sz == m ? 1 : 0, se = nb->sz == m ? 1 : 0;
        for (size_t r = 0; r < R; r++) {
            const double *P = c->part[id] + (n->batched ? r : 0) * m * 3;
            const double *te = nb->param ? c->tan[b] + r * c->tld[b] : NULL;
            const double *tc = nc->param ? c->tan[cp] + r * c->tld[cp] : NULL;
            double t = 0;
            for (size_t j = 0; j < m; j++) {
                const double *p = P + j * 3;
                if (te)
                    t += p[0] * te[j * se];
                if (tc) {
                    size_t k = (size_t)c->val[a][r * c->vld[a] + j * sy];
                    if (k > 1)
                        t += p[1] * tc[k - 2];
                    if (k <= nc->sz)
                        t += p[2] * tc[k - 1];
                }
            }
            T[r * tl] = t;
        }
        return;
    }
    case DRIFT_G_CATLOGIT: {
        size_t K = nb->sz;
        for (size_t r = 0; r < R; r++) {
            const double *soft = c->part[id] + r * K;
            const double *te = c->tan[b] + r * c->tld[b];
            size_t y = (size_t)c->val[a][r * c->vld[a]] - 1;
            double t = te[y];
            for (size_t j = 0; j < K; j++)
                t -= soft[j] * te[j];
            T[r * tl] = t;
        }
        return;
    }
    case DRIFT_G_TERMS:
        for (size_t r = 0; r < R; r++) {
            double t = 0;
            for (int k = 0; k < n->n_in; k++) {
                int x = drift_gin(n, k);
                if (NODE(c, x)->param)
                    t += c->tan[x][r * c->tld[x]];
            }
            T[r * tl] = t;
        }
        return;
    case DRIFT_G_XFORM:
    case DRIFT_G_XFORM_LJ:
        (void)nb;
        xform_forward(c, id, 1);
        return;
    case DRIFT_G_CHOL:
        tan_chol(c, id);
        return;
    case DRIFT_G_TRISOLVE:
        tan_trisolve(c, id);
        return;
    case DRIFT_G_ASSEMBLE:
        tan_assemble(c, id);
        return;
    case DRIFT_G_ROWSUM:
    case DRIFT_G_CUMSUM:
    case DRIFT_G_RMAX:
    case DRIFT_G_RMIN:
        fwd_reduce(c, id, 1);
        return;
    case DRIFT_G_SELECT:
        fwd_select(c, id, 1);
        return;
    case DRIFT_G_RPROD:
        fwd_prod(c, id, 1);
        return;
    case DRIFT_G_RNG:
        return;
    }
}

/* ---- workspaces ------------------------------------------------------------------ */

static void *alloc_doubles(size_t n)
{
    return drift_malloc_array(n ? n : 1, sizeof(double));
}

void drift_ad_ws_free(drift_ad_ws *ws)
{
    if (!ws)
        return;
    for (size_t k = 0; k < ws->n_nodes; k++) {
        if (ws->own_val)
            drift_free(ws->own_val[k]);
        if (ws->own_adj)
            drift_free(ws->own_adj[k]);
        if (ws->own_tan)
            drift_free(ws->own_tan[k]);
        if (ws->own_part)
            drift_free(ws->own_part[k]);
        if (ws->own_adjpr)
            drift_free(ws->own_adjpr[k]);
    }
    drift_free(ws->own_val);
    drift_free(ws->own_adj);
    drift_free(ws->own_tan);
    drift_free(ws->own_part);
    drift_free(ws->own_adjpr);
    drift_free(ws->c.val);
    drift_free(ws->c.vld);
    drift_free(ws->c.adj);
    drift_free(ws->c.ald);
    drift_free(ws->c.arows);
    drift_free(ws->c.tan);
    drift_free(ws->c.tld);
    drift_free(ws->c.part);
    drift_free(ws->mark);
    drift_free(ws->glm_buf);
    drift_free(ws);
}

drift_ad_ws *drift_ad_ws_new(const drift_graph *g, size_t cap)
{
    drift_ad_ws *ws = drift_calloc(1, sizeof *ws);
    if (!ws)
        return NULL;
    size_t nn = g->n_nodes;
    ws->n_nodes = nn;
    ws->cap = cap ? cap : 1;
    cap = ws->cap;
    ws->c.g = g;
    ws->own_val = drift_calloc(nn + 1, sizeof(double *));
    ws->own_adj = drift_calloc(nn + 1, sizeof(double *));
    ws->own_tan = drift_calloc(nn + 1, sizeof(double *));
    ws->own_part = drift_calloc(nn + 1, sizeof(double *));
    ws->own_adjpr = drift_calloc(nn + 1, sizeof(double *));
    ws->c.val = drift_calloc(nn + 1, sizeof(double *));
    ws->c.vld = drift_calloc(nn + 1, sizeof(size_t));
    ws->c.adj = drift_calloc(nn + 1, sizeof(double *));
    ws->c.ald = drift_calloc(nn + 1, sizeof(size_t));
    ws->c.arows = drift_calloc(nn + 1, sizeof(size_t));
    ws->c.tan = drift_calloc(nn + 1, sizeof(double *));
    ws->c.tld = drift_calloc(nn + 1, sizeof(size_t));
    ws->c.part = drift_calloc(nn + 1, sizeof(double *));
    ws->mark = drift_calloc(nn + 1, 1);
    if (!ws->own_val || !ws->own_adj || !ws->own_tan || !ws->own_part ||
        !ws->own_adjpr || !ws->c.val || !ws->c.vld || !ws->c.adj ||
        !ws->c.ald || !ws->c.arows || !ws->c.tan || !ws->c.tld ||
        !ws->c.part || !ws->mark)
        goto fail;
    size_t pr_bytes = 0;
    for (size_t id = 0; id < nn; id++) {
        const drift_gnode *n = &g->nodes[id];
        size_t rows = n->batched ? cap : 1;
        if (n->sz > SIZE_MAX / sizeof(double) / rows)
            goto fail;
        if (n->op == DRIFT_G_CONST) {
            ws->c.val[id] = n->cval;
            ws->c.vld[id] = 0;
            continue;
        }
        if (sparse_rows(n)) {
            /* Read in place by DOT's sparse kernels: no batch x D buffer. */
            ws->c.val[id] = NULL;
            ws->c.vld[id] = 0;
            continue;
        }
        if (n->op != DRIFT_G_THETA) {
            ws->own_val[id] = alloc_doubles(rows * n->sz);
            if (!ws->own_val[id])
                goto fail;
            ws->c.val[id] = ws->own_val[id];
            ws->c.vld[id] = n->batched ? n->sz : 0;
        }
        if (n->param && n->op != DRIFT_G_THETA) {
            ws->own_adj[id] = alloc_doubles(rows * n->sz);
            ws->own_tan[id] = alloc_doubles(rows * n->sz);
            if (!ws->own_adj[id] || !ws->own_tan[id])
                goto fail;
            if (!n->batched)
                pr_bytes += n->sz * sizeof(double);
        }
        size_t np = 0;
        if (n->op == DRIFT_G_DIST)
            np = (size_t)n->n_in * rows * n->m;
        else if (n->op == DRIFT_G_CATLOGIT)
            np = rows * g->nodes[drift_gin(n, 1)].sz;
        else if (n->op == DRIFT_G_ORDERED)
            np = 3 * rows * n->m;
        else if (n->op == DRIFT_G_XFORM || n->op == DRIFT_G_XFORM_LJ)
            np = xform_part_size(n);
        else if (n->op == DRIFT_G_CHOL)
            np = chol_part_size(n->m);
        else if (n->op == DRIFT_G_RPROD)
            np = g->nodes[drift_gin(n, 0)].sz;
        else if (n->op == DRIFT_G_TRISOLVE)
            np = rows * n->n * n->m + n->m * n->m;
        if (np) {
            ws->own_part[id] = alloc_doubles(np);
            if (!ws->own_part[id])
                goto fail;
            ws->c.part[id] = ws->own_part[id];
        }
    }
    if (g->glm && !(ws->glm_buf = alloc_doubles(7 * GLM_TILE)))
        goto fail;
    ws->pr_cap = cap;
    if (pr_bytes && pr_bytes * cap > PERROW_BYTES) {
        ws->pr_cap = PERROW_BYTES / pr_bytes;
        if (ws->pr_cap < 1)
            ws->pr_cap = 1;
    }
    return ws;
fail:
    drift_ad_ws_free(ws);
    return NULL;
}

/* Per-row adjoints of shared parameter nodes, allocated on first use. */
static int ensure_perrow(drift_ad_ws *ws, drift_err *e)
{
    if (ws->pr_ready)
        return DRIFT_OK;
    const drift_graph *g = ws->c.g;
    for (size_t id = 0; id < ws->n_nodes; id++) {
        const drift_gnode *n = &g->nodes[id];
        if (!n->param || n->batched || n->op == DRIFT_G_THETA)
            continue;
        if (n->sz > SIZE_MAX / sizeof(double) / ws->pr_cap ||
            !(ws->own_adjpr[id] = alloc_doubles(ws->pr_cap * n->sz)))
            return drift_err_set(e, DRIFT_ENOMEM,
                                 "out of memory for per-row gradients");
    }
    ws->pr_ready = 1;
    return DRIFT_OK;
}

/* ---- passes ------------------------------------------------------------------- */

static void set_batch(drift_ad_ws *ws, const drift_rows *b, size_t first,
                      size_t n, drift_err *e)
{
    ws->c.B = n;
    ws->c.rows = b && b->rows ? b->rows + first : NULL;
    ws->c.first = b && !b->rows ? b->first + first : first;
    ws->c.e = e;
}

/* Points a rows variable at its data: a view for a contiguous range,
 * else gathered into the node's buffer. */
static void load_rowvar(drift_ad_ws *ws, int id)
{
    drift_ad_ctx *c = &ws->c;
    const drift_gnode *n = NODE(c, id);
    const drift_rowbind *rb = n->rb;
    size_t sz = n->sz;
    if (rb->sp)
        return; /* sparse rows are read in place by their DOT */
    if (!c->rows && rb->contiguous && rb->ld && sz) {
        c->val[id] = (double *)rb->base + c->first * rb->ld + rb->cols[0];
        c->vld[id] = rb->ld;
        return;
    }
    double *buf = ws->own_val[id];
    c->val[id] = buf;
    c->vld[id] = sz;
    if (sz == 0)
        return;
    if (sz == 1) {
        size_t col = rb->cols[0];
        for (size_t r = 0; r < c->B; r++)
            buf[r] = rb->base[row_id(c, r) * rb->ld + col];
        return;
    }
    for (size_t r = 0; r < c->B; r++) {
        const double *row = rb->base + row_id(c, r) * rb->ld;
        double *out = buf + r * sz;
        if (rb->contiguous)
            memcpy(out, row + rb->cols[0], sz * sizeof *out);
        else
            for (size_t k = 0; k < sz; k++)
                out[k] = row[rb->cols[k]];
    }
}

static int forward(drift_ad_ws *ws, const int *sched, size_t ns,
                   const double *theta, const double *v)
{
    drift_ad_ctx *c = &ws->c;
    for (size_t k = 0; k < ns; k++) {
        int id = sched[k];
        const drift_gnode *n = NODE(c, id);
        switch (n->op) {
        case DRIFT_G_CONST:
            continue;
        case DRIFT_G_THETA:
            c->val[id] = (double *)theta + n->off;
            c->vld[id] = 0;
            if (v) {
                c->tan[id] = (double *)v + n->off;
                c->tld[id] = 0;
            }
            continue;
        case DRIFT_G_ROWVAR:
            load_rowvar(ws, id);
            continue;
        default:
            break;
        }
        int rc = drift_ad_forward_node(c, id);
        if (rc)
            return rc;
        if (v && n->param) {
            c->tan[id] = ws->own_tan[id];
            c->tld[id] = n->batched ? n->sz : 0;
            tangent_node(c, id);
        }
    }
    return DRIFT_OK;
}

/* Points every parameter node's adjoint at zeroed storage: per row when
 * perrow, else one row for shared nodes.  THETA nodes accumulate into
 * out (ld: its row stride, 0 for a summed gradient). */
static int setup_adjoints(drift_ad_ws *ws, const int *sched, size_t ns,
                          int perrow, double *out, size_t ld,
                          const unsigned char *skip, drift_err *e)
{
    drift_ad_ctx *c = &ws->c;
    if (perrow && ensure_perrow(ws, e))
        return DRIFT_ENOMEM;
    for (size_t k = 0; k < ns; k++) {
        int id = sched[k];
        const drift_gnode *n = NODE(c, id);
        if (!n->param || (skip && skip[id]))
            continue;
        if (n->op == DRIFT_G_THETA) {
            c->adj[id] = out ? out + n->off : NULL;
            c->ald[id] = ld;
            c->arows[id] = ld ? c->B : 1;
            continue;
        }
        if (n->batched) {
            c->adj[id] = ws->own_adj[id];
            c->ald[id] = n->sz;
            c->arows[id] = c->B;
        } else if (perrow) {
            c->adj[id] = ws->own_adjpr[id];
            c->ald[id] = n->sz;
            c->arows[id] = c->B;
        } else {
            c->adj[id] = ws->own_adj[id];
            c->ald[id] = 0;
            c->arows[id] = 1;
        }
        memset(c->adj[id], 0, c->arows[id] * n->sz * sizeof(double));
    }
    return DRIFT_OK;
}

static void backward(drift_ad_ws *ws, const int *sched, size_t ns, int out,
                     const unsigned char *skip)
{
    drift_ad_ctx *c = &ws->c;
    for (size_t r = 0; r < c->arows[out]; r++)
        c->adj[out][r * c->ald[out]] = 1;
    for (size_t k = ns; k-- > 0;) {
        int id = sched[k];
        if (!NODE(c, id)->param || (skip && skip[id]))
            continue;
        backward_node(c, id);
    }
}

/* A reject of the prior (datum 0) or of the rows (1) whose condition
 * holds (in one of the n rows evaluated): its message, written to stderr
 * the first time, as the error; 0 when none holds. */
static int rejected(drift_ad_ctx *c, const drift_graph *g, int datum,
                    size_t n)
{
    for (size_t k = 0; k < g->n_rejects; k++) {
        drift_greject *r = &g->rejects[k];
        if (r->datum != datum)
            continue;
        for (size_t i = 0; i < n; i++) {
            if (c->val[r->node][i * c->vld[r->node]] == 0)
                continue;
            const drift_gnode *nd = NODE(c, r->node);
            if (!__atomic_exchange_n(&r->shown, 1, __ATOMIC_RELAXED))
                fprintf(drift_msg_stream(),
                        "%s:%d:%d: reject: %s (the draw is rejected; "
                        "further rejections here are not shown)\n",
                        g->src ? g->src->name : "model", nd->loc.first_line,
                        nd->loc.first_column, r->msg);
            if (datum)
                return node_error(c, r->node, "rejected: %s (data row %zu)",
                                  r->msg, row_id(c, i) + 1);
            return node_error(c, r->node, "rejected: %s", r->msg);
        }
    }
    return 0;
}

/* A scalar output out of the shared nodes (schedule sched) and its
 * gradient: the log prior, or its log-Jacobians alone (jac). */
static int shared_scalar(const drift_graph *g, drift_ad_ws *ws,
                         const double *theta, int out, const int *sched,
                         size_t ns, int jac, double *v, double *grad,
                         drift_err *e)
{
    drift_ad_ctx *c = &ws->c;
    set_batch(ws, NULL, 0, 1, e);
    c->need_part = grad != NULL;
    if (grad)
        memset(grad, 0, g->dim * sizeof *grad);
    int rc = forward(ws, sched, ns, theta, NULL);
    if (rc)
        return rc;
    *v = c->val[out][0];
    if (!isfinite(*v)) {
        if (!jac && (rc = rejected(c, g, 0, 1)))
            return rc;
        return node_error(c, out, "the log %s is %g",
                          jac ? "Jacobian of the constraints" : "prior", *v);
    }
    if (!grad || !NODE(c, out)->param)
        return DRIFT_OK;
    if ((rc = setup_adjoints(ws, sched, ns, 0, grad, 0, NULL, e)))
        return rc;
    backward(ws, sched, ns, out, NULL);
    return DRIFT_OK;
}

int drift_ad_prior(const drift_graph *g, drift_ad_ws *ws, const double *theta,
                   double *lp, double *grad, drift_err *e)
{
    return shared_scalar(g, ws, theta, g->prior_out, g->prior_sched,
                         g->n_prior_sched, 0, lp, grad, e);
}

int drift_ad_log_jacobian(const drift_graph *g, drift_ad_ws *ws,
                          const double *theta, double *lj, double *grad,
                          drift_err *e)
{
    if (g->jac_out < 0) {
        *lj = 0;
        if (grad)
            memset(grad, 0, g->dim * sizeof *grad);
        return DRIFT_OK;
    }
    return shared_scalar(g, ws, theta, g->jac_out, g->jac_sched,
                         g->n_jac_sched, 1, lj, grad, e);
}

/* Rows evaluated at once by drift_ad_lik's summed gradient. */
#define LIK_TILE 256

static int lik_chunk(const drift_graph *g, drift_ad_ws *ws,
                     const double *theta, const drift_rows *b, size_t first,
                     size_t n, double *ll_rows, double *ll_sum,
                     double *grad_sum, double *grad_rows, drift_err *e)
{
    drift_ad_ctx *c = &ws->c;
    int out = g->datum_out;
    set_batch(ws, b, first, n, e);
    c->need_part = grad_sum || grad_rows;
    int rc = forward(ws, g->datum_sched, g->n_datum_sched, theta, NULL);
    if (rc)
        return rc;
    const double *L = c->val[out];
    size_t ll = c->vld[out];
    if (g->n_rejects) {
        size_t r = 0;
        while (r < n && isfinite(L[r * ll]))
            r++;
        if (r < n && (rc = rejected(c, g, 1, n)))
            return rc;
    }
    if (ll_rows)
        for (size_t r = 0; r < n; r++)
            ll_rows[r] = L[r * ll];
    if (ll_sum) {
        /* the rows' terms in the fixed order of sum_terms */
        if (ll == 1) {
            *ll_sum += sum_terms(L, n);
        } else {
            double t[BWD_CHUNK];
            for (size_t r0 = 0; r0 < n; r0 += BWD_CHUNK) {
                size_t m = n - r0 < BWD_CHUNK ? n - r0 : BWD_CHUNK;
                for (size_t k = 0; k < m; k++)
                    t[k] = L[(r0 + k) * ll];
                *ll_sum += sum_terms(t, m);
            }
        }
    }
    if (!grad_sum && !grad_rows)
        return DRIFT_OK;
    size_t d = g->dim;
    if (grad_rows)
        memset(grad_rows, 0, n * d * sizeof *grad_rows);
    if (!NODE(c, out)->param)
        return DRIFT_OK;
    if (grad_rows) {
        if ((rc = setup_adjoints(ws, g->datum_sched, g->n_datum_sched, 1,
                                 grad_rows, d, NULL, e)))
            return rc;
    } else if ((rc = setup_adjoints(ws, g->datum_sched, g->n_datum_sched, 0,
                                    grad_sum, 0, NULL, e))) {
        return rc;
    }
    backward(ws, g->datum_sched, g->n_datum_sched, out, NULL);
    return DRIFT_OK;
}

/* ---- full passes in generalised linear form ------------------------------- */

/* The linear predictor's term tm (kern.h's row kernels) for the batch's
 * rows, without its scale, into dst; a dense term also copies the column
 * C (stride ldc) of the same rows into cv, when C is not NULL, and then
 * returns 1. */
static int glm_term_rows(drift_ad_ws *ws, const drift_glm_term *tm,
                         const double *theta, double *dst, const double *C,
                         size_t ldc, double *cv)
{
    drift_ad_ctx *c = &ws->c;
    size_t n = c->B;
    const double *t = theta + tm->off;
    const drift_gnode *cn = tm->coef_node >= 0 ? NODE(c, tm->coef_node)
                                               : NULL;
    if (!cn || (!tm->onehot && cn->op == DRIFT_G_CONST)) {
        /* the same for every row: 1 . t or a constant's */
        size_t st = cn && cn->sz == tm->len ? 1 : 0;
        double v = 0;
        for (size_t j = 0; j < tm->len; j++)
            v += (cn ? cn->cval[j * st] : 1.0) * t[j];
        for (size_t r = 0; r < n; r++)
            dst[r] = v;
        return 0;
    }
    if (tm->onehot) {
        for (size_t r = 0; r < n; r++)
            dst[r] = t[(size_t)cn->idx[row_id(c, r)]];
        return 0;
    }
    const drift_sparse *sp = cn->rb->sp;
    if (sp) {
        drift_kern_sparse_dot_rows(n, c->rows, c->first, sp->row_ptr,
                                   sp->idx, sp->val, t, 0, dst, 1);
        return 0;
    }
    int id = tm->coef_node;
    load_rowvar(ws, id);
    if (cn->sz == tm->len) {
        drift_kern_dot_rows_col(n, tm->len, c->val[id], c->vld[id], t, dst,
                                C, ldc, cv);
        return C != NULL;
    }
    /* one value a row for the whole slice */
    double v = 0;
    for (size_t j = 0; j < tm->len; j++)
        v += t[j];
    for (size_t r = 0; r < n; r++)
        dst[r] = c->val[id][r * c->vld[id]] * v;
    return 0;
}

/* z = the linear predictor of the batch's rows: the terms in order,
 * scaled, then the data terms (tmp: a buffer of as many rows); and
 * cv[r] = C[r * ldc] when C is not NULL (glm_term_rows). */
static void glm_z(drift_ad_ws *ws, const double *theta, double *z,
                  double *tmp, const double *C, size_t ldc, double *cv)
{
    const drift_graph *g = ws->c.g;
    size_t n = ws->c.B;
    for (size_t t = 0; t < g->n_glm_terms; t++) {
        const drift_glm_term *tm = &g->glm_terms[t];
        double sc = tm->scale;
        double *dst = t == 0 ? z : tmp;
        if (glm_term_rows(ws, tm, theta, dst, C, ldc, cv))
            C = NULL;
        if (t == 0) {
            if (sc != 1)
                for (size_t r = 0; r < n; r++)
                    z[r] *= sc;
            continue;
        }
        for (size_t r = 0; r < n; r++)
            z[r] += sc * tmp[r];
    }
    /* the data terms: rows variables or constants of one value */
    drift_ad_ctx *c = &ws->c;
    for (size_t t = 0; t < g->n_glm_offsets; t++) {
        const drift_glm_term *tm = &g->glm_offsets[t];
        int id = tm->coef_node;
        if (NODE(c, id)->op == DRIFT_G_ROWVAR)
            load_rowvar(ws, id);
        const double *v = c->val[id];
        size_t vl = c->vld[id];
        for (size_t r = 0; r < n; r++)
            z[r] += tm->scale * v[r * vl];
    }
    if (C)
        for (size_t r = 0; r < n; r++)
            cv[r] = C[r * ldc];
}

/* grad += sum_r s_r x_r, x_r the batch's rows of the design (the terms'
 * coefficients, values loaded by glm_z). */
static void glm_grad(drift_ad_ws *ws, const double *s, double *grad,
                     double *tmp)
{
    drift_ad_ctx *c = &ws->c;
    const drift_graph *g = c->g;
    size_t n = c->B;
    for (size_t t = 0; t < g->n_glm_terms; t++) {
        const drift_glm_term *tm = &g->glm_terms[t];
        const double *ts = s;
        if (tm->scale != 1) {
            for (size_t r = 0; r < n; r++)
                tmp[r] = tm->scale * s[r];
            ts = tmp;
        }
        double *gt = grad + tm->off;
        const drift_gnode *cn = tm->coef_node >= 0 ? NODE(c, tm->coef_node)
                                                   : NULL;
        if (!cn || (!tm->onehot && cn->op == DRIFT_G_CONST)) {
            size_t st = cn && cn->sz == tm->len ? 1 : 0;
            double S = sum_terms(ts, n);
            for (size_t j = 0; j < tm->len; j++)
                gt[j] += cn ? S * cn->cval[j * st] : S;
            continue;
        }
        if (tm->onehot) {
            for (size_t r = 0; r < n; r++)
                gt[(size_t)cn->idx[row_id(c, r)]] += ts[r];
            continue;
        }
        const drift_sparse *sp = cn->rb->sp;
        int id = tm->coef_node;
        if (sp) {
            drift_kern_sparse_axpy_rows(n, c->rows, c->first, sp->row_ptr,
                                        sp->idx, sp->val, ts, 1, gt, 0);
        } else if (cn->sz == tm->len) {
            drift_kern_axpy_rows(n, tm->len, c->val[id], c->vld[id], ts, 1,
                                 gt);
        } else {
            double S = 0;
            for (size_t r = 0; r < n; r++)
                S += ts[r] * c->val[id][r * c->vld[id]];
            for (size_t j = 0; j < tm->len; j++)
                gt[j] += S;
        }
    }
}

/* bernoulli_logit(y | z) over the tile's n rows, z and y in the tile
 * buffers (glm_tile puts them there): each
 * row's value into ll_rows (when not NULL), their sum added to *ll_sum
 * (when not NULL) and s = dl/dz into s, through vmath.h's exp and kern.h's
 * arithmetic.  Without ll_rows the sum of the log(1 + e) terms is taken
 * as the logs of products of eight (1 + e) at a time, a log for eight rows
 * instead of a log1p for each: each 1 + e in (1, 2] rounds by at most
 * 2^-53 relative, so a row's term is off by at most 1.2e-16 (and each
 * product's log by 1 ulp of at most 8 log 2), well below the sum's own
 * rounding.  Returns -1, adding nothing, when some row's value is not
 * finite. */
static int glm_logit(drift_ad_ws *ws, double *ll_rows, double *ll_sum,
                     double *s)
{
    drift_ad_ctx *c = &ws->c;
    size_t n = c->B, n8 = (n + 7) & ~(size_t)7;
    double *zb = ws->glm_buf + 2 * GLM_TILE, *yb = zb + GLM_TILE;
    double *eb = yb + GLM_TILE, *lb = eb + GLM_TILE, *qb = lb + GLM_TILE;
    for (size_t r = 0; r < n; r++)
        eb[r] = -fabs(zb[r]);
    for (size_t r = n; r < n8; r++)
        zb[r] = yb[r] = eb[r] = 0;
    drift_vmath_exp(n8, eb, eb);
    double *l = NULL;
    if (ll_rows) {
        l = qb;
        drift_vmath_log1p(n8, eb, l);
    }
    double sum;
    if (drift_kern_logit(n, n8, zb, yb, eb, l, lb, s, l ? NULL : qb, &sum))
        return -1;
    if (ll_rows)
        memcpy(ll_rows, lb, n * sizeof *ll_rows);
    if (!ll_sum)
        return 0;
    if (l) {
        *ll_sum += sum;
        return 0;
    }
    /* the logs of each eight rows' product of (1 + e), as log1p(P - 1) */
    size_t ng = n8 / 8;
    drift_vmath_log1p(ng, qb, qb);
    *ll_sum += sum - sum_terms(qb, ng);
    return 0;
}

/* One tile of a full pass in generalised linear form, rows set by
 * set_batch: the linear predictor z from the terms by the row kernels,
 * then each row's term l and s = dl/dz, by glm_logit or by the
 * interpreter over the nodes above the predictor, then the gradient
 * sum_r s_r x_r from the terms while the tile's rows are in cache. */
static int glm_tile(const drift_graph *g, drift_ad_ws *ws,
                    const double *theta, double *ll_rows, double *ll_sum,
                    double *grad, int logit)
{
    drift_ad_ctx *c = &ws->c;
    size_t n = c->B;
    int L = g->glm_node, out = g->datum_out;
    double *sv = ws->glm_buf, *tmp = sv + GLM_TILE;
    double *z = ws->own_val[L];
    const double *l = NULL, *s = sv;
    size_t lld = 1;
    if (logit) {
        /* the outcomes copied by the predictor's kernel, row by row */
        double *zb = ws->glm_buf + 2 * GLM_TILE, *yb = zb + GLM_TILE;
        int y = g->glm_y;
        if (NODE(c, y)->op == DRIFT_G_ROWVAR)
            load_rowvar(ws, y);
        glm_z(ws, theta, zb, tmp, c->val[y], c->vld[y], yb);
        if (glm_logit(ws, ll_rows, ll_sum, sv))
            /* a row at fault: the interpreter names it */
            return glm_tile(g, ws, theta, ll_rows, ll_sum, grad, 0);
        if (grad)
            glm_grad(ws, s, grad, tmp);
        return DRIFT_OK;
    }
    glm_z(ws, theta, z, tmp, NULL, 0, NULL);
    if (out == L) {
        l = z;
        for (size_t r = 0; r < n; r++)
            sv[r] = 1;
    } else {
        const int *top = g->glm_top_sched;
        size_t nt = g->n_glm_top_sched;
        c->need_part = grad != NULL;
        int rc = forward(ws, top, nt, theta, NULL);
        if (rc)
            return rc;
        l = c->val[out];
        lld = c->vld[out];
        if (grad) {
            if ((rc = setup_adjoints(ws, top, nt, 0, NULL, 0, NULL, c->e)))
                return rc;
            c->adj[L] = ws->own_adj[L];
            c->ald[L] = 1;
            c->arows[L] = n;
            memset(c->adj[L], 0, n * sizeof(double));
            backward(ws, top, nt, out, NULL);
            s = c->adj[L];
        }
    }
    if (l && ll_rows)
        for (size_t r = 0; r < n; r++)
            ll_rows[r] = l[r * lld];
    if (l && ll_sum) {
        if (lld != 1) {
            for (size_t r = 0; r < n; r++)
                tmp[r] = l[r * lld];
            l = tmp;
        }
        *ll_sum += sum_terms(l, n);
    }
    if (grad)
        glm_grad(ws, s, grad, tmp);
    return DRIFT_OK;
}

/* Rows of a tile: as many as fit in GLM_TILE_BYTES of the terms' row
 * data, a multiple of 8 within [lo, GLM_TILE]. */
static size_t glm_tile_rows(const drift_graph *g, size_t lo)
{
    double bytes = 8;
    for (size_t t = 0; t < g->n_glm_terms; t++) {
        const drift_glm_term *tm = &g->glm_terms[t];
        const drift_gnode *cn = tm->coef_node >= 0
                                    ? &g->nodes[tm->coef_node]
                                    : NULL;
        if (!cn || cn->op != DRIFT_G_ROWVAR)
            bytes += 4;
        else if (cn->rb->sp && g->N)
            bytes += 12.0 * (double)cn->rb->sp->nnz / (double)g->N + 8;
        else
            bytes += 8.0 * (double)cn->sz;
    }
    double rows = GLM_TILE_BYTES / bytes;
    size_t k = rows >= GLM_TILE ? GLM_TILE : (size_t)rows & ~(size_t)7;
    return k < lo ? lo : k;
}

/* drift_ad_lik's sums in generalised linear form, tile by tile. */
static int glm_lik(const drift_graph *g, drift_ad_ws *ws, const double *theta,
                   const drift_rows *b, double *ll_rows, double *ll_sum,
                   double *grad_sum, drift_err *e)
{
    int logit = g->glm_y >= 0;
    size_t n = b->n;
    size_t tile = glm_tile_rows(g, logit ? GLM_TILE_MIN : GLM_TILE_MIN_TOP);
    for (size_t done = 0; done < n; done += tile) {
        size_t k = n - done < tile ? n - done : tile;
        set_batch(ws, b, done, k, e);
        int rc = glm_tile(g, ws, theta, ll_rows ? ll_rows + done : NULL,
                          ll_sum, grad_sum, logit);
        if (rc)
            return rc;
    }
    return DRIFT_OK;
}

int drift_ad_lik(const drift_graph *g, drift_ad_ws *ws, const double *theta,
                 const drift_rows *b, double *ll_rows, double *ll_sum,
                 double *grad_sum, double *grad_rows, drift_err *e)
{
    size_t d = g->dim, n = b->n;
    if (ll_sum)
        *ll_sum = 0;
    if (grad_sum)
        memset(grad_sum, 0, d * sizeof *grad_sum);
    if (n == 0)
        return DRIFT_OK;
    if (n > ws->cap)
        return drift_err_set(e, DRIFT_EINTERNAL,
                             "%zu rows exceed the workspace of %zu", n,
                             ws->cap);
    if (g->datum_out < 0)
        return drift_err_set(e, DRIFT_EINTERNAL,
                             "the model has no datum block");
    if (!grad_rows && g->glm && g->glm_fused)
        return glm_lik(g, ws, theta, b, ll_rows, ll_sum, grad_sum, e);
    if (!grad_rows) {
        /* Tiles of LIK_TILE rows, so that a tile's rows are still in cache
         * when the backward sweep reads them again (a full pass may ask
         * for many thousands of sparse rows at once); the gradient
         * accumulates over the tiles, zeroed once above. */
        for (size_t done = 0; done < n; done += LIK_TILE) {
            size_t k = n - done < LIK_TILE ? n - done : LIK_TILE;
            int rc = lik_chunk(g, ws, theta, b, done, k,
                               ll_rows ? ll_rows + done : NULL, ll_sum,
                               grad_sum, NULL, e);
            if (rc)
                return rc;
        }
        return DRIFT_OK;
    }
    /* Per-row gradients, in sub-batches that bound the per-row memory of
     * shared nodes. */
    size_t step = ws->pr_cap;
    for (size_t done = 0; done < n; done += step) {
        size_t k = n - done < step ? n - done : step;
        int rc = lik_chunk(g, ws, theta, b, done, k,
                           ll_rows ? ll_rows + done : NULL, ll_sum, NULL,
                           grad_rows + done * d, e);
        if (rc)
            return rc;
    }
    if (grad_sum)
        for (size_t r = 0; r < n; r++)
            for (size_t j = 0; j < d; j++)
                grad_sum[j] += grad_rows[r * d + j];
    return DRIFT_OK;
}

int drift_ad_jvp(const drift_graph *g, drift_ad_ws *ws, const double *theta,
                 const double *v, const drift_rows *b, double *out,
                 double *ll_rows, drift_err *e)
{
    size_t n = b->n;
    if (n == 0)
        return DRIFT_OK;
    if (n > ws->cap)
        return drift_err_set(e, DRIFT_EINTERNAL,
                             "%zu rows exceed the workspace of %zu", n,
                             ws->cap);
    if (g->datum_out < 0)
        return drift_err_set(e, DRIFT_EINTERNAL,
                             "the model has no datum block");
    drift_ad_ctx *c = &ws->c;
    set_batch(ws, b, 0, n, e);
    c->need_part = 1;
    int rc = forward(ws, g->datum_sched, g->n_datum_sched, theta, v);
    if (rc)
        return rc;
    int o = g->datum_out;
    for (size_t r = 0; r < n; r++) {
        if (ll_rows)
            ll_rows[r] = c->val[o][r * c->vld[o]];
        out[r] = NODE(c, o)->param ? c->tan[o][r * c->tld[o]] : 0;
    }
    return DRIFT_OK;
}

int drift_ad_glm_scalars(const drift_graph *g, drift_ad_ws *ws,
                         const double *theta, const drift_rows *b, double *s,
                         double *ll_rows, drift_err *e)
{
    size_t n = b->n;
    if (!g->glm)
        return drift_err_set(e, DRIFT_EINVAL,
                             "the model is not in generalised linear form");
    if (n == 0)
        return DRIFT_OK;
    if (n > ws->cap)
        return drift_err_set(e, DRIFT_EINTERNAL,
                             "%zu rows exceed the workspace of %zu", n,
                             ws->cap);
    drift_ad_ctx *c = &ws->c;
    set_batch(ws, b, 0, n, e);
    c->need_part = 1;
    int rc = forward(ws, g->datum_sched, g->n_datum_sched, theta, NULL);
    if (rc)
        return rc;
    int o = g->datum_out, L = g->glm_node;
    if (ll_rows)
        for (size_t r = 0; r < n; r++)
            ll_rows[r] = c->val[o][r * c->vld[o]];
    /* Reverse pass from the output down to the linear predictor only. */
    if ((rc = setup_adjoints(ws, g->datum_sched, g->n_datum_sched, 0, NULL, 0,
                             g->glm_inner, e)))
        return rc;
    if (L == o) {
        for (size_t r = 0; r < n; r++)
            s[r] = 1;
        return DRIFT_OK;
    }
    /* L itself is in glm_inner (not run) but its adjoint is collected. */
    c->adj[L] = ws->own_adj[L];
    c->ald[L] = NODE(c, L)->sz;
    c->arows[L] = n;
    memset(c->adj[L], 0, n * sizeof(double));
    backward(ws, g->datum_sched, g->n_datum_sched, o, g->glm_inner);
    for (size_t r = 0; r < n; r++)
        s[r] = c->adj[L][r * c->ald[L]];
    return DRIFT_OK;
}

/* xr += a x_row: the fixed vector of one row, scaled. */
static void add_design_row(const drift_graph *g, size_t row, double a,
                           double *xr)
{
    for (size_t t = 0; t < g->n_glm_terms; t++) {
        const drift_glm_term *tm = &g->glm_terms[t];
        double sc = a * tm->scale;
        if (tm->coef_node < 0) {
            for (size_t j = 0; j < tm->len; j++)
                xr[tm->off + j] += sc;
            continue;
        }
        if (tm->onehot) {
            xr[tm->off + (size_t)g->nodes[tm->coef_node].idx[row]] += sc;
            continue;
        }
        const drift_gnode *cn = &g->nodes[tm->coef_node];
        size_t st = cn->sz == tm->len ? 1 : 0;
        if (cn->op == DRIFT_G_CONST) {
            for (size_t j = 0; j < tm->len; j++)
                xr[tm->off + j] += sc * cn->cval[j * st];
        } else if (cn->rb->sp) {
            /* Sparse rows: their nonzeros only. */
            const drift_sparse *sp = cn->rb->sp;
            for (uint64_t j = sp->row_ptr[row]; j < sp->row_ptr[row + 1]; j++)
                xr[tm->off + sp->idx[j]] += sc * sp->val[j];
        } else {
            const drift_rowbind *rb = cn->rb;
            const double *base = rb->base + row * rb->ld;
            for (size_t j = 0; j < tm->len; j++)
                xr[tm->off + j] += sc * base[rb->cols[j * st]];
        }
    }
}

int drift_ad_glm_design(const drift_graph *g, const drift_rows *b, double *x,
                        drift_err *e)
{
    if (!g->glm)
        return drift_err_set(e, DRIFT_EINVAL,
                             "the model is not in generalised linear form");
    size_t d = g->dim;
    for (size_t r = 0; r < b->n; r++) {
        double *xr = x + r * d;
        memset(xr, 0, d * sizeof *xr);
        add_design_row(g, drift_rows_at(b, r), 1.0, xr);
    }
    return DRIFT_OK;
}

int drift_ad_glm_design_sum(const drift_graph *g, const drift_rows *b,
                            const double *w, double *out, drift_err *e)
{
    if (!g->glm)
        return drift_err_set(e, DRIFT_EINVAL,
                             "the model is not in generalised linear form");
    for (size_t r = 0; r < b->n; r++)
        add_design_row(g, drift_rows_at(b, r), w[r], out);
    return DRIFT_OK;
}

int drift_ad_predict(const drift_graph *g, drift_ad_ws *ws,
                     const double *theta, const drift_rows *b, double *pred,
                     double *y, drift_err *e)
{
    size_t n = b->n;
    if (g->outcome == DRIFT_OUTCOME_NONE)
        return drift_err_set(e, DRIFT_EINVAL, "the model has no outcome");
    if (n == 0)
        return DRIFT_OK;
    if (n > ws->cap)
        return drift_err_set(e, DRIFT_EINTERNAL,
                             "%zu rows exceed the workspace of %zu", n,
                             ws->cap);
    drift_ad_ctx *c = &ws->c;
    set_batch(ws, b, 0, n, e);
    c->need_part = 0;
    int rc = forward(ws, g->datum_sched, g->n_datum_sched, theta, NULL);
    if (rc)
        return rc;
    int yn = g->outcome_y, an = g->outcome_arg;
    size_t K = g->n_classes;
    for (size_t r = 0; r < n; r++) {
        y[r] = c->val[yn][r * c->vld[yn]];
        const double *a = c->val[an] + r * c->vld[an];
        switch (g->outcome_dist) {
        case DRIFT_D_BERNOULLI: pred[r] = a[0]; break;
        case DRIFT_D_BERNOULLI_LOGIT: pred[r] = drift_inv_logit(a[0]); break;
        case DRIFT_D_NORMAL: pred[r] = a[0]; break;
        case DRIFT_D_CATEGORICAL_LOGIT: {
            double mx = -INFINITY, s = 0;
            for (size_t j = 0; j < K; j++)
                if (a[j] > mx)
                    mx = a[j];
            for (size_t j = 0; j < K; j++)
                s += (pred[r * K + j] = exp(a[j] - mx));
            for (size_t j = 0; j < K; j++)
                pred[r * K + j] /= s;
            break;
        }
        default:
            return drift_err_set(e, DRIFT_EINTERNAL, "unknown outcome");
        }
    }
    return DRIFT_OK;
}

int drift_ad_eval_data(const drift_graph *g, drift_ad_ws *ws,
                       const int *targets, size_t n_targets, size_t first,
                       size_t n, drift_err *e)
{
    if (n > ws->cap)
        return drift_err_set(e, DRIFT_EINTERNAL,
                             "%zu rows exceed the workspace of %zu", n,
                             ws->cap);
    /* The data-only ancestors of the targets; inputs precede their nodes,
     * so one downward sweep finds them all. */
    memset(ws->mark, 0, g->n_nodes);
    for (size_t k = 0; k < n_targets; k++)
        if (!g->nodes[targets[k]].param)
            ws->mark[targets[k]] = 1;
    for (size_t id = g->n_nodes; id-- > 0;) {
        if (!ws->mark[id])
            continue;
        const drift_gnode *nd = &g->nodes[id];
        for (int k = 0; k < nd->n_in; k++) {
            int a = drift_gin(nd, k);
            if (!g->nodes[a].param)
                ws->mark[a] = 1;
        }
    }
    drift_rows b = {NULL, first, n};
    set_batch(ws, &b, 0, n, e);
    ws->c.need_part = 0;
    for (size_t id = 0; id < g->n_nodes; id++) {
        if (!ws->mark[id])
            continue;
        const drift_gnode *nd = &g->nodes[id];
        if (nd->op == DRIFT_G_CONST)
            continue;
        if (nd->op == DRIFT_G_ROWVAR) {
            load_rowvar(ws, (int)id);
            continue;
        }
        int rc = drift_ad_forward_node(&ws->c, (int)id);
        if (rc)
            return rc;
    }
    return DRIFT_OK;
}

const double *drift_ad_value(const drift_ad_ws *ws, int id, size_t *ld)
{
    *ld = ws->c.vld[id];
    return ws->c.val[id];
}

size_t drift_ad_ws_cap(const drift_ad_ws *ws)
{
    return ws->cap;
}

int drift_ad_eval(const drift_graph *g, drift_ad_ws *ws, const double *theta,
                  const int *sched, size_t ns, size_t first, size_t n,
                  struct drift_rand *rng, drift_err *e)
{
    (void)g;
    if (n > ws->cap)
        return drift_err_set(e, DRIFT_EINTERNAL,
                             "%zu rows exceed the workspace of %zu", n,
                             ws->cap);
    if (n == 0) {
        set_batch(ws, NULL, 0, 1, e);
    } else {
        drift_rows b = {NULL, first, n};
        set_batch(ws, &b, 0, n, e);
    }
    ws->c.need_part = 0;
    ws->c.rng = rng;
    int rc = forward(ws, sched, ns, theta, NULL);
    ws->c.rng = NULL;
    return rc;
}
