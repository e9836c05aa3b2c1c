data { int N; int D; int J; matrix[N, D] x; int<lower=0,upper=1> y[N]; int<lower=1,upper=J> g[N]; }
parameters { real mu_a; real<lower=0> tau_a; real<lower=0> tau_b; vector[J] z_a; vector[J] z_b; vector[D] beta; }
model {
  mu_a ~ normal(0, 2); tau_a ~ normal(0, 1); tau_b ~ normal(0, 1);
  z_a ~ std_normal(); z_b ~ std_normal(); beta ~ normal(0, 2);
  y ~ bernoulli_logit(mu_a + tau_a * z_a[g] + tau_b * z_b[g] .* x[, 1] + x * beta);
}
