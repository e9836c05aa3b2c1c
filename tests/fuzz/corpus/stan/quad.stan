// A design matrix built from columns in transformed data, normal_id_glm.
data {
  int<lower=0> N;
  vector[N] x;
  vector[N] y;
}
transformed data {
  vector[N] x2 = x .* x;
  matrix[N, 2] Z = [x', x2']';
}
parameters {
  real alpha;
  vector[2] beta;
  real<lower=0> sigma;
}
model {
  alpha ~ normal(0, 10);
  beta ~ normal(0, 10);
  sigma ~ exponential(1);
  target += normal_id_glm_lpdf(y | Z, alpha, beta, sigma);
}
