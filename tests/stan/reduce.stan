// Reductions of the data over their whole length inside model statements:
// log_sum_exp of one vector and log_mix over a vector of densities couple
// the entries (one value from all of them), so no rows can be found and
// the program is lowered whole.  (They were once read as elementwise, one
// term per entry: a wrong density.)
data {
  int<lower=1> K;
  vector[K] y;
}
parameters {
  real mu;
  real<lower=0, upper=1> theta;
}
model {
  mu ~ normal(log_sum_exp(y), 1);
  target += log_mix(theta, normal_lpdf(y | mu, 1), normal_lpdf(y | -mu, 2));
}
