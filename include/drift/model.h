/* SPDX-License-Identifier: MIT (drift; see LICENSE) */
/* drift/model.h: the model ABI.  A model is the target every sampler sees,
 *
 *     U(theta) = -log p(theta) - sum_{i=1..N} log p(row_i | theta),
 *
 * over unconstrained parameters theta in R^d, split into one prior term and
 * N per-datum terms.  Models written in drift's language are compiled into
 * a drift_model by the engine; models written in C are shared objects that
 * export drift_model_entry() and build a drift_model from a data set.
 *
 * This header is not for samplers: they see a model only through the
 * oracles of drift/sampler.h. */
#ifndef DRIFT_MODEL_H
#define DRIFT_MODEL_H

#include <drift/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever an existing field of a struct below changes meaning or
 * place.  Appending a field does not bump it: drift_model.struct_size says
 * which fields a model knows, and the engine reads the fields past it as
 * NULL (every appended field is optional). */
#define DRIFT_MODEL_ABI_VERSION 1u

/* drift_model.flags */
#define DRIFT_MODEL_GLM 1u  /* generalised linear form: the gradient of each
                               per-datum term is a scalar times a fixed data
                               vector of length d; glm_scalars and glm_design
                               are then set */

/* drift_model.outcome: what a row's outcome is, for held-out metrics. */
#define DRIFT_OUTCOME_NONE        0u  /* no single outcome (no metrics
                                         beyond the log predictive density) */
#define DRIFT_OUTCOME_BINARY      1u  /* 0/1; predict gives P(y = 1) */
#define DRIFT_OUTCOME_CATEGORICAL 2u  /* 1..n_classes; predict gives the
                                         class probabilities */
#define DRIFT_OUTCOME_REAL        3u  /* real; predict gives E[y] */

/* A set of rows to evaluate: either the list rows[0..n) (rows != NULL) or
 * the contiguous range first .. first+n-1 (rows == NULL), which is how the
 * engine walks the data for a full pass. */
typedef struct drift_rows {
    const size_t *rows;
    size_t first;
    size_t n;
} drift_rows;

/* Row index of the k-th element of a drift_rows. */
static inline size_t drift_rows_at(const drift_rows *b, size_t k)
{
    return b->rows ? b->rows[k] : b->first + k;
}

/* A model instance.  The model owns `self` and everything it points to;
 * the engine calls free(self) once when done.  Evaluation functions may be
 * called concurrently from several threads, each with its own workspace;
 * they must not write to `self`. */
typedef struct drift_model {
    uint32_t abi_version;       /* DRIFT_MODEL_ABI_VERSION */
    uint32_t struct_size;       /* sizeof(drift_model) as the model was built */
    size_t dim;                 /* d: unconstrained parameters */
    size_t n_rows;              /* N: per-datum terms */
    size_t n_out;               /* constrained values written per draw */
    const char *const *out_names; /* n_out Stan-style names ("w.1", ...) */
    unsigned flags;             /* DRIFT_MODEL_* */
    void *self;

    /* Releases self.  May be NULL when self needs no freeing. */
    void (*free)(void *self);

    /* Scratch space for evaluations over at most max_batch rows at a time;
     * one per thread.  NULL on allocation failure. */
    void *(*workspace_new)(const void *self, size_t max_batch);
    void (*workspace_free)(const void *self, void *ws);

    /* log p(theta), Jacobians of constraint transforms included, into *lp;
     * when grad != NULL its gradient is written (overwritten, length d).
     * Here and in log_lik, a point where a value overflows or lies outside
     * the support is not an error of the model: return DRIFT_ENUMERIC (with
     * a message saying what overflowed) or write the non-finite value;
     * samplers then see DRIFT_ENONFINITE at that point and may reject it. */
    int (*log_prior)(const void *self, void *ws, const double *theta,
                     double *lp, double *grad, drift_err *e);

    /* Per-datum terms l_i = log p(row_i | theta) for the rows of b
     * (b->n <= max_batch of ws).  Each output may be NULL:
     *   ll_rows  [n]     l_i per row
     *   ll_sum   [1]     sum of l_i
     *   grad_sum [d]     sum of grad l_i (overwritten)
     *   grad_rows[n x d] grad l_i, row-major (overwritten) */
    int (*log_lik)(const void *self, void *ws, const double *theta,
                   const drift_rows *b, double *ll_rows, double *ll_sum,
                   double *grad_sum, double *grad_rows, drift_err *e);

    /* Optional (NULL: the engine uses log_lik's grad_rows).  Directional
     * derivatives out[k] = v . grad l_i for the rows of b, in one forward
     * pass; ll_rows as in log_lik (may be NULL). */
    int (*jvp)(const void *self, void *ws, const double *theta,
               const double *v, const drift_rows *b, double *out,
               double *ll_rows, drift_err *e);

    /* DRIFT_MODEL_GLM only.  grad l_i = s_i * x_i: glm_scalars writes s_i
     * (and ll_rows when not NULL) for the rows of b; glm_design writes the
     * fixed vectors x_i as an n x d row-major matrix. */
    int (*glm_scalars)(const void *self, void *ws, const double *theta,
                       const drift_rows *b, double *s, double *ll_rows,
                       drift_err *e);
    int (*glm_design)(const void *self, const drift_rows *b, double *x,
                      drift_err *e);

    /* Constrained values (n_out) of an unconstrained point theta (d). */
    void (*constrain)(const void *self, const double *theta, double *out);

    /* Inverse of constrain, for user-given initial values: theta from the
     * n_out constrained values; fails (naming the value) when one lies
     * outside its constraint. */
    int (*unconstrain)(const void *self, const double *out, double *theta,
                       drift_err *e);

    /* Optional (NULL when outcome is DRIFT_OUTCOME_NONE): point
     * predictions for held-out metrics.  For the rows of b, pred gets
     * P(y = 1) (BINARY, n values), the n_classes class probabilities
     * (CATEGORICAL, n x n_classes row-major) or E[y] (REAL, n values)
     * under theta; y (n) gets each row's observed outcome. */
    unsigned outcome;           /* DRIFT_OUTCOME_* */
    size_t n_classes;           /* CATEGORICAL only */
    int (*predict)(const void *self, void *ws, const double *theta,
                   const drift_rows *b, double *pred, double *y,
                   drift_err *e);

    /* Optional (NULL: out_names name the coordinates when n_out == dim).
     * Names of the d unconstrained coordinates, for messages about them
     * (a simplex[K] theta has K - 1: theta.1 ... theta.(K-1); output
     * values are column-major, as Stan writes them, while a model may
     * keep its coordinates in another order). */
    const char *const *theta_names;

    /* Optional (n_gen 0: none).  Quantities written after the n_out
     * constrained values: n_gen values named gen_names, as Stan names
     * them.  The first n_gen_derived are functions of theta (the derived
     * block of a .drift model: cheap, written for every draw); the rest
     * are generated quantities (random draws, values per row of the
     * data: a pass over it), which the engine asks for on every k-th kept
     * draw (--generated-every k) and writes as NaN on the others. */
    size_t n_gen;
    size_t n_gen_derived;
    const char *const *gen_names;
    /* Writes the values at theta into out: all n_gen when all != 0, else
     * the first n_gen_derived (the rest untouched).  seed fixes the random
     * draws (equal seeds, equal values); ws is one of this model's
     * workspaces. */
    int (*generate)(const void *self, void *ws, const double *theta,
                    uint64_t seed, int all, double *out, drift_err *e);

    /* ---- appended after ABI version 1's first layout; optional ---- */

    /* DRIFT_MODEL_GLM only; NULL: the engine builds the sum from
     * glm_design.  Adds sum_k w[k] x_{row k} over the rows of b to out
     * (d), without forming the n x d design: what a sampler that keeps one
     * scalar per datum needs when d is large and the rows sparse. */
    int (*glm_design_sum)(const void *self, const drift_rows *b,
                          const double *w, double *out, drift_err *e);

    /* Optional.  The part of log_prior that the constraint transforms'
     * log-Jacobians make, log |d constrain / d theta| summed, into *lj;
     * when grad != NULL its gradient (overwritten, length d).  What a
     * method that works with the density of the constrained values
     * needs (a mode without the Jacobian, as Stan's optimizer finds;
     * log_prob with or without it): that density is log_prior - lj.
     * NULL: the engine takes lj = 0 when the model's parameters are
     * unconstrained (constrain the identity), and a method that needs
     * lj otherwise refuses the model. */
    int (*log_jacobian)(const void *self, void *ws, const double *theta,
                        double *lj, double *grad, drift_err *e);
} drift_model;

/* The smallest drift_model a model may report in struct_size: the layout
 * before the first appended field. */
#define DRIFT_MODEL_MIN_SIZE offsetof(drift_model, glm_design_sum)

/* ---- C model plugins --------------------------------------------------- */

/* What drift_model_entry() returns.  The loader reads abi_version first and
 * refuses a mismatch before reading anything else; struct_size and the
 * build facts are compared next. */
typedef struct drift_model_plugin {
    uint32_t abi_version;       /* DRIFT_MODEL_ABI_VERSION */
    uint32_t struct_size;       /* sizeof(drift_model_plugin) */
    uint32_t size_t_size;       /* sizeof(size_t): row indices */
    uint32_t double_size;       /* sizeof(double) */
    const char *name;           /* what --model NAME selects */
    const char *summary;        /* one line */
    const drift_hparam *options;/* model options, set with --model-set k=v */
    size_t n_options;
    /* Builds a model over `data` with validated option values (table
     * order).  On failure returns non-zero with a message naming the data
     * file, line and column at fault. */
    int (*create)(const drift_data *data, const double *options,
                  drift_model *out, drift_err *e);
} drift_model_plugin;

/* The one symbol a model plugin exports. */
typedef const drift_model_plugin *(*drift_model_entry_fn)(void);
#define DRIFT_MODEL_ENTRY "drift_model_entry"

/* Fill the version fields of a plugin descriptor. */
#define DRIFT_MODEL_PLUGIN_HEADER                                        \
    DRIFT_MODEL_ABI_VERSION, (uint32_t)sizeof(drift_model_plugin),       \
        (uint32_t)sizeof(size_t), (uint32_t)sizeof(double)

#ifdef __cplusplus
}
#endif
#endif /* DRIFT_MODEL_H */
