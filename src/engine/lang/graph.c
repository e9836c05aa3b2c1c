/* graph.c: the likelihood graph's storage (see graph.h): freeing it and
 * counting its nodes.  Building it is lower.c's, evaluating it ad.c's;
 * both sit above this file. */
#include "config.h"

#include "base/util.h"
#include "graph.h"

void drift_graph_free(drift_graph *g)
{
    if (!g)
        return;
    for (size_t k = 0; k < g->n_nodes; k++) {
        drift_free(g->nodes[k].cval);
        drift_free(g->nodes[k].in_many);
        drift_free(g->nodes[k].idx);
        drift_free(g->nodes[k].amap);
    }
    drift_free(g->nodes);
    drift_free(g->reductions);
    for (size_t k = 0; k < g->n_params; k++)
        drift_free(g->params[k].name);
    drift_free(g->params);
    drift_free(g->prior_sched);
    drift_free(g->jac_sched);
    drift_free(g->datum_sched);
    drift_free(g->glm_terms);
    for (size_t k = 0; k < g->n_gouts; k++)
        drift_free(g->gouts[k].name);
    drift_free(g->gouts);
    drift_free(g->deriv_sched);
    drift_free(g->gen_shared_sched);
    drift_free(g->gen_rows_sched);
    drift_free(g->glm_inner);
    drift_free(g->glm_top_sched);
    drift_free(g->glm_offsets);
    for (size_t k = 0; k < g->n_prints; k++) {
        for (size_t j = 0; j < g->prints[k].n; j++)
            drift_free(g->prints[k].str[j]);
        drift_free(g->prints[k].str);
        drift_free(g->prints[k].node);
    }
    drift_free(g->prints);
    for (size_t k = 0; k < g->n_rejects; k++)
        drift_free(g->rejects[k].msg);
    drift_free(g->rejects);
    drift_free(g);
}

void drift_graph_counts(const drift_graph *g, size_t *total, size_t *prior,
                        size_t *datum)
{
    *total = g->n_nodes;
    *prior = g->n_prior_sched;
    *datum = g->n_datum_sched;
}
