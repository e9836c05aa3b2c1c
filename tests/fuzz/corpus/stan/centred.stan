// brms' centred design (posteriordb's diamonds): transformed data built
// in a loop from 2, column by column, with the columns' means.
data {
  int<lower=1> M;
  vector[M] Y;
  int<lower=1> K;
  matrix[M, K] X;
  int prior_only;
}
transformed data {
  int Kc = K - 1;
  matrix[M, Kc] Xc;
  vector[Kc] means_X;
  for (i in 2:K) {
    means_X[i - 1] = mean(X[ : , i]);
    Xc[ : , i - 1] = X[ : , i] - means_X[i - 1];
  }
}
parameters {
  vector[Kc] b;
  real Intercept;
  real<lower=0> sigma;
}
model {
  target += normal_lpdf(b | 0, 1);
  target += student_t_lpdf(Intercept | 3, 8, 10);
  target += student_t_lpdf(sigma | 3, 0, 10);
  if (!prior_only) {
    target += normal_id_glm_lpdf(Y | Xc, Intercept, b, sigma);
  }
}
generated quantities {
  real b_Intercept = Intercept - dot_product(means_X, b);
}
