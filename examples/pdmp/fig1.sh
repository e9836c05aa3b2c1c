#!/bin/sh
# fig1.sh: the noise of the bounce rate (Figure 1 of Pakman et al., ICML
# 2017) on section 7.1's logistic regression (lr20.csv, N = 1000, d = 20).
# bouncenoise.c (a drift sampler plugin that measures instead of sampling)
# walks straight lines w0 + v t, t in [0, 1] (about 8 mean segment lengths
# of sbps here), from the posterior mode and from two Laplace draws, and at
# every 0.02 time units records the exact directional derivative
# G(t) = v . grad U (the bounce rate is max(0, G)) and REPS minibatch
# estimates of it, for minibatches of n = 100 (the paper's) and of 10 and
# 500.  fig1.R compares the estimates' noise with the model SBPS's bound
# assumes: unbiased, Gaussian, with the variance N^2 s^2 / n of the
# per-row terms, the rate nearly linear over a segment.  Writes
# results/fig1.csv, results/fig1-summary.csv and results/fig1.png.
# Not part of make check.  Run after make:
#   sh examples/pdmp/fig1.sh [reps]      (default 400)
set -e
cd "$(dirname "$0")"
TOP=$(cd ../.. && pwd)
DRIFT=${DRIFT:-$TOP/drift}
export DRIFT_PLUGIN_DIR="${DRIFT_PLUGIN_DIR:-$TOP/plugins/samplers/.libs:$TOP/plugins/models/.libs}"
REPS=${1:-400}
mkdir -p runs results
[ -f lr20.csv ] && [ -f laplace.csv ] || Rscript make-data.R
${CC:-cc} -O2 -shared -fPIC -fvisibility=hidden -I"$TOP/include" bouncenoise.c \
    -o runs/bouncenoise.so -lm
# Starting points: the mode and two draws of the Laplace approximation.
Rscript -e 'l <- read.csv("laplace.csv", row.names = 1); d <- ncol(l)
  m <- as.numeric(l["mode", ]); E <- t(as.matrix(l[-(1:2), ])); ev <- as.numeric(l["eigenvalue", ])
  set.seed(101); P <- list(mode = m, draw1 = m + E %*% (sqrt(ev) * rnorm(d)),
                           draw2 = m + E %*% (sqrt(ev) * rnorm(d)))
  for (p in names(P)) writeLines(sprintf("{\"w\": [%s]}", paste(sprintf("%.12g", P[[p]]), collapse = ", ")),
                                 sprintf("runs/fig1-%s.json", p))'
iters=$((51 * REPS))
for start in mode draw1 draw2; do
    for n in 10 100 500; do
        echo "== line from $start, n = $n"
        "$DRIFT" sample --chains 1 --model logistic --data lr20.csv --init "runs/fig1-$start.json" \
            --sampler runs/bouncenoise.so --set dt=0.02 --set reps="$REPS" --batch $n \
            --iter $iters --warmup 0 --seed 11 --quiet --out "runs/fig1-$start-n$n.csv" 2>/dev/null
    done
done
Rscript fig1.R
