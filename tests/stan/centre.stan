// Predictors centred and scaled in transformed data over all the rows
// (mean and sd of row data), as regressions in posteriordb do.
data {
  int<lower=0> N;
  vector[N] y;
  vector[N] x;
  array[N] int<lower=0, upper=1> g;
}
transformed data {
  vector[N] z_x = (x - mean(x)) / (2 * sd(x));
  vector[N] c_g = to_vector(g) - mean(to_vector(g));
  vector[N] inter = z_x .* c_g;
}
parameters {
  vector[4] beta;
  real<lower=0> sigma;
}
model {
  beta ~ normal(0, 5);
  sigma ~ exponential(1 / sd(y));
  y ~ normal(beta[1] + beta[2] * z_x + beta[3] * c_g + beta[4] * inter, sigma);
}
