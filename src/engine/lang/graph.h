/* graph.h: the typed likelihood graph of a model written in the language.
 * A DAG of nodes in topological order (inputs before the node), each with
 * its size and whether it varies by row (`batched`) and depends on the
 * parameters (`param`).  Built once from the type-checked program and its
 * bound data by lower.c, with data-only subexpressions folded to
 * constants; ad.c evaluates it over whole minibatches.  Also holds what
 * the model ABI needs besides values: the parameter layout with
 * constraints, the generalised-linear form when the graph has it, and the
 * outcome for predictions.  Not for building it (lower.c) or evaluation kernels
 * (ad.c). */
#ifndef DRIFT_GRAPH_H
#define DRIFT_GRAPH_H

#include <stdint.h>

#include <drift/model.h>

#include "langdata.h"
#include "parser/ast.h"
#include "parser/builtins.h"
#include "parser/diag.h"

typedef enum drift_gop {
    DRIFT_G_CONST,      /* value known: cval (sz) */
    DRIFT_G_ROWVAR,     /* a rows variable: batched, read through rb;
                           a sparse_vector (rb->sp) has no dense value and
                           is read only by DOT's sparse kernels */
    DRIFT_G_THETA,      /* theta[off .. off+sz): unconstrained parameters */
    DRIFT_G_LOWER,      /* x = a + exp(u) */
    DRIFT_G_UPPER,      /* x = b - exp(u) */
    DRIFT_G_BOUNDED,    /* x = a + (b - a) logistic(u) */
    DRIFT_G_LOGJAC,     /* scalar: sum of log |dx/du| of transform fn over
                           the elements of u (in[0]) */
    DRIFT_G_NEG,
    DRIFT_G_ADD, DRIFT_G_SUB, DRIFT_G_MUL, DRIFT_G_DIV, DRIFT_G_POW,
    DRIFT_G_LSE2,       /* elementwise log(exp(a) + exp(b)) */
    DRIFT_G_UNARY,      /* fn: a drift_fn_id below DRIFT_FN_N_UNARY */
    DRIFT_G_SUM,        /* scalar: a * sum of elements (a = 1 or 1/n) */
    DRIFT_G_SQNORM,     /* scalar: sum of squares */
    DRIFT_G_LSE,        /* scalar: log_sum_exp of the elements */
    DRIFT_G_DOT,        /* scalar: dot product of two vectors (length k) */
    DRIFT_G_MATVEC,     /* (m x k matrix) * (k vector) -> m vector */
    DRIFT_G_MATMUL,     /* (m x k) * (k x n) -> m x n */
    DRIFT_G_SLICE,      /* elements off .. off+sz of in[0] */
    DRIFT_G_GATHER,     /* elements idx[row]*sz .. of in[0] (idx per row) */
    DRIFT_G_DIST,       /* scalar: sum of log densities (or, with tail
                           set, of log cdfs); fn: dist id; in[0] outcome,
                           in[1..] arguments; m elements */
    DRIFT_G_CATLOGIT,   /* scalar: categorical_logit(in[0] | in[1]) */
    DRIFT_G_TERMS,      /* scalar: sum of scalar inputs */
    DRIFT_G_XFORM,      /* a structured type's transform (transform.h):
                           fn the drift_constraint, each of k elements
                           m x n constrained values from in[0]'s free
                           values */
    DRIFT_G_XFORM_LJ,   /* scalar: the sum of its log-Jacobians */
    DRIFT_G_CHOL,       /* cholesky_decompose: m x m (its lower triangle
                           read) -> lower triangular m x m */
    DRIFT_G_TRISOLVE,   /* n rows b_i of in[1] (m each) -> L^-1 b_i, with
                           L = in[0] (m x m, lower triangle read) */
    DRIFT_G_ASSEMBLE,   /* out[j] = element amap[j] / n_in of input
                           amap[j] % n_in, or 0 when amap[j] < 0: slices,
                           concatenations, transposes, diagonals */
    DRIFT_G_ROWSUM,     /* sums of each k consecutive elements */
    DRIFT_G_CUMSUM,     /* running sums */
    DRIFT_G_RMAX,       /* scalar: the largest element */
    DRIFT_G_RMIN,       /* scalar: the smallest element */
    DRIFT_G_RPROD,      /* scalar: the product of the elements */
    DRIFT_G_SELECT,     /* in[0] != 0 ? in[1] : in[2], elementwise,
                           scalars broadcast; no derivative through in[0] */
    /* elementwise binary, as ADD ... LSE2 */
    DRIFT_G_FMIN, DRIFT_G_FMAX,
    DRIFT_G_LDE,        /* log(exp(a) - exp(b)) */
    DRIFT_G_LT, DRIFT_G_LE, DRIFT_G_GT, DRIFT_G_GE, DRIFT_G_EQ, DRIFT_G_NE,
    DRIFT_G_AND, DRIFT_G_OR,    /* 0 or 1; no derivative */
    DRIFT_G_RNG,        /* random draws of distribution fn (rand.h) from
                           the arguments in[]: sz of them per row; the
                           categorical's one of K = in[0]'s size; LKJ's
                           Cholesky factor m x m of shape in[0] */
    DRIFT_G_ORDERED     /* scalar: the sum over m elements of
                           ordered_logistic (fn 0) or ordered_probit (fn 1)
                           of in[0] (int outcomes) given in[1] (eta, m or
                           one) and in[2] (the cutpoints, K - 1) */
} drift_gop;

/* Whether op is an elementwise binary operation (one kernel serves). */
static inline int drift_gop_binary(drift_gop op)
{
    return (op >= DRIFT_G_ADD && op <= DRIFT_G_LSE2) ||
           (op >= DRIFT_G_FMIN && op <= DRIFT_G_OR);
}

#define DRIFT_GNODE_MAX_IN 4

typedef struct drift_gnode {
    drift_gop op;
    int fn;                         /* UNARY: fn id; DIST: dist id;
                                       LOGJAC: the transform's op */
    int n_in;
    int in_buf[DRIFT_GNODE_MAX_IN]; /* inputs when n_in <= MAX_IN */
    int *in_many;                   /* inputs otherwise (owned) */
    size_t sz;                      /* elements per row */
    size_t m, k, n;                 /* products; DIST: m elements;
                                       XFORM: k elements of m x n */
    unsigned batched : 1;           /* varies by row */
    unsigned param : 1;             /* depends on theta */
    unsigned is_int : 1;            /* integer values (data) */
    unsigned tail : 2;              /* DIST: 0 the log density, else the
                                       log cdf's drift_cdf_tail (cdf.h) */
    unsigned guard : 1;             /* under a branch of a SELECT: a zero
                                       adjoint adds nothing even where the
                                       partials are not finite */
    double a, b;                    /* transform bounds; SUM scale */
    size_t off;                     /* THETA, SLICE */
    double *cval;                   /* CONST: sz values (owned) */
    const drift_rowbind *rb;        /* ROWVAR (the data's) */
    int32_t *idx;                   /* GATHER: per datum (N), 0-based */
    int64_t *amap;                  /* ASSEMBLE: sz entries (owned) */
    int idx_node;                   /* GATHER: the index expression */
    size_t idx_range;               /* GATHER: valid indices 1..range */
    drift_loc loc;                  /* in the model source */
} drift_gnode;

/* Input k of node n. */
static inline int drift_gin(const drift_gnode *n, int k)
{
    return n->n_in > DRIFT_GNODE_MAX_IN ? n->in_many[k] : n->in_buf[k];
}

/* A parameter as the model reports it. */
typedef struct drift_gparam {
    char *name;
    drift_type type;                /* concrete */
    size_t off, sz;                 /* its slice of theta */
    size_t out_off, out_sz;         /* its constrained values in the
                                       output (column-major, as Stan) */
    int transform;                  /* 0, DRIFT_G_LOWER, _UPPER, _BOUNDED,
                                       DRIFT_G_XFORM */
    double lo, hi;
    drift_constraint con;           /* XFORM: the structured type */
    size_t con_m, con_n, con_count; /* XFORM: con_count elements of
                                       con_m x con_n */
    int theta_node, value_node;
} drift_gparam;

/* One term of the linear predictor in generalised linear form:
 * scale * coef_i . theta[off .. off+len), coef_i the row's data (ROWVAR
 * node coef_node) or a constant (CONST node), or 1 when coef_node < 0.
 * With onehot, the term is scale * theta[off + idx_i], idx_i the row's
 * index of the GATHER node coef_node (a parameter picked by row data). */
typedef struct drift_glm_term {
    size_t off, len;
    int coef_node;
    int onehot;
    double scale;
    int offset;         /* no parameter: scale * the value of the data
                           node coef_node (glm_offsets only) */
} drift_glm_term;

/* A derived or generated quantity as the output reports it. */
typedef struct drift_gout {
    char *name;
    drift_type type;                /* one value (per row when batched) */
    int node;
    int derived;                    /* the derived block: every draw */
    int batched;                    /* one value per row: N x sz values */
    size_t off, sz;                 /* its values in generate's output; sz
                                       per row when batched */
} drift_gout;

/* print(...) in derived or generated: written to stderr each time its
 * block is evaluated (lang_model.c). */
typedef struct drift_gprint {
    int derived;                    /* the derived block: every draw */
    size_t n;
    char **str;                     /* n items: a string, or NULL ... */
    int *node;                      /* ... for a value, its node */
} drift_gprint;

/* reject(...) in prior, derived or datum: where the log prior (or a
 * row's term) is -inf and the condition node is true, the message says
 * why (ad.c), and is also written to stderr the first time. */
typedef struct drift_greject {
    int node;                       /* the condition */
    int datum;                      /* a term of the rows */
    char *msg;
    int shown;                      /* written to stderr once */
} drift_greject;

typedef struct drift_graph {
    drift_gnode *nodes;
    size_t n_nodes, cap_nodes;
    drift_gparam *params;
    size_t n_params;
    size_t dim;                     /* d */
    size_t n_out;                   /* constrained parameter values */
    size_t N;                       /* rows */
    int prior_out;                  /* scalar log prior (with Jacobians) */
    int datum_out;                  /* per-row log likelihood; -1: none */
    int *prior_sched, *datum_sched; /* nodes to run, in order */
    size_t n_prior_sched, n_datum_sched;
    int jac_out;                    /* scalar: the constraint transforms'
                                       log-Jacobians among the prior's
                                       terms; -1: none (0) */
    int *jac_sched;
    size_t n_jac_sched;

    /* generalised linear form (datum_out depends on theta only through
     * one per-row scalar, glm_node, affine in theta) */
    int glm;
    int glm_node;
    drift_glm_term *glm_terms;
    size_t n_glm_terms;
    unsigned char *glm_inner;       /* per node: in glm_node's subtree */
    /* what full passes in that form evaluate with the interpreter: the
     * nodes above glm_node (given its values), in schedule order; and
     * glm_y >= 0 when they are one bernoulli_logit(y | glm_node) with y
     * the data node glm_y (then evaluated without the interpreter) */
    int *glm_top_sched;
    size_t n_glm_top_sched;
    int glm_y;
    /* the predictor's data terms (offset set), and whether they are all
     * rows variables or constants of one value, so that full passes can
     * compute the predictor from the terms (glm_fused) */
    drift_glm_term *glm_offsets;
    size_t n_glm_offsets;
    int glm_fused;

    /* the observation, for predictions */
    unsigned outcome;               /* DRIFT_OUTCOME_* */
    int outcome_dist;               /* drift_dist_id */
    int outcome_y, outcome_arg;     /* nodes */
    size_t n_classes;

    /* derived and generated quantities (see drift_gout): derived first,
     * then generated, in statement order */
    drift_gout *gouts;
    size_t n_gouts;
    size_t n_gen, n_gen_derived;    /* values in all, derived values */
    int *deriv_sched;               /* what the derived values need */
    int *gen_shared_sched;          /* the generated block's nodes shared
                                       by the rows (derived ones too) */
    int *gen_rows_sched;            /* its per-row nodes, evaluated over
                                       the rows in chunks */
    size_t n_deriv_sched, n_gen_shared_sched, n_gen_rows_sched;
    drift_gprint *prints;
    size_t n_prints;
    drift_greject *rejects;
    size_t n_rejects;

    /* the transformed block's reductions over the rows, computed once
     * when the graph is built, in the order it builds them */
    double *reductions;
    size_t n_reductions;

    const drift_source *src;        /* for runtime messages (borrowed) */
    const char *mapped_source;      /* a memory-mapped row store the rows
                                       come from (NULL: none): outcomes
                                       read from it are checked as rows
                                       are used, and messages name it */
} drift_graph;

void drift_graph_free(drift_graph *g);

/* Counts of nodes, for drift check: total, prior and datum schedules. */
void drift_graph_counts(const drift_graph *g, size_t *total, size_t *prior,
                        size_t *datum);

#endif
