data { int N; int P; int y[N]; vector[N] x; int p[N]; }
parameters { real a; real b; real g; real<lower=0> s; vector[P] lam; }
model { lam ~ normal(0, s); s ~ normal(0, 1);
  y ~ poisson_log(a + b * log(x + 10) + g * x + lam[p]); }
