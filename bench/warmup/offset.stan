data { int N; int y[N]; vector[N] x; vector[N] z; vector[N] e; }
parameters { real b0; real b1; real b2; }
model { y ~ poisson_log(log(e) + b0 + b1 * x + b2 * z); }
