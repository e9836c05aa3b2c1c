/* builtins.h: the functions and distributions the model language knows,
 * with their arities and typing rules.  One table each, shared by name
 * resolution, type checking and the graph builder.  Not for their
 * numerics (src/engine/ad.c, src/engine/dist.c). */
#ifndef DRIFT_BUILTINS_H
#define DRIFT_BUILTINS_H

#include <stddef.h>

/* Functions.  The elementwise unary ones come first and stay contiguous
 * (the engine switches on them). */
typedef enum drift_fn_id {
    DRIFT_FN_EXP, DRIFT_FN_LOG, DRIFT_FN_LOG1P, DRIFT_FN_EXPM1,
    DRIFT_FN_SQRT, DRIFT_FN_SQUARE, DRIFT_FN_FABS, DRIFT_FN_TANH,
    DRIFT_FN_LOGISTIC, DRIFT_FN_LOG1P_EXP, DRIFT_FN_RELU, DRIFT_FN_SIN,
    DRIFT_FN_COS, DRIFT_FN_LOG1M, DRIFT_FN_LOG_INV_LOGIT,
    DRIFT_FN_N_UNARY,           /* end of the elementwise unary functions */
    DRIFT_FN_POW = DRIFT_FN_N_UNARY,
    DRIFT_FN_LOG_SUM_EXP,       /* binary elementwise or over a vector */
    DRIFT_FN_DOT, DRIFT_FN_SUM, DRIFT_FN_MEAN, DRIFT_FN_SQUARED_NORM
} drift_fn_id;

typedef enum drift_fn_rule {
    DRIFT_RULE_UNARY,   /* elementwise: any shape -> same shape, real */
    DRIFT_RULE_BINARY,  /* elementwise with scalar broadcasting */
    DRIFT_RULE_REDUCE,  /* vector or matrix -> real */
    DRIFT_RULE_DOT,     /* vector[n], vector[n] -> real */
    DRIFT_RULE_LSE      /* one argument: REDUCE; two: BINARY */
} drift_fn_rule;

typedef struct drift_builtin {
    const char *name;
    drift_fn_id id;
    int min_args, max_args;
    drift_fn_rule rule;
} drift_builtin;

extern const drift_builtin drift_builtins[];
extern const size_t drift_n_builtins;

/* The function called name, or NULL. */
const drift_builtin *drift_builtin_find(const char *name);

/* Distributions. */
typedef enum drift_dist_id {
    DRIFT_D_NORMAL, DRIFT_D_STUDENT_T, DRIFT_D_CAUCHY,
    DRIFT_D_DOUBLE_EXPONENTIAL, DRIFT_D_LOGISTIC, DRIFT_D_LOGNORMAL,
    DRIFT_D_EXPONENTIAL, DRIFT_D_GAMMA, DRIFT_D_INV_GAMMA, DRIFT_D_BETA,
    DRIFT_D_UNIFORM, DRIFT_D_BERNOULLI, DRIFT_D_BERNOULLI_LOGIT,
    DRIFT_D_BINOMIAL_LOGIT, DRIFT_D_POISSON, DRIFT_D_POISSON_LOG,
    DRIFT_D_CATEGORICAL_LOGIT, DRIFT_N_DISTS
} drift_dist_id;

/* The outcome's support, checked on data before sampling. */
typedef enum drift_support {
    DRIFT_SUP_REAL,         /* any real */
    DRIFT_SUP_POSITIVE,     /* y > 0 */
    DRIFT_SUP_NONNEG,       /* y >= 0 */
    DRIFT_SUP_UNIT,         /* 0 < y < 1 */
    DRIFT_SUP_BINARY,       /* y in {0, 1} */
    DRIFT_SUP_COUNT,        /* integer y >= 0 */
    DRIFT_SUP_BINOMIAL,     /* integer 0 <= y <= n (the first argument) */
    DRIFT_SUP_CATEGORY,     /* integer 1 <= y <= K (the length of the
                               argument) */
    DRIFT_SUP_INTERVAL      /* a <= y <= b (the two arguments) */
} drift_support;

#define DRIFT_DIST_MAX_ARGS 3

typedef struct drift_dist {
    const char *name;
    drift_dist_id id;
    int n_args;                                 /* after the outcome */
    const char *arg_names[DRIFT_DIST_MAX_ARGS];
    int arg_int[DRIFT_DIST_MAX_ARGS];           /* must be int data */
    int discrete;                               /* the outcome is an int */
    drift_support support;
    const char *support_text;                   /* for messages */
} drift_dist;

extern const drift_dist drift_dists[];

/* The distribution called name, or NULL. */
const drift_dist *drift_dist_find(const char *name);

#endif
