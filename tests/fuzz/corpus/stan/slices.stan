// Slices: a segment of a vector, the head of an array of reals, a row
// and a column of a matrix.
data {
  int<lower=3> M;
  int<lower=2> K;
  vector[M] y;
  array[M] real z;
  matrix<lower=0>[K, K] A;
}
parameters {
  real mu;
  simplex[K] p;
}
model {
  y[2:M] ~ normal(mu, 1);
  z[:3] ~ normal(mu, 2);
  p ~ dirichlet(A[2, :]');
  target += normal_lpdf(A[:, 1] | mu, 3);
  target += normal_lpdf(y[:2] | mu, 4);
  target += normal_lpdf(A[1, 2:] | mu, 5);
}
