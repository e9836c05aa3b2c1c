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
    DRIFT_FN_LGAMMA, DRIFT_FN_PHI, DRIFT_FN_PHI_APPROX, DRIFT_FN_LOGIT,
    DRIFT_FN_LOG1M_EXP, DRIFT_FN_LOG1M_INV_LOGIT, DRIFT_FN_INV,
    DRIFT_FN_INV_SQRT, DRIFT_FN_INV_SQUARE, DRIFT_FN_LOG2, DRIFT_FN_LOG10,
    DRIFT_FN_EXP2, DRIFT_FN_CBRT, DRIFT_FN_TAN, DRIFT_FN_ASIN,
    DRIFT_FN_ACOS, DRIFT_FN_ATAN, DRIFT_FN_SINH, DRIFT_FN_COSH,
    DRIFT_FN_ASINH, DRIFT_FN_ACOSH, DRIFT_FN_ATANH, DRIFT_FN_ERF,
    DRIFT_FN_ERFC, DRIFT_FN_TGAMMA, DRIFT_FN_INV_CLOGLOG, DRIFT_FN_STEP,
    DRIFT_FN_FLOOR, DRIFT_FN_CEIL, DRIFT_FN_ROUND, DRIFT_FN_TRUNC,
    DRIFT_FN_NOT,               /* !x: 1 when x == 0, else 0 */
    DRIFT_FN_N_UNARY,           /* end of the elementwise unary functions */
    DRIFT_FN_POW = DRIFT_FN_N_UNARY,
    DRIFT_FN_LOG_SUM_EXP,       /* binary elementwise or over a vector */
    DRIFT_FN_DOT, DRIFT_FN_SUM, DRIFT_FN_MEAN, DRIFT_FN_SQUARED_NORM,
    DRIFT_FN_FMIN, DRIFT_FN_FMAX, DRIFT_FN_LOG_DIFF_EXP, DRIFT_FN_LCHOOSE,
    DRIFT_FN_LBETA, DRIFT_FN_MAX, DRIFT_FN_MIN, DRIFT_FN_SD,
    DRIFT_FN_VARIANCE, DRIFT_FN_LOG_MIX, DRIFT_FN_SOFTMAX,
    DRIFT_FN_LOG_SOFTMAX, DRIFT_FN_CUMULATIVE_SUM, DRIFT_FN_APPEND_ROW,
    DRIFT_FN_APPEND_COL, DRIFT_FN_ROWS_DOT_PRODUCT,
    DRIFT_FN_DIAG_PRE_MULTIPLY, DRIFT_FN_DIAG_POST_MULTIPLY,
    DRIFT_FN_QUAD_FORM_DIAG, DRIFT_FN_CHOLESKY_DECOMPOSE,
    DRIFT_FN_MULTIPLY_LOWER_TRI_SELF_TRANSPOSE, DRIFT_FN_MDIVIDE_LEFT_TRI_LOW,
    DRIFT_FN_DIAGONAL, DRIFT_FN_DIAG_MATRIX, DRIFT_FN_TO_VECTOR,
    DRIFT_FN_TRANSPOSE, DRIFT_FN_REP_VECTOR, DRIFT_FN_REP_MATRIX,
    DRIFT_FN_HEAD, DRIFT_FN_TAIL, DRIFT_FN_SEGMENT, DRIFT_FN_ROWS,
    DRIFT_FN_COLS, DRIFT_FN_NUM_ELEMENTS, DRIFT_FN_DISTANCE,
    DRIFT_FN_SQUARED_DISTANCE, DRIFT_FN_ADD_DIAG, DRIFT_FN_PROD,
    DRIFT_FN_GP_EXP_QUAD_COV,
    DRIFT_FN_PI, DRIFT_FN_E, DRIFT_FN_SQRT2, DRIFT_FN_NEGATIVE_INFINITY,
    DRIFT_FN_POSITIVE_INFINITY, DRIFT_FN_NOT_A_NUMBER,
    DRIFT_FN_MACHINE_PRECISION,   /* constants, no arguments */
    DRIFT_FN_DENSITY,           /* name_lpdf(y | ...): the call's dist */
    DRIFT_FN_RNG,               /* name_rng(...): a draw of the call's dist
                                   (the generated block only) */
    DRIFT_FN_LCDF,              /* name_lcdf(y | ...): log P(Y <= y) */
    DRIFT_FN_LCCDF,             /* name_lccdf(y | ...): log P(Y > y) */
    DRIFT_FN_CDF                /* name_cdf(y | ...): P(Y <= y) */
} drift_fn_id;

typedef enum drift_fn_rule {
    DRIFT_RULE_UNARY,   /* elementwise: any shape -> same shape, real */
    DRIFT_RULE_BINARY,  /* elementwise with scalar broadcasting */
    DRIFT_RULE_REDUCE,  /* vector or matrix -> real */
    DRIFT_RULE_DOT,     /* vector[n], vector[n] -> real */
    DRIFT_RULE_LSE,     /* one argument: REDUCE; two: BINARY */
    DRIFT_RULE_MINMAX,  /* one argument: REDUCE; two: BINARY keeping int */
    DRIFT_RULE_SPECIAL  /* its own rule in typecheck.c */
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

/* Whether name is a reduction the transformed block computes over every
 * row when its one argument is a per-row value: mean, sd, variance,
 * sum, min, max. */
int drift_builtin_reduces_rows(const char *name);

/* Distributions. */
typedef enum drift_dist_id {
    DRIFT_D_NORMAL, DRIFT_D_STUDENT_T, DRIFT_D_CAUCHY,
    DRIFT_D_DOUBLE_EXPONENTIAL, DRIFT_D_LOGISTIC, DRIFT_D_LOGNORMAL,
    DRIFT_D_EXPONENTIAL, DRIFT_D_GAMMA, DRIFT_D_INV_GAMMA, DRIFT_D_BETA,
    DRIFT_D_UNIFORM, DRIFT_D_BERNOULLI, DRIFT_D_BERNOULLI_LOGIT,
    DRIFT_D_BINOMIAL_LOGIT, DRIFT_D_POISSON, DRIFT_D_POISSON_LOG,
    DRIFT_D_CATEGORICAL_LOGIT,
    /* elementwise, added for real models */
    DRIFT_D_BINOMIAL, DRIFT_D_NEG_BINOMIAL, DRIFT_D_NEG_BINOMIAL_2,
    DRIFT_D_NEG_BINOMIAL_2_LOG, DRIFT_D_BETA_BINOMIAL, DRIFT_D_WEIBULL,
    DRIFT_D_VON_MISES, DRIFT_D_GUMBEL, DRIFT_D_CHI_SQUARE,
    DRIFT_D_INV_CHI_SQUARE, DRIFT_D_SCALED_INV_CHI_SQUARE, DRIFT_D_RAYLEIGH,
    DRIFT_D_FRECHET,
    /* over vectors and matrices (lowered to linear algebra: lower.c) */
    DRIFT_D_DIRICHLET, DRIFT_D_MULTI_NORMAL, DRIFT_D_MULTI_NORMAL_CHOLESKY,
    DRIFT_D_LKJ_CORR_CHOLESKY, DRIFT_D_LKJ_CORR, DRIFT_D_CATEGORICAL,
    DRIFT_D_STD_NORMAL,         /* elementwise, no arguments */
    /* generalised linear models, Stan's argument order (x, alpha, beta):
     * lowered to the elementwise distribution of alpha + x * beta */
    DRIFT_D_BERNOULLI_LOGIT_GLM, DRIFT_D_POISSON_LOG_GLM,
    DRIFT_D_NORMAL_ID_GLM,
    /* an int outcome 1..K from a real eta and K - 1 ordered cutpoints */
    DRIFT_D_ORDERED_LOGISTIC, DRIFT_D_ORDERED_PROBIT,
    DRIFT_N_DISTS
} drift_dist_id;

/* How a distribution's outcome and arguments are shaped. */
typedef enum drift_dist_rule {
    DRIFT_DRULE_ELEM = 0,   /* elementwise, scalars broadcast; the terms
                               are summed */
    DRIFT_DRULE_CATLOGIT,   /* int outcome, vector of K log-odds */
    DRIFT_DRULE_DIRICHLET,  /* vector[K] (or an array of them), alpha the
                               same or one vector[K] */
    DRIFT_DRULE_MVN,        /* vector[K] (or an array), location vector[K]
                               (or the same array), matrix[K, K] */
    DRIFT_DRULE_LKJ,        /* matrix[K, K], a real shape */
    DRIFT_DRULE_CATEGORICAL,/* int outcome (or an array of them), a
                               simplex[K] */
    DRIFT_DRULE_ORDERED,    /* int outcome 1..K (or an array of n), eta a
                               real (or vector[n]), cutpoints a
                               vector[K - 1] */
    DRIFT_DRULE_GLM         /* outcome a scalar (x a vector[K]) or an
                               array[n] (x a matrix[n, K]); alpha a real or
                               vector[n]; beta a vector[K]; then the
                               elementwise arguments (sigma) */
} drift_dist_rule;

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

#define DRIFT_DIST_MAX_ARGS 4

typedef struct drift_dist {
    const char *name;
    drift_dist_id id;
    int n_args;                                 /* after the outcome */
    const char *arg_names[DRIFT_DIST_MAX_ARGS];
    int arg_int[DRIFT_DIST_MAX_ARGS];           /* must be int data */
    int discrete;                               /* the outcome is an int */
    drift_support support;
    const char *support_text;                   /* for messages */
    drift_dist_rule rule;
} drift_dist;

extern const drift_dist drift_dists[];

/* The distribution called name, or NULL. */
const drift_dist *drift_dist_find(const char *name);

/* The elementwise distribution a GLM is lowered to (bernoulli_logit,
 * poisson_log, normal), or id itself for any other. */
drift_dist_id drift_dist_glm_base(drift_dist_id id);

/* Whether distribution id has name_lcdf, name_lccdf and name_cdf (the
 * continuous ones but von_mises and the multivariate; bernoulli,
 * poisson, binomial, neg_binomial and neg_binomial_2). */
int drift_dist_has_cdf(drift_dist_id id);

#endif
