// AR(1) conditional on the first observation, and a random-walk prior:
// loops from 2, lags t - 1.
data {
  int<lower=2> T;
  vector[T] y;
}
parameters {
  real alpha;
  real<lower=-1, upper=1> beta;
  real<lower=0> sigma;
  vector[T] mu;
}
model {
  alpha ~ normal(0, 1);
  sigma ~ normal(0, 1) T[0, ];
  mu[1] ~ normal(0, 1);
  for (t in 2:T)
    mu[t] ~ normal(mu[t - 1], 0.5);
  for (t in 2:T)
    y[t] ~ normal(alpha + beta * y[t - 1] + 0.1 * mu[t], sigma);
}
