// Whole containers inside loops: Stan's semantics, the whole in every
// iteration (so no rows here), and a vector set element by element to a
// constant.
data {
  int<lower=1> N;
  int<lower=2> K;
  vector[N] y;
}
transformed data {
  vector[K] alpha;
  for (k in 1:K)
    alpha[k] = 2;
}
parameters {
  real mu;
  simplex[K] theta;
}
model {
  mu ~ normal(0, 1);
  theta ~ dirichlet(alpha);
  for (n in 1:N) {
    y[n] ~ normal(mu + theta[1], 1);
    target += -0.001 * sum(y) * mu;
  }
}
