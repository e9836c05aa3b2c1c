/* ad.h: evaluation and automatic differentiation of a likelihood graph
 * over whole minibatches.  Every node is one vectorised kernel over the
 * batch (rows variables are batch x size arrays; products go through
 * OpenBLAS); no per-datum interpretation happens in the loops.  Reverse
 * mode gives the summed gradient or per-row gradients, forward mode the
 * per-row directional derivatives in one pass.  Values of nodes that do
 * not vary by row are computed once per call.  Not for building graphs
 * (lower.c) or the model ABI (lang_model.c). */
#ifndef DRIFT_AD_H
#define DRIFT_AD_H

#include <drift/model.h>

#include "graph.h"

/* The views a kernel reads and writes, per node: values val[id] with row
 * stride vld[id] (0 when the node does not vary by row), adjoints adj[id]
 * with row stride ald[id] over arows[id] rows, tangents tan[id] with
 * stride tld[id], and the partials a distribution keeps for the reverse
 * and forward passes.  Owned by a workspace, or by the graph builder for
 * folding constants. */
typedef struct drift_ad_ctx {
    const drift_graph *g;
    size_t B;                   /* rows in the current batch */
    const size_t *rows;         /* their indices, or NULL for the range */
    size_t first;               /*   first .. first+B-1 */
    double **val;
    size_t *vld;
    double **adj;
    size_t *ald, *arows;
    double **tan;
    size_t *tld;
    double **part;
    int need_part;              /* distributions keep their partials */
    drift_err *e;
    struct drift_rand *rng;     /* the generated block's draws (NULL
                                   elsewhere) */
} drift_ad_ctx;

/* Computes node id's value from its inputs' (forward kernel).  Used by
 * evaluation and, with every input constant and B = 1, to fold constants
 * at build time.  Errors (a distribution's argument outside its domain,
 * an index out of range) are written into c->e with the model location. */
int drift_ad_forward_node(drift_ad_ctx *c, int id);

typedef struct drift_ad_ws drift_ad_ws;

/* A workspace for batches of at most cap rows; NULL when out of memory. */
drift_ad_ws *drift_ad_ws_new(const drift_graph *g, size_t cap);
void drift_ad_ws_free(drift_ad_ws *ws);

/* The log prior (with constraint Jacobians) and, when grad != NULL, its
 * gradient in theta (overwritten, length d). */
int drift_ad_prior(const drift_graph *g, drift_ad_ws *ws, const double *theta,
                   double *lp, double *grad, drift_err *e);

/* The constraint transforms' log-Jacobians among the log prior's terms,
 * summed, and when grad != NULL their gradient (overwritten, length d);
 * 0 when there are none. */
int drift_ad_log_jacobian(const drift_graph *g, drift_ad_ws *ws,
                          const double *theta, double *lj, double *grad,
                          drift_err *e);

/* The per-row log likelihood terms of the rows of b, as model.h's
 * log_lik: each output may be NULL. */
int drift_ad_lik(const drift_graph *g, drift_ad_ws *ws, const double *theta,
                 const drift_rows *b, double *ll_rows, double *ll_sum,
                 double *grad_sum, double *grad_rows, drift_err *e);

/* out[k] = v . grad l_k for the rows of b, in one forward pass; ll_rows
 * (may be NULL) as in drift_ad_lik. */
int drift_ad_jvp(const drift_graph *g, drift_ad_ws *ws, const double *theta,
                 const double *v, const drift_rows *b, double *out,
                 double *ll_rows, drift_err *e);

/* Generalised linear form (g->glm): s_k = d l_k / d z_k for the linear
 * predictor z_k, and the fixed vectors x_k with grad l_k = s_k x_k. */
int drift_ad_glm_scalars(const drift_graph *g, drift_ad_ws *ws,
                         const double *theta, const drift_rows *b, double *s,
                         double *ll_rows, drift_err *e);
int drift_ad_glm_design(const drift_graph *g, const drift_rows *b, double *x,
                        drift_err *e);
/* out (d) += sum_k w[k] x_k over the rows of b, the design never formed
 * (sparse rows add their nonzeros only). */
int drift_ad_glm_design_sum(const drift_graph *g, const drift_rows *b,
                            const double *w, double *out, drift_err *e);

/* Predictions for g->outcome (see model.h's predict). */
int drift_ad_predict(const drift_graph *g, drift_ad_ws *ws,
                     const double *theta, const drift_rows *b, double *pred,
                     double *y, drift_err *e);

/* Evaluates the data-only nodes needed for targets over rows
 * first .. first+n-1 (n <= the workspace's cap); their values are then
 * read with drift_ad_value.  For precomputing indices and checking data. */
int drift_ad_eval_data(const drift_graph *g, drift_ad_ws *ws,
                       const int *targets, size_t n_targets, size_t first,
                       size_t n, drift_err *e);
const double *drift_ad_value(const drift_ad_ws *ws, int id, size_t *ld);

/* The rows a workspace holds at once. */
size_t drift_ad_ws_cap(const drift_ad_ws *ws);

struct drift_rand;

/* Evaluates the nodes of sched, in order, at theta: with n == 0 once for
 * values shared by the rows, else for rows first .. first+n-1 (n <= the
 * workspace's cap), the shared values having been computed before.  rng
 * serves the random draws.  Values are then read with drift_ad_value. */
int drift_ad_eval(const drift_graph *g, drift_ad_ws *ws, const double *theta,
                  const int *sched, size_t ns, size_t first, size_t n,
                  struct drift_rand *rng, drift_err *e);

#endif
