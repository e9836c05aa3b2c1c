// Structured types, precedence and numbers the translation must keep.
data {
  int<lower=1> N;
  int<lower=2> K;
  vector[N] y;
  array[N] int<lower=1, upper=K> g;
}
transformed data {
  real c = -1.5e-3;
  real third = 1.0 / 3;
}
parameters {
  simplex[K] w;
  ordered[K] mu;
  real<lower=-(2 + 1), upper=4> a;
  real<lower=0> sigma;
  cholesky_factor_corr[K] L;
}
transformed parameters {
  real b = -a ^ 2 + (-a) ^ 2 - (a - 1) / (2 * sigma);
}
model {
  w ~ dirichlet(rep_vector(2, K));
  mu ~ normal(0, 5);
  a ~ normal(c, third + 0.30000000000000004);
  sigma ~ exponential(1);
  L ~ lkj_corr_cholesky(2);
  target += b > 0 && !(a < 0) ? -b : 0.1 * b;
  for (n in 1:N)
    y[n] ~ normal(mu[g[n]] + a * w[g[n]], sigma);
}
generated quantities {
  real s2 = square(sigma) - 2 ^ 3 ^ 0.5;
}
