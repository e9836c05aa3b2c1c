// The data's own N (trials per observation, as in posteriordb's seeds),
// beside the row size I.
data {
  int<lower=0> I;
  array[I] int<lower=0> n;
  array[I] int<lower=0> N;
  vector[I] x;
}
parameters {
  real a;
  real b;
}
model {
  a ~ normal(0, 10);
  b ~ normal(0, 10);
  n ~ binomial_logit(N, a + b * x);
}
