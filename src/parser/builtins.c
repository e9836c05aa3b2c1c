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
    {"lgamma", DRIFT_FN_LGAMMA, 1, 1, DRIFT_RULE_UNARY},
    {"Phi", DRIFT_FN_PHI, 1, 1, DRIFT_RULE_UNARY},
    {"Phi_approx", DRIFT_FN_PHI_APPROX, 1, 1, DRIFT_RULE_UNARY},
    {"logit", DRIFT_FN_LOGIT, 1, 1, DRIFT_RULE_UNARY},
    {"log1m_exp", DRIFT_FN_LOG1M_EXP, 1, 1, DRIFT_RULE_UNARY},
    {"log1m_inv_logit", DRIFT_FN_LOG1M_INV_LOGIT, 1, 1, DRIFT_RULE_UNARY},
    {"inv", DRIFT_FN_INV, 1, 1, DRIFT_RULE_UNARY},
    {"inv_sqrt", DRIFT_FN_INV_SQRT, 1, 1, DRIFT_RULE_UNARY},
    {"inv_square", DRIFT_FN_INV_SQUARE, 1, 1, DRIFT_RULE_UNARY},
    {"log2", DRIFT_FN_LOG2, 1, 1, DRIFT_RULE_UNARY},
    {"log10", DRIFT_FN_LOG10, 1, 1, DRIFT_RULE_UNARY},
    {"exp2", DRIFT_FN_EXP2, 1, 1, DRIFT_RULE_UNARY},
    {"cbrt", DRIFT_FN_CBRT, 1, 1, DRIFT_RULE_UNARY},
    {"tan", DRIFT_FN_TAN, 1, 1, DRIFT_RULE_UNARY},
    {"asin", DRIFT_FN_ASIN, 1, 1, DRIFT_RULE_UNARY},
    {"acos", DRIFT_FN_ACOS, 1, 1, DRIFT_RULE_UNARY},
    {"atan", DRIFT_FN_ATAN, 1, 1, DRIFT_RULE_UNARY},
    {"sinh", DRIFT_FN_SINH, 1, 1, DRIFT_RULE_UNARY},
    {"cosh", DRIFT_FN_COSH, 1, 1, DRIFT_RULE_UNARY},
    {"asinh", DRIFT_FN_ASINH, 1, 1, DRIFT_RULE_UNARY},
    {"acosh", DRIFT_FN_ACOSH, 1, 1, DRIFT_RULE_UNARY},
    {"atanh", DRIFT_FN_ATANH, 1, 1, DRIFT_RULE_UNARY},
    {"erf", DRIFT_FN_ERF, 1, 1, DRIFT_RULE_UNARY},
    {"erfc", DRIFT_FN_ERFC, 1, 1, DRIFT_RULE_UNARY},
    {"tgamma", DRIFT_FN_TGAMMA, 1, 1, DRIFT_RULE_UNARY},
    {"inv_cloglog", DRIFT_FN_INV_CLOGLOG, 1, 1, DRIFT_RULE_UNARY},
    {"step", DRIFT_FN_STEP, 1, 1, DRIFT_RULE_UNARY},
    {"floor", DRIFT_FN_FLOOR, 1, 1, DRIFT_RULE_UNARY},
    {"ceil", DRIFT_FN_CEIL, 1, 1, DRIFT_RULE_UNARY},
    {"round", DRIFT_FN_ROUND, 1, 1, DRIFT_RULE_UNARY},
    {"trunc", DRIFT_FN_TRUNC, 1, 1, DRIFT_RULE_UNARY},
    {"fmin", DRIFT_FN_FMIN, 2, 2, DRIFT_RULE_BINARY},
    {"fmax", DRIFT_FN_FMAX, 2, 2, DRIFT_RULE_BINARY},
    {"log_diff_exp", DRIFT_FN_LOG_DIFF_EXP, 2, 2, DRIFT_RULE_BINARY},
    {"lchoose", DRIFT_FN_LCHOOSE, 2, 2, DRIFT_RULE_BINARY},
    {"binomial_coefficient_log", DRIFT_FN_LCHOOSE, 2, 2, DRIFT_RULE_BINARY},
    {"lbeta", DRIFT_FN_LBETA, 2, 2, DRIFT_RULE_BINARY},
    {"max", DRIFT_FN_MAX, 1, 2, DRIFT_RULE_MINMAX},
    {"min", DRIFT_FN_MIN, 1, 2, DRIFT_RULE_MINMAX},
    {"sd", DRIFT_FN_SD, 1, 1, DRIFT_RULE_REDUCE},
    {"variance", DRIFT_FN_VARIANCE, 1, 1, DRIFT_RULE_REDUCE},
    {"log_mix", DRIFT_FN_LOG_MIX, 2, 3, DRIFT_RULE_SPECIAL},
    {"softmax", DRIFT_FN_SOFTMAX, 1, 1, DRIFT_RULE_SPECIAL},
    {"log_softmax", DRIFT_FN_LOG_SOFTMAX, 1, 1, DRIFT_RULE_SPECIAL},
    {"cumulative_sum", DRIFT_FN_CUMULATIVE_SUM, 1, 1, DRIFT_RULE_SPECIAL},
    {"append_row", DRIFT_FN_APPEND_ROW, 2, 2, DRIFT_RULE_SPECIAL},
    {"append_col", DRIFT_FN_APPEND_COL, 2, 2, DRIFT_RULE_SPECIAL},
    {"rows_dot_product", DRIFT_FN_ROWS_DOT_PRODUCT, 2, 2,
     DRIFT_RULE_SPECIAL},
    {"diag_pre_multiply", DRIFT_FN_DIAG_PRE_MULTIPLY, 2, 2,
     DRIFT_RULE_SPECIAL},
    {"diag_post_multiply", DRIFT_FN_DIAG_POST_MULTIPLY, 2, 2,
     DRIFT_RULE_SPECIAL},
    {"quad_form_diag", DRIFT_FN_QUAD_FORM_DIAG, 2, 2, DRIFT_RULE_SPECIAL},
    {"cholesky_decompose", DRIFT_FN_CHOLESKY_DECOMPOSE, 1, 1,
     DRIFT_RULE_SPECIAL},
    {"multiply_lower_tri_self_transpose",
     DRIFT_FN_MULTIPLY_LOWER_TRI_SELF_TRANSPOSE, 1, 1, DRIFT_RULE_SPECIAL},
    {"mdivide_left_tri_low", DRIFT_FN_MDIVIDE_LEFT_TRI_LOW, 2, 2,
     DRIFT_RULE_SPECIAL},
    {"diagonal", DRIFT_FN_DIAGONAL, 1, 1, DRIFT_RULE_SPECIAL},
    {"diag_matrix", DRIFT_FN_DIAG_MATRIX, 1, 1, DRIFT_RULE_SPECIAL},
    {"to_vector", DRIFT_FN_TO_VECTOR, 1, 1, DRIFT_RULE_SPECIAL},
    {"transpose", DRIFT_FN_TRANSPOSE, 1, 1, DRIFT_RULE_SPECIAL},
    {"rep_vector", DRIFT_FN_REP_VECTOR, 2, 2, DRIFT_RULE_SPECIAL},
    {"rep_matrix", DRIFT_FN_REP_MATRIX, 3, 3, DRIFT_RULE_SPECIAL},
    {"head", DRIFT_FN_HEAD, 2, 2, DRIFT_RULE_SPECIAL},
    {"tail", DRIFT_FN_TAIL, 2, 2, DRIFT_RULE_SPECIAL},
    {"segment", DRIFT_FN_SEGMENT, 3, 3, DRIFT_RULE_SPECIAL},
    {"rows", DRIFT_FN_ROWS, 1, 1, DRIFT_RULE_SPECIAL},
    {"cols", DRIFT_FN_COLS, 1, 1, DRIFT_RULE_SPECIAL},
    {"num_elements", DRIFT_FN_NUM_ELEMENTS, 1, 1, DRIFT_RULE_SPECIAL},
    {"distance", DRIFT_FN_DISTANCE, 2, 2, DRIFT_RULE_SPECIAL},
    {"squared_distance", DRIFT_FN_SQUARED_DISTANCE, 2, 2,
     DRIFT_RULE_SPECIAL},
    {"add_diag", DRIFT_FN_ADD_DIAG, 2, 2, DRIFT_RULE_SPECIAL},
    {"prod", DRIFT_FN_PROD, 1, 1, DRIFT_RULE_REDUCE},
    {"gp_exp_quad_cov", DRIFT_FN_GP_EXP_QUAD_COV, 3, 3, DRIFT_RULE_SPECIAL},
    {"pi", DRIFT_FN_PI, 0, 0, DRIFT_RULE_SPECIAL},
    {"e", DRIFT_FN_E, 0, 0, DRIFT_RULE_SPECIAL},
    {"sqrt2", DRIFT_FN_SQRT2, 0, 0, DRIFT_RULE_SPECIAL},
    {"negative_infinity", DRIFT_FN_NEGATIVE_INFINITY, 0, 0,
     DRIFT_RULE_SPECIAL},
    {"positive_infinity", DRIFT_FN_POSITIVE_INFINITY, 0, 0,
     DRIFT_RULE_SPECIAL},
    {"not_a_number", DRIFT_FN_NOT_A_NUMBER, 0, 0, DRIFT_RULE_SPECIAL},
    {"machine_precision", DRIFT_FN_MACHINE_PRECISION, 0, 0,
     DRIFT_RULE_SPECIAL},
};
const size_t drift_n_builtins = sizeof drift_builtins / sizeof drift_builtins[0];

int drift_builtin_reduces_rows(const char *name)
{
    static const char *const names[] = {"mean", "sd",  "variance",
                                        "sum",  "min", "max"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (!strcmp(name, names[k]))
            return 1;
    return 0;
}

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
     "a real", DRIFT_DRULE_ELEM},
    {"student_t", DRIFT_D_STUDENT_T, 3, {"nu", "mu", "sigma"}, {0}, 0,
     DRIFT_SUP_REAL, "a real", DRIFT_DRULE_ELEM},
    {"cauchy", DRIFT_D_CAUCHY, 2, {"mu", "sigma"}, {0}, 0, DRIFT_SUP_REAL,
     "a real", DRIFT_DRULE_ELEM},
    {"double_exponential", DRIFT_D_DOUBLE_EXPONENTIAL, 2, {"mu", "sigma"},
     {0}, 0, DRIFT_SUP_REAL, "a real", DRIFT_DRULE_ELEM},
    {"logistic", DRIFT_D_LOGISTIC, 2, {"mu", "sigma"}, {0}, 0,
     DRIFT_SUP_REAL, "a real", DRIFT_DRULE_ELEM},
    {"lognormal", DRIFT_D_LOGNORMAL, 2, {"mu", "sigma"}, {0}, 0,
     DRIFT_SUP_POSITIVE, "positive", DRIFT_DRULE_ELEM},
    {"exponential", DRIFT_D_EXPONENTIAL, 1, {"beta"}, {0}, 0,
     DRIFT_SUP_NONNEG, "non-negative", DRIFT_DRULE_ELEM},
    {"gamma", DRIFT_D_GAMMA, 2, {"alpha", "beta"}, {0}, 0,
     DRIFT_SUP_POSITIVE, "positive", DRIFT_DRULE_ELEM},
    {"inv_gamma", DRIFT_D_INV_GAMMA, 2, {"alpha", "beta"}, {0}, 0,
     DRIFT_SUP_POSITIVE, "positive", DRIFT_DRULE_ELEM},
    {"beta", DRIFT_D_BETA, 2, {"alpha", "beta"}, {0}, 0, DRIFT_SUP_UNIT,
     "strictly between 0 and 1", DRIFT_DRULE_ELEM},
    {"uniform", DRIFT_D_UNIFORM, 2, {"alpha", "beta"}, {0}, 0,
     DRIFT_SUP_INTERVAL, "between the bounds", DRIFT_DRULE_ELEM},
    {"bernoulli", DRIFT_D_BERNOULLI, 1, {"theta"}, {0}, 1, DRIFT_SUP_BINARY,
     "0 or 1", DRIFT_DRULE_ELEM},
    {"bernoulli_logit", DRIFT_D_BERNOULLI_LOGIT, 1, {"alpha"}, {0}, 1,
     DRIFT_SUP_BINARY, "0 or 1", DRIFT_DRULE_ELEM},
    {"binomial_logit", DRIFT_D_BINOMIAL_LOGIT, 2, {"n", "alpha"}, {1, 0}, 1,
     DRIFT_SUP_BINOMIAL, "an integer from 0 to n", DRIFT_DRULE_ELEM},
    {"poisson", DRIFT_D_POISSON, 1, {"lambda"}, {0}, 1, DRIFT_SUP_COUNT,
     "a non-negative integer", DRIFT_DRULE_ELEM},
    {"poisson_log", DRIFT_D_POISSON_LOG, 1, {"alpha"}, {0}, 1,
     DRIFT_SUP_COUNT, "a non-negative integer", DRIFT_DRULE_ELEM},
    {"categorical_logit", DRIFT_D_CATEGORICAL_LOGIT, 1, {"beta"}, {0}, 1,
     DRIFT_SUP_CATEGORY, "a category from 1 to K", DRIFT_DRULE_CATLOGIT},
    {"binomial", DRIFT_D_BINOMIAL, 2, {"n", "theta"}, {1, 0}, 1,
     DRIFT_SUP_BINOMIAL, "an integer from 0 to n", DRIFT_DRULE_ELEM},
    {"neg_binomial", DRIFT_D_NEG_BINOMIAL, 2, {"alpha", "beta"}, {0}, 1,
     DRIFT_SUP_COUNT, "a non-negative integer", DRIFT_DRULE_ELEM},
    {"neg_binomial_2", DRIFT_D_NEG_BINOMIAL_2, 2, {"mu", "phi"}, {0}, 1,
     DRIFT_SUP_COUNT, "a non-negative integer", DRIFT_DRULE_ELEM},
    {"neg_binomial_2_log", DRIFT_D_NEG_BINOMIAL_2_LOG, 2, {"eta", "phi"},
     {0}, 1, DRIFT_SUP_COUNT, "a non-negative integer", DRIFT_DRULE_ELEM},
    {"beta_binomial", DRIFT_D_BETA_BINOMIAL, 3, {"N", "alpha", "beta"},
     {1, 0, 0}, 1, DRIFT_SUP_BINOMIAL, "an integer from 0 to N",
     DRIFT_DRULE_ELEM},
    {"weibull", DRIFT_D_WEIBULL, 2, {"alpha", "sigma"}, {0}, 0,
     DRIFT_SUP_NONNEG, "non-negative", DRIFT_DRULE_ELEM},
    {"von_mises", DRIFT_D_VON_MISES, 2, {"mu", "kappa"}, {0}, 0,
     DRIFT_SUP_REAL, "a real", DRIFT_DRULE_ELEM},
    {"gumbel", DRIFT_D_GUMBEL, 2, {"mu", "beta"}, {0}, 0, DRIFT_SUP_REAL,
     "a real", DRIFT_DRULE_ELEM},
    {"chi_square", DRIFT_D_CHI_SQUARE, 1, {"nu"}, {0}, 0, DRIFT_SUP_POSITIVE,
     "positive", DRIFT_DRULE_ELEM},
    {"inv_chi_square", DRIFT_D_INV_CHI_SQUARE, 1, {"nu"}, {0}, 0,
     DRIFT_SUP_POSITIVE, "positive", DRIFT_DRULE_ELEM},
    {"scaled_inv_chi_square", DRIFT_D_SCALED_INV_CHI_SQUARE, 2, {"nu", "s"},
     {0}, 0, DRIFT_SUP_POSITIVE, "positive", DRIFT_DRULE_ELEM},
    {"rayleigh", DRIFT_D_RAYLEIGH, 1, {"sigma"}, {0}, 0, DRIFT_SUP_NONNEG,
     "non-negative", DRIFT_DRULE_ELEM},
    {"frechet", DRIFT_D_FRECHET, 2, {"alpha", "sigma"}, {0}, 0,
     DRIFT_SUP_POSITIVE, "positive", DRIFT_DRULE_ELEM},
    {"dirichlet", DRIFT_D_DIRICHLET, 1, {"alpha"}, {0}, 0, DRIFT_SUP_REAL,
     "a simplex", DRIFT_DRULE_DIRICHLET},
    {"multi_normal", DRIFT_D_MULTI_NORMAL, 2, {"mu", "Sigma"}, {0}, 0,
     DRIFT_SUP_REAL, "a real vector", DRIFT_DRULE_MVN},
    {"multi_normal_cholesky", DRIFT_D_MULTI_NORMAL_CHOLESKY, 2, {"mu", "L"},
     {0}, 0, DRIFT_SUP_REAL, "a real vector", DRIFT_DRULE_MVN},
    {"lkj_corr_cholesky", DRIFT_D_LKJ_CORR_CHOLESKY, 1, {"eta"}, {0}, 0,
     DRIFT_SUP_REAL, "a cholesky_factor_corr", DRIFT_DRULE_LKJ},
    {"lkj_corr", DRIFT_D_LKJ_CORR, 1, {"eta"}, {0}, 0, DRIFT_SUP_REAL,
     "a correlation matrix", DRIFT_DRULE_LKJ},
    {"categorical", DRIFT_D_CATEGORICAL, 1, {"theta"}, {0}, 1,
     DRIFT_SUP_CATEGORY, "a category from 1 to K", DRIFT_DRULE_CATEGORICAL},
    {"std_normal", DRIFT_D_STD_NORMAL, 0, {NULL}, {0}, 0, DRIFT_SUP_REAL,
     "a real", DRIFT_DRULE_ELEM},
    {"bernoulli_logit_glm", DRIFT_D_BERNOULLI_LOGIT_GLM, 3,
     {"x", "alpha", "beta"}, {0}, 1, DRIFT_SUP_BINARY, "0 or 1",
     DRIFT_DRULE_GLM},
    {"poisson_log_glm", DRIFT_D_POISSON_LOG_GLM, 3, {"x", "alpha", "beta"},
     {0}, 1, DRIFT_SUP_COUNT, "a non-negative integer", DRIFT_DRULE_GLM},
    {"normal_id_glm", DRIFT_D_NORMAL_ID_GLM, 4,
     {"x", "alpha", "beta", "sigma"}, {0}, 0, DRIFT_SUP_REAL, "a real",
     DRIFT_DRULE_GLM},
    {"ordered_logistic", DRIFT_D_ORDERED_LOGISTIC, 2, {"eta", "c"}, {0}, 1,
     DRIFT_SUP_CATEGORY, "a category from 1 to K", DRIFT_DRULE_ORDERED},
    {"ordered_probit", DRIFT_D_ORDERED_PROBIT, 2, {"eta", "c"}, {0}, 1,
     DRIFT_SUP_CATEGORY, "a category from 1 to K", DRIFT_DRULE_ORDERED},
};

const drift_dist *drift_dist_find(const char *name)
{
    for (size_t k = 0; k < DRIFT_N_DISTS; k++)
        if (!strcmp(drift_dists[k].name, name))
            return &drift_dists[k];
    return NULL;
}

int drift_dist_has_cdf(drift_dist_id id)
{
    switch (id) {
    case DRIFT_D_NORMAL: case DRIFT_D_STD_NORMAL: case DRIFT_D_STUDENT_T:
    case DRIFT_D_CAUCHY: case DRIFT_D_DOUBLE_EXPONENTIAL:
    case DRIFT_D_LOGISTIC: case DRIFT_D_LOGNORMAL: case DRIFT_D_EXPONENTIAL:
    case DRIFT_D_GAMMA: case DRIFT_D_INV_GAMMA: case DRIFT_D_BETA:
    case DRIFT_D_UNIFORM: case DRIFT_D_WEIBULL: case DRIFT_D_GUMBEL:
    case DRIFT_D_CHI_SQUARE: case DRIFT_D_INV_CHI_SQUARE:
    case DRIFT_D_SCALED_INV_CHI_SQUARE: case DRIFT_D_RAYLEIGH:
    case DRIFT_D_FRECHET: case DRIFT_D_BERNOULLI: case DRIFT_D_POISSON:
    case DRIFT_D_BINOMIAL: case DRIFT_D_NEG_BINOMIAL:
    case DRIFT_D_NEG_BINOMIAL_2:
        return 1;
    default:
        return 0;
    }
}

drift_dist_id drift_dist_glm_base(drift_dist_id id)
{
    switch (id) {
    case DRIFT_D_BERNOULLI_LOGIT_GLM: return DRIFT_D_BERNOULLI_LOGIT;
    case DRIFT_D_POISSON_LOG_GLM: return DRIFT_D_POISSON_LOG;
    case DRIFT_D_NORMAL_ID_GLM: return DRIFT_D_NORMAL;
    default: return id;
    }
}
