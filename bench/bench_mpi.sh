#!/bin/sh
# bench_mpi.sh: the cost of a run across MPI ranks, measured
# and modelled.  On Covertype-sized synthetic data (N = 581,012 rows of
# d = 54 predictors, logistic regression, a row store), with one chain
# over P = 1, 2, 4 ranks of this machine (mpirun -n P; each rank holds
# N/P rows): the time per step of sgld at batch 50, 500 and 5000 and of
# one full pass (lmc's step is one grad_full), each split into the time
# ranks spent in MPI_Allreduce (communication, waits for a slower rank
# included; DRIFT_MPI_STATS=1) and the rest (computation).  Then
# MPI_Allreduce alone (bench_allreduce) for 1 to 2^18 doubles on 2 and 4
# ranks, fitted as t = alpha log2 P + beta n; and the model
#     T(P) = C/P + alpha log2 P + beta (d + 6)
# (C: one rank's computation per step at P = 1; d + 6 the values a sum
# carries: the gradient, the log term, five status slots) used to predict
# 8, 16 and 64 ranks, with the alpha and beta measured here (shared
# memory) and with those of a 10 Gb/s network (beta from the line rate,
# 2 x 8 bytes per value for a ring allreduce; alpha an assumed per-round
# latency, ALPHA_NET, default 25 us, typical of MPI over TCP on 10 GbE),
# and the batch size below which communication outweighs computation.
# The fit takes MPI_Allreduce on two ranks; alpha_eff, what drift's own
# sums cost a step at P = 2 (waits for the slower rank included), is the
# latency a step sees, and a second prediction uses it.
# Best of REPEATS (3) runs; on a machine shared with other work the
# figures are as noisy as it is (the load average is printed).
# usage: bench/bench_mpi.sh  (from the top of a built tree; make bench
# runs it when drift has MPI).  WORK (default bench/work-mpi) keeps the
# generated store between runs.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
DRIFT=${DRIFT:-$top/drift}
MPIRUN=${MPIRUN:-mpirun}
ALLREDUCE=${ALLREDUCE:-$top/bench/bench_allreduce}
REPEATS=${REPEATS:-3}
ALPHA_NET=${ALPHA_NET:-25e-6}
N=${N:-581012}
export DRIFT_PLUGIN_DIR=${DRIFT_PLUGIN_DIR:-$top/plugins/samplers/.libs:$top/plugins/models/.libs}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo \
    OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_btl_vader_single_copy_mechanism=none
work=${WORK:-$top/bench/work-mpi}
mkdir -p "$work"
model=$top/examples/logistic/logistic.drift
store=$work/cov-$N.drs
if [ ! -f "$store" ]; then
    cc -O2 -o "$work/gen_rows" "$top/examples/rowstore/gen_rows.c" -lm
    echo "generating $N rows of 54 predictors into $store ..."
    "$work/gen_rows" "$N" 54 | "$DRIFT" data convert /dev/stdin "$store" \
        >/dev/null
fi
echo "== bench_mpi: N = $N, d = 54 (Covertype-sized), $(nproc) cores," \
     "load average $(cut -d' ' -f1-3 /proc/loadavg)"

# run P SAMPLER BATCH STEPS: prints "step_s comm_s" for the best of
# REPEATS runs (the sampling time the draws file records, over STEPS).
run() {
    best=""
    r=0
    while [ $r -lt "$REPEATS" ]; do
        r=$((r + 1))
        out=$work/o.csv
        err=$(DRIFT_MPI_STATS=1 "$MPIRUN" --oversubscribe -n "$1" "$DRIFT" \
                  sample "$model" --data "$store" --sampler "$2" \
                  --batch "$3" --iter "$4" --warmup 0 --thin "$4" \
                  --set h=1e-7 --chains 1 --seed 1 --quiet --out "$out" 2>&1 \
                  >/dev/null)
        t=$(sed -n 's/^# *\([0-9.e+-]*\) seconds (Sampling)$/\1/p' "$out")
        c=$(echo "$err" | sed -n 's/^drift: rank 0 on .* \([0-9.]*\) s in MPI_Allreduce$/\1/p')
        line=$(awk -v t="$t" -v c="${c:-0}" -v n="$4" \
            'BEGIN { printf "%.9g %.9g", t / n, c / n }')
        if [ -z "$best" ] || awk -v a="$line" -v b="$best" \
            'BEGIN { split(a, x, " "); split(b, y, " "); exit !(x[1] < y[1]) }'; then
            best=$line
        fi
    done
    echo "$best"
}

results=$work/steps.txt
printf '%-3s %-15s %12s %12s %12s\n' P work step_s comm_s compute_s
if [ "${REUSE:-0}" = 1 ] && [ -s "$results" ]; then
    # REUSE=1: the last measurements again, for the model alone.
    awk '{ printf "%-3s %-15s %12.4g %12.4g %12.4g\n", $1, $2, $3, $4,
           $3 - $4 }' "$results"
    set -- 5
else
    : >"$results"
    set -- 1 2 4
fi
for P in "$@"; do
    [ "$P" = 5 ] && break
    for b in 50 500 5000; do
        steps=$((4000000 / b))
        [ $steps -gt 20000 ] && steps=20000
        set -- $(run $P sgld $b $steps)
        printf '%-3s %-15s %12.4g %12.4g %12.4g\n' $P "sgld b=$b" "$1" "$2" \
            "$(awk -v a="$1" -v b="$2" 'BEGIN { print a - b }')"
        echo "$P sgld$b $1 $2" >>"$results"
    done
    set -- $(run $P lmc 50 10)
    printf '%-3s %-15s %12.4g %12.4g %12.4g\n' $P "full pass" "$1" "$2" \
        "$(awk -v a="$1" -v b="$2" 'BEGIN { print a - b }')"
    echo "$P full $1 $2" >>"$results"
done

# MPI_Allreduce alone, and the fit of t = alpha log2 P + beta n on two
# ranks (four share two cores here, which times the scheduler more than
# MPI), weighted by 1/t^2 so that small and large messages count alike.
ar=$work/allreduce.txt
: >"$ar"
for P in 2 4; do
    "$MPIRUN" --oversubscribe -n $P "$ALLREDUCE" >>"$ar"
done
echo "== MPI_Allreduce(SUM) of n + 5 doubles alone, seconds per call" \
     "(best of 5)"
awk '{ printf "P=%s n=%-7s %.3g\n", $2, $3, $4 }' "$ar"
set -- $(awk '$2 == 2 {
      x1 = log($2) / log(2); x2 = $3 + 5; y = $4; w = 1 / (y * y)
      s11 += w * x1 * x1; s12 += w * x1 * x2; s22 += w * x2 * x2
      s1y += w * x1 * y; s2y += w * x2 * y }
    END { det = s11 * s22 - s12 * s12
          a = (s1y * s22 - s2y * s12) / det
          b = (s11 * s2y - s12 * s1y) / det
          printf "%.6g %.6g", a, b }' "$ar")
alpha=$1
beta=$2
# What drift's own sums cost per step at P = 2, b = 50, waits for the
# other rank included: the latency a step actually sees.
alpha_eff=$(awk -v b="$beta" '$1 == 2 && $2 == "sgld50" {
    printf "%.6g", $4 - b * 60 }' "$results")
beta_net=$(awk 'BEGIN { printf "%.6g", 2 * 8 / 1.25e9 }')
echo "fit (P = 2): alpha = $alpha s per log2 P, beta = $beta s per double;"
echo "drift's sums at P = 2, b = 50 (waits included): alpha_eff =" \
     "$alpha_eff s"
echo "10 Gb/s network: beta = $beta_net s per double (2 x 8 bytes at line" \
     "rate), alpha = $ALPHA_NET s per round (assumed, ALPHA_NET)"

# The model and its predictions.
echo "== model T(P) = C/P + alpha log2 P + beta (d + 6), d = 54, C the" \
     "computation per step at P = 1; seconds per step and speed-up over" \
     "P = 1"
printf '%-9s %4s %11s %11s %11s %11s %9s\n' work P C/P "T(a,b)" \
    "T(a_eff,b)" "T(10Gb/s)" "x 10Gb/s"
for w in sgld50 sgld500 sgld5000 full; do
    C=$(awk -v w=$w '$1 == 1 && $2 == w { print $3 - $4 }' "$results")
    for P in 8 16 64; do
        awk -v C="$C" -v P=$P -v a="$alpha" -v ae="$alpha_eff" -v b="$beta" \
            -v an="$ALPHA_NET" -v bn="$beta_net" -v w=$w 'BEGIN {
            l = log(P) / log(2)
            t1 = C / P + a * l + b * 60
            t2 = C / P + ae * l + b * 60
            t3 = C / P + an * l + bn * 60
            printf "%-9s %4d %11.3g %11.3g %11.3g %11.3g %9.3g\n", w, P,
                   C / P, t1, t2, t3, C / t3 }'
    done
done
# Where communication outweighs computation: C(b) = c b with c the
# computation per row at b = 5000 (P = 1).
c=$(awk '$1 == 1 && $2 == "sgld5000" { printf "%.6g", ($3 - $4) / 5000 }' \
    "$results")
echo "== computation per row (sgld, b = 5000, P = 1): $c s; the batch below"
echo "   which communication outweighs computation, b* = P (alpha log2 P +" \
     "beta 60) / c:"
printf '%4s %10s %12s %12s\n' P "b*(a,b)" "b*(a_eff,b)" "b*(10Gb/s)"
for P in 2 4 8 16 64; do
    awk -v c="$c" -v P=$P -v a="$alpha" -v ae="$alpha_eff" -v b="$beta" \
        -v an="$ALPHA_NET" -v bn="$beta_net" 'BEGIN { l = log(P) / log(2)
        printf "%4d %10.0f %12.0f %12.0f\n", P, P * (a * l + b * 60) / c,
               P * (ae * l + b * 60) / c, P * (an * l + bn * 60) / c }'
done
