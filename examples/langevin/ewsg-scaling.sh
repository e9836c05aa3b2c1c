#!/bin/sh
# ewsg-scaling.sh: the EWSG paper's Fig. 1j-l design: how the sampling
# error of ewsg and sghmc scales with the run length T (in time units,
# T = K h for K steps) and the step size h, against the paper's global
# error bound (Theorem 4, read here as the SG-MCMC bound of Chen, Ding and
# Carin 2015 for a first-order integrator:
#     E (phi^_T - pi(phi))^2 <= C (1/T + (h/T) sigma_SG^2 + h^2),
# phi^_T the time average of phi over the run): the error falls as 1/T at
# fixed h; at fixed short T it grows with h through the gradient noise's
# h/T term; at long T the squared bias, O(h^2), is left.
# Target: section 5.1's (the centres and model of ewsg-gauss2d.sh, exact
# posterior N(mean c, I/20)), batch 1, gamma = 10, ewsg M = 1 and the
# paper's x.  Per sampler and h in HS: CHAINS chains from 0, 5 time units
# (5/h steps) of warmup, then TMAX time units kept every TOUT time units;
# the time averages of the kept rows over the first T units, T in TS.
# Test functions: phi = theta (error |theta^ - mean c|^2, both coordinates)
# and phi = |theta - mean c|^2 (exact 2/20 = 0.1).  Per (sampler, h, T): the
# mean squared error over chains, its variance and squared-bias parts
# (bias^2 unbiased: |mean error|^2 - variance / CHAINS), with 95% percentile
# intervals from B bootstrap resamples of the chains; log-log slopes:
#   j: MSE and variance against T at h = HJ, T >= 5 (Theorem: -1);
#   k: MSE and variance against h at T = TK (Theorem: up to +1, the h/T
#      term, for the variance);
#   l: squared bias against h at T = TMAX (Theorem: +2).
# Writes $OUT/ewsg-scaling.csv, $OUT/ewsg-scaling-slopes.csv and
# $OUT/ewsg-scaling.png (ewsg-scaling-plot.R).
# Usage: sh ewsg-scaling.sh   (env: CHAINS=1000, B=1000, SEED=1, OUT=./langevin-out,
#        HS="0.0015625 0.003125 0.00625 0.0125 0.025 0.05 0.1", TS="1 2 5 10 20 50 100",
#        TOUT=0.1, HJ=0.05, TK=10; TMAX is the last of TS; every h must
#        divide TOUT)
. "$(dirname "$0")/common.sh"
CHAINS=${CHAINS:-1000}
B=${B:-1000}
SEED=${SEED:-1}
HS=${HS:-"0.0015625 0.003125 0.00625 0.0125 0.025 0.05 0.1"}
TS=${TS:-"1 2 5 10 20 50 100"}
TOUT=${TOUT:-0.1}
HJ=${HJ:-0.05}
TK=${TK:-10}
TMAX=$(echo "$TS" | awk '{ print $NF }')
[ "$CHAINS" -le 1000 ] || { echo "ewsg-scaling.sh: CHAINS at most 1000 (one drift run)" >&2; exit 2; }
data=$work/centres.csv
Rscript -e "set.seed(20200220); c <- matrix(rnorm(40), 20, 2);
  colnames(c) <- c('y.1', 'y.2'); write.csv(c, '$data', row.names = FALSE)"
m=$(Rscript -e "c <- read.csv('$data'); cat(colMeans(c))")

avg=$work/avg.txt
: > "$avg"
for s in sghmc ewsg; do
    case $s in
        sghmc) sets="--set gamma=10" ;;
        ewsg) sets="--set gamma=10 --set M=1" ;;
    esac
    for h in $HS; do
        thin=$(awk -v t="$TOUT" -v h="$h" 'BEGIN { k = t / h; r = int(k + 0.5);
            if (r < 1 || (k - r) ^ 2 > 1e-12) exit 1; print r }') ||
            { echo "ewsg-scaling.sh: h = $h does not divide TOUT = $TOUT" >&2; exit 2; }
        steps=$(awk -v t="$TMAX" -v h="$h" 'BEGIN { printf "%d", t / h + 0.5 }')
        warm=$(awk -v h="$h" 'BEGIN { printf "%d", 5 / h + 0.5 }')
        d=$work/${s}_$h
        mkdir -p "$d"
        echo "== $s h = $h: warmup $warm, $steps steps kept every $thin" >&2
        # shellcheck disable=SC2086
        "$DRIFT" sample --init 0 --model "$models/corrgauss.so" --data "$data" \
            --model-set rho=0 --model-set s1=1 --model-set s2=1 --model-set tau=0 \
            --sampler "$s" --set h="$h" $sets --batch 1 \
            --warmup "$warm" --iter "$steps" --thin "$thin" \
            --chains "$CHAINS" --seed "$SEED" --quiet --out "$d/draws.csv" 2>/dev/null
        # per chain, the time averages over the first T units, T in TS
        for k in $(seq 1 "$CHAINS"); do echo "$d/draws_$k.csv"; done |
            xargs awk -F, -v s="$s" -v h="$h" -v tout="$TOUT" -v ts="$TS" -v m="$m" '
                BEGIN { nt = split(ts, T, " "); split(m, mu, " ") }
                FNR == 1 { seen = 0; r = 0; s1 = s2 = s3 = 0; j = 1
                    ch = FILENAME; sub(/.*draws_/, "", ch); sub(/\.csv$/, "", ch) }
                /^#/ { next }
                !seen { seen = 1; for (i = 1; i <= NF; i++) { if ($i == "theta.1") a = i; if ($i == "theta.2") b = i }; next }
                { r++; s1 += $a; s2 += $b; s3 += ($a - mu[1]) ^ 2 + ($b - mu[2]) ^ 2
                  while (j <= nt && r >= T[j] / tout - 1e-9) {
                      printf "%s %s %s %s %.10g %.10g %.10g\n", s, h, ch, T[j], s1 / r, s2 / r, s3 / r; j++ } }' >> "$avg"
        rm -rf "$d"
    done
done
Rscript "$here/ewsg-scaling-plot.R" "$avg" "$data" "$OUT" "$B" "$HJ" "$TK" "$TMAX"
