/* builtins.c: the tables of functions and distributions (see builtins.h).
 * Not for their numerics. */
#include "config.h"

#include <string.h>

#include "builtins.h"

const drift_builtin drift_builtins[] = {
    {"exp", DRIFT_FN_EXP, 1, 1, DRIFT_RULE_UNARY},
    {"log", DRIFT_FN_LOG, 1, 1, DRIFT_RULE_UNARY},
    {"log1p", DRIFT_FN_LOG1P, 1, 1, DRIFT_RULE_UNARY},
    {"expm1", DRIFT_FN_EXPM1, 1, 1, DRIFT_RULE_UNARY},
    {"sqrt", DRIFT_FN_SQRT, 1, 1, DRIFT_RULE_UNARY},
    {"square", DRIFT_FN_SQUARE, 1, 1, DRIFT_RULE_UNARY},
    {"fabs", DRIFT_FN_FABS, 1, 1, DRIFT_RULE_UNARY},
    {"abs", DRIFT_FN_FABS, 1, 1, DRIFT_RULE_UNARY},
    {"tanh", DRIFT_FN_TANH, 1, 1, DRIFT_RULE_UNARY},
    {"logistic", DRIFT_FN_LOGISTIC, 1, 1, DRIFT_RULE_UNARY},
    {"inv_logit", DRIFT_FN_LOGISTIC, 1, 1, DRIFT_RULE_UNARY},
    {"log1p_exp", DRIFT_FN_LOG1P_EXP, 1, 1, DRIFT_RULE_UNARY},
    {"softplus", DRIFT_FN_LOG1P_EXP, 1, 1, DRIFT_RULE_UNARY},
    {"relu", DRIFT_FN_RELU, 1, 1, DRIFT_RULE_UNARY},
    {"sin", DRIFT_FN_SIN, 1, 1, DRIFT_RULE_UNARY},
    {"cos", DRIFT_FN_COS, 1, 1, DRIFT_RULE_UNARY},
    {"log1m", DRIFT_FN_LOG1M, 1, 1, DRIFT_RULE_UNARY},
    {"log_inv_logit", DRIFT_FN_LOG_INV_LOGIT, 1, 1, DRIFT_RULE_UNARY},
    {"pow", DRIFT_FN_POW, 2, 2, DRIFT_RULE_BINARY},
    {"log_sum_exp", DRIFT_FN_LOG_SUM_EXP, 1, 2, DRIFT_RULE_LSE},
    {"dot", DRIFT_FN_DOT, 2, 2, DRIFT_RULE_DOT},
    {"dot_product", DRIFT_FN_DOT, 2, 2, DRIFT_RULE_DOT},
    {"sum", DRIFT_FN_SUM, 1, 1, DRIFT_RULE_REDUCE},
    {"mean", DRIFT_FN_MEAN, 1, 1, DRIFT_RULE_REDUCE},
    {"squared_norm", DRIFT_FN_SQUARED_NORM, 1, 1, DRIFT_RULE_REDUCE},
    {"dot_self", DRIFT_FN_SQUARED_NORM, 1, 1, DRIFT_RULE_REDUCE},
};
const size_t drift_n_builtins = sizeof drift_builtins / sizeof drift_builtins[0];

const drift_builtin *drift_builtin_find(const char *name)
{
    for (size_t k = 0; k < drift_n_builtins; k++)
        if (!strcmp(drift_builtins[k].name, name))
            return &drift_builtins[k];
    return NULL;
}

/* Indexed by drift_dist_id. */
const drift_dist drift_dists[DRIFT_N_DISTS] = {
    {"normal", DRIFT_D_NORMAL, 2, {"mu", "sigma"}, {0}, 0, DRIFT_SUP_REAL,
     "a real"},
    {"student_t", DRIFT_D_STUDENT_T, 3, {"nu", "mu", "sigma"}, {0}, 0,
     DRIFT_SUP_REAL, "a real"},
    {"cauchy", DRIFT_D_CAUCHY, 2, {"mu", "sigma"}, {0}, 0, DRIFT_SUP_REAL,
     "a real"},
    {"double_exponential", DRIFT_D_DOUBLE_EXPONENTIAL, 2, {"mu", "sigma"},
     {0}, 0, DRIFT_SUP_REAL, "a real"},
    {"logistic", DRIFT_D_LOGISTIC, 2, {"mu", "sigma"}, {0}, 0,
     DRIFT_SUP_REAL, "a real"},
    {"lognormal", DRIFT_D_LOGNORMAL, 2, {"mu", "sigma"}, {0}, 0,
     DRIFT_SUP_POSITIVE, "positive"},
    {"exponential", DRIFT_D_EXPONENTIAL, 1, {"beta"}, {0}, 0,
     DRIFT_SUP_NONNEG, "non-negative"},
    {"gamma", DRIFT_D_GAMMA, 2, {"alpha", "beta"}, {0}, 0,
     DRIFT_SUP_POSITIVE, "positive"},
    {"inv_gamma", DRIFT_D_INV_GAMMA, 2, {"alpha", "beta"}, {0}, 0,
     DRIFT_SUP_POSITIVE, "positive"},
    {"beta", DRIFT_D_BETA, 2, {"alpha", "beta"}, {0}, 0, DRIFT_SUP_UNIT,
     "strictly between 0 and 1"},
    {"uniform", DRIFT_D_UNIFORM, 2, {"alpha", "beta"}, {0}, 0,
     DRIFT_SUP_INTERVAL, "between the bounds"},
    {"bernoulli", DRIFT_D_BERNOULLI, 1, {"theta"}, {0}, 1, DRIFT_SUP_BINARY,
     "0 or 1"},
    {"bernoulli_logit", DRIFT_D_BERNOULLI_LOGIT, 1, {"alpha"}, {0}, 1,
     DRIFT_SUP_BINARY, "0 or 1"},
    {"binomial_logit", DRIFT_D_BINOMIAL_LOGIT, 2, {"n", "alpha"}, {1, 0}, 1,
     DRIFT_SUP_BINOMIAL, "an integer from 0 to n"},
    {"poisson", DRIFT_D_POISSON, 1, {"lambda"}, {0}, 1, DRIFT_SUP_COUNT,
     "a non-negative integer"},
    {"poisson_log", DRIFT_D_POISSON_LOG, 1, {"alpha"}, {0}, 1,
     DRIFT_SUP_COUNT, "a non-negative integer"},
    {"categorical_logit", DRIFT_D_CATEGORICAL_LOGIT, 1, {"beta"}, {0}, 1,
     DRIFT_SUP_CATEGORY, "a category from 1 to K"},
};

const drift_dist *drift_dist_find(const char *name)
{
    for (size_t k = 0; k < DRIFT_N_DISTS; k++)
        if (!strcmp(drift_dists[k].name, name))
            return &drift_dists[k];
    return NULL;
}
