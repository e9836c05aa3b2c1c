// Varying intercepts: an int of the rows indexes a parameter.
data {
  int<lower=1> N;
  int<lower=1> J;
  array[N] int<lower=1, upper=J> g;
  vector[N] y;
}
parameters {
  real mu;
  real<lower=0> tau;
  vector[J] a;
  real<lower=0> sigma;
}
model {
  mu ~ normal(0, 5);
  tau ~ normal(0, 2);
  sigma ~ normal(0, 2);
  a ~ normal(mu, tau);
  for (n in 1:N)
    y[n] ~ normal(a[g[n]], sigma);
}
generated quantities {
  array[N] real y_rep;
  for (n in 1:N)
    y_rep[n] = normal_rng(a[g[n]], sigma);
}
