// Array expressions {...} beside blocks { ... }.
data { int N; vector[N] y; }
transformed data {
  array[3] real w = {0.5, 1.0, 2.0};
}
parameters { real mu; }
model {
  {
    mu ~ normal(w[1], w[3]);
  }
  y ~ normal(mu, w[2]);
}
