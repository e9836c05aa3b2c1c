// Poisson GLM with an exposure offset, old array syntax.
data {
  int<lower=0> N;
  int<lower=0> y[N];
  vector[N] x;
  vector<lower=0>[N] exposure;
}
transformed data {
  vector[N] log_expo = log(exposure);
}
parameters {
  real a;
  real b;
}
model {
  vector[N] eta = log_expo + a + b * x;
  a ~ normal(0, 1);
  b ~ normal(0, 1);
  target += poisson_log_lpmf(y | eta);
}
