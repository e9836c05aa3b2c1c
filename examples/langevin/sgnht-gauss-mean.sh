#!/bin/sh
# sgnht-gauss-mean.sh: the SGNHT paper's section 5.1 experiment (Ding et
# al., NIPS 2014).  N = 100 draws x_i ~ N(0, 1); model x_i ~ N(mu, 1) with
# an improper flat prior (corrgauss, 1-D, s1 = 1, tau = 0), exact posterior
# N(mean x, 1/N); minibatches of 10 rows.  For h in {0.01, 0.001} and A in
# {1, 10}: sgnht with diffusion A, and SGHMC with the friction fixed at A
# and noise sqrt(2A) (sghmc gamma = A, scheme=symplectic: Ding et al.'s
# discretisation, a thermostat frozen at A) which ignores the minibatch
# noise.  Written to $OUT/sgnht-gauss-mean.csv: each run's mean and sd of
# mu against the exact ones, and the L1 distance between its histogram and
# the exact density (bins of 0.02); densities in
# $OUT/sgnht-gauss-mean-density.csv; plot sgnht-gauss-mean.png.
# Usage: sh sgnht-gauss-mean.sh   (env: ITER=2000000, SEED=1, OUT=./langevin-out)
. "$(dirname "$0")/common.sh"
SEED=${SEED:-1}
data=$work/x.csv
Rscript -e "set.seed(2014); x <- rnorm(100); write.csv(data.frame(y.1 = x), '$data', row.names = FALSE)"
for h in 0.01 0.001; do
    # 20000 time units at h = 0.01 (2e6 steps), 2000 at h = 0.001.
    iters=${ITER:-2000000}; thin=10
    for A in 1 10; do
        for s in sgnht sghmc; do
            if [ $s = sgnht ]; then sets="--set h=$h --set A=$A"
            else sets="--set h=$h --set gamma=$A --set scheme=symplectic"; fi
            # shellcheck disable=SC2086
            "$DRIFT" sample --chains 1 --init 0 --model "$models/corrgauss.so" --data "$data" \
                --model-set s1=1 --model-set tau=0 --sampler $s $sets \
                --batch 10 --iter $iters --warmup 20000 --thin $thin \
                --seed "$SEED" --quiet --out "$work/${s}_h${h}_A$A.csv"
        done
    done
done
Rscript - "$work" "$data" "$OUT" <<'REOF'
args <- commandArgs(TRUE); work <- args[1]; x <- read.csv(args[2])$y.1; out <- args[3]
N <- length(x); m0 <- mean(x); s0 <- 1 / sqrt(N)
brk <- seq(m0 - 1, m0 + 1, by = 0.02); mid <- head(brk, -1) + 0.01
pb <- diff(pnorm(brk, m0, s0))
res <- NULL; dens <- NULL
for (h in c("0.01", "0.001")) for (A in c("1", "10")) for (s in c("sgnht", "sghmc")) {
  d <- read.csv(file.path(work, sprintf("%s_h%s_A%s.csv", s, h, A)), comment.char = "#")
  mu <- d$theta.1
  f <- tabulate(findInterval(mu, brk, rightmost.closed = TRUE), length(pb)) / length(mu)
  res <- rbind(res, data.frame(sampler = s, h = as.numeric(h), A = as.numeric(A),
    draws = length(mu), mean = mean(mu), sd = sd(mu), exact_mean = m0, exact_sd = s0,
    sd_ratio = sd(mu) / s0, l1 = sum(abs(f - pb)) + (1 - sum(f)),
    xi = if ("xi__" %in% names(d)) mean(d$xi__) else NA, kinetic = mean(d$kinetic__)))
  dens <- rbind(dens, data.frame(sampler = s, h = as.numeric(h), A = as.numeric(A), mu = mid,
                                 density = f / 0.02, exact = pb / 0.02))
}
write.csv(res, file.path(out, "sgnht-gauss-mean.csv"), row.names = FALSE)
write.csv(dens, file.path(out, "sgnht-gauss-mean-density.csv"), row.names = FALSE)
print(res, digits = 4)
png(file.path(out, "sgnht-gauss-mean.png"), width = 900, height = 700)
par(mfrow = c(2, 2))
for (h in c(0.01, 0.001)) for (A in c(1, 10)) {
  e <- dens[dens$h == h & dens$A == A & dens$sampler == "sgnht", ]
  g <- dens[dens$h == h & dens$A == A & dens$sampler == "sghmc", ]
  plot(e$mu, e$exact, type = "l", lwd = 2, xlim = m0 + c(-0.5, 0.5),
       ylim = c(0, max(e$exact, e$density, g$density)), xlab = "mu", ylab = "density",
       main = sprintf("h = %g, A = %g", h, A))
  lines(e$mu, e$density, col = "red"); lines(g$mu, g$density, col = "blue")
  legend("topright", c("exact", "sgnht", "sghmc"), col = c("black", "red", "blue"), lty = 1)
}
invisible(dev.off())
REOF
