// A hidden Markov model's forward algorithm: a table over time and
// states filled in loops nested three deep, a transformed parameter
// given row by row.
data {
  int<lower=0> T;
  int<lower=0> K;
  array[T] real y;
}
parameters {
  simplex[K] theta1;
  simplex[K] theta2;
  positive_ordered[K] mu;
}
transformed parameters {
  array[K] simplex[K] theta;
  theta[1] = theta1;
  theta[2] = theta2;
}
model {
  target += normal_lpdf(mu[1] | 3, 1);
  target += normal_lpdf(mu[2] | 10, 1);
  {
    array[K] real acc;
    array[T, K] real gamma;
    for (k in 1:K)
      gamma[1, k] = normal_lpdf(y[1] | mu[k], 1);
    for (t in 2:T) {
      for (k in 1:K) {
        for (j in 1:K)
          acc[j] = gamma[t - 1, j] + log(theta[j, k])
                   + normal_lpdf(y[t] | mu[k], 1);
        gamma[t, k] = log_sum_exp(acc);
      }
    }
    target += log_sum_exp(gamma[T]);
  }
}
