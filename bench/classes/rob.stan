data { int N; int D; matrix[N, D] X; vector[N] y; }
parameters { real a; vector[D] w; real<lower=0> sigma; real<lower=1> nu; }
model { a ~ normal(0, 10); w ~ normal(0, 10); sigma ~ normal(0, 10); nu ~ gamma(2, 0.1);
  y ~ student_t(nu, a + X * w, sigma); }
