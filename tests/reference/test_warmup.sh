#!/bin/sh
# test_warmup.sh: nuts at its defaults gets every chain of four right on
# the two shapes of posterior where a chain used to be lost in warmup
# (bench/warmup/README.md), at seeds where it was lost:
# - roach: Poisson regression with an offset and a raw count predictor
#   (0 to 450), flat priors; b1's posterior sd is 1e-4 of b0's scale;
# - dose: over-dispersed Poisson with raw doses (0 to 1000) and 18 plate
#   effects.
# Data: bench/warmup/gen.py roach 1, dose 1.  References: rstan 2.21 (a
# long run, 4 x 5000 draws from zero inits; bench/warmup/stan_ref.R).
# Each chain's mean of every parameter must lie within 4.5 Monte Carlo
# standard errors (batch means over 20 batches) and 0.3 sd of the
# reference, its sd within 30 % of it, and drift must not report an
# R-hat above 1.01.  A lost chain is off by thousands of standard errors,
# or has an sd 1e-5 of the reference's.
set -u
bin=${DRIFT_BIN:-./drift}
src=${srcdir:-.}
data=$src/tests/data/warmup
tmp=$(mktemp -d "${TMPDIR:-/tmp}/drift-warmup.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0

# judge KIND SEED REF: every chain of $tmp/KIND_SEED_K.csv against REF
# ("name mean sd ..." separated by spaces).
judge() {
    for k in 1 2 3 4; do
        awk -F, -v ref="$3" -v tag="$1 seed $2 chain $k" '
            BEGIN { n = split(ref, r, " ");
                    for (i = 1; i <= n; i += 3) { m[r[i]] = r[i + 1]; s[r[i]] = r[i + 2] } }
            /^#/ { next }
            !h { for (i = 1; i <= NF; i++) if ($i in m) col[i] = $i; h = 1; next }
            { N++; for (i in col) { x[i, N] = $i } }
            END {
                bad = 0
                for (i in col) {
                    p = col[i]; sum = 0
                    for (t = 1; t <= N; t++) sum += x[i, t]
                    mean = sum / N; ss = 0
                    for (t = 1; t <= N; t++) ss += (x[i, t] - mean) ^ 2
                    sd = sqrt(ss / (N - 1))
                    B = 20; L = int(N / B); bs = 0; bss = 0
                    for (b = 0; b < B; b++) {
                        bm = 0
                        for (t = b * L + 1; t <= (b + 1) * L; t++) bm += x[i, t]
                        bm /= L; bs += bm; bss += bm * bm
                    }
                    bs /= B; mcse = sqrt((bss / B - bs * bs) * B / (B - 1) / B)
                    dz = mean - m[p]; if (dz < 0) dz = -dz
                    ratio = sd / s[p]
                    if (!(dz <= 4.5 * mcse && dz <= 0.3 * s[p] && ratio > 0.7 && ratio < 1.3)) {
                        printf "FAIL: %s: %s mean %.6g (reference %.6g, %.3g sd off, %.3g standard errors), sd %.3g of the reference\n", tag, p, mean, m[p], dz / s[p], (mcse > 0 ? dz / mcse : 1e300), ratio
                        bad = 1
                    }
                }
                exit bad
            }' "$tmp/$1_$2_$k.csv" || fails=$((fails + 1))
    done
    if grep -q "R-hat above 1.01" "$tmp/$1_$2.err"; then
        echo "FAIL: $1 seed $2: $(grep 'R-hat above' "$tmp/$1_$2.err")"
        fails=$((fails + 1))
    fi
}

# check KIND SEED REF [ARGS...]
check() {
    kind=$1 seed=$2 ref=$3
    shift 3
    "$bin" sample "$data/$kind.drift" --data "$data/$kind.csv" "$@" \
        --seed "$seed" --out "$tmp/${kind}_$seed.csv" --quiet \
        2>"$tmp/${kind}_$seed.err" || {
        echo "FAIL: $kind seed $seed: exit status $?: $(cat "$tmp/${kind}_$seed.err")"
        fails=$((fails + 1))
        return
    }
    judge "$kind" "$seed" "$ref"
}

roach_ref="b0 2.54382 0.02633 b1 0.00560924 8.318e-05 b2 -0.682113 0.02988 b3 0.204956 0.03333"
dose_ref="a 2.10162 0.4059 b 0.318793 0.1113 g -0.000938137 0.0004926 s 0.296294 0.09385"
for seed in 1 2; do
    check roach $seed "$roach_ref"
    check dose $seed "$dose_ref" --data-set P=18
done
[ $fails -eq 0 ] && echo "ok: every chain of roach and dose, seeds 1 and 2, right"
exit $((fails > 0))
