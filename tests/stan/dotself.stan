// A whole-data term written with a transpose: (y - b x)' (y - b x).
data { int N; vector[N] x; vector[N] y; }
parameters { real b; real<lower=0> s; }
model { target += -0.5 * (y - b * x)' * (y - b * x) / square(s) - N * log(s); }
