// Linear regression with locals declared and assigned inside the loop.
data {
  int<lower=0> N;
  real x[N];
  real y[N];
}
parameters {
  real alpha;
  real beta;
  real<lower=0> sigma;
}
model {
  real mu;
  alpha ~ normal(0, 10);
  beta ~ normal(0, 10);
  sigma ~ cauchy(0, 5);
  for (n in 1:N) {
    real e = alpha + beta * x[n];
    mu = e;
    target += normal_lpdf(y[n] | mu, sigma);
  }
}
