data { int N; vector[N] y; }
parameters { real mu; real<lower=0> sigma; }
transformed parameters { real m2 = 2 * mu; print("m2 = ", m2); }
model {
  if (sigma > 10) reject("sigma too large: ", sigma);
  for (n in 1:N) y[n] ~ normal(mu, sigma) T[-5, 5];
  print("in model");
}
generated quantities { real g = mu + 1; print("mu = ", mu, " g = ", g); }
