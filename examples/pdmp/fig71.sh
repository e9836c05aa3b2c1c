#!/bin/sh
# fig71.sh: section 7.1 of Pakman et al. (ICML 2017) with drift.  Logistic
# regression, d = 20, N = 1000 (make-data.R), minibatches of n = 100, every
# sampler for the same number of data passes from w = 0:
#   sbps and psbps (k = 3, refresh 0, the paper's settings),
#   sgld with the paper's step sizes 0.1 and 0.01; the paper's SGLD moves
#     w by h/N times the summed gradient, drift's by h times it, so these
#     are drift's h = 1e-4 and 1e-5,
#   msgnht (the paper's mSGNHT with h = 0.1): the authors' mSGNHT(h)
#     corresponds to drift's msgnht with step h/sqrt(N) and A = sqrt(N),
#     so h = 0.1/sqrt(1000) = 3.1623e-3 and A = 31.623 here,
#   ss-zz (the paper's SS-ZZ), below.  The paper's lipSBPS is not run:
#     drift has no sampler that thins minibatch bounce rates under an
#     exact bound.
# Then fig71.R: negative log-likelihood per datum against data passes and
# against each run's CPU seconds (the paper's inset), with the Laplace
# approximation's band, and autocorrelations along the largest and
# smallest eigen-directions of the Laplace covariance.
# Not part of make check.  Run from anywhere, after make:
#   sh examples/pdmp/fig71.sh [passes]     (default 10000)
set -e
cd "$(dirname "$0")"
TOP=$(cd ../.. && pwd)
DRIFT=${DRIFT:-$TOP/drift}
export DRIFT_PLUGIN_DIR="${DRIFT_PLUGIN_DIR:-$TOP/plugins/samplers/.libs:$TOP/plugins/models/.libs}"
PASSES=${1:-10000}
mkdir -p runs results
[ -f lr20.csv ] && [ -f laplace.csv ] || Rscript make-data.R
# Each run's CPU time (user and system seconds of the whole drift process:
# reading the data, sampling, writing the draws) goes to
# runs/fig71-NAME.time, and drift's own report of the sampling's seconds
# to runs/fig71-NAME.log, for the CPU-time panel of fig71.R.
TIME=
[ -x /usr/bin/time ] && TIME="/usr/bin/time -o"
run() { # name sampler [options...]
    name=$1; shift
    echo "== $name"
    rm -f "runs/fig71-$name.time"
    ${TIME:+$TIME "runs/fig71-$name.time" -f "%U %S %e"} \
        "$DRIFT" sample --chains 1 --init 0 --model logistic --data lr20.csv --batch 100 \
        --passes "$PASSES" --seed 71 --out "runs/fig71-$name.csv" "$@" \
        2> "runs/fig71-$name.log" || { cat "runs/fig71-$name.log" >&2; exit 1; }
    grep -v 'Iteration:' "runs/fig71-$name.log" >&2 || true
}
run sbps --sampler sbps --set k=3 --thin 0.05
run psbps --sampler psbps --set k=3 --set adapt=always --set refresh=0 --thin 0.05
run sgld-0.1 --sampler sgld --set h=1e-4 --thin 5
run sgld-0.01 --sampler sgld --set h=1e-5 --thin 5
if "$DRIFT" samplers | grep -q '^msgnht '; then
    run msgnht-0.1 --sampler msgnht --set h=3.1623e-3 --set A=31.623 \
        --thin 5
else
    echo "== msgnht: no such sampler plugin in this build; left out"
fi
# SS-ZZ, the paper's Zig-Zag with subsampling: the Zig-Zag plugin of
# examples/plugin-zigzag (built here from its source) with cv=false and
# minibatches of one row, as in the authors' code, under the exact bound
# lipschitz = max_j max_i |x_ji| |x_j|_1 / 4 + 1/(s^2 N) (s^2 = 10, the
# logistic model's prior variance); the authors' code used the constant
# rate N max(x) per coordinate instead, which is not a bound.
ZZ=runs/zigzag.so
if ${CC:-cc} -std=c11 -O2 -fPIC -shared -fvisibility=hidden -I"$TOP/include" \
        ../plugin-zigzag/zigzag.c -o "$ZZ" -lm 2> runs/zigzag-build.log; then
    L=$(awk -F, 'NR > 1 { m = 0; s = 0
            for (i = 2; i <= NF; i++) { a = $i < 0 ? -$i : $i; s += a; if (a > m) m = a }
            if (m * s > best) best = m * s; n++ }
        END { printf "%.8g", best / 4 + 1 / (10 * n) }' lr20.csv)
    run ss-zz --sampler "$PWD/$ZZ" --batch 1 --set cv=false --set lipschitz="$L" --thin 0.005
else
    echo "== ss-zz: could not build ../plugin-zigzag/zigzag.c (runs/zigzag-build.log); left out"
fi
Rscript fig71.R
