// A one-hidden-layer network written as posteriordb's mnist model is:
// design columns appended, rows stacked on matrices, row vectors.
data {
  int<lower=0> N;
  int<lower=1> M;
  int<lower=2> K;
  matrix[N, M] x;
  array[N] int<lower=1, upper=K> y;
}
transformed data {
  int<lower=1> J = 3;
  vector[N] ones = rep_vector(1, N);
  matrix[N, M + 1] x1 = append_col(ones, x);
}
parameters {
  matrix[M, J] alpha;
  matrix[J, K - 1] beta;
  row_vector[J] alpha1;
  row_vector[K - 1] beta1;
}
model {
  matrix[N, K] v = append_col(ones,
                              append_col(ones,
                                         tanh(x1 * append_row(alpha1, alpha)))
                              * append_row(beta1, beta));
  alpha1 ~ normal(0, 1);
  beta1 ~ normal(0, 1);
  to_vector(alpha) ~ normal(0, 1);
  to_vector(beta) ~ normal(0, 1);
  for (n in 1:N)
    y[n] ~ categorical_logit(v[n]');
}
