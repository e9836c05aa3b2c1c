#!/bin/sh
# sgnht-double-well.sh: the SGNHT paper's double-well figure (Ding et al.,
# NIPS 2014, section 5.1).  Data-free target U(theta) = (theta+4)(theta+1)
# (theta-1)(theta-3)/14 + 0.5 (the doublewell test model); every gradient
# carries injected noise N(0, 2B/h), B = 1 (--grad-noise 1), h = 0.01, no
# injected Langevin noise (A = 0).  Runs SGHMC with the thermostat fixed at
# xi in {0.1, 1, 10} (sghmc gamma = xi, sigma = 0, scheme=symplectic: Ding
# et al.'s discretisation) and sgnht, whose xi adapts.  Only xi = B
# balances the noise: kinetic energy settles at 0.5 and the density is
# exp(-U)/Z.  Written to $OUT: sgnht-double-well.csv (mean kinetic energy,
# mean xi, L1 distance of the histogram, bins of 0.1, to exp(-U)/Z by
# quadrature), sgnht-double-well-density.csv, sgnht-double-well-kinetic.csv
# (running mean of the kinetic energy), plot sgnht-double-well.png.
# Usage: sh sgnht-double-well.sh   (env: ITER=1000000, SEED=1, OUT=...)
. "$(dirname "$0")/common.sh"
ITER=${ITER:-1000000}
SEED=${SEED:-1}
for xi in 0.1 1 10; do
    "$DRIFT" sample --chains 1 --init 0 --model "$models/doublewell.so" --sampler sghmc \
        --set h=0.01 --set gamma=$xi --set sigma=0 --set scheme=symplectic \
        --grad-noise 1 --iter "$ITER" --warmup 0 --thin 10 --seed "$SEED" --quiet \
        --out "$work/fixed_$xi.csv"
done
"$DRIFT" sample --chains 1 --init 0 --model "$models/doublewell.so" --sampler sgnht \
    --set h=0.01 --set A=0 --grad-noise 1 --iter "$ITER" --warmup 0 --thin 10 \
    --seed "$SEED" --quiet --out "$work/sgnht.csv"

Rscript - "$work" "$OUT" <<'REOF'
args <- commandArgs(TRUE); work <- args[1]; out <- args[2]
U <- function(t) (t + 4) * (t + 1) * (t - 1) * (t - 3) / 14 + 0.5
Z <- integrate(function(t) exp(-U(t)), -Inf, Inf, rel.tol = 1e-10)$value
brk <- seq(-8, 7, by = 0.1); mid <- head(brk, -1) + 0.05
pb <- sapply(seq_along(mid), function(b)
  integrate(function(t) exp(-U(t)) / Z, brk[b], brk[b + 1])$value)
runs <- c("fixed xi = 0.1" = "fixed_0.1", "fixed xi = 1" = "fixed_1",
          "fixed xi = 10" = "fixed_10", "sgnht" = "sgnht")
res <- NULL; dens <- NULL; kin <- NULL
for (k in names(runs)) {
  d <- read.csv(file.path(work, paste0(runs[[k]], ".csv")), comment.char = "#")
  th <- d$theta
  f <- tabulate(findInterval(th, brk, rightmost.closed = TRUE), length(pb)) / length(th)
  res <- rbind(res, data.frame(run = k, draws = nrow(d), kinetic = mean(d$kinetic__),
    xi = if ("xi__" %in% names(d)) mean(d$xi__) else as.numeric(sub(".* = ", "", k)),
    l1 = sum(abs(f - pb)) + (1 - sum(f)), mean_theta = mean(th),
    exact_mean = integrate(function(t) t * exp(-U(t)) / Z, -Inf, Inf)$value))
  dens <- rbind(dens, data.frame(run = k, theta = mid, density = f / 0.1, exact = pb / 0.1))
  keep <- unique(round(exp(seq(0, log(nrow(d)), length.out = 400))))
  kin <- rbind(kin, data.frame(run = k, iteration = 10 * keep,
                               running_mean_kinetic = (cumsum(d$kinetic__) / seq_len(nrow(d)))[keep]))
}
write.csv(res, file.path(out, "sgnht-double-well.csv"), row.names = FALSE)
write.csv(dens, file.path(out, "sgnht-double-well-density.csv"), row.names = FALSE)
write.csv(kin, file.path(out, "sgnht-double-well-kinetic.csv"), row.names = FALSE)
print(res, digits = 4)
png(file.path(out, "sgnht-double-well.png"), width = 1000, height = 450)
par(mfrow = c(1, 2))
cols <- c("blue", "darkgreen", "orange", "red")
e <- dens[dens$run == "sgnht", ]
plot(e$theta, e$exact, type = "l", lwd = 3, xlim = c(-6, 6), ylim = c(0, 0.8),
     xlab = "theta", ylab = "density", main = "double well, gradient noise B = 1")
for (i in seq_along(runs)) with(dens[dens$run == names(runs)[i], ], lines(theta, density, col = cols[i]))
legend("topright", c("exp(-U)/Z", names(runs)), col = c("black", cols), lty = 1, lwd = c(3, 1, 1, 1, 1))
plot(NULL, xlim = range(kin$iteration), ylim = c(0, 6), log = "x", xlab = "iteration",
     ylab = "running mean of kinetic energy", main = "kinetic energy (equilibrium 0.5)")
abline(h = 0.5, lty = 2)
for (i in seq_along(runs)) with(kin[kin$run == names(runs)[i], ], lines(iteration, running_mean_kinetic, col = cols[i]))
legend("topright", names(runs), col = cols, lty = 1)
invisible(dev.off())
REOF
