// A vectorised density inside a loop over the rows: the whole sum in
// every iteration (Stan's semantics), not the row's term.
data {
  int<lower=1> N;
  vector[N] y;
}
parameters {
  real mu;
}
model {
  mu ~ normal(0, 1);
  for (n in 1:N)
    target += normal_lpdf(y | mu, 1) / N;
}
