// Eight schools, non-centred, written with loops.
data {
  int<lower=0> J;
  real y[J];
  real<lower=0> sigma[J];
}
parameters {
  real mu;
  real<lower=0> tau;
  vector[J] theta_tilde;
}
transformed parameters {
  vector[J] theta;
  for (j in 1:J)
    theta[j] = mu + tau * theta_tilde[j];
}
model {
  mu ~ normal(0, 5);
  tau ~ cauchy(0, 5);
  for (j in 1:J) {
    theta_tilde[j] ~ normal(0, 1);
    y[j] ~ normal(theta[j], sigma[j]);
  }
}
