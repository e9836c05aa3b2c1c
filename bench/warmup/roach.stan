data { int N; int y[N]; vector[N] x; vector[N] t; vector[N] s; vector[N] e; }
parameters { real b0; real b1; real b2; real b3; }
model { y ~ poisson_log(log(e) + b0 + b1 * x + b2 * t + b3 * s); }
