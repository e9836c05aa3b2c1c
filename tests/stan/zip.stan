// Zero-inflated Poisson: if/else over the rows, and a user function.
functions {
  real zip_lpmf(int y, real theta, real lambda) {
    if (y == 0)
      return log_sum_exp(log(theta), log1m(theta) + poisson_lpmf(0 | lambda));
    return log1m(theta) + poisson_lpmf(y | lambda);
  }
  real inv_link(real eta) {
    real e = exp(eta);
    return e;
  }
}
data {
  int<lower=0> N;
  array[N] int<lower=0> y;
  vector[N] x;
}
parameters {
  real<lower=0, upper=1> theta;
  real a;
  real b;
}
model {
  a ~ normal(0, 2);
  b ~ normal(0, 2);
  for (n in 1:N) {
    if (x[n] > 100) {
      print("never");
    } else {
      y[n] ~ zip(theta, inv_link(a + b * x[n]));
    }
  }
}
