#!/bin/sh
# sgnht-normal-gamma.sh: the SGNHT paper's section 5.1 Normal-Gamma
# experiment (Ding et al., NIPS 2014): RMSE of posterior estimates against
# the autocorrelation time, each point one step size h, for sgnht (and
# msgnht, one thermostat per coordinate, for comparison) and for SGHMC with
# the friction fixed at A (sghmc gamma = A, noise sqrt(2A),
# scheme=symplectic: Ding et al.'s discretisation with the thermostat
# frozen), which does not know the minibatch noise.
# Model and data: examples/normal_gamma (N = 100 draws of N(1.5, 0.8^2);
# tau ~ Gamma(2, 1), mu | tau ~ N(0, 1/(0.1 tau))), sampled as (mu,
# log tau); minibatches of 10 rows.  Exact posterior: Normal-Gamma, closed
# form.  For every h in HS, A in AS and sampler: RUNS chains (seeds 1..RUNS)
# of ITER iterations after a burn-in of 5000, from the posterior mean.
#   autocorrelation time: iterations per effective draw (ITER / bulk ESS),
#     averaged over mu and tau and over the runs;
#   RMSE: over the runs and over the four estimates E[mu], E[tau], sd(mu),
#     sd(tau), each error divided by the exact posterior sd of its
#     parameter.
# And the paper's metric and observable: the RMSE of the density (per run,
# the 2-D histogram of (mu, tau) on a 30 x 30 grid over the exact
# posterior's mean +- 4 sd, against the exact bin masses, both divided by
# the bin area; mean and 95% t-interval over the runs) against the
# autocorrelation time of mu + tau (the paper's mu + gamma, gamma the
# precision).
# A run that diverges (drift stops it when the density is no longer
# finite) is counted in runs_failed and left out of both.
# Writes $OUT/sgnht-normal-gamma.csv (one row per run and setting),
# $OUT/sgnht-normal-gamma-density.png (the paper's axes),
# $OUT/sgnht-normal-gamma-summary.csv and $OUT/sgnht-normal-gamma.png.
# Usage: sh sgnht-normal-gamma.sh  (env: HS, AS="1 10", RUNS=10,
#        SAMPLERS="sgnht msgnht sghmc",
#        ITER=50000, OUT=./langevin-out)
. "$(dirname "$0")/common.sh"
HS=${HS:-"0.003 0.005 0.01 0.02 0.03 0.05 0.07"}
AS=${AS:-"1 10"}
RUNS=${RUNS:-10}
SAMPLERS=${SAMPLERS:-"sgnht msgnht sghmc"}
ITER=${ITER:-50000}
ng=$top/examples/normal_gamma
echo '{"mu": 1.576, "tau": 1.87}' > "$work/init.json"
for A in $AS; do
    for h in $HS; do
        for s in $SAMPLERS; do
            if [ $s = sghmc ]; then sets="--set h=$h --set gamma=$A --set scheme=symplectic"
            else sets="--set h=$h --set A=$A"; fi
            echo "== A = $A, h = $h, $s" >&2
            for k in $(seq 1 "$RUNS"); do
                # shellcheck disable=SC2086
                "$DRIFT" sample "$ng/normal_gamma.drift" --data "$ng/normal_gamma.csv" \
                    --data "$ng/normal_gamma.json" --init "$work/init.json" \
                    --sampler $s $sets --batch 10 --iter "$ITER" --warmup 5000 \
                    --chains 1 --seed "$k" --quiet \
                    --out "$work/${s}_A${A}_h${h}_$k.csv" 2>/dev/null || true
            done
        done
    done
done
Rscript - "$work" "$ng" "$OUT" "$HS" "$AS" "$RUNS" "$ITER" "$SAMPLERS" <<'REOF'
suppressMessages(library(posterior))
args <- commandArgs(TRUE); work <- args[1]; ng <- args[2]; out <- args[3]
HS <- strsplit(args[4], " ")[[1]]; AS <- strsplit(args[5], " ")[[1]]
RUNS <- as.integer(args[6]); ITER <- as.numeric(args[7])
SAMPLERS <- strsplit(args[8], " ")[[1]]
y <- read.csv(file.path(ng, "normal_gamma.csv"))$y
mu0 <- 0; k0 <- 0.1; a0 <- 2; b0 <- 1; n <- length(y); yb <- mean(y)
kn <- k0 + n; mun <- (k0 * mu0 + n * yb) / kn; an <- a0 + n / 2
bn <- b0 + 0.5 * sum((y - yb)^2) + k0 * n * (yb - mu0)^2 / (2 * kn)
exact <- c(mean_mu = mun, mean_tau = an / bn, sd_mu = sqrt(bn / ((an - 1) * kn)),
           sd_tau = sqrt(an) / bn)
scale <- exact[c("sd_mu", "sd_tau", "sd_mu", "sd_tau")]
cat(sprintf("exact posterior: E[mu] %.5f, E[tau] %.5f, sd(mu) %.5f, sd(tau) %.5f\n",
            exact[1], exact[2], exact[3], exact[4]))
# Exact bin masses of the Normal-Gamma posterior on the density grid
# (midpoint rule on 10 x 10 points per bin).
gmu <- exact["mean_mu"] + 4 * exact["sd_mu"] * c(-1, 1)
gtau <- pmax(exact["mean_tau"] + 4 * exact["sd_tau"] * c(-1, 1), 1e-9)
bmu <- seq(gmu[1], gmu[2], length = 31); btau <- seq(gtau[1], gtau[2], length = 31)
area <- diff(bmu)[1] * diff(btau)[1]
fine <- function(b) { w <- diff(b)[1] / 10; b[1] + w * (seq_len(10 * (length(b) - 1)) - 0.5) }
fm <- fine(bmu); ft <- fine(btau)
pf <- outer(fm, ft, function(m, t) dgamma(t, an, bn) * dnorm(m, mun, 1 / sqrt(kn * t)))
pf <- pf * diff(fm)[1] * diff(ft)[1]
agg <- function(M) { r <- (seq_len(nrow(M)) - 1) %/% 10; c <- (seq_len(ncol(M)) - 1) %/% 10
  t(rowsum(t(rowsum(M, r)), c)) }
pex <- agg(pf)
dens_rmse <- function(mu, tau) {
  i <- findInterval(mu, bmu, rightmost.closed = TRUE); j <- findInterval(tau, btau, rightmost.closed = TRUE)
  ok <- i >= 1 & i <= 30 & j >= 1 & j <= 30
  h <- matrix(0, 30, 30); t <- table(factor(i[ok], 1:30), factor(j[ok], 1:30))
  h[] <- t / length(mu)
  sqrt(mean(((h - pex) / area)^2))
}
rows <- list()
for (A in AS) for (h in HS) for (s in SAMPLERS) for (k in 1:RUNS) {
  f <- file.path(work, sprintf("%s_A%s_h%s_%d.csv", s, A, h, k))
  d <- tryCatch(read.csv(f, comment.char = "#"), error = function(e) NULL)
  ok <- !is.null(d) && nrow(d) == ITER && all(is.finite(d$mu)) && all(is.finite(d$tau))
  est <- if (ok) c(mean(d$mu), mean(d$tau), sd(d$mu), sd(d$tau)) else rep(NA, 4)
  tint <- if (ok) mean(c(ITER / ess_bulk(d$mu), ITER / ess_bulk(d$tau))) else NA
  rows[[length(rows) + 1]] <- data.frame(sampler = s, A = as.numeric(A), h = as.numeric(h), run = k,
    mean_mu = est[1], mean_tau = est[2], sd_mu = est[3], sd_tau = est[4], act = tint,
    xi = if (ok && "xi__" %in% names(d)) mean(d$xi__) else NA,
    act_sum = if (ok) ITER / ess_bulk(d$mu + d$tau) else NA,
    dens_rmse = if (ok) dens_rmse(d$mu, d$tau) else NA,
    diverged = !ok)
}
res <- do.call(rbind, rows)
write.csv(res, file.path(out, "sgnht-normal-gamma.csv"), row.names = FALSE)
summ <- do.call(rbind, lapply(split(res, list(res$sampler, res$A, res$h), drop = TRUE), function(g) {
  E <- sweep(as.matrix(g[, c("mean_mu", "mean_tau", "sd_mu", "sd_tau")]), 2, exact)
  E <- sweep(E, 2, scale, "/")
  data.frame(sampler = g$sampler[1], A = g$A[1], h = g$h[1], runs_ok = sum(is.finite(g$act)),
             runs_failed = sum(g$diverged),
             act = mean(g$act, na.rm = TRUE), rmse = sqrt(mean(E^2, na.rm = TRUE)),
             rmse_mean = sqrt(mean(E[, 1:2]^2, na.rm = TRUE)), rmse_sd = sqrt(mean(E[, 3:4]^2, na.rm = TRUE)),
             sd_ratio_mu = mean(g$sd_mu, na.rm = TRUE) / exact["sd_mu"],
             sd_ratio_tau = mean(g$sd_tau, na.rm = TRUE) / exact["sd_tau"],
             xi = mean(g$xi, na.rm = TRUE),
             act_sum = mean(g$act_sum, na.rm = TRUE),
             dens_rmse = mean(g$dens_rmse, na.rm = TRUE),
             dens_rmse_ci = { v <- g$dens_rmse[is.finite(g$dens_rmse)]
               if (length(v) > 1) qt(0.975, length(v) - 1) * sd(v) / sqrt(length(v)) else NA })
}))
summ <- summ[order(summ$A, summ$sampler, summ$h), ]; rownames(summ) <- NULL
write.csv(summ, file.path(out, "sgnht-normal-gamma-summary.csv"), row.names = FALSE)
print(summ, digits = 3)
cat(sprintf("density grid: mu in [%.3f, %.3f], tau in [%.3f, %.3f]; exact mass inside %.4f\n",
            gmu[1], gmu[2], gtau[1], gtau[2], sum(pex)))
png(file.path(out, "sgnht-normal-gamma-density.png"), width = 1100, height = 480, res = 110)
par(mfrow = c(1, length(AS)), mar = c(4.2, 4.2, 2, 1))
for (A in as.numeric(AS)) {
  o <- summ[summ$A == A & summ$runs_ok > 0, ]
  plot(NA, xlim = range(o$act_sum), ylim = range(c(pmax(o$dens_rmse - o$dens_rmse_ci, o$dens_rmse / 2), o$dens_rmse + o$dens_rmse_ci), na.rm = TRUE),
       log = "xy", xlab = "autocorrelation time of mu + tau (iterations per effective draw)",
       ylab = "RMSE of the density (95% over runs)", main = sprintf("Normal-Gamma, A = %g", A))
  cs <- c(sgnht = "red", msgnht = "darkgreen", sghmc = "blue")[SAMPLERS]
  for (s in names(cs)) {
    g <- o[o$sampler == s, ]
    lines(g$act_sum, g$dens_rmse, type = "b", col = cs[s], pch = 19)
    arrows(g$act_sum, pmax(g$dens_rmse - g$dens_rmse_ci, g$dens_rmse / 2), g$act_sum, g$dens_rmse + g$dens_rmse_ci,
           angle = 90, code = 3, length = 0.02, col = cs[s])
    text(g$act_sum, g$dens_rmse, g$h, pos = 3, cex = 0.6, col = "grey30")
  }
  legend("topright", c(sgnht = "sgnht", msgnht = "msgnht (a thermostat per coordinate)",
                       sghmc = "sghmc (friction fixed at A)")[names(cs)],
         col = cs, lwd = 1, pch = 19, bty = "n", cex = 0.8)
}
invisible(dev.off())
png(file.path(out, "sgnht-normal-gamma.png"), width = 1100, height = 480, res = 110)
par(mfrow = c(1, length(AS)), mar = c(4.2, 4.2, 2, 1))
for (A in as.numeric(AS)) {
  o <- summ[summ$A == A & summ$runs_ok > 0, ]
  plot(NA, xlim = range(o$act), ylim = range(o$rmse), log = "xy",
       xlab = "autocorrelation time (iterations per effective draw)",
       ylab = "RMSE (in posterior sds)", main = sprintf("Normal-Gamma, A = %g", A))
  cs <- c(sgnht = "red", msgnht = "darkgreen", sghmc = "blue")[SAMPLERS]
  for (s in names(cs)) {
    g <- o[o$sampler == s, ]
    lines(g$act, g$rmse, type = "b", col = cs[s], pch = 19)
    text(g$act, g$rmse, g$h, pos = 3, cex = 0.6, col = "grey30")
  }
  legend("topright", c(sgnht = "sgnht", msgnht = "msgnht (a thermostat per coordinate)",
                       sghmc = "sghmc (friction fixed at A)")[names(cs)],
         col = cs, lwd = 1, pch = 19, bty = "n", cex = 0.8)
}
invisible(dev.off())
REOF
