#!/bin/sh
# test_nuts_nutpie.sh: nuts under --set metric=nutpie (nutpie's diagonal
# metric from draws and gradients; nutpie_lowrank below) on a Gaussian with independent
# coordinates whose sds span 1e-3 to 1e3, after a short warmup (200
# iterations), 4 chains of 1000 draws, seed 1.
#
# The adapted metric: for this target grad_k U = (x_k - mu_k) / s_k^2 at
# every point, so over any set of points var(grad_k U) = var(x_k) / s_k^4
# and sqrt(var(x_k) / var(grad_k U)) is s_k^2 exactly, however few
# points and however little they have spread.  What is left is rounding:
# the Welford sums (relative error about 1e-13 here) and the output's 10
# significant digits (5e-10).  So every chain's inverse metric must equal
# s_k^2 to a relative 1e-6, a bound that any estimate from the draws'
# variance misses (100 draws give it a relative sd of 0.14), as does the
# inverted ratio (1 / s_k^2).
#
# The draws: each coordinate's mean within 4.5 Monte Carlo standard errors
# of mu_k and its variance within 4.5 standard errors of s_k^2 (batch
# means, 20 batches a chain, pooled over the chains), no divergence, and
# no R-hat warning from drift.
set -u
bin=${DRIFT_BIN:-./drift}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/drift-nutpie.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0

cat >"$tmp/g.drift" <<'EOF'
param { a : real  b : real  c : real  d : real  e : real  f : real  g : real }
prior {
  a ~ normal(1, 0.001)
  b ~ normal(-1, 0.01)
  c ~ normal(0.5, 0.1)
  d ~ normal(0, 1)
  e ~ normal(2, 10)
  f ~ normal(-30, 100)
  g ~ normal(0, 1000)
}
EOF
ref="a 1 0.001 b -1 0.01 c 0.5 0.1 d 0 1 e 2 10 f -30 100 g 0 1000"

"$bin" sample "$tmp/g.drift" --set metric=nutpie --warmup 200 --seed 1 \
    --out "$tmp/g.csv" --quiet 2>"$tmp/g.err" || {
    echo "FAIL: drift exit status $?: $(cat "$tmp/g.err")"
    exit 1
}
if grep -q "R-hat above" "$tmp/g.err"; then
    echo "FAIL: $(grep 'R-hat above' "$tmp/g.err")"
    fails=$((fails + 1))
fi

for k in 1 2 3 4; do
    # The line after "Diagonal elements of inverse mass matrix".
    awk -v ref="$ref" -v tag="chain $k" '
        BEGIN { n = split(ref, r, " ");
                for (i = 1; i <= n; i += 3) v[++m] = r[i + 2] ^ 2 }
        take { sub(/^# */, ""); got = split($0, x, /, */); take = 0; seen = 1
               for (i = 1; i <= m; i++) {
                   rel = (x[i] - v[i]) / v[i]; if (rel < 0) rel = -rel
                   if (!(rel <= 1e-6)) {
                       printf "FAIL: %s: inverse metric entry %d is %s, the variance is %.10g (relative error %.3g)\n", tag, i, x[i], v[i], rel
                       bad = 1
                   }
               } }
        /Diagonal elements of inverse mass matrix/ { take = 1 }
        END { if (!seen || got != m) { printf "FAIL: %s: no diagonal metric of %d entries in the adaptation block\n", tag, m; bad = 1 }
              exit bad }' "$tmp/g_$k.csv" || fails=$((fails + 1))
done

# judge_means STEM REF: the draws of STEM_1.csv ... STEM_4.csv pooled, means
# and variances against the closed form REF ("name mean sd ...").
judge_means() {
awk -F, -v ref="$2" '
    BEGIN { n = split(ref, r, " ");
            for (i = 1; i <= n; i += 3) { mu[r[i]] = r[i + 1]; sd[r[i]] = r[i + 2] } }
    FNR == 1 { h = 0; file++ }
    /^#/ { next }
    !h { for (i = 1; i <= NF; i++) { if ($i in mu) col[i] = $i; if ($i == "divergent__") dv = i }
         h = 1; next }
    { N[file]++; div += $dv
      for (i in col) x[file, i, N[file]] = $i }
    END {
        bad = 0
        if (div > 0) { printf "FAIL: %d divergent transitions\n", div; bad = 1 }
        B = 20
        for (i in col) {
            p = col[i]; m = mu[p]; s2 = sd[p] ^ 2
            # batch means of x and of (x - mu)^2, 20 batches a chain
            nb = 0; sx = 0; sxx = 0; sv = 0; svv = 0
            for (f = 1; f <= file; f++) {
                L = int(N[f] / B)
                for (b = 0; b < B; b++) {
                    bx = 0; bv = 0
                    for (t = b * L + 1; t <= (b + 1) * L; t++) {
                        y = x[f, i, t]; bx += y; bv += (y - m) ^ 2
                    }
                    bx /= L; bv /= L; nb++
                    sx += bx; sxx += bx * bx; sv += bv; svv += bv * bv
                }
            }
            mx = sx / nb; mv = sv / nb
            se_x = sqrt((sxx / nb - mx * mx) * nb / (nb - 1) / nb)
            se_v = sqrt((svv / nb - mv * mv) * nb / (nb - 1) / nb)
            zx = (mx - m) / se_x; zv = (mv - s2) / se_v
            if (!(zx <= 4.5 && zx >= -4.5 && zv <= 4.5 && zv >= -4.5)) {
                printf "FAIL: %s: mean %.6g (want %.6g, %.2f standard errors off), variance %.6g (want %.6g, %.2f standard errors off)\n", p, mx, m, zx, mv, s2, zv
                bad = 1
            }
        }
        exit bad
    }' "$1_1.csv" "$1_2.csv" "$1_3.csv" "$1_4.csv" ||
    fails=$((fails + 1))
}
judge_means "$tmp/g" "$ref"

# metric=nutpie_lowrank on a 2-D Gaussian with sds 1000 and 1 and
# correlation 0.99: in the diagonally scaled space the covariance's
# eigenvalues are 14.1 and 0.071, both beyond [1/2, 2], so the estimate
# is the covariance exactly but for the regularisation of the scatter
# matrices (S / 1e-5 + I): a relative 1e-5 / (n lambda_min), below 1e-5
# for the n >= 10 draws of the last window (lambda_min >= 0.07 draws'
# scatter per draw, in scaled units).  So every chain's dense inverse
# metric must equal the covariance (1e6, 990; 990, 1) to a relative 1e-4
# of each entry's scale (sd_i sd_j), which the diagonal estimate (no
# correlation) and an estimate from the draws' covariance (a relative
# error of 0.14 from 100 draws) both miss.  The draws as above.
cat >"$tmp/c.drift" <<'EOF'
param { a : real  b : real }
prior { target += -0.5 * ((a / 1000) * (a / 1000) - 2 * 0.99 * (a / 1000) * b + b * b) / (1 - 0.99 * 0.99) }
EOF
"$bin" sample "$tmp/c.drift" --set metric=nutpie_lowrank --warmup 200 \
    --seed 1 --out "$tmp/c.csv" --quiet 2>"$tmp/c.err" || {
    echo "FAIL: nutpie_lowrank: drift exit status $?: $(cat "$tmp/c.err")"
    exit 1
}
if grep -q "R-hat above" "$tmp/c.err"; then
    echo "FAIL: nutpie_lowrank: $(grep 'R-hat above' "$tmp/c.err")"
    fails=$((fails + 1))
fi
for k in 1 2 3 4; do
    awk -v tag="nutpie_lowrank chain $k" '
        BEGIN { v[1] = 1e6; v[2] = 990; v[3] = 990; v[4] = 1
                s[1] = 1e6; s[2] = 1000; s[3] = 1000; s[4] = 1 }
        take > 0 { sub(/^# */, ""); split($0, x, /, */)
                   r++; got[r * 2 - 1] = x[1]; got[r * 2] = x[2]
                   if (r == 2) take = 0; next }
        /Elements of inverse mass matrix/ { take = 1 }
        END { if (r != 2) { printf "FAIL: %s: no dense 2 x 2 metric in the adaptation block\n", tag; exit 1 }
              for (i = 1; i <= 4; i++) {
                  rel = (got[i] - v[i]) / s[i]; if (rel < 0) rel = -rel
                  if (!(rel <= 1e-4)) {
                      printf "FAIL: %s: inverse metric entry %d is %s, the covariance %g (error %.3g of its scale)\n", tag, i, got[i], v[i], rel
                      bad = 1
                  }
              }
              exit bad }' "$tmp/c_$k.csv" || fails=$((fails + 1))
done
judge_means "$tmp/c" "a 0 1000 b 0 1"

# The default, metric=auto: nutpie_lowrank up to 100 parameters, Stan's
# diag beyond.  The same 2-D Gaussian with no --set must get the dense
# metric (CmdStan's dense_e, estimated by auto) whose first entry is the
# variance 1e6, which Stan's diag from 200 warmup iterations misses by
# about 14 %; a Gaussian of 101 independent coordinates must get diag_e.
"$bin" sample "$tmp/c.drift" --warmup 200 --seed 1 --out "$tmp/a.csv" \
    --quiet 2>"$tmp/a.err" || {
    echo "FAIL: the default metric: drift exit status $?: $(cat "$tmp/a.err")"
    exit 1
}
for k in 1 2 3 4; do
    awk -v tag="the default metric, chain $k" '
        /^#  *metric = / { kind = $4 }
        /^#  *metric_estimate = / { est = $4 }
        take { sub(/^# */, ""); split($0, x, /, */); v = x[1]; take = 0 }
        /Elements of inverse mass matrix/ { take = 1 }
        END { rel = (v - 1e6) / 1e6; if (rel < 0) rel = -rel
              if (kind != "dense_e" || est != "auto" || !(rel <= 1e-4)) {
                  printf "FAIL: %s: metric %s, estimate %s, first entry %s (want dense_e, auto, 1e6)\n", tag, kind, est, v
                  exit 1
              } }' "$tmp/a_$k.csv" || fails=$((fails + 1))
done
# auto's way out: on Neal's funnel (v ~ N(0, 3), x | v ~ N(0, e^(v/2)))
# the low-rank metric's steps diverge in warmup; a chain that saw 3
# divergences after the early phase says so, and its metric is then the
# draws' variance, a diagonal: every off-diagonal entry of its inverse
# metric 0.  At seed 1 every chain takes the way out.
cat >"$tmp/f.drift" <<'EOF'
param { v : real  x : vector[2] }
prior { v ~ normal(0, 3)  x ~ normal(0, exp(v / 2)) }
EOF
"$bin" sample "$tmp/f.drift" --seed 1 --out "$tmp/f.csv" 2>"$tmp/f.err" \
    >/dev/null || {
    echo "FAIL: the funnel: drift exit status $?: $(cat "$tmp/f.err")"
    exit 1
}
for k in 1 2 3 4; do
    if ! grep -q "chain $k: nuts: metric=auto: 3 transitions diverged" "$tmp/f.err"; then
        echo "FAIL: the funnel, chain $k: no note of auto's way out: $(grep "chain $k" "$tmp/f.err" | head -3)"
        fails=$((fails + 1))
        continue
    fi
    awk -v tag="the funnel, chain $k" '
        take > 0 { sub(/^# */, ""); n = split($0, x, /, */); r++
                   for (i = 1; i <= n; i++) if (i != r && x[i] != 0) bad = 1
                   if (r == 3) take = 0; next }
        /Elements of inverse mass matrix/ { take = 1 }
        END { if (r != 3 || bad) { printf "FAIL: %s: the inverse metric after the way out is not diagonal (%d rows)\n", tag, r; exit 1 } }' \
        "$tmp/f_$k.csv" || fails=$((fails + 1))
done
awk 'BEGIN { printf "param { x : vector[101] }\nprior { x ~ normal(0, 1) }\n" }' >"$tmp/w.drift"
"$bin" sample "$tmp/w.drift" --warmup 100 --iter 100 --chains 1 --seed 1 \
    --out "$tmp/w.csv" --quiet 2>"$tmp/w.err" || {
    echo "FAIL: 101 parameters: drift exit status $?: $(cat "$tmp/w.err")"
    exit 1
}
grep -q "^#  *metric = diag_e" "$tmp/w.csv" || {
    echo "FAIL: 101 parameters at the default metric: $(grep '^#  *metric' "$tmp/w.csv")"
    fails=$((fails + 1))
}

[ $fails -eq 0 ] && echo "ok: metric=nutpie adapts the exact variances (1e-6 to 1e6) and nutpie_lowrank, the default up to 100 parameters, a correlated covariance in 200 warmup iterations; means and variances right; on a funnel the default leaves it for a diagonal"
exit $((fails > 0))
