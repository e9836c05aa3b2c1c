// Truncation whose normalising terms depend on parameters: a normal
// truncated to [0, 10] and a zero-truncated Poisson, element by element.
data {
  int<lower=0> N;
  vector<lower=0, upper=10>[N] y;
  array[N] int<lower=1> k;
}
parameters {
  real mu;
  real<lower=0> sigma;
  real<lower=0> lambda;
}
model {
  mu ~ normal(0, 5);
  sigma ~ normal(0, 2);
  lambda ~ gamma(2, 1);
  for (n in 1:N) {
    y[n] ~ normal(mu, sigma) T[0, 10];
    k[n] ~ poisson(lambda) T[1, ];
  }
}
