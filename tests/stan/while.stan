// A while loop the data decide (a counter up to an int of the data):
// unrolled pass by pass while lowering, the program lowered whole.
data { int<lower=1> K; vector[K] y; }
parameters { real mu; real<lower=0> sigma; }
model {
  int k = 1;
  while (k <= K) {
    y[k] ~ normal(mu, sigma);
    k += 1;
  }
  mu ~ normal(0, 10);
  sigma ~ lognormal(0, 1);
}
