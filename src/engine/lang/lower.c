/* lower.c: lowering a type-checked program and its bound data to the
 * likelihood graph (see graph.h), the last pass of the language.  Constant
 * subexpressions are folded as they are built; indices by row data are
 * precomputed and range-checked over every row; outcomes are checked
 * against their distributions' supports; then the graph is analysed for
 * generalised linear form and for the outcome predictions use.  Not for
 * evaluation (ad.c). */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ad.h"
#include "cdf.h"
#include "base/util.h"
#include "graph.h"
#include "lower.h"
#include "parser/front.h"
#include "transform.h"

/* Rows evaluated at a time when checking data. */
#define CHECK_CHUNK 1024

/* No node or parameter vector may be larger: 2^28 doubles (2 GB), far
 * beyond any model drift is for, and within BLAS's int sizes. */
#define MAX_SIZE ((size_t)1 << 28)

typedef struct tilde_rec {
    drift_stmt *st;
    int node;
} tilde_rec;

typedef struct builder {
    drift_program *p;
    const drift_langdata *ld;
    drift_diag *d;
    drift_graph *g;
    size_t errors;
    int *sym_node;
    drift_ad_ctx fc;            /* for folding constants */
    drift_err fe;
    int *terms[3];              /* prior, datum, and the prior's
                                   constraint log-Jacobians again */
    size_t n_terms[3], cap_terms[3];
    tilde_rec *tildes;          /* the datum block's ~ statements */
    size_t n_tildes, cap_tildes;
} builder;

static void oom(builder *b)
{
    drift_diag_error_file(b->d, b->p->src->name, "out of memory building "
                                                 "the model");
    b->errors++;
}

/* ---- nodes ------------------------------------------------------------------ */

/* Entries of a value of type t, as a double (no bound: for messages and
 * num_elements); -1 when a dimension is not known. */
static double type_count(const drift_type *t)
{
    double n = 1;
    for (int k = 0; k < t->n_arr; k++)
        n *= t->arr[k].n < 0 ? NAN : (double)t->arr[k].n;
    if (t->kind == DRIFT_T_VECTOR || t->kind == DRIFT_T_MATRIX)
        n *= t->dim[0].n < 0 ? NAN : (double)t->dim[0].n;
    if (t->kind == DRIFT_T_MATRIX)
        n *= t->dim[1].n < 0 ? NAN : (double)t->dim[1].n;
    return n == n ? n : -1;
}

/* Entries of a value of type t; 0 with *bad set when a dimension is not
 * known or there are more than MAX_SIZE (bad_size says which). */
static size_t type_size(const drift_type *t, int *bad)
{
    size_t n = 1;
    drift_dim dims[DRIFT_MAX_ARRAY + 2];
    int nd = 0;
    for (int k = 0; k < t->n_arr; k++)
        dims[nd++] = t->arr[k];
    if (t->kind == DRIFT_T_VECTOR)
        dims[nd++] = t->dim[0];
    if (t->kind == DRIFT_T_MATRIX) {
        dims[nd++] = t->dim[0];
        dims[nd++] = t->dim[1];
    }
    for (int k = 0; k < nd; k++) {
        if (dims[k].n < 0) {
            *bad = 1;
            return 0;
        }
        if (dims[k].n && n > MAX_SIZE / (size_t)dims[k].n) {
            *bad = 1;
            return 0;
        }
        n *= (size_t)dims[k].n;
    }
    return n;
}

/* Reports why type_size found t bad at loc; -1, for the caller to
 * return.  A size limit is an error with the size, never a term left
 * out. */
static int bad_size(builder *b, const drift_type *t, drift_loc loc)
{
    char ty[128];
    drift_type_format(t, ty, sizeof ty);
    double n = type_count(t);
    if (n < 0)
        drift_diag_error(b->d, b->p->src, loc,
                         "internal error: the size of this %s is not known "
                         "when the model is built",
                         ty);
    else
        drift_diag_error(b->d, b->p->src, loc,
                         "this %s has %.0f entries, more than drift allows "
                         "in one value (2^28 = %zu)",
                         ty, n, MAX_SIZE);
    b->errors++;
    return -1;
}

static int grow(builder *b)
{
    drift_graph *g = b->g;
    if (g->n_nodes < g->cap_nodes)
        return 0;
    size_t cap = g->cap_nodes ? 2 * g->cap_nodes : 64;
    drift_gnode *nn = drift_realloc(g->nodes, cap * sizeof *nn);
    if (!nn)
        return -1;
    g->nodes = nn;
    double **nv = drift_realloc(b->fc.val, cap * sizeof *nv);
    if (!nv)
        return -1;
    b->fc.val = nv;
    size_t *nl = drift_realloc(b->fc.vld, cap * sizeof *nl);
    if (!nl)
        return -1;
    b->fc.vld = nl;
    g->cap_nodes = cap;
    return 0;
}

/* A new node over inputs in[n_in]; flags follow the inputs. */
static int new_node(builder *b, drift_gop op, int fn, const int *in, int n_in,
                    size_t sz, drift_loc loc)
{
    if (sz > MAX_SIZE) {
        drift_diag_error(b->d, b->p->src, loc,
                         "this expression has %zu entries, more than drift "
                         "allows in one value (2^28 = %zu)",
                         sz, MAX_SIZE);
        b->errors++;
        return -1;
    }
    if (grow(b)) {
        oom(b);
        return -1;
    }
    drift_graph *g = b->g;
    int id = (int)g->n_nodes;
    drift_gnode *n = &g->nodes[id];
    memset(n, 0, sizeof *n);
    n->op = op;
    n->fn = fn;
    n->n_in = n_in;
    n->sz = sz;
    n->loc = loc;
    n->idx_node = -1;
    if (n_in > DRIFT_GNODE_MAX_IN) {
        n->in_many = drift_malloc_array((size_t)n_in, sizeof(int));
        if (!n->in_many) {
            oom(b);
            return -1;
        }
        memcpy(n->in_many, in, (size_t)n_in * sizeof(int));
    } else if (n_in) {
        memcpy(n->in_buf, in, (size_t)n_in * sizeof(int));
    }
    for (int k = 0; k < n_in; k++) {
        const drift_gnode *x = &g->nodes[in[k]];
        n->batched |= x->batched;
        n->param |= x->param;
    }
    b->fc.val[id] = NULL;
    b->fc.vld[id] = 0;
    g->n_nodes++;
    return id;
}

static int const_node(builder *b, const double *v, size_t n, int is_int,
                      drift_loc loc)
{
    int id = new_node(b, DRIFT_G_CONST, 0, NULL, 0, n, loc);
    if (id < 0)
        return -1;
    drift_gnode *nd = &b->g->nodes[id];
    nd->cval = drift_malloc_array(n ? n : 1, sizeof(double));
    if (!nd->cval) {
        oom(b);
        return -1;
    }
    if (n)
        memcpy(nd->cval, v, n * sizeof(double));
    nd->is_int = (unsigned)is_int;
    b->fc.val[id] = nd->cval;
    return id;
}

static int const_scalar(builder *b, double v, int is_int, drift_loc loc)
{
    return const_node(b, &v, 1, is_int, loc);
}

/* Folds node id into a constant when every input is one. */
static int finish(builder *b, int id, int nofold)
{
    if (id < 0)
        return -1;
    drift_gnode *n = &b->g->nodes[id];
    if (nofold || n->op == DRIFT_G_CONST || n->op == DRIFT_G_ROWVAR ||
        n->op == DRIFT_G_THETA || n->op == DRIFT_G_GATHER)
        return id;
    for (int k = 0; k < n->n_in; k++)
        if (b->g->nodes[drift_gin(n, k)].op != DRIFT_G_CONST)
            return id;
    double *v = drift_malloc_array(n->sz ? n->sz : 1, sizeof(double));
    if (!v) {
        oom(b);
        return -1;
    }
    b->fc.val[id] = v;
    b->fc.vld[id] = 0;
    b->fc.B = 1;
    b->fc.rows = NULL;
    b->fc.first = 0;
    b->fc.e = &b->fe;
    b->fe.msg[0] = '\0';
    if (drift_ad_forward_node(&b->fc, id)) {
        /* The message starts "file:line:col: "; the report adds its own. */
        const char *msg = b->fe.msg;
        for (int colons = 0; *msg && colons < 3; msg++)
            colons += *msg == ':';
        while (*msg == ' ')
            msg++;
        drift_diag_error(b->d, b->p->src, n->loc, "%s",
                         *msg ? msg : b->fe.msg);
        b->errors++;
        drift_free(v);
        b->fc.val[id] = NULL;
        return -1;
    }
    int is_int = n->is_int;
    n = &b->g->nodes[id];
    drift_free(n->in_many);
    n->in_many = NULL;
    n->n_in = 0;
    n->op = DRIFT_G_CONST;
    n->cval = v;
    n->batched = 0;
    n->param = 0;
    n->is_int = (unsigned)is_int;
    return id;
}

static int node1(builder *b, drift_gop op, int fn, int a, size_t sz,
                 drift_loc loc)
{
    if (a < 0)
        return -1;
    return finish(b, new_node(b, op, fn, &a, 1, sz, loc), 0);
}

static int node2(builder *b, drift_gop op, int a, int c, size_t sz,
                 drift_loc loc)
{
    if (a < 0 || c < 0)
        return -1;
    int in[2] = {a, c};
    int id = new_node(b, op, 0, in, 2, sz, loc);
    if (id < 0)
        return -1;
    drift_gnode *n = &b->g->nodes[id];
    if (op == DRIFT_G_ADD || op == DRIFT_G_SUB || op == DRIFT_G_MUL)
        n->is_int = b->g->nodes[a].is_int && b->g->nodes[c].is_int;
    return finish(b, id, 0);
}

/* ---- expressions --------------------------------------------------------------- */

static int build_expr(builder *b, drift_expr *e);

static int build_index(builder *b, drift_expr *e)
{
    int cur = build_expr(b, e->a);
    if (cur < 0)
        return -1;
    drift_type t = e->a->type;
    for (drift_expr *ie = e->args; ie; ie = ie->next) {
        drift_type next;
        size_t range;
        if (t.n_arr > 0) {
            range = (size_t)t.arr[0].n;
            next = t;
            for (int k = 1; k < t.n_arr; k++)
                next.arr[k - 1] = t.arr[k];
            next.n_arr--;
        } else if (t.kind == DRIFT_T_VECTOR) {
            range = (size_t)t.dim[0].n;
            memset(&next, 0, sizeof next);
            next.kind = DRIFT_T_REAL;
        } else {
            range = (size_t)t.dim[0].n;
            memset(&next, 0, sizeof next);
            next.kind = DRIFT_T_VECTOR;
            next.dim[0] = t.dim[1];
        }
        int bad = 0;
        size_t esz = type_size(&next, &bad);
        if (bad)
            return bad_size(b, &next, e->loc);
        int ix = build_expr(b, ie);
        if (ix < 0)
            return -1;
        drift_gnode *in = &b->g->nodes[ix];
        if (in->op == DRIFT_G_CONST) {
            double v = in->cval[0];
            if (!(v >= 1 && v <= (double)range)) {
                char ty[128];
                drift_type_format(&t, ty, sizeof ty);
                drift_diag_error(b->d, b->p->src, ie->loc,
                                 "index %g is out of range for %s (indices "
                                 "run from 1 to %zu)",
                                 v, ty, range);
                b->errors++;
                return -1;
            }
            if ((size_t)v * esz > b->g->nodes[cur].sz) {
                /* within a size not yet known (drift check without
                 * data) but past the placeholder's values: zeros stand
                 * in for the element */
                double *zero = drift_calloc(esz ? esz : 1, sizeof *zero);
                if (!zero) {
                    oom(b);
                    return -1;
                }
                int is_int = (int)b->g->nodes[cur].is_int;
                cur = const_node(b, zero, esz, is_int, e->loc);
                drift_free(zero);
                if (cur < 0)
                    return -1;
                t = next;
                continue;
            }
            int id = new_node(b, DRIFT_G_SLICE, 0, &cur, 1, esz, e->loc);
            if (id < 0)
                return -1;
            b->g->nodes[id].off = ((size_t)v - 1) * esz;
            b->g->nodes[id].is_int = b->g->nodes[cur].is_int;
            cur = finish(b, id, 0);
        } else {
            int id = new_node(b, DRIFT_G_GATHER, 0, &cur, 1, esz, e->loc);
            if (id < 0)
                return -1;
            drift_gnode *gn = &b->g->nodes[id];
            gn->batched = 1;
            gn->idx_node = ix;
            gn->idx_range = range;
            gn->is_int = b->g->nodes[cur].is_int;
            cur = id;
        }
        if (cur < 0)
            return -1;
        t = next;
    }
    return cur;
}

/* ---- composite operations ---------------------------------------------------- */

/* Functions and distributions of vectors and matrices are built from a
 * few primitives (ASSEMBLE, ROWSUM, CHOL, TRISOLVE, the elementwise
 * operations and reductions), so that each gets its gradients, per-row
 * gradients and tangents from the primitives' kernels. */

static size_t nsz(builder *b, int id)
{
    return b->g->nodes[id].sz;
}

static int cst(builder *b, double v, drift_loc loc)
{
    return const_scalar(b, v, 0, loc);
}

static int un(builder *b, drift_fn_id fn, int a, drift_loc loc)
{
    if (a < 0)
        return -1;
    return node1(b, DRIFT_G_UNARY, (int)fn, a, nsz(b, a), loc);
}

/* Elementwise, scalars broadcast. */
static int bin(builder *b, drift_gop op, int x, int y, drift_loc loc)
{
    if (x < 0 || y < 0)
        return -1;
    size_t s = nsz(b, x) > nsz(b, y) ? nsz(b, x) : nsz(b, y);
    return node2(b, op, x, y, s, loc);
}

static int sum_of(builder *b, int a, double scale, drift_loc loc)
{
    if (a < 0)
        return -1;
    int id = new_node(b, DRIFT_G_SUM, 0, &a, 1, 1, loc);
    if (id < 0)
        return -1;
    b->g->nodes[id].a = scale;
    return finish(b, id, 0);
}

static int dot_of(builder *b, int x, int y, drift_loc loc)
{
    if (x < 0 || y < 0)
        return -1;
    int in[2] = {x, y};
    int id = new_node(b, DRIFT_G_DOT, 0, in, 2, 1, loc);
    if (id < 0)
        return -1;
    b->g->nodes[id].k = nsz(b, x);
    return finish(b, id, 0);
}

/* An ASSEMBLE node over in[n_in] (amap: sz entries, owned from here). */
static int assemble(builder *b, const int *in, int n_in, int64_t *amap,
                    size_t sz, drift_loc loc)
{
    for (int k = 0; k < n_in; k++)
        if (in[k] < 0) {
            drift_free(amap);
            return -1;
        }
    if (!amap) {
        oom(b);
        return -1;
    }
    int id = new_node(b, DRIFT_G_ASSEMBLE, 0, in, n_in, sz, loc);
    if (id < 0) {
        drift_free(amap);
        return -1;
    }
    b->g->nodes[id].amap = amap;
    int is_int = 1;
    for (int k = 0; k < n_in; k++)
        is_int &= b->g->nodes[in[k]].is_int;
    b->g->nodes[id].is_int = (unsigned)is_int;
    return finish(b, id, 0);
}

static int64_t *amap_new(builder *b, size_t n)
{
    int64_t *m = drift_malloc_array(n ? n : 1, sizeof *m);
    if (!m)
        oom(b);
    return m;
}

/* The transpose of an r x c matrix. */
static int transpose_of(builder *b, int a, size_t r, size_t c, drift_loc loc)
{
    int64_t *m = amap_new(b, r * c);
    if (!m)
        return -1;
    for (size_t i = 0; i < r; i++)
        for (size_t j = 0; j < c; j++)
            m[j * r + i] = (int64_t)(i * c + j);
    return assemble(b, &a, 1, m, r * c, loc);
}

/* Entries from..K-1 of the diagonal of a K x K matrix. */
static int diag_of(builder *b, int a, size_t K, size_t from, drift_loc loc)
{
    size_t n = K > from ? K - from : 0;
    int64_t *m = amap_new(b, n);
    if (!m)
        return -1;
    for (size_t i = from; i < K; i++)
        m[i - from] = (int64_t)(i * K + i);
    return assemble(b, &a, 1, m, n, loc);
}

/* v (r entries) repeated along each row of an r x c matrix (by_row), or
 * v (c entries) down each column. */
static int spread(builder *b, int v, size_t r, size_t c, int by_row,
                  drift_loc loc)
{
    int64_t *m = amap_new(b, r * c);
    if (!m)
        return -1;
    for (size_t i = 0; i < r; i++)
        for (size_t j = 0; j < c; j++)
            m[i * c + j] = (int64_t)(by_row ? i : j);
    return assemble(b, &v, 1, m, r * c, loc);
}

/* J copies of a K-vector, one after another. */
static int repeat(builder *b, int v, size_t K, size_t J, drift_loc loc)
{
    return spread(b, v, J, K, 0, loc);
}

static int rowsum_of(builder *b, int a, size_t w, drift_loc loc)
{
    if (a < 0 || w == 0)
        return -1;
    int id = new_node(b, DRIFT_G_ROWSUM, 0, &a, 1, nsz(b, a) / w, loc);
    if (id < 0)
        return -1;
    b->g->nodes[id].k = w;
    return finish(b, id, 0);
}

static int chol_of(builder *b, int a, size_t K, drift_loc loc)
{
    if (a < 0)
        return -1;
    int id = new_node(b, DRIFT_G_CHOL, 0, &a, 1, K * K, loc);
    if (id < 0)
        return -1;
    b->g->nodes[id].m = K;
    return finish(b, id, 0);
}

/* The nr vectors (K each) of B solved against lower triangular L. */
static int trisolve_of(builder *b, int L, int B, size_t K, size_t nr,
                       drift_loc loc)
{
    if (L < 0 || B < 0)
        return -1;
    int in[2] = {L, B};
    int id = new_node(b, DRIFT_G_TRISOLVE, 0, in, 2, K * nr, loc);
    if (id < 0)
        return -1;
    b->g->nodes[id].m = K;
    b->g->nodes[id].n = nr;
    return finish(b, id, 0);
}

static int matmul_of(builder *b, int x, int y, size_t m, size_t k, size_t n,
                     drift_loc loc)
{
    if (x < 0 || y < 0)
        return -1;
    int in[2] = {x, y};
    int id = new_node(b, n == 1 ? DRIFT_G_MATVEC : DRIFT_G_MATMUL, 0, in, 2,
                      m * n, loc);
    if (id < 0)
        return -1;
    b->g->nodes[id].m = m;
    b->g->nodes[id].k = k;
    b->g->nodes[id].n = n;
    return finish(b, id, 0);
}

static int cvec(builder *b, const double *v, size_t n, drift_loc loc)
{
    return const_node(b, v, n, 0, loc);
}

/* log of the LKJ normalising constant over K x K correlation matrices,
 * a function of the shape eta (node): sum over k = 1..K-1 of
 * (K-k) [(2 eta - 2 + K - k) log 2 + 2 lgamma(eta + (K-k-1)/2)
 *        - lgamma(2 eta + K - k - 1)]. */
static int lkj_log_const(builder *b, int eta, size_t K, drift_loc loc)
{
    if (K < 2)
        return cst(b, 0, loc);
    size_t n = K - 1;
    double *mk = drift_malloc_array(3 * n, sizeof *mk);
    if (!mk) {
        oom(b);
        return -1;
    }
    double *bk = mk + n, *b2 = mk + 2 * n;
    for (size_t k = 1; k < K; k++) {
        mk[k - 1] = (double)(K - k);
        bk[k - 1] = 0.5 * (double)(K - k - 1);
        b2[k - 1] = (double)(K - k - 1);
    }
    int vm = cvec(b, mk, n, loc), vb = cvec(b, bk, n, loc),
        v2 = cvec(b, b2, n, loc);
    drift_free(mk);
    int e2 = bin(b, DRIFT_G_MUL, cst(b, 2, loc), eta, loc);
    int A = bin(b, DRIFT_G_MUL,
                bin(b, DRIFT_G_ADD, bin(b, DRIFT_G_ADD, e2, cst(b, -2, loc), loc),
                    vm, loc),
                cst(b, M_LN2, loc), loc);
    int B = bin(b, DRIFT_G_MUL, cst(b, 2, loc),
                un(b, DRIFT_FN_LGAMMA, bin(b, DRIFT_G_ADD, eta, vb, loc), loc),
                loc);
    int C = un(b, DRIFT_FN_LGAMMA, bin(b, DRIFT_G_ADD, e2, v2, loc), loc);
    int t = bin(b, DRIFT_G_MUL, vm,
                bin(b, DRIFT_G_SUB, bin(b, DRIFT_G_ADD, A, B, loc), C, loc),
                loc);
    return sum_of(b, t, 1.0, loc);
}

/* The element length K of a vector or an array of vectors. */
static size_t vec_len(const drift_type *t)
{
    return t->dim[0].n > 0 ? (size_t)t->dim[0].n : 0;
}

static void composite_error(builder *b, drift_loc loc, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void composite_error(builder *b, drift_loc loc, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    drift_diag_error(b->d, b->p->src, loc, "%s", msg);
    b->errors++;
}

/* The log density of a multivariate distribution (rule not ELEM or
 * CATLOGIT) of outcome node y (type yt) and argument nodes arg[]. */
static int build_multivariate(builder *b, const drift_dist *d, int y,
                              const drift_type *yt, const int *arg,
                              drift_expr *args, drift_loc loc)
{
    switch (d->rule) {
    case DRIFT_DRULE_DIRICHLET: {
        size_t K = vec_len(yt), J = K ? nsz(b, y) / K : 0;
        int al = arg[0];
        if (K == 0)
            return cst(b, 0, loc);
        int lt = un(b, DRIFT_FN_LOG, y, loc);
        if (nsz(b, al) == K) {
            /* J (lgamma(sum a) - sum lgamma(a)) + sum((a - 1) .* log y) */
            int norm = bin(b, DRIFT_G_SUB,
                           un(b, DRIFT_FN_LGAMMA, sum_of(b, al, 1, loc), loc),
                           sum_of(b, un(b, DRIFT_FN_LGAMMA, al, loc), 1, loc),
                           loc);
            int am1 = bin(b, DRIFT_G_SUB, al, cst(b, 1, loc), loc);
            if (J > 1)
                am1 = repeat(b, am1, K, J, loc);
            return bin(b, DRIFT_G_ADD,
                       bin(b, DRIFT_G_MUL, cst(b, (double)J, loc), norm, loc),
                       dot_of(b, am1, lt, loc), loc);
        }
        int norm = bin(
            b, DRIFT_G_SUB,
            sum_of(b, un(b, DRIFT_FN_LGAMMA, rowsum_of(b, al, K, loc), loc), 1,
                   loc),
            sum_of(b, un(b, DRIFT_FN_LGAMMA, al, loc), 1, loc), loc);
        int am1 = bin(b, DRIFT_G_SUB, al, cst(b, 1, loc), loc);
        return bin(b, DRIFT_G_ADD, norm, dot_of(b, am1, lt, loc), loc);
    }
    case DRIFT_DRULE_MVN: {
        size_t K = vec_len(yt);
        int mu = arg[0];
        size_t ny = nsz(b, y), nm = nsz(b, mu);
        size_t J = K ? (ny > nm ? ny : nm) / K : 0;
        if (K == 0)
            return cst(b, 0, loc);
        if (ny < J * K)
            y = repeat(b, y, K, J, loc);
        if (nm < J * K && nm == K)
            mu = repeat(b, mu, K, J, loc);
        int L = d->id == DRIFT_D_MULTI_NORMAL ? chol_of(b, arg[1], K, loc)
                                              : arg[1];
        int z = trisolve_of(b, L, bin(b, DRIFT_G_SUB, y, mu, loc), K, J, loc);
        int ld = sum_of(b, un(b, DRIFT_FN_LOG, diag_of(b, L, K, 0, loc), loc),
                        (double)J, loc);
        int q = z < 0 ? -1 : node1(b, DRIFT_G_SQNORM, 0, z, 1, loc);
        int lp = bin(b, DRIFT_G_SUB,
                     bin(b, DRIFT_G_MUL, cst(b, -0.5, loc), q, loc), ld, loc);
        return bin(b, DRIFT_G_ADD, lp,
                   cst(b, -(double)(J * K) * 0.91893853320467274178, loc),
                   loc);
    }
    case DRIFT_DRULE_LKJ: {
        size_t K = vec_len(yt);
        int eta = arg[0];
        int logc = lkj_log_const(b, eta, K, loc);
        if (K < 2)
            return bin(b, DRIFT_G_SUB, cst(b, 0, loc), logc, loc);
        if (d->id == DRIFT_D_LKJ_CORR) {
            /* (eta - 1) log det(Omega) - log c */
            int ld = sum_of(b,
                            un(b, DRIFT_FN_LOG,
                               diag_of(b, chol_of(b, y, K, loc), K, 0, loc),
                               loc),
                            2.0, loc);
            return bin(b, DRIFT_G_SUB,
                       bin(b, DRIFT_G_MUL,
                           bin(b, DRIFT_G_SUB, eta, cst(b, 1, loc), loc), ld,
                           loc),
                       logc, loc);
        }
        /* sum_{i >= 1} (K - i - 3 + 2 eta) log L_ii - log c (0-based i) */
        double *cf = drift_malloc_array(K - 1, sizeof *cf);
        if (!cf) {
            oom(b);
            return -1;
        }
        for (size_t i = 1; i < K; i++)
            cf[i - 1] = (double)K - (double)i - 3;
        int vc = cvec(b, cf, K - 1, loc);
        drift_free(cf);
        int dl = un(b, DRIFT_FN_LOG, diag_of(b, y, K, 1, loc), loc);
        int lin = bin(b, DRIFT_G_ADD, dot_of(b, vc, dl, loc),
                      bin(b, DRIFT_G_MUL,
                          bin(b, DRIFT_G_MUL, cst(b, 2, loc), eta, loc),
                          sum_of(b, dl, 1, loc), loc),
                      loc);
        return bin(b, DRIFT_G_SUB, lin, logc, loc);
    }
    case DRIFT_DRULE_CATEGORICAL: {
        int th = arg[0];
        size_t K = nsz(b, th);
        int lt = un(b, DRIFT_FN_LOG, th, loc);
        const drift_gnode *yn = &b->g->nodes[y];
        if (yn->op == DRIFT_G_CONST) {
            double *cnt = drift_calloc(K ? K : 1, sizeof *cnt);
            if (!cnt) {
                oom(b);
                return -1;
            }
            for (size_t j = 0; j < yn->sz; j++) {
                double v = yn->cval[j];
                if (!(v >= 1 && v <= (double)K && v == floor(v))) {
                    composite_error(b, loc,
                                    "the outcome of categorical must be a "
                                    "category from 1 to K = %zu, found %g",
                                    K, v);
                    drift_free(cnt);
                    return -1;
                }
                cnt[(size_t)v - 1] += 1;
            }
            int vc = cvec(b, cnt, K, loc);
            drift_free(cnt);
            return dot_of(b, vc, lt, loc);
        }
        if (!yn->batched || yn->param || yn->sz != 1) {
            composite_error(b, loc,
                            "categorical's outcome must be data: an int, an "
                            "array of ints, or an int rows variable");
            return -1;
        }
        if (lt < 0)
            return -1;
        int id = new_node(b, DRIFT_G_GATHER, 0, &lt, 1, 1, loc);
        if (id < 0)
            return -1;
        drift_gnode *gn = &b->g->nodes[id];
        gn->batched = 1;
        gn->idx_node = y;
        gn->idx_range = K;
        return id;
    }
    default:
        (void)args;
        return -1;
    }
}

/* The log density of distribution d at outcome y with arguments args
 * (a '~' statement or name_lpdf(y | args)): the sum over the elements,
 * per row where anything varies by row. */
static int build_dist(builder *b, const drift_dist *d, drift_expr *ye,
                      drift_expr *args, unsigned tail, drift_loc loc);

static int build_density(builder *b, const drift_dist *d, drift_expr *ye,
                         drift_expr *args, drift_loc loc)
{
    return build_dist(b, d, ye, args, 0, loc);
}

/* The log density, or (tail set) the log cdf's sum over the elements of
 * distribution d at outcome y with arguments args. */
static int build_dist(builder *b, const drift_dist *d, drift_expr *ye,
                      drift_expr *args, unsigned tail, drift_loc loc)
{
    int in[DRIFT_DIST_MAX_ARGS + 1];
    int n = 0;
    in[n++] = build_expr(b, ye);
    for (drift_expr *a = args; a && n <= DRIFT_DIST_MAX_ARGS; a = a->next)
        in[n++] = build_expr(b, a);
    for (int k = 0; k < n; k++)
        if (in[k] < 0)
            return -1;
    if (d->rule == DRIFT_DRULE_GLM) {
        /* alpha + x * beta: a dot product per row, or a matrix-vector
         * product; the elementwise distribution of that predictor (so
         * the generalised-linear-form analysis finds it as written out) */
        size_t K = nsz(b, in[3]);
        int lin = args->type.kind == DRIFT_T_MATRIX
                      ? matmul_of(b, in[1], in[3], K ? nsz(b, in[1]) / K : 0,
                                  K, 1, loc)
                      : dot_of(b, in[1], in[3], loc);
        in[1] = bin(b, DRIFT_G_ADD, in[2], lin, loc);
        if (in[1] < 0)
            return -1;
        if (n == 5)
            in[2] = in[4];
        n -= 2;
        d = &drift_dists[drift_dist_glm_base(d->id)];
    }
    if (d->rule == DRIFT_DRULE_ORDERED) {
        int id = new_node(b, DRIFT_G_ORDERED,
                          d->id == DRIFT_D_ORDERED_PROBIT, in, 3, 1, loc);
        if (id >= 0) {
            size_t m = nsz(b, in[0]) > nsz(b, in[1]) ? nsz(b, in[0])
                                                     : nsz(b, in[1]);
            b->g->nodes[id].m = m;
        }
        return finish(b, id, 0);
    }
    if (d->rule != DRIFT_DRULE_ELEM && d->rule != DRIFT_DRULE_CATLOGIT)
        return build_multivariate(b, d, in[0], &ye->type, in + 1, args, loc);
    int id;
    if (d->id == DRIFT_D_CATEGORICAL_LOGIT) {
        id = new_node(b, DRIFT_G_CATLOGIT, 0, in, 2, 1, loc);
    } else {
        size_t m = 1;
        for (int k = 0; k < n; k++)
            if (b->g->nodes[in[k]].sz > m)
                m = b->g->nodes[in[k]].sz;
        id = new_node(b, DRIFT_G_DIST, (int)d->id, in, n, 1, loc);
        if (id >= 0) {
            b->g->nodes[id].m = m;
            b->g->nodes[id].tail = tail;
        }
    }
    return finish(b, id, 0);
}

/* An RNG node of distribution id over in[n] with sz draws per row. */
static int rng_node(builder *b, drift_dist_id id, const int *in, int n,
                    size_t sz, drift_loc loc)
{
    for (int k = 0; k < n; k++)
        if (in[k] < 0)
            return -1;
    int r = new_node(b, DRIFT_G_RNG, (int)id, in, n, sz, loc);
    if (r < 0)
        return -1;
    b->g->nodes[r].is_int = (unsigned)drift_dists[id].discrete;
    return r; /* never folded: every evaluation draws anew */
}

/* name_rng(args): elementwise draws, or the multivariate draws built from
 * them. */
static int build_rng(builder *b, drift_expr *e)
{
    const drift_dist *d = e->dist;
    int in[DRIFT_DIST_MAX_ARGS];
    int n = 0;
    for (drift_expr *a = e->args; a && n < DRIFT_DIST_MAX_ARGS; a = a->next)
        if ((in[n++] = build_expr(b, a)) < 0)
            return -1;
    drift_loc L = e->loc;
    int bad = 0;
    size_t sz = type_size(&e->type, &bad);
    if (bad)
        return bad_size(b, &e->type, L);
    switch (d->rule) {
    case DRIFT_DRULE_ELEM:
        return rng_node(b, d->id, in, n, sz, L);
    case DRIFT_DRULE_CATLOGIT: {
        int p = un(b, DRIFT_FN_EXP,
                   bin(b, DRIFT_G_SUB, in[0],
                       in[0] < 0 ? -1 : node1(b, DRIFT_G_LSE, 0, in[0], 1, L),
                       L),
                   L);
        return rng_node(b, DRIFT_D_CATEGORICAL, &p, 1, 1, L);
    }
    case DRIFT_DRULE_CATEGORICAL:
        return rng_node(b, DRIFT_D_CATEGORICAL, in, 1, 1, L);
    case DRIFT_DRULE_DIRICHLET: {
        /* Gamma draws normalised, in logs: exp(lg - log_sum_exp(lg)) (a
         * small alpha's draws underflow to 0, and 0 / 0 is NaN). */
        int ga[2] = {in[0], cst(b, 1, L)};
        int g = rng_node(b, DRIFT_D_GAMMA, ga, 2, sz, L);
        if (g < 0)
            return -1;
        b->g->nodes[g].m = 1; /* the draws' logs */
        return un(b, DRIFT_FN_EXP,
                  bin(b, DRIFT_G_SUB, g, node1(b, DRIFT_G_LSE, 0, g, 1, L),
                      L),
                  L);
    }
    case DRIFT_DRULE_MVN: {
        size_t K = vec_len(&e->args->type), J = K ? sz / K : 0;
        int zn[2] = {cst(b, 0, L), cst(b, 1, L)};
        int z = rng_node(b, DRIFT_D_NORMAL, zn, 2, sz, L);
        if (z < 0)
            return -1;
        /* The standard normals vary by row wherever the arguments do. */
        b->g->nodes[z].batched = b->g->nodes[in[0]].batched ||
                                 b->g->nodes[in[1]].batched;
        int Lc = d->id == DRIFT_D_MULTI_NORMAL ? chol_of(b, in[1], K, L)
                                               : in[1];
        int x = J == 1 ? matmul_of(b, Lc, z, K, K, 1, L)
                       : matmul_of(b, z, transpose_of(b, Lc, K, K, L), J, K,
                                   K, L);
        /* mu + L z through a node of the distribution's own, which
         * refuses a draw that is not finite (fwd_rng). */
        int y = bin(b, DRIFT_G_ADD, in[0], x, L);
        return y < 0 ? -1 : rng_node(b, d->id, &y, 1, sz, L);
    }
    case DRIFT_DRULE_LKJ: {
        size_t K = (size_t)e->type.dim[0].n;
        int r = rng_node(b, DRIFT_D_LKJ_CORR_CHOLESKY, &in[1], 1, K * K, L);
        if (r >= 0)
            b->g->nodes[r].m = K;
        if (d->id == DRIFT_D_LKJ_CORR_CHOLESKY || r < 0)
            return r;
        return matmul_of(b, r, transpose_of(b, r, K, K, L), K, K, K, L);
    }
    case DRIFT_DRULE_GLM: {
        /* the base distribution's draws at alpha + x * beta */
        const drift_type *tx = &e->args->type;
        size_t K = nsz(b, in[2]);
        int lin = tx->kind == DRIFT_T_MATRIX
                      ? matmul_of(b, in[0], in[2], K ? nsz(b, in[0]) / K : 0,
                                  K, 1, L)
                      : dot_of(b, in[0], in[2], L);
        int ba[2] = {bin(b, DRIFT_G_ADD, in[1], lin, L), n > 3 ? in[3] : -1};
        return rng_node(b, drift_dist_glm_base(d->id), ba, n > 3 ? 2 : 1, sz,
                        L);
    }
    case DRIFT_DRULE_ORDERED:
        return rng_node(b, d->id, in, 2, sz, L);
    }
    return -1;
}

/* gp_exp_quad_cov(x, alpha, rho) = alpha^2 exp(-|x_i - x_j|^2 / (2
 * rho^2)): the squared distances of the data x once, at build time. */
static int build_gp_cov(builder *b, drift_expr *e)
{
    int x = build_expr(b, e->args);
    int al = build_expr(b, e->args->next);
    int rho = build_expr(b, e->args->next->next);
    if (x < 0 || al < 0 || rho < 0)
        return -1;
    const drift_gnode *xn = &b->g->nodes[x];
    if (xn->op != DRIFT_G_CONST) {
        composite_error(b, e->args->loc,
                        "gp_exp_quad_cov: the inputs x must be data");
        return -1;
    }
    size_t N = (size_t)e->type.dim[0].n, k = N ? xn->sz / N : 0;
    if (N && N > MAX_SIZE / N) {
        composite_error(b, e->loc, "gp_exp_quad_cov: %zu x %zu is more than "
                                   "drift allows",
                        N, N);
        return -1;
    }
    double *D = drift_malloc_array(N ? N * N : 1, sizeof *D);
    if (!D) {
        oom(b);
        return -1;
    }
    for (size_t i = 0; i < N; i++)
        for (size_t j = 0; j < N; j++) {
            double s = 0;
            for (size_t q = 0; q < k; q++) {
                double d = xn->cval[i * k + q] - xn->cval[j * k + q];
                s += d * d;
            }
            D[i * N + j] = s;
        }
    int dn = cvec(b, D, N * N, e->loc);
    drift_free(D);
    drift_loc L = e->loc;
    /* -0.5 / rho^2 */
    int sc = bin(b, DRIFT_G_DIV, cst(b, -0.5, L),
                 un(b, DRIFT_FN_SQUARE, rho, L), L);
    return bin(b, DRIFT_G_MUL, un(b, DRIFT_FN_SQUARE, al, L),
               un(b, DRIFT_FN_EXP, bin(b, DRIFT_G_MUL, dn, sc, L), L), L);
}

/* A size known from a type: rows(x), cols(x), num_elements(x). */
static int shape_const(builder *b, drift_expr *e)
{
    const drift_type *t = &e->args->type;
    int bad = 0;
    double v;
    switch (e->fn->id) {
    case DRIFT_FN_ROWS:
        v = t->n_arr ? (double)t->arr[0].n
            : t->kind == DRIFT_T_VECTOR || t->kind == DRIFT_T_MATRIX
                ? (double)t->dim[0].n
                : 1;
        break;
    case DRIFT_FN_COLS:
        v = t->n_arr ? (t->n_arr > 1 ? (double)t->arr[1].n : 1)
            : t->kind == DRIFT_T_MATRIX ? (double)t->dim[1].n
                                        : 1;
        break;
    default:
        /* A count, not a value drift holds: no size limit applies. */
        v = type_count(t);
        bad = v < 0;
        break;
    }
    if (bad)
        return bad_size(b, t, e->loc);
    return const_scalar(b, v, 1, e->loc);
}

static int build_call(builder *b, drift_expr *e)
{
    drift_fn_id fn = e->fn->id;
    if (fn == DRIFT_FN_DENSITY)
        return build_density(b, e->dist, e->args, e->args->next, e->loc);
    if (fn == DRIFT_FN_LCDF || fn == DRIFT_FN_LCCDF || fn == DRIFT_FN_CDF) {
        /* the cdf of several elements is the product of theirs: the
         * exponential of the summed log cdfs */
        int l = build_dist(b, e->dist, e->args, e->args->next,
                           fn == DRIFT_FN_LCCDF ? DRIFT_CDF_UPPER
                                                : DRIFT_CDF_LOWER,
                           e->loc);
        return fn == DRIFT_FN_CDF ? un(b, DRIFT_FN_EXP, l, e->loc) : l;
    }
    if (fn == DRIFT_FN_RNG)
        return build_rng(b, e);
    if (fn == DRIFT_FN_ROWS || fn == DRIFT_FN_COLS ||
        fn == DRIFT_FN_NUM_ELEMENTS)
        return shape_const(b, e);
    if (e->n_args == 0) {
        double v = NAN;
        switch (fn) {
        case DRIFT_FN_PI: v = M_PI; break;
        case DRIFT_FN_E: v = M_E; break;
        case DRIFT_FN_SQRT2: v = M_SQRT2; break;
        case DRIFT_FN_NEGATIVE_INFINITY: v = -INFINITY; break;
        case DRIFT_FN_POSITIVE_INFINITY: v = INFINITY; break;
        case DRIFT_FN_MACHINE_PRECISION: v = 0x1p-52; break;
        default: break;
        }
        return cst(b, v, e->loc);
    }
    if (fn == DRIFT_FN_GP_EXP_QUAD_COV)
        return build_gp_cov(b, e);
    int a = build_expr(b, e->args);
    if (a < 0)
        return -1;
    size_t sa = b->g->nodes[a].sz;
    if (fn < DRIFT_FN_N_UNARY) {
        int id = node1(b, DRIFT_G_UNARY, (int)fn, a, sa, e->loc);
        if (id >= 0 && fn == DRIFT_FN_NOT)
            b->g->nodes[id].is_int = 1;
        return id;
    }
    int c = -1;
    if (e->n_args > 1 && (c = build_expr(b, e->args->next)) < 0)
        return -1;
    int c3 = -1;
    if (e->n_args > 2 && (c3 = build_expr(b, e->args->next->next)) < 0)
        return -1;
    size_t sc = c >= 0 ? b->g->nodes[c].sz : 0;
    const drift_type *ta = &e->args->type;
    size_t r = ta->dim[0].n > 0 ? (size_t)ta->dim[0].n : 0;
    size_t cl = ta->kind == DRIFT_T_MATRIX && ta->dim[1].n > 0
                    ? (size_t)ta->dim[1].n
                    : 1;
    int bad = 0;
    size_t out_sz = type_size(&e->type, &bad);
    drift_loc L = e->loc;
    switch (fn) {
    case DRIFT_FN_FMIN:
    case DRIFT_FN_FMAX:
    case DRIFT_FN_MIN:
    case DRIFT_FN_MAX: {
        int mx = fn == DRIFT_FN_FMAX || fn == DRIFT_FN_MAX;
        int id;
        if (c < 0)
            id = node1(b, mx ? DRIFT_G_RMAX : DRIFT_G_RMIN, 0, a, 1, L);
        else
            id = bin(b, mx ? DRIFT_G_FMAX : DRIFT_G_FMIN, a, c, L);
        if (id >= 0 && (fn == DRIFT_FN_MIN || fn == DRIFT_FN_MAX))
            b->g->nodes[id].is_int = e->type.kind == DRIFT_T_INT;
        return id;
    }
    case DRIFT_FN_LOG_DIFF_EXP:
        return bin(b, DRIFT_G_LDE, a, c, L);
    case DRIFT_FN_LCHOOSE: {
        /* lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1) */
        int one = cst(b, 1, L);
        return bin(b, DRIFT_G_SUB,
                   bin(b, DRIFT_G_SUB,
                       un(b, DRIFT_FN_LGAMMA, bin(b, DRIFT_G_ADD, a, one, L), L),
                       un(b, DRIFT_FN_LGAMMA, bin(b, DRIFT_G_ADD, c, one, L), L),
                       L),
                   un(b, DRIFT_FN_LGAMMA,
                      bin(b, DRIFT_G_ADD, bin(b, DRIFT_G_SUB, a, c, L), one, L),
                      L),
                   L);
    }
    case DRIFT_FN_LBETA:
        return bin(b, DRIFT_G_SUB,
                   bin(b, DRIFT_G_ADD, un(b, DRIFT_FN_LGAMMA, a, L),
                       un(b, DRIFT_FN_LGAMMA, c, L), L),
                   un(b, DRIFT_FN_LGAMMA, bin(b, DRIFT_G_ADD, a, c, L), L), L);
    case DRIFT_FN_SD:
    case DRIFT_FN_VARIANCE: {
        int dv = bin(b, DRIFT_G_SUB, a, sum_of(b, a, 1.0 / (double)sa, L), L);
        int v = bin(b, DRIFT_G_MUL,
                    dv < 0 ? -1 : node1(b, DRIFT_G_SQNORM, 0, dv, 1, L),
                    cst(b, sa > 1 ? 1.0 / (double)(sa - 1) : NAN, L), L);
        return fn == DRIFT_FN_SD ? un(b, DRIFT_FN_SQRT, v, L) : v;
    }
    case DRIFT_FN_LOG_MIX:
        if (c3 >= 0)
            return bin(b, DRIFT_G_LSE2,
                       bin(b, DRIFT_G_ADD, un(b, DRIFT_FN_LOG, a, L), c, L),
                       bin(b, DRIFT_G_ADD, un(b, DRIFT_FN_LOG1M, a, L), c3, L),
                       L);
        {
            int t = bin(b, DRIFT_G_ADD, un(b, DRIFT_FN_LOG, a, L), c, L);
            return t < 0 ? -1 : node1(b, DRIFT_G_LSE, 0, t, 1, L);
        }
    case DRIFT_FN_SOFTMAX:
    case DRIFT_FN_LOG_SOFTMAX: {
        int ls = bin(b, DRIFT_G_SUB, a, node1(b, DRIFT_G_LSE, 0, a, 1, L), L);
        return fn == DRIFT_FN_SOFTMAX ? un(b, DRIFT_FN_EXP, ls, L) : ls;
    }
    case DRIFT_FN_CUMULATIVE_SUM: {
        int id = node1(b, DRIFT_G_CUMSUM, 0, a, sa, L);
        if (id >= 0)
            b->g->nodes[id].is_int = b->g->nodes[a].is_int;
        return id;
    }
    case DRIFT_FN_APPEND_ROW: {
        int64_t *m = amap_new(b, sa + sc);
        if (!m)
            return -1;
        for (size_t j = 0; j < sa; j++)
            m[j] = (int64_t)(j * 2);
        for (size_t j = 0; j < sc; j++)
            m[sa + j] = (int64_t)(j * 2 + 1);
        int in[2] = {a, c};
        return assemble(b, in, 2, m, sa + sc, L);
    }
    case DRIFT_FN_APPEND_COL: {
        size_t ca = r ? sa / r : 0, cb = r ? sc / r : 0;
        int64_t *m = amap_new(b, sa + sc);
        if (!m)
            return -1;
        for (size_t i = 0; i < r; i++)
            for (size_t j = 0; j < ca + cb; j++)
                m[i * (ca + cb) + j] = j < ca
                                           ? (int64_t)((i * ca + j) * 2)
                                           : (int64_t)((i * cb + j - ca) * 2 + 1);
        int in[2] = {a, c};
        return assemble(b, in, 2, m, sa + sc, L);
    }
    case DRIFT_FN_ROWS_DOT_PRODUCT: {
        int p = bin(b, DRIFT_G_MUL, a, c, L);
        return ta->kind == DRIFT_T_MATRIX ? rowsum_of(b, p, cl, L) : p;
    }
    case DRIFT_FN_DIAG_PRE_MULTIPLY: {
        const drift_type *tm = &e->args->next->type;
        size_t rr = (size_t)tm->dim[0].n, cc = (size_t)tm->dim[1].n;
        return bin(b, DRIFT_G_MUL, spread(b, a, rr, cc, 1, L), c, L);
    }
    case DRIFT_FN_DIAG_POST_MULTIPLY:
        return bin(b, DRIFT_G_MUL, a, spread(b, c, r, cl, 0, L), L);
    case DRIFT_FN_QUAD_FORM_DIAG:
        return bin(b, DRIFT_G_MUL,
                   bin(b, DRIFT_G_MUL, spread(b, c, r, r, 1, L), a, L),
                   spread(b, c, r, r, 0, L), L);
    case DRIFT_FN_CHOLESKY_DECOMPOSE:
        return chol_of(b, a, r, L);
    case DRIFT_FN_MULTIPLY_LOWER_TRI_SELF_TRANSPOSE: {
        int64_t *m = amap_new(b, r * cl);
        if (!m)
            return -1;
        for (size_t i = 0; i < r; i++)
            for (size_t j = 0; j < cl; j++)
                m[i * cl + j] = j <= i ? (int64_t)(i * cl + j) : -1;
        int lt = assemble(b, &a, 1, m, r * cl, L);
        return matmul_of(b, lt, transpose_of(b, lt, r, cl, L), r, cl, r, L);
    }
    case DRIFT_FN_MDIVIDE_LEFT_TRI_LOW: {
        const drift_type *tb = &e->args->next->type;
        if (tb->kind == DRIFT_T_VECTOR)
            return trisolve_of(b, a, c, r, 1, L);
        size_t nc = (size_t)tb->dim[1].n;
        int zt = trisolve_of(b, a, transpose_of(b, c, r, nc, L), r, nc, L);
        return transpose_of(b, zt, nc, r, L);
    }
    case DRIFT_FN_DIAGONAL:
        return diag_of(b, a, r, 0, L);
    case DRIFT_FN_DIAG_MATRIX:
    case DRIFT_FN_ADD_DIAG: {
        size_t K = r;
        int v = fn == DRIFT_FN_DIAG_MATRIX ? a : c;
        int scalar = nsz(b, v) == 1 && fn == DRIFT_FN_ADD_DIAG;
        int64_t *m = amap_new(b, K * K);
        if (!m)
            return -1;
        for (size_t i = 0; i < K; i++)
            for (size_t j = 0; j < K; j++)
                m[i * K + j] = i == j ? (int64_t)(scalar ? 0 : i) : -1;
        int D = assemble(b, &v, 1, m, K * K, L);
        return fn == DRIFT_FN_DIAG_MATRIX ? D : bin(b, DRIFT_G_ADD, a, D, L);
    }
    case DRIFT_FN_TO_VECTOR:
        if (ta->kind == DRIFT_T_MATRIX && !ta->n_arr)
            return transpose_of(b, a, r, cl, L); /* column-major, as Stan */
        return a;
    case DRIFT_FN_TRANSPOSE:
        return transpose_of(b, a, r, cl, L);
    case DRIFT_FN_REP_VECTOR:
    case DRIFT_FN_REP_MATRIX: {
        if (bad)
            return bad_size(b, &e->type, L);
        int64_t *m = amap_new(b, out_sz);
        if (!m)
            return -1;
        for (size_t j = 0; j < out_sz; j++)
            m[j] = 0;
        return assemble(b, &a, 1, m, out_sz, L);
    }
    case DRIFT_FN_HEAD:
    case DRIFT_FN_TAIL:
    case DRIFT_FN_SEGMENT: {
        if (bad)
            return bad_size(b, &e->type, L);
        /* the first element taken, 0-based; the elements taken must lie
         * within the argument's sa */
        double first = fn == DRIFT_FN_TAIL      ? (double)sa - (double)out_sz
                       : fn == DRIFT_FN_SEGMENT ? b->g->nodes[c].cval[0] - 1
                                                : 0;
        if (!(first >= 0) || first + (double)out_sz > (double)sa) {
            drift_diag_error(b->d, b->p->src, L,
                             "%s: elements %.0f to %.0f of a value of %zu "
                             "are out of range",
                             fn == DRIFT_FN_HEAD   ? "head"
                             : fn == DRIFT_FN_TAIL ? "tail"
                                                   : "segment",
                             first + 1, first + (double)out_sz, sa);
            b->errors++;
            return -1;
        }
        size_t start = (size_t)first;
        int64_t *m = amap_new(b, out_sz);
        if (!m)
            return -1;
        for (size_t j = 0; j < out_sz; j++)
            m[j] = (int64_t)(start + j);
        return assemble(b, &a, 1, m, out_sz, L);
    }
    case DRIFT_FN_DISTANCE:
    case DRIFT_FN_SQUARED_DISTANCE: {
        int dv = bin(b, DRIFT_G_SUB, a, c, L);
        int q = dv < 0 ? -1 : node1(b, DRIFT_G_SQNORM, 0, dv, 1, L);
        return fn == DRIFT_FN_DISTANCE ? un(b, DRIFT_FN_SQRT, q, L) : q;
    }
    default:
        break;
    }
    switch (fn) {
    case DRIFT_FN_POW:
        return node2(b, DRIFT_G_POW, a, c, sa > sc ? sa : sc, e->loc);
    case DRIFT_FN_LOG_SUM_EXP:
        if (c >= 0)
            return node2(b, DRIFT_G_LSE2, a, c, sa > sc ? sa : sc, e->loc);
        return node1(b, DRIFT_G_LSE, 0, a, 1, e->loc);
    case DRIFT_FN_DOT: {
        int in[2] = {a, c};
        int id = new_node(b, DRIFT_G_DOT, 0, in, 2, 1, e->loc);
        if (id < 0)
            return -1;
        b->g->nodes[id].k = sa;
        return finish(b, id, 0);
    }
    case DRIFT_FN_SUM:
    case DRIFT_FN_MEAN: {
        int id = new_node(b, DRIFT_G_SUM, 0, &a, 1, 1, e->loc);
        if (id < 0)
            return -1;
        b->g->nodes[id].a = fn == DRIFT_FN_MEAN ? 1.0 / (double)sa : 1.0;
        return finish(b, id, 0);
    }
    case DRIFT_FN_SQUARED_NORM:
        return node1(b, DRIFT_G_SQNORM, 0, a, 1, e->loc);
    case DRIFT_FN_PROD:
        return node1(b, DRIFT_G_RPROD, 0, a, 1, e->loc);
    default:
        return -1;
    }
}

static int build_binop(builder *b, drift_expr *e)
{
    int x = build_expr(b, e->a), y = build_expr(b, e->b);
    if (x < 0 || y < 0)
        return -1;
    const drift_type *ta = &e->a->type, *tb = &e->b->type;
    size_t sx = b->g->nodes[x].sz, sy = b->g->nodes[y].sz;
    size_t sz = sx > sy ? sx : sy;
    if (e->op == DRIFT_OP_MUL && ta->n_arr == 0 && tb->n_arr == 0 &&
        ta->kind == DRIFT_T_MATRIX &&
        (tb->kind == DRIFT_T_VECTOR || tb->kind == DRIFT_T_MATRIX)) {
        int in[2] = {x, y};
        size_t m = (size_t)ta->dim[0].n, k = (size_t)ta->dim[1].n;
        size_t n = tb->kind == DRIFT_T_MATRIX ? (size_t)tb->dim[1].n : 1;
        if (n && m > MAX_SIZE / n) {
            drift_diag_error(b->d, b->p->src, e->loc,
                             "the product has %zu x %zu entries, more than "
                             "drift allows (2^28)",
                             m, n);
            b->errors++;
            return -1;
        }
        int id = new_node(b, tb->kind == DRIFT_T_VECTOR ? DRIFT_G_MATVEC
                                                        : DRIFT_G_MATMUL,
                          0, in, 2, m * n, e->loc);
        if (id < 0)
            return -1;
        drift_gnode *nd = &b->g->nodes[id];
        nd->m = m;
        nd->k = k;
        nd->n = n;
        return finish(b, id, 0);
    }
    drift_gop op;
    switch (e->op) {
    case DRIFT_OP_ADD: op = DRIFT_G_ADD; break;
    case DRIFT_OP_SUB: op = DRIFT_G_SUB; break;
    case DRIFT_OP_MUL:
    case DRIFT_OP_EMUL: op = DRIFT_G_MUL; break;
    case DRIFT_OP_DIV:
    case DRIFT_OP_EDIV: op = DRIFT_G_DIV; break;
    case DRIFT_OP_LT: op = DRIFT_G_LT; break;
    case DRIFT_OP_LE: op = DRIFT_G_LE; break;
    case DRIFT_OP_GT: op = DRIFT_G_GT; break;
    case DRIFT_OP_GE: op = DRIFT_G_GE; break;
    case DRIFT_OP_EQ: op = DRIFT_G_EQ; break;
    case DRIFT_OP_NE: op = DRIFT_G_NE; break;
    case DRIFT_OP_AND: op = DRIFT_G_AND; break;
    case DRIFT_OP_OR: op = DRIFT_G_OR; break;
    default: op = DRIFT_G_POW; break;
    }
    int id = node2(b, op, x, y, sz, e->loc);
    if (id >= 0 && op >= DRIFT_G_LT && op <= DRIFT_G_OR)
        b->g->nodes[id].is_int = 1;
    return id;
}

/* mean(x), sd(x), variance(x), sum(x), min(x), max(x) over every row
 * (the transformed block): the per-row argument is evaluated over the
 * rows in chunks, once, and the value is a constant of the graph. */
static int build_over_rows(builder *b, drift_expr *e)
{
    int a = build_expr(b, e->args);
    if (a < 0)
        return -1;
    drift_graph *g = b->g;
    size_t k = g->n_reductions;
    double *nr = drift_realloc(g->reductions, (k + 1) * sizeof *nr);
    if (!nr) {
        oom(b);
        return -1;
    }
    g->reductions = nr;
    if (b->ld->reductions) {
        if (k >= b->ld->n_reductions) {
            drift_diag_error(b->d, b->p->src, e->loc,
                             "internal error: no value given for %s over the "
                             "rows",
                             e->name);
            b->errors++;
            return -1;
        }
        nr[g->n_reductions++] = b->ld->reductions[k];
        return const_scalar(b, b->ld->reductions[k], 0, e->loc);
    }
    if (!b->ld->n_src) {
        /* No data (drift check describing the model): a stand-in. */
        nr[g->n_reductions++] = 1;
        return const_scalar(b, 1, 0, e->loc);
    }
    if (b->ld->rows_total && b->ld->rows_total != g->N) {
        drift_diag_error(b->d, b->p->src, e->loc,
                         "%s over the rows needs every row, but this process "
                         "holds a share of them (a run across ranks): give "
                         "the value as data instead",
                         e->name);
        b->errors++;
        return -1;
    }
    size_t N = g->nodes[a].batched ? g->N : 1;
    int sd = !strcmp(e->name, "sd"), var = !strcmp(e->name, "variance");
    if (N < (size_t)(sd || var ? 2 : 1)) {
        drift_diag_error(b->d, b->p->src, e->loc,
                         "%s over the rows needs at least %d row%s, but the "
                         "data give %zu",
                         e->name, sd || var ? 2 : 1, sd || var ? "s" : "",
                         N);
        b->errors++;
        return -1;
    }
    drift_ad_ws *ws = drift_ad_ws_new(g, N < CHECK_CHUNK ? N : CHECK_CHUNK);
    if (!ws) {
        oom(b);
        return -1;
    }
    /* Welford's running mean and sum of squared deviations. */
    double mean = 0, m2 = 0, sum = 0, lo = INFINITY, hi = -INFINITY;
    size_t n = 0;
    for (size_t first = 0; first < N; first += CHECK_CHUNK) {
        size_t cnt = N - first < CHECK_CHUNK ? N - first : CHECK_CHUNK;
        drift_err err = {{0}};
        if (drift_ad_eval_data(g, ws, &a, 1, first, cnt, &err)) {
            drift_diag_error(b->d, b->p->src, e->loc, "%s", err.msg);
            b->errors++;
            drift_ad_ws_free(ws);
            return -1;
        }
        size_t ld;
        const double *v = drift_ad_value(ws, a, &ld);
        for (size_t r = 0; r < cnt; r++) {
            double x = v[r * ld];
            n++;
            double dx = x - mean;
            mean += dx / (double)n;
            m2 += dx * (x - mean);
            sum += x;
            lo = x < lo ? x : lo;
            hi = x > hi ? x : hi;
        }
    }
    drift_ad_ws_free(ws);
    double val = sum;
    if (!strcmp(e->name, "mean"))
        val = mean;
    else if (var)
        val = m2 / (double)(n - 1);
    else if (sd)
        val = sqrt(m2 / (double)(n - 1));
    else if (!strcmp(e->name, "min"))
        val = lo;
    else if (!strcmp(e->name, "max"))
        val = hi;
    nr[g->n_reductions++] = val;
    return const_scalar(b, val, 0, e->loc);
}

static int build_expr(builder *b, drift_expr *e)
{
    switch (e->kind) {
    case DRIFT_E_NUM:
        return const_scalar(b, e->num, e->is_int, e->loc);
    case DRIFT_E_NAME: {
        int id = e->sym ? b->sym_node[e->sym->id] : -1;
        if (id < 0 && !b->errors) {
            drift_diag_error(b->d, b->p->src, e->loc,
                             "internal error: '%s' has no value", e->name);
            b->errors++;
        }
        return id;
    }
    case DRIFT_E_NEG: {
        int a = build_expr(b, e->a);
        if (a < 0)
            return -1;
        int is_int = b->g->nodes[a].is_int;
        int id = node1(b, DRIFT_G_NEG, 0, a, b->g->nodes[a].sz, e->loc);
        if (id >= 0)
            b->g->nodes[id].is_int = (unsigned)is_int;
        return id;
    }
    case DRIFT_E_NOT: {
        int a = build_expr(b, e->a);
        int id = un(b, DRIFT_FN_NOT, a, e->loc);
        if (id >= 0)
            b->g->nodes[id].is_int = 1;
        return id;
    }
    case DRIFT_E_COND: {
        int in[3] = {build_expr(b, e->a), build_expr(b, e->b),
                     build_expr(b, e->args)};
        if (in[0] < 0 || in[1] < 0 || in[2] < 0)
            return -1;
        size_t sz = nsz(b, in[1]) > nsz(b, in[2]) ? nsz(b, in[1])
                                                  : nsz(b, in[2]);
        int id = new_node(b, DRIFT_G_SELECT, 0, in, 3, sz, e->loc);
        if (id < 0)
            return -1;
        b->g->nodes[id].is_int = b->g->nodes[in[1]].is_int &&
                                 b->g->nodes[in[2]].is_int;
        return finish(b, id, 0);
    }
    case DRIFT_E_BINOP:
        return build_binop(b, e);
    case DRIFT_E_INDEX:
        return build_index(b, e);
    case DRIFT_E_CALL:
        return e->over_rows ? build_over_rows(b, e) : build_call(b, e);
    }
    return -1;
}

/* ---- statements ---------------------------------------------------------------- */

/* terms[JAC_TERMS]: the log-Jacobians among the prior's terms, summed
 * again into the graph's jac_out. */
#define JAC_TERMS 2

static int add_term(builder *b, int which, int id)
{
    if (b->n_terms[which] == b->cap_terms[which]) {
        size_t cap = b->cap_terms[which] ? 2 * b->cap_terms[which] : 16;
        int *nt = drift_realloc(b->terms[which], cap * sizeof *nt);
        if (!nt) {
            oom(b);
            return -1;
        }
        b->terms[which] = nt;
        b->cap_terms[which] = cap;
    }
    b->terms[which][b->n_terms[which]++] = id;
    return 0;
}

/* A statement whose expression could not be built must have said why:
 * dropping a term in silence samples another model.  Any failure that
 * reported nothing (errors still at before) becomes an error here. */
static void unbuilt(builder *b, size_t before, drift_loc loc)
{
    if (b->errors != before)
        return;
    drift_diag_error(b->d, b->p->src, loc,
                     "internal error: this statement could not be built "
                     "(no cause was reported); the model is refused rather "
                     "than run without it");
    b->errors++;
}

/* The text of print's or reject's strings, joined. */
static char *join_strings(const drift_pitem *it)
{
    size_t n = 1;
    for (const drift_pitem *p = it; p; p = p->next)
        n += p->str ? strlen(p->str) : 0;
    char *m = drift_malloc(n);
    if (!m)
        return NULL;
    m[0] = '\0';
    for (const drift_pitem *p = it; p; p = p->next)
        if (p->str)
            strcat(m, p->str);
    return m;
}

/* A reject of the prior (which 0) or the rows (1): its condition's node
 * and its message. */
static void add_reject(builder *b, int cond, const drift_pitem *items,
                       int which)
{
    drift_graph *g = b->g;
    drift_greject *nr = drift_realloc(g->rejects,
                                      (g->n_rejects + 1) * sizeof *nr);
    char *msg = nr ? join_strings(items) : NULL;
    if (!msg) {
        if (nr)
            g->rejects = nr;
        oom(b);
        return;
    }
    g->rejects = nr;
    nr[g->n_rejects].node = cond;
    nr[g->n_rejects].msg = msg;
    nr[g->n_rejects].shown = 0;
    nr[g->n_rejects].datum = which;
    g->n_rejects++;
}

/* A print of derived or generated: its values' nodes, appended to outs
 * (what the block's schedule evaluates). */
static void add_print(builder *b, const drift_stmt *st, int derived,
                      int *outs, size_t *n_outs)
{
    drift_graph *g = b->g;
    size_t n = 0;
    for (const drift_pitem *p = st->items; p; p = p->next)
        n++;
    drift_gprint *np = drift_realloc(g->prints,
                                     (g->n_prints + 1) * sizeof *np);
    if (!np) {
        oom(b);
        return;
    }
    g->prints = np;
    drift_gprint *pr = &np[g->n_prints];
    pr->derived = derived;
    pr->n = 0;
    pr->str = drift_calloc(n ? n : 1, sizeof *pr->str);
    pr->node = drift_malloc_array(n ? n : 1, sizeof *pr->node);
    g->n_prints++;
    if (!pr->str || !pr->node) {
        oom(b);
        return;
    }
    for (const drift_pitem *p = st->items; p && !b->errors; p = p->next) {
        size_t k = pr->n++;
        pr->node[k] = -1;
        if (p->str) {
            if (!(pr->str[k] = drift_strdup(p->str)))
                oom(b);
            continue;
        }
        int id = build_expr(b, p->e);
        if (id < 0)
            return;
        pr->node[k] = id;
        outs[(*n_outs)++] = id;
    }
}

static void build_stmt(builder *b, drift_stmt *st, int which)
{
    size_t before = b->errors;
    switch (st->kind) {
    case DRIFT_S_LET: {
        int id = build_expr(b, st->value);
        if (id < 0)
            unbuilt(b, before, st->loc);
        if (st->sym)
            b->sym_node[st->sym->id] = id;
        return;
    }
    case DRIFT_S_TARGET: {
        int id = build_expr(b, st->value);
        if (id < 0) {
            unbuilt(b, before, st->loc);
            return;
        }
        if (st->items && b->g->nodes[id].op == DRIFT_G_SELECT)
            add_reject(b, drift_gin(&b->g->nodes[id], 0), st->items, which);
        if (b->g->nodes[id].sz != 1) {
            /* target += of a vector adds up its elements. */
            int s = new_node(b, DRIFT_G_SUM, 0, &id, 1, 1, st->loc);
            if (s < 0) {
                unbuilt(b, before, st->loc);
                return;
            }
            b->g->nodes[s].a = 1.0;
            id = finish(b, s, 0);
        }
        if (id >= 0) {
            add_term(b, which, id);
            if (st->jacobian && which == 0)
                add_term(b, JAC_TERMS, id);
        } else {
            unbuilt(b, before, st->loc);
        }
        return;
    }
    case DRIFT_S_TILDE: {
        int id = build_density(b, st->d, st->lhs, st->args, st->loc);
        if (id < 0) {
            unbuilt(b, before, st->loc);
            return;
        }
        add_term(b, which, id);
        if (which == 1) {
            if (b->n_tildes == b->cap_tildes) {
                size_t cap = b->cap_tildes ? 2 * b->cap_tildes : 8;
                tilde_rec *nt = drift_realloc(b->tildes, cap * sizeof *nt);
                if (!nt) {
                    oom(b);
                    return;
                }
                b->tildes = nt;
                b->cap_tildes = cap;
            }
            b->tildes[b->n_tildes].st = st;
            b->tildes[b->n_tildes].node = id;
            b->n_tildes++;
        }
        return;
    }
    default:
        /* control flow: replaced by drift_control_lower when parsed */
        return;
    }
}

/* The sum of a block's terms. */
static int build_out(builder *b, int which, int batched, drift_loc loc)
{
    size_t n = b->n_terms[which];
    if (n == 1 && (!batched || b->g->nodes[b->terms[which][0]].batched))
        return b->terms[which][0];
    if (n > (size_t)1 << 30) {
        oom(b);
        return -1;
    }
    int id = new_node(b, DRIFT_G_TERMS, 0, b->terms[which], (int)n, 1, loc);
    if (id < 0)
        return -1;
    if (batched) {
        b->g->nodes[id].batched = 1;
        return id;
    }
    return finish(b, id, 0);
}

/* ---- symbols ---------------------------------------------------------------------- */

/* A scalar constant bound of a declaration, or NAN after an error. */
static double bound_value(builder *b, drift_expr *e, const char *which,
                          const char *name)
{
    size_t before = b->errors;
    int id = build_expr(b, e);
    if (id < 0) {
        unbuilt(b, before, e->loc);
        return NAN;
    }
    const drift_gnode *n = &b->g->nodes[id];
    if (n->op != DRIFT_G_CONST || n->sz != 1) {
        drift_diag_error(b->d, b->p->src, e->loc,
                         "the %s bound of '%s' must be a constant of the "
                         "data",
                         which, name);
        b->errors++;
        return NAN;
    }
    if (isnan(n->cval[0])) {
        drift_diag_error(b->d, b->p->src, e->loc,
                         "the %s bound of '%s' is not a number", which, name);
        b->errors++;
    }
    return n->cval[0];
}

static int bounds_of(builder *b, drift_sym *s, double *lo, double *hi)
{
    const drift_typeexpr *te = s->decl->type;
    *lo = -INFINITY;
    *hi = INFINITY;
    if (te->lower && isnan(*lo = bound_value(b, te->lower, "lower", s->name)))
        return -1;
    if (te->upper && isnan(*hi = bound_value(b, te->upper, "upper", s->name)))
        return -1;
    if (te->lower && te->upper && !(*lo < *hi)) {
        drift_diag_error(b->d, b->p->src, te->loc,
                         "the bounds of '%s' are empty: lower = %g is not "
                         "below upper = %g",
                         s->name, *lo, *hi);
        b->errors++;
        return -1;
    }
    return 0;
}

static void check_data_bounds(builder *b, drift_sym *s)
{
    double lo, hi;
    const drift_typeexpr *te = s->decl->type;
    if ((!te->lower && !te->upper) || bounds_of(b, s, &lo, &hi))
        return;
    const drift_symdata *sd = &b->ld->sd[s->id];
    if (s->kind == DRIFT_SYM_DATA) {
        for (size_t k = 0; k < sd->n; k++)
            if (!(sd->v[k] >= lo && sd->v[k] <= hi)) {
                char el[64] = "";
                if (sd->n > 1)
                    snprintf(el, sizeof el, " (element %zu)", k + 1);
                drift_diag_error(b->d, b->p->src, s->loc,
                                 "'%s' is %g%s, outside its declared bounds "
                                 "[%g, %g]",
                                 s->name, sd->v[k], el, lo, hi);
                b->errors++;
                return;
            }
        return;
    }
    const drift_rowbind *rb = &sd->rb;
    for (size_t i = 0; i < b->ld->N; i++)
        for (size_t k = 0; k < rb->sz; k++) {
            double x = rb->base[i * rb->ld + rb->cols[k]];
            if (!(x >= lo && x <= hi)) {
                drift_langdata_row_error(b->d, rb, i, k,
                                         "'%s' is %g, outside its declared "
                                         "bounds [%g, %g]",
                                         s->name, x, lo, hi);
                drift_diag_note(b->d, b->p->src, s->loc,
                                "'%s' is declared here", s->name);
                b->errors++;
                return;
            }
        }
}

/* Data declared with a structured type (simplex[K], cov_matrix[K], ...)
 * must satisfy its constraint, element by element and row by row. */
static void check_data_structure(builder *b, drift_sym *s)
{
    drift_constraint con = s->decl->type->con;
    if (!con)
        return;
    const drift_type *t = &s->type;
    size_t m = (size_t)t->dim[0].n;
    size_t n = t->kind == DRIFT_T_MATRIX ? (size_t)t->dim[1].n : 1;
    size_t os = drift_transform_size(con, m, n);
    double *work = drift_malloc_array(drift_transform_work(con, m, n) + os,
                                      sizeof(double));
    if (!work) {
        oom(b);
        return;
    }
    double *x = work + drift_transform_work(con, m, n);
    const drift_symdata *sd = &b->ld->sd[s->id];
    char why[200];
    if (s->kind == DRIFT_SYM_DATA) {
        size_t count = os ? sd->n / os : 0;
        for (size_t e = 0; e < count; e++)
            if (drift_transform_inverse(con, m, n, sd->v + e * os, NULL, why,
                                        sizeof why, work)) {
                char el[64] = "";
                if (count > 1)
                    snprintf(el, sizeof el, " (element %zu)", e + 1);
                drift_diag_error(b->d, b->p->src, s->loc,
                                 "'%s' is not %s%s: %s", s->name,
                                 drift_transform_what(con), el, why);
                b->errors++;
                break;
            }
        drift_free(work);
        return;
    }
    const drift_rowbind *rb = &sd->rb;
    size_t count = os ? rb->sz / os : 0;
    for (size_t i = 0; i < b->ld->N && !b->errors; i++)
        for (size_t e = 0; e < count; e++) {
            for (size_t k = 0; k < os; k++)
                x[k] = rb->base[i * rb->ld + rb->cols[e * os + k]];
            if (drift_transform_inverse(con, m, n, x, NULL, why, sizeof why,
                                        work)) {
                drift_langdata_row_error(b->d, rb, i, e * os,
                                         "'%s' is not %s: %s", s->name,
                                         drift_transform_what(con), why);
                drift_diag_note(b->d, b->p->src, s->loc,
                                "'%s' is declared here", s->name);
                b->errors++;
                break;
            }
        }
    drift_free(work);
}

/* The transform of a parameter of a structured type: theta's free values
 * become the constrained values, with the log-Jacobian in the prior. */
static void build_structured(builder *b, drift_sym *s, drift_gparam *gp,
                             int th)
{
    drift_graph *g = b->g;
    const drift_type *t = &s->type;
    int x = new_node(b, DRIFT_G_XFORM, (int)gp->con, &th, 1, gp->out_sz,
                     s->loc);
    int j = new_node(b, DRIFT_G_XFORM_LJ, (int)gp->con, &th, 1, 1, s->loc);
    if (x < 0 || j < 0)
        return;
    for (int id = x; id <= j; id++) {
        g->nodes[id].m = gp->con_m;
        g->nodes[id].n = gp->con_n;
        g->nodes[id].k = gp->con_count;
    }
    (void)t;
    gp->transform = DRIFT_G_XFORM;
    gp->value_node = x;
    b->sym_node[s->id] = x;
    add_term(b, 0, j);
    add_term(b, JAC_TERMS, j);
}

static void build_symbols(builder *b)
{
    drift_program *p = b->p;
    drift_graph *g = b->g;
    /* Data first: bounds and everything else may refer to them. */
    for (size_t k = 0; k < p->n_syms; k++) {
        drift_sym *s = p->syms[k];
        if (s->kind == DRIFT_SYM_SIZE || s->kind == DRIFT_SYM_N) {
            b->sym_node[k] = const_scalar(b, (double)s->value, 1, s->loc);
        } else if (s->kind == DRIFT_SYM_DATA) {
            const drift_symdata *sd = &b->ld->sd[k];
            b->sym_node[k] = const_node(b, sd->v, sd->n,
                                        s->decl->type->kind == DRIFT_T_INT,
                                        s->loc);
        }
    }
    for (size_t k = 0; k < p->n_syms; k++) {
        drift_sym *s = p->syms[k];
        if (s->kind == DRIFT_SYM_DATA || s->kind == DRIFT_SYM_ROWS) {
            check_data_bounds(b, s);
            check_data_structure(b, s);
        }
        if (s->kind != DRIFT_SYM_ROWS)
            continue;
        const drift_rowbind *rb = &b->ld->sd[k].rb;
        int id = new_node(b, DRIFT_G_ROWVAR, 0, NULL, 0, rb->sz, s->loc);
        if (id < 0)
            return;
        g->nodes[id].rb = rb;
        g->nodes[id].batched = 1;
        g->nodes[id].is_int = s->decl->type->kind == DRIFT_T_INT;
        b->sym_node[k] = id;
    }
    size_t n_params = 0;
    for (size_t k = 0; k < p->n_syms; k++)
        n_params += p->syms[k]->kind == DRIFT_SYM_PARAM;
    g->params = drift_calloc(n_params + 1, sizeof *g->params);
    if (!g->params) {
        oom(b);
        return;
    }
    for (size_t k = 0; k < p->n_syms; k++) {
        drift_sym *s = p->syms[k];
        if (s->kind != DRIFT_SYM_PARAM)
            continue;
        int bad = 0;
        size_t sz = type_size(&s->type, &bad), out_sz = sz;
        drift_constraint con = s->decl->type->con;
        size_t cm = 0, cn = 0, count = 1;
        if (con && !bad) {
            cm = (size_t)s->type.dim[0].n;
            cn = s->type.kind == DRIFT_T_MATRIX ? (size_t)s->type.dim[1].n
                                                : 1;
            for (int k = 0; k < s->type.n_arr; k++)
                count *= (size_t)s->type.arr[k].n;
            sz = count * drift_transform_free_size(con, cm, cn);
        }
        if (bad || g->dim + sz >= MAX_SIZE || g->n_out + out_sz >= MAX_SIZE) {
            drift_diag_error(b->d, p->src, s->loc,
                             "parameter '%s' makes the model larger than "
                             "drift allows (2^28 values)",
                             s->name);
            b->errors++;
            return;
        }
        drift_gparam *gp = &g->params[g->n_params++];
        gp->name = drift_strdup(s->name);
        if (!gp->name) {
            oom(b);
            return;
        }
        gp->type = s->type;
        gp->off = g->dim;
        gp->sz = sz;
        g->dim += sz;
        gp->out_off = g->n_out;
        gp->out_sz = out_sz;
        g->n_out += out_sz;
        gp->con = con;
        gp->con_m = cm;
        gp->con_n = cn;
        gp->con_count = count;
        int th = new_node(b, DRIFT_G_THETA, 0, NULL, 0, sz, s->loc);
        if (th < 0)
            return;
        g->nodes[th].param = 1;
        g->nodes[th].off = gp->off;
        gp->theta_node = gp->value_node = th;
        b->sym_node[k] = th;
        const drift_typeexpr *te = s->decl->type;
        if (con) {
            build_structured(b, s, gp, th);
            continue;
        }
        if (!te->lower && !te->upper)
            continue;
        double lo, hi;
        if (bounds_of(b, s, &lo, &hi))
            continue;
        drift_gop op = te->lower && te->upper ? DRIFT_G_BOUNDED
                       : te->lower           ? DRIFT_G_LOWER
                                             : DRIFT_G_UPPER;
        gp->transform = (int)op;
        gp->lo = lo;
        gp->hi = hi;
        int x = new_node(b, op, 0, &th, 1, sz, s->loc);
        int j = new_node(b, DRIFT_G_LOGJAC, (int)op, &th, 1, 1, s->loc);
        if (x < 0 || j < 0)
            return;
        g->nodes[x].a = g->nodes[j].a = lo;
        g->nodes[x].b = g->nodes[j].b = hi;
        gp->value_node = x;
        b->sym_node[k] = x;
        add_term(b, 0, j);
        add_term(b, JAC_TERMS, j);
    }
}

/* ---- data checks ----------------------------------------------------------------- */

/* Precomputes each row's index of every GATHER node, checking the range. */
static void precompute_gathers(builder *b, drift_ad_ws *ws)
{
    drift_graph *g = b->g;
    size_t N = g->N;
    for (size_t id = 0; id < g->n_nodes && !b->errors; id++) {
        drift_gnode *n = &g->nodes[id];
        if (n->op != DRIFT_G_GATHER)
            continue;
        n->idx = drift_malloc_array(N ? N : 1, sizeof(int32_t));
        if (!n->idx) {
            oom(b);
            return;
        }
        int ix = n->idx_node;
        for (size_t first = 0; first < N; first += CHECK_CHUNK) {
            size_t cnt = N - first < CHECK_CHUNK ? N - first : CHECK_CHUNK;
            drift_err e = {{0}};
            if (drift_ad_eval_data(g, ws, &ix, 1, first, cnt, &e)) {
                drift_diag_error(b->d, b->p->src, n->loc, "%s", e.msg);
                b->errors++;
                return;
            }
            size_t ld;
            const double *v = drift_ad_value(ws, ix, &ld);
            for (size_t r = 0; r < cnt; r++) {
                double x = v[r * ld];
                if (x >= 1 && x <= (double)n->idx_range && x == floor(x)) {
                    n->idx[first + r] = (int32_t)x - 1;
                    continue;
                }
                const drift_gnode *in = &g->nodes[ix];
                if (in->op == DRIFT_G_ROWVAR) {
                    drift_langdata_row_error(b->d, in->rb, first + r, 0,
                                             "index %g is out of range (it "
                                             "indexes 1 to %zu)",
                                             x, n->idx_range);
                    drift_diag_note(b->d, b->p->src, n->loc,
                                    "the index is used here");
                } else {
                    drift_diag_error(b->d, b->p->src, n->loc,
                                     "index %g is out of range (1 to %zu) "
                                     "in data row %zu",
                                     x, n->idx_range, first + r + 1);
                }
                b->errors++;
                return;
            }
        }
    }
}

/* Whether y (with n the binomial count, lo/hi uniform's bounds, K the
 * categories) lies in a support. */
static int in_support(drift_support s, double y, double n, double lo,
                      double hi, size_t K)
{
    switch (s) {
    case DRIFT_SUP_REAL: return 1;
    case DRIFT_SUP_POSITIVE: return y > 0;
    case DRIFT_SUP_NONNEG: return y >= 0;
    case DRIFT_SUP_UNIT: return y > 0 && y < 1;
    case DRIFT_SUP_BINARY: return y == 0 || y == 1;
    case DRIFT_SUP_COUNT: return y >= 0 && y == floor(y);
    case DRIFT_SUP_BINOMIAL:
        return y >= 0 && y == floor(y) && (isnan(n) || y <= n);
    case DRIFT_SUP_CATEGORY:
        return y >= 1 && y <= (double)K && y == floor(y);
    case DRIFT_SUP_INTERVAL:
        return (isnan(lo) || y >= lo) && (isnan(hi) || y <= hi);
    }
    return 1;
}

/* The distribution of a density node. */
static drift_dist_id node_dist(const drift_gnode *d)
{
    if (d->op == DRIFT_G_CATLOGIT)
        return DRIFT_D_CATEGORICAL_LOGIT;
    if (d->op == DRIFT_G_ORDERED)
        return d->fn ? DRIFT_D_ORDERED_PROBIT : DRIFT_D_ORDERED_LOGISTIC;
    return (drift_dist_id)d->fn;
}

static void support_error(builder *b, int dn, int yn, size_t row, size_t el,
                          double y, double nv, size_t K)
{
    const drift_graph *g = b->g;
    const drift_gnode *d = &g->nodes[dn], *yv = &g->nodes[yn];
    const drift_dist *di = &drift_dists[node_dist(d)];
    char want[96];
    if (di->support == DRIFT_SUP_CATEGORY)
        snprintf(want, sizeof want, "a category from 1 to K = %zu", K);
    else if (di->support == DRIFT_SUP_BINOMIAL && !isnan(nv))
        snprintf(want, sizeof want, "an integer from 0 to n = %g", nv);
    else
        snprintf(want, sizeof want, "%s", di->support_text);
    b->errors++;
    if (yv->op == DRIFT_G_ROWVAR) {
        /* LIBSVM's binary labels are often -1/+1. */
        const drift_dsource *src = yv->rb->src;
        int svm = di->support == DRIFT_SUP_BINARY && y == -1 && src &&
                  src->table && src->table->view.n_sparse;
        drift_langdata_row_error(b->d, yv->rb, row, el,
                                 "the outcome of %s must be %s, found %g%s",
                                 di->name, want, y,
                                 svm ? " (LIBSVM labels -1/+1: map -1 to 0)"
                                     : "");
        drift_diag_note(b->d, b->p->src, d->loc,
                        "'%s' is the outcome of %s here", yv->rb->name,
                        di->name);
        return;
    }
    if (yv->batched)
        drift_diag_error(b->d, b->p->src, d->loc,
                         "the outcome of %s must be %s, found %g in data row "
                         "%zu",
                         di->name, want, y, row + 1);
    else
        drift_diag_error(b->d, b->p->src, d->loc,
                         "the outcome of %s must be %s, found %g", di->name,
                         want, y);
}

/* Per node: whether its value reads rows of a memory-mapped row store
 * (NULL when out of memory, reported). */
static unsigned char *mapped_nodes(builder *b)
{
    drift_graph *g = b->g;
    unsigned char *m = drift_calloc(g->n_nodes + 1, 1);
    if (!m) {
        oom(b);
        return NULL;
    }
    for (size_t id = 0; id < g->n_nodes; id++) {
        const drift_gnode *n = &g->nodes[id];
        if (n->op == DRIFT_G_ROWVAR && n->rb->mapped) {
            m[id] = 1;
            if (!g->mapped_source && n->rb->src)
                g->mapped_source = n->rb->src->path;
        }
        for (int k = 0; k < n->n_in; k++)
            m[id] |= m[drift_gin(n, k)];
    }
    return m;
}

/* Checks every data outcome of a distribution against its support.  An
 * outcome read from a memory-mapped row store is not checked here: that
 * would be a pass over data possibly larger than memory before sampling.
 * The distributions' kernels refuse an outcome outside the support
 * whenever a row is evaluated (naming the row and the file), so no value
 * is ever used silently. */
static void check_supports(builder *b, drift_ad_ws *ws)
{
    drift_graph *g = b->g;
    unsigned char *mapped = mapped_nodes(b);
    if (!mapped)
        return;
    for (size_t id = 0; id < g->n_nodes && !b->errors; id++) {
        const drift_gnode *d = &g->nodes[id];
        if (d->op != DRIFT_G_DIST && d->op != DRIFT_G_CATLOGIT &&
            d->op != DRIFT_G_ORDERED)
            continue;
        if (d->guard)
            continue; /* in a branch of '? :', maybe not taken there */
        if (d->tail)
            continue; /* a cdf: any outcome has one */
        drift_dist_id di = node_dist(d);
        drift_support sup = drift_dists[di].support;
        int yn = drift_gin(d, 0);
        if (sup == DRIFT_SUP_REAL || g->nodes[yn].param)
            continue;
        int targets[3] = {yn, -1, -1};
        size_t nt = 1;
        int nn = -1, lon = -1, hin = -1;
        if (sup == DRIFT_SUP_BINOMIAL && !g->nodes[drift_gin(d, 1)].param)
            targets[nt++] = nn = drift_gin(d, 1);
        if (sup == DRIFT_SUP_INTERVAL) {
            if (!g->nodes[drift_gin(d, 1)].param)
                targets[nt++] = lon = drift_gin(d, 1);
            if (!g->nodes[drift_gin(d, 2)].param)
                targets[nt++] = hin = drift_gin(d, 2);
        }
        size_t K = d->op == DRIFT_G_CATLOGIT ? g->nodes[drift_gin(d, 1)].sz
                   : d->op == DRIFT_G_ORDERED ? g->nodes[drift_gin(d, 2)].sz + 1
                                              : 0;
        int batched = 0, lazy = 0;
        for (size_t t = 0; t < nt; t++) {
            batched |= g->nodes[targets[t]].batched;
            lazy |= mapped[targets[t]];
        }
        if (lazy && !b->ld->check_mapped)
            continue;
        size_t N = batched ? g->N : 1, m = d->op != DRIFT_G_CATLOGIT ? d->m : 1;
        for (size_t first = 0; first < N; first += CHECK_CHUNK) {
            size_t cnt = N - first < CHECK_CHUNK ? N - first : CHECK_CHUNK;
            drift_err e = {{0}};
            if (drift_ad_eval_data(g, ws, targets, nt, first, cnt, &e)) {
                drift_diag_error(b->d, b->p->src, d->loc, "%s", e.msg);
                b->errors++;
                drift_free(mapped);
                return;
            }
            size_t ly, ln = 0, llo = 0, lhi = 0;
            const double *yv = drift_ad_value(ws, yn, &ly);
            const double *nv = nn >= 0 ? drift_ad_value(ws, nn, &ln) : NULL;
            const double *lov = lon >= 0 ? drift_ad_value(ws, lon, &llo) : NULL;
            const double *hiv = hin >= 0 ? drift_ad_value(ws, hin, &lhi) : NULL;
            size_t sy = g->nodes[yn].sz == m ? 1 : 0;
            size_t sn = nn >= 0 && g->nodes[nn].sz == m ? 1 : 0;
            size_t slo = lon >= 0 && g->nodes[lon].sz == m ? 1 : 0;
            size_t shi = hin >= 0 && g->nodes[hin].sz == m ? 1 : 0;
            for (size_t r = 0; r < cnt; r++)
                for (size_t j = 0; j < (sy ? m : 1); j++) {
                    double y = yv[r * ly + j * sy];
                    double n = nv ? nv[r * ln + j * sn] : NAN;
                    double lo = lov ? lov[r * llo + j * slo] : NAN;
                    double hi = hiv ? hiv[r * lhi + j * shi] : NAN;
                    if (!in_support(sup, y, n, lo, hi, K)) {
                        support_error(b, (int)id, yn, first + r, j, y, n, K);
                        drift_free(mapped);
                        return;
                    }
                }
        }
    }
    drift_free(mapped);
}

/* ---- analyses --------------------------------------------------------------------- */

/* Nodes feeding a branch of a conditional get the guard flag: where the
 * branch is not taken its adjoint is zero, and a zero adjoint must add
 * nothing even where the branch's partials are not finite (log of a
 * negative number in the branch not taken). */
static void mark_guards(builder *b)
{
    drift_graph *g = b->g;
    unsigned char *mark = drift_calloc(g->n_nodes + 1, 1);
    if (!mark) {
        oom(b);
        return;
    }
    for (size_t id = 0; id < g->n_nodes; id++)
        if (g->nodes[id].op == DRIFT_G_SELECT) {
            mark[drift_gin(&g->nodes[id], 1)] = 1;
            mark[drift_gin(&g->nodes[id], 2)] = 1;
        }
    for (size_t id = g->n_nodes; id-- > 0;) {
        if (!mark[id])
            continue;
        drift_gnode *n = &g->nodes[id];
        n->guard = 1;
        for (int k = 0; k < n->n_in; k++)
            mark[drift_gin(n, k)] = 1;
    }
    drift_free(mark);
}

/* The nodes the outputs outs[] need, in order; filter 1 keeps those
 * shared by the rows, 2 those that vary by row, 0 all. */
static void schedule_many(builder *b, const int *outs, size_t n_outs,
                          int filter, int **sched, size_t *n)
{
    drift_graph *g = b->g;
    *sched = NULL;
    *n = 0;
    unsigned char *mark = drift_calloc(g->n_nodes + 1, 1);
    if (!mark) {
        oom(b);
        return;
    }
    for (size_t k = 0; k < n_outs; k++)
        mark[outs[k]] = 1;
    size_t count = 0;
    for (size_t id = g->n_nodes; id-- > 0;) {
        if (!mark[id])
            continue;
        const drift_gnode *nd = &g->nodes[id];
        count++;
        for (int k = 0; k < nd->n_in; k++)
            mark[drift_gin(nd, k)] = 1;
    }
    *sched = drift_malloc_array(count ? count : 1, sizeof(int));
    if (!*sched) {
        drift_free(mark);
        oom(b);
        return;
    }
    for (size_t id = 0; id < g->n_nodes; id++) {
        const drift_gnode *nd = &g->nodes[id];
        if (!mark[id] || nd->op == DRIFT_G_CONST)
            continue;
        if ((filter == 1 && nd->batched) || (filter == 2 && !nd->batched))
            continue;
        (*sched)[(*n)++] = (int)id;
    }
    drift_free(mark);
}

/* The derived and generated quantities: one drift_gout per statement of
 * the two blocks, their places in the output, and their schedules. */
static void build_outputs(builder *b)
{
    drift_graph *g = b->g;
    drift_block *blk[2] = {b->p->block[DRIFT_BLOCK_DERIVED],
                           b->p->block[DRIFT_BLOCK_GENERATED]};
    size_t n = 0, np = 0;
    for (int k = 0; k < 2; k++)
        for (drift_stmt *st = blk[k] ? blk[k]->stmts : NULL; st;
             st = st->next) {
            n += st->kind == DRIFT_S_LET && st->sym;
            np += st->kind == DRIFT_S_PRINT ? st->n_args : 0;
        }
    if (!n && !np)
        return;
    g->gouts = drift_calloc(n ? n : 1, sizeof *g->gouts);
    int *outs[2] = {drift_malloc_array(n + np + 1, sizeof(int)),
                    drift_malloc_array(n + np + 1, sizeof(int))};
    if (!g->gouts || !outs[0] || !outs[1]) {
        drift_free(outs[0]);
        drift_free(outs[1]);
        oom(b);
        return;
    }
    size_t n_outs[2] = {0, 0}, off = 0;
    for (int k = 0; k < 2; k++)
        for (drift_stmt *st = blk[k] ? blk[k]->stmts : NULL; st;
             st = st->next) {
            if (st->kind == DRIFT_S_PRINT) {
                size_t before = n_outs[1];
                add_print(b, st, k == 0, outs[1], &n_outs[1]);
                if (k == 0)
                    for (size_t j = before; j < n_outs[1]; j++)
                        outs[0][n_outs[0]++] = outs[1][j];
                if (b->errors)
                    break;
                continue;
            }
            if (st->kind != DRIFT_S_LET || !st->sym)
                continue;
            int id = b->sym_node[st->sym->id];
            if (id < 0)
                continue;
            drift_gout *o = &g->gouts[g->n_gouts++];
            o->name = drift_strdup(st->name);
            if (!o->name) {
                oom(b);
                break;
            }
            o->type = st->value->type;
            o->node = id;
            o->derived = k == 0;
            o->batched = g->nodes[id].batched;
            o->sz = g->nodes[id].sz;
            o->off = off;
            size_t total = o->sz * (o->batched ? g->N : 1);
            if (o->batched && g->N && o->sz > MAX_SIZE / g->N) {
                drift_diag_error(b->d, b->p->src, st->name_loc,
                                 "'%s' has %zu values per row over %zu rows, "
                                 "more than drift writes",
                                 st->name, o->sz, g->N);
                b->errors++;
                break;
            }
            off += total;
            if (k == 0)
                g->n_gen_derived = off;
            if (k == 0)
                outs[0][n_outs[0]++] = id;
            outs[1][n_outs[1]++] = id; /* generate(all) writes all */
        }
    g->n_gen = off;
    if (!b->errors) {
        schedule_many(b, outs[0], n_outs[0], 1, &g->deriv_sched,
                      &g->n_deriv_sched);
        schedule_many(b, outs[1], n_outs[1], 1, &g->gen_shared_sched,
                      &g->n_gen_shared_sched);
        schedule_many(b, outs[1], n_outs[1], 2, &g->gen_rows_sched,
                      &g->n_gen_rows_sched);
    }
    drift_free(outs[0]);
    drift_free(outs[1]);
}

static void schedule(builder *b, int out, int **sched, size_t *n)
{
    drift_graph *g = b->g;
    *sched = NULL;
    *n = 0;
    if (out < 0)
        return;
    unsigned char *mark = drift_calloc(g->n_nodes + 1, 1);
    if (!mark) {
        oom(b);
        return;
    }
    mark[out] = 1;
    size_t count = 0;
    for (size_t id = g->n_nodes; id-- > 0;) {
        if (!mark[id])
            continue;
        const drift_gnode *nd = &g->nodes[id];
        count += nd->op != DRIFT_G_CONST;
        for (int k = 0; k < nd->n_in; k++)
            mark[drift_gin(nd, k)] = 1;
    }
    *sched = drift_malloc_array(count ? count : 1, sizeof(int));
    if (!*sched) {
        drift_free(mark);
        oom(b);
        return;
    }
    for (size_t id = 0; id < g->n_nodes; id++)
        if (mark[id] && g->nodes[id].op != DRIFT_G_CONST)
            (*sched)[(*n)++] = (int)id;
    drift_free(mark);
}

/* Affine terms of a node in theta, during the analysis. */
typedef struct affine {
    int ok;
    int nomem;          /* an allocation failed */
    int opaque;         /* a data term other than a rows variable or a
                           constant of one value */
    drift_glm_term *t;  /* the terms, data terms (offset) among them */
    size_t n;
} affine;

static int aff_push(affine *a, size_t off, size_t len, int coef, int onehot,
                    double scale)
{
    drift_glm_term *nt = drift_realloc(a->t, (a->n + 1) * sizeof *nt);
    if (!nt) {
        a->nomem = 1;
        return -1;
    }
    a->t = nt;
    a->t[a->n].off = off;
    a->t[a->n].len = len;
    a->t[a->n].coef_node = coef;
    a->t[a->n].onehot = onehot;
    a->t[a->n].scale = scale;
    a->t[a->n].offset = 0;
    a->n++;
    return 0;
}

static int aff_add(affine *dst, const affine *src, double scale)
{
    for (size_t k = 0; k < src->n; k++) {
        if (aff_push(dst, src->t[k].off, src->t[k].len, src->t[k].coef_node,
                     src->t[k].onehot, src->t[k].scale * scale))
            return -1;
        dst->t[dst->n - 1].offset = src->t[k].offset;
    }
    dst->opaque |= src->opaque;
    return 0;
}

/* The data side x of a sum (sign +1 or -1): a data term when it is a rows
 * variable or a constant of one value, else the predictor is opaque to
 * full passes (still affine in theta). */
static int aff_data(affine *a, const drift_graph *g, int x, double sign)
{
    const drift_gnode *n = &g->nodes[x];
    if ((n->op == DRIFT_G_ROWVAR && n->rb && !n->rb->sp) ||
        n->op == DRIFT_G_CONST) {
        if (n->sz != 1) {
            a->opaque = 1;
            return 0;
        }
        if (aff_push(a, 0, 0, x, 0, sign))
            return -1;
        a->t[a->n - 1].offset = 1;
        return 0;
    }
    a->opaque = 1;
    return 0;
}

/* A data operand the design can read without a workspace: a rows
 * variable or a constant. */
static int plain_data(const drift_gnode *n)
{
    return !n->param &&
           (n->op == DRIFT_G_ROWVAR || n->op == DRIFT_G_CONST);
}

static void analyse_glm(builder *b)
{
    drift_graph *g = b->g;
    g->glm = 0;
    g->glm_y = -1;
    if (g->datum_out < 0 || !g->nodes[g->datum_out].param)
        return;
    size_t nn = g->n_nodes;
    affine *af = drift_calloc(nn + 1, sizeof *af);
    unsigned char *inner = drift_calloc(nn + 1, 1);
    unsigned char *desc = drift_calloc(nn + 1, 1);
    unsigned char *used_by_nonaff = drift_calloc(nn + 1, 1);
    int nomem = 0;
    if (!af || !inner || !desc || !used_by_nonaff) {
        nomem = 1;
        goto done;
    }
    for (size_t q = 0; q < g->n_datum_sched; q++) {
        int id = g->datum_sched[q];
        const drift_gnode *n = &g->nodes[id];
        if (!n->param)
            continue;
        affine *a = &af[id];
        int x = n->n_in > 0 ? drift_gin(n, 0) : -1;
        int y = n->n_in > 1 ? drift_gin(n, 1) : -1;
        switch (n->op) {
        case DRIFT_G_THETA:
            if (n->sz == 1)
                a->ok = !aff_push(a, n->off, 1, -1, 0, 1.0);
            break;
        case DRIFT_G_GATHER:
            /* u[g]: one element of a parameter vector per row. */
            if (n->sz == 1 && g->nodes[x].op == DRIFT_G_THETA)
                a->ok = !aff_push(a, g->nodes[x].off, 1, id, 1, 1.0);
            break;
        case DRIFT_G_DOT: {
            const drift_gnode *nx = &g->nodes[x], *ny = &g->nodes[y];
            if (nx->op == DRIFT_G_THETA && plain_data(ny))
                a->ok = !aff_push(a, nx->off, nx->sz, y, 0, 1.0);
            else if (ny->op == DRIFT_G_THETA && plain_data(nx))
                a->ok = !aff_push(a, ny->off, ny->sz, x, 0, 1.0);
            break;
        }
        case DRIFT_G_ADD:
        case DRIFT_G_SUB:
            if (n->sz != 1)
                break;
            a->ok = 1;
            if (g->nodes[x].param)
                a->ok = af[x].ok && !aff_add(a, &af[x], 1.0);
            else
                a->ok = !aff_data(a, g, x, 1.0);
            if (a->ok && g->nodes[y].param)
                a->ok = af[y].ok &&
                        !aff_add(a, &af[y], n->op == DRIFT_G_SUB ? -1.0 : 1.0);
            else if (a->ok)
                a->ok = !aff_data(a, g, y, n->op == DRIFT_G_SUB ? -1.0 : 1.0);
            break;
        case DRIFT_G_NEG:
            if (n->sz == 1 && af[x].ok)
                a->ok = !aff_add(a, &af[x], -1.0);
            break;
        case DRIFT_G_MUL:
        case DRIFT_G_DIV: {
            if (n->sz != 1)
                break;
            int p = g->nodes[x].param ? x : y, o = p == x ? y : x;
            const drift_gnode *np = &g->nodes[p], *no = &g->nodes[o];
            if (no->param || !af[p].ok || no->sz != 1)
                break;
            if (n->op == DRIFT_G_DIV && p != x)
                break;
            if (no->op == DRIFT_G_CONST) {
                double c = no->cval[0];
                a->ok = !aff_add(a, &af[p], n->op == DRIFT_G_DIV ? 1 / c : c);
            } else if (n->op == DRIFT_G_MUL && np->op == DRIFT_G_THETA &&
                       no->op == DRIFT_G_ROWVAR) {
                a->ok = !aff_push(a, np->off, 1, o, 0, 1.0);
            }
            break;
        }
        default:
            break;
        }
        nomem |= a->nomem;
        if (!a->ok) {
            drift_free(a->t);
            a->t = NULL;
            a->n = 0;
        }
    }
    /* The linear predictor: the one affine node used by a non-affine one
     * (or the output itself). */
    for (size_t q = 0; q < g->n_datum_sched; q++) {
        int id = g->datum_sched[q];
        const drift_gnode *n = &g->nodes[id];
        if (!n->param || af[id].ok)
            continue;
        for (int k = 0; k < n->n_in; k++)
            used_by_nonaff[drift_gin(n, k)] = 1;
    }
    int L = -1, count = 0;
    for (size_t q = 0; q < g->n_datum_sched; q++) {
        int id = g->datum_sched[q];
        if (af[id].ok && af[id].n &&
            (used_by_nonaff[id] || id == g->datum_out)) {
            L = id;
            count++;
        }
    }
    if (count != 1 || !g->nodes[L].batched || g->nodes[L].sz != 1)
        goto done;
    /* L's subtree, and everything above it must reach theta only
     * through L. */
    inner[L] = 1;
    for (int id = L; id >= 0; id--) {
        if (!inner[id])
            continue;
        const drift_gnode *n = &g->nodes[id];
        for (int k = 0; k < n->n_in; k++)
            if (g->nodes[drift_gin(n, k)].param)
                inner[drift_gin(n, k)] = 1;
    }
    desc[L] = 1;
    for (size_t q = 0; q < g->n_datum_sched; q++) {
        int id = g->datum_sched[q];
        const drift_gnode *n = &g->nodes[id];
        if (!n->param || inner[id])
            continue;
        /* A parameter outside L's subtree reaches the output some other
         * way. */
        int ok = n->op != DRIFT_G_THETA;
        for (int k = 0; k < n->n_in; k++) {
            int x = drift_gin(n, k);
            if (g->nodes[x].param && !desc[x])
                ok = 0;
        }
        if (!ok)
            goto done;
        desc[id] = 1;
    }
    /* The nodes above L, given its values: what the output needs without
     * going through L's subtree (desc is free again for the marks). */
    memset(desc, 0, nn);
    desc[g->datum_out] = 1;
    size_t n_top = 0;
    for (size_t q = g->n_datum_sched; q-- > 0;) {
        int id = g->datum_sched[q];
        if (!desc[id] || inner[id])
            continue;
        n_top++;
        const drift_gnode *n = &g->nodes[id];
        for (int k = 0; k < n->n_in; k++)
            desc[drift_gin(n, k)] = 1;
    }
    int *top = drift_malloc_array(n_top + 1, sizeof *top);
    if (!top) {
        nomem = 1;
        goto done;
    }
    n_top = 0;
    for (size_t q = 0; q < g->n_datum_sched; q++) {
        int id = g->datum_sched[q];
        if (desc[id] && !inner[id])
            top[n_top++] = id;
    }
    /* The data terms apart from the parameters' */
    size_t n_off = 0;
    for (size_t k = 0; k < af[L].n; k++)
        n_off += af[L].t[k].offset != 0;
    drift_glm_term *offs = drift_malloc_array(n_off + 1, sizeof *offs);
    if (!offs) {
        drift_free(top);
        nomem = 1;
        goto done;
    }
    size_t n_par = 0;
    n_off = 0;
    for (size_t k = 0; k < af[L].n; k++) {
        if (af[L].t[k].offset)
            offs[n_off++] = af[L].t[k];
        else
            af[L].t[n_par++] = af[L].t[k];
    }
    g->glm = 1;
    g->glm_node = L;
    g->glm_terms = af[L].t;
    g->n_glm_terms = n_par;
    af[L].t = NULL;
    g->glm_offsets = offs;
    g->n_glm_offsets = n_off;
    g->glm_fused = !af[L].opaque;
    g->glm_inner = inner;
    inner = NULL;
    g->glm_top_sched = top;
    g->n_glm_top_sched = n_top;
    /* y ~ bernoulli_logit(L) alone, y data of one value a row (or one
     * for all): evaluated by its own kernel in full passes. */
    g->glm_y = -1;
    const drift_gnode *o = &g->nodes[g->datum_out];
    if (o->op == DRIFT_G_DIST && o->fn == DRIFT_D_BERNOULLI_LOGIT &&
        o->m == 1 && o->n_in == 2 && drift_gin(o, 1) == L && !o->guard) {
        int y = drift_gin(o, 0);
        const drift_gnode *ny = &g->nodes[y];
        if (!ny->param && ny->sz == 1 &&
            ((ny->op == DRIFT_G_ROWVAR && ny->rb && !ny->rb->sp) ||
             ny->op == DRIFT_G_CONST))
            g->glm_y = y;
    }
done:
    if (nomem)
        oom(b);
    if (af)
        for (size_t k = 0; k < nn; k++)
            drift_free(af[k].t);
    drift_free(af);
    drift_free(inner);
    drift_free(desc);
    drift_free(used_by_nonaff);
}

/* The observation predictions are about: the datum block's one '~'
 * statement whose outcome is a rows variable and whose distribution has a
 * natural point prediction. */
static void find_outcome(builder *b)
{
    drift_graph *g = b->g;
    int found = -1, count = 0;
    for (size_t k = 0; k < b->n_tildes; k++) {
        drift_stmt *st = b->tildes[k].st;
        if (st->lhs->kind != DRIFT_E_NAME || !st->lhs->sym ||
            st->lhs->sym->kind != DRIFT_SYM_ROWS || st->lhs->sym->type.n_arr ||
            (st->lhs->sym->type.kind != DRIFT_T_INT &&
             st->lhs->sym->type.kind != DRIFT_T_REAL))
            continue;
        count++;
        found = (int)k;
    }
    if (count != 1)
        return;
    drift_stmt *st = b->tildes[found].st;
    const drift_gnode *d = &g->nodes[b->tildes[found].node];
    if (d->op != DRIFT_G_DIST && d->op != DRIFT_G_CATLOGIT)
        return;
    /* a GLM's node is its base distribution's */
    drift_dist_id did = drift_dist_glm_base(st->d->id);
    switch (did) {
    case DRIFT_D_BERNOULLI:
    case DRIFT_D_BERNOULLI_LOGIT:
        g->outcome = DRIFT_OUTCOME_BINARY;
        break;
    case DRIFT_D_CATEGORICAL_LOGIT:
        g->outcome = DRIFT_OUTCOME_CATEGORICAL;
        g->n_classes = g->nodes[drift_gin(d, 1)].sz;
        if (g->n_classes < 2) {
            g->outcome = DRIFT_OUTCOME_NONE;
            return;
        }
        break;
    case DRIFT_D_NORMAL:
        g->outcome = DRIFT_OUTCOME_REAL;
        break;
    default:
        return;
    }
    g->outcome_dist = (int)did;
    g->outcome_y = drift_gin(d, 0);
    g->outcome_arg = drift_gin(d, 1);
    /* A point prediction needs one value per row. */
    if (g->nodes[g->outcome_arg].sz != (g->outcome == DRIFT_OUTCOME_CATEGORICAL
                                            ? g->n_classes
                                            : 1))
        g->outcome = DRIFT_OUTCOME_NONE;
}

/* ---- the pass ------------------------------------------------------------------------ */

drift_graph *drift_lower_program(drift_program *p,
                                 const drift_langdata *ld, drift_diag *diag)
{
    builder b;
    memset(&b, 0, sizeof b);
    b.p = p;
    b.ld = ld;
    b.d = diag;
    b.g = drift_calloc(1, sizeof *b.g);
    b.sym_node = drift_malloc_array(p->n_syms + 1, sizeof(int));
    if (!b.g || !b.sym_node) {
        drift_free(b.g);
        drift_free(b.sym_node);
        drift_diag_error_file(diag, p->src->name, "out of memory");
        return NULL;
    }
    for (size_t k = 0; k < p->n_syms; k++)
        b.sym_node[k] = -1;
    drift_graph *g = b.g;
    g->src = p->src;
    g->N = ld->N;
    g->prior_out = g->datum_out = g->jac_out = -1;
    b.fc.g = g;

    build_symbols(&b);
    drift_block *prior = p->block[DRIFT_BLOCK_PRIOR];
    drift_block *datum = p->block[DRIFT_BLOCK_DATUM];
    drift_block *derived = p->block[DRIFT_BLOCK_DERIVED];
    drift_block *generated = p->block[DRIFT_BLOCK_GENERATED];
    drift_block *transformed = p->block[DRIFT_BLOCK_TRANSFORMED];
    /* Values of the data alone: folded into constants here, once. */
    if (!b.errors && transformed)
        for (drift_stmt *st = transformed->stmts; st; st = st->next)
            build_stmt(&b, st, 0);
    if (!b.errors && derived)
        for (drift_stmt *st = derived->stmts; st; st = st->next)
            build_stmt(&b, st, 0);
    if (!b.errors && prior)
        for (drift_stmt *st = prior->stmts; st; st = st->next)
            build_stmt(&b, st, 0);
    if (!b.errors && datum)
        for (drift_stmt *st = datum->stmts; st; st = st->next)
            build_stmt(&b, st, 1);
    if (!b.errors && generated)
        for (drift_stmt *st = generated->stmts; st; st = st->next)
            build_stmt(&b, st, 1);
    drift_loc top = {1, 1, 1, 1};
    if (!b.errors) {
        g->prior_out = build_out(&b, 0, 0, prior ? prior->loc : top);
        if (b.n_terms[JAC_TERMS])
            g->jac_out = build_out(&b, JAC_TERMS, 0, top);
        if (datum)
            g->datum_out = build_out(&b, 1, 1, datum->loc);
    }
    /* A share of the rows (a run across ranks) may hold none of them. */
    if (!b.errors && datum && g->N == 0 && ld->n_src && !ld->rows_total) {
        drift_diag_error(diag, p->src, datum->loc,
                         "the datum block needs rows, but the data give "
                         "none");
        b.errors++;
    }
    if (!b.errors)
        mark_guards(&b);
    if (!b.errors) {
        schedule(&b, g->prior_out, &g->prior_sched, &g->n_prior_sched);
        schedule(&b, g->jac_out, &g->jac_sched, &g->n_jac_sched);
        schedule(&b, g->datum_out, &g->datum_sched, &g->n_datum_sched);
        build_outputs(&b);
    }
    if (!b.errors && g->N) {
        drift_ad_ws *ws = drift_ad_ws_new(g, CHECK_CHUNK);
        if (!ws) {
            oom(&b);
        } else {
            precompute_gathers(&b, ws);
            if (!b.errors)
                check_supports(&b, ws);
            drift_ad_ws_free(ws);
        }
    }
    if (!b.errors) {
        analyse_glm(&b);
        find_outcome(&b);
    }
    drift_free(b.sym_node);
    drift_free(b.fc.val);
    drift_free(b.fc.vld);
    drift_free(b.terms[0]);
    drift_free(b.terms[1]);
    drift_free(b.terms[JAC_TERMS]);
    drift_free(b.tildes);
    if (b.errors) {
        drift_graph_free(g);
        return NULL;
    }
    return g;
}
