#!/bin/sh
# ewsg-act.sh: the EWSG paper's Fig. 1b design: on section 5.1's target
#     V(theta) = sum_{i=1..20} 1/2 |theta - c_i|^2,  c_i ~ N(0, I_2),
# (the centres and model of ewsg-gauss2d.sh; exact posterior
# N(mean c, I/20)), batch 1, the error of each sampler against the
# integrated autocorrelation time of its chains, one point per step size h:
#   sghmc, ewsg (gamma = 10, ewsg M = 1, the paper's x): h in HS_HMC;
#   sgld, psgld:                                        h in HS_LD.
# Per point, CHAINS independent chains from 0; a chain runs 20 guessed
# autocorrelation times of warmup and then 150 of them (the guess: 1/h
# steps for sghmc and ewsg, 0.1/h for sgld and psgld, from pilots), kept
# every guess/5 steps (so about 750 rows a chain).
#   error: KL(N(mu^, S^) || N(mean c, I/20)), the Gaussian fitted to all
#          kept rows of all chains (stationary draws), as ewsg-gauss2d.sh;
#   act:   the integrated autocorrelation time of theta.1 and theta.2 (mean
#          of the two), in steps: the chains' autocovariances about the
#          pooled mean averaged over chains, Geyer's initial positive
#          sequence on the kept rows, times the thinning; act_grads is
#          act times the gradients a step costs (ewsg: M + 1 = 2).
# 95% intervals (percentile) from B bootstrap resamples of the chains.
# Writes $OUT/ewsg-act.csv and $OUT/ewsg-act.png (ewsg-act-plot.R).
# Usage: sh ewsg-act.sh   (env: CHAINS=400, B=1000, SEED=1, OUT=./langevin-out,
#        HS_HMC="0.005 0.01 0.02 0.05 0.1", HS_LD="0.0005 0.001 0.002 0.005 0.01",
#        SAMPLERS="sghmc ewsg sgld psgld", LEN=150: autocorrelation times kept)
. "$(dirname "$0")/common.sh"
CHAINS=${CHAINS:-400}
B=${B:-1000}
SEED=${SEED:-1}
LEN=${LEN:-150}
HS_HMC=${HS_HMC:-"0.005 0.01 0.02 0.05 0.1"}
HS_LD=${HS_LD:-"0.0005 0.001 0.002 0.005 0.01"}
SAMPLERS=${SAMPLERS:-"sghmc ewsg sgld psgld"}
[ "$CHAINS" -le 1000 ] || { echo "ewsg-act.sh: CHAINS at most 1000 (one drift run)" >&2; exit 2; }
data=$work/centres.csv
Rscript -e "set.seed(20200220); c <- matrix(rnorm(40), 20, 2);
  colnames(c) <- c('y.1', 'y.2'); write.csv(c, '$data', row.names = FALSE)"

list=$work/points.txt
: > "$list"
for s in $SAMPLERS; do
    case $s in
        sghmc) hs=$HS_HMC; sets="--set gamma=10"; per=1; c=1 ;;
        ewsg) hs=$HS_HMC; sets="--set gamma=10 --set M=1"; per=2; c=1 ;;
        sgld|psgld) hs=$HS_LD; sets=""; per=1; c=0.1 ;;
        *) echo "ewsg-act.sh: unknown sampler $s" >&2; exit 2 ;;
    esac
    for h in $hs; do
        # guessed act (steps), thinning, warmup and kept steps
        g=$(awk -v c="$c" -v h="$h" 'BEGIN { printf "%d", c / h + 0.5 }')
        thin=$(( g / 5 )); [ "$thin" -ge 1 ] || thin=1
        iter=$(( LEN * g / thin * thin ))
        d=$work/${s}_$h
        mkdir -p "$d/run"
        echo "== $s h = $h: warmup $((20 * g)), $iter steps kept every $thin" >&2
        # shellcheck disable=SC2086
        "$DRIFT" sample --init 0 --model "$models/corrgauss.so" --data "$data" \
            --model-set rho=0 --model-set s1=1 --model-set s2=1 --model-set tau=0 \
            --sampler "$s" --set h="$h" $sets --batch 1 \
            --warmup $((20 * g)) --iter "$iter" --thin "$thin" \
            --chains "$CHAINS" --seed "$SEED" --quiet --out "$d/run/draws.csv" 2>/dev/null
        # theta.1 theta.2 of every kept row, chain after chain
        for k in $(seq 1 "$CHAINS"); do echo "$d/run/draws_$k.csv"; done |
            xargs awk -F, 'FNR == 1 { seen = 0 } /^#/ { next }
                !seen { seen = 1; for (i = 1; i <= NF; i++) { if ($i == "theta.1") a = i; if ($i == "theta.2") b = i }; next }
                { print $a, $b }' > "$d/theta.txt"
        rm -rf "$d/run"
        echo "$s $h $thin $per $CHAINS $d/theta.txt" >> "$list"
    done
done
Rscript "$here/ewsg-act-plot.R" "$list" "$data" "$OUT" "$B"
