#!/bin/sh
# measure-scaling.sh: measures the figures doc/scaling.md quotes and writes
# them in place, between the lines "<!-- measured: NAME -->" and
# "<!-- /measured -->" (doc/measure.sh's markers; doc/write-block.sh
# writes them), printing what changed.  Each block ends with a line saying
# what produced it, when and on which machine (tests/docs/test_docs.sh
# requires it).  Too heavy for make check: make measure-scaling runs it
# with the build's drift.
#
#   bench/measure-scaling.sh [--rows N] [--limit-mb MB] [--runs R]
#                            [--mpi-runs R] [--only stream|mpi]
#
# The blocks:
#   scaling-stream  R runs (--runs, default 5) of
#                   examples/rowstore/stream-bench.sh on a store of N rows
#                   of y and 54 predictors (--rows, default 8000000: 3.5 GB)
#                   in a memory cgroup of MB (--limit-mb, default 1024):
#                   the MB/s of a cyclic SGLD pass, of cat, and of random
#                   access, as ranges over the runs.  Where no cgroup can
#                   bound the runs the block says why, and whether the
#                   store then fit in memory (drift keeps such a store
#                   mapped instead of releasing the stretches it passed).
#                   About a minute a run on 2 shared cores, and 3-4
#                   minutes to make the store the first time.
#   scaling-mpi     R runs (--mpi-runs, default 2) of bench/bench_mpi.sh
#                   (1, 2 and 4 ranks of this machine, MPI_Allreduce
#                   alone, the cost model's predictions), as ranges over
#                   the runs; about 5 minutes a run on 2 cores.  Left as
#                   it is when drift was built without MPI.
#
# DRIFT, MPIRUN, ALLREDUCE as for bench/bench_mpi.sh; MPI_BUILT=no (make
# passes configure's answer) leaves scaling-mpi as it is; WORK (default
# bench/work-scaling) keeps the generated stores between runs (the
# streaming one is N x 440 bytes: delete it when done).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
DRIFT=${DRIFT:-$top/drift}
export DRIFT
ROWS=8000000
LIMIT=1024
RUNS=5
MPI_RUNS=2
only=""
while [ $# -gt 0 ]; do
    case $1 in
    --rows) ROWS=$2; shift 2 ;;
    --limit-mb) LIMIT=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --mpi-runs) MPI_RUNS=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    *) echo "usage: measure-scaling.sh [--rows N] [--limit-mb MB] [--runs R] [--mpi-runs R] [--only stream|mpi]" >&2
       exit 2 ;;
    esac
done
work=${WORK:-$top/bench/work-scaling}
mkdir -p "$work" || exit 1
work=$(cd "$work" && pwd)
doc=$top/doc/scaling.md
tmp=$(mktemp -d "${TMPDIR:-/tmp}/drift-measure-scaling-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
load() { cut -d' ' -f1 /proc/loadavg; }
# The line that ends each block: the command, the date, the machine.
provenance() { # ARGS LOAD_AT_START
    mem=$(awk '/^MemTotal:/ {printf "%.0f", $2 / 1048576}' /proc/meminfo)
    printf 'Measured by `make measure-scaling` (bench/measure-scaling.sh %s) on %s, host %s: %s cores, %s GB memory, Linux %s; load average %s at the start, %s at the end.\n' \
        "$1" "$(date -u '+%Y-%m-%d at %H:%M UTC')" "$(uname -n)" "$(nproc)" \
        "$mem" "$(uname -r)" "$2" "$(load)"
}
# range A B...: the smallest and largest, "a-b" (or "a" when equal at
# the precision shown), both with the decimals the largest needs: none
# from 100 (and thousands separated by commas), one from 1, two from 0.1,
# else three.
range() {
    echo "$@" | tr ' ' '\n' | awk 'NF {
        v = $1 + 0; if (n == 0 || v < lo) lo = v; if (n == 0 || v > hi) hi = v; n++ }
        function f(x,   s, r) { s = sprintf("%.*f", k, x); r = ""
            if (k == 0)
                while (length(s) > 3) {
                    r = "," substr(s, length(s) - 2) r
                    s = substr(s, 1, length(s) - 3)
                }
            return s r }
        END { k = hi >= 100 ? 0 : hi >= 1 ? 1 : hi >= 0.1 ? 2 : 3
              a = f(lo); b = f(hi)
              print (a == b ? a : a "-" b) }'
}
status=0

# ---- scaling-stream ----
if [ -z "$only" ] || [ "$only" = stream ]; then
    l0=$(load)
    r=0
    : >"$tmp/stream.csv"
    while [ $r -lt "$RUNS" ]; do
        r=$((r + 1))
        echo "== stream-bench.sh $ROWS $LIMIT, run $r of $RUNS"
        (cd "$tmp" && WORK=$work sh "$top/examples/rowstore/stream-bench.sh" \
            "$ROWS" "$LIMIT") >"$tmp/stream.out" 2>&1
        rc=$?
        cat "$tmp/stream.out"
        [ $rc = 0 ] || { echo "measure-scaling.sh: stream-bench.sh failed" >&2; exit 1; }
        tail -n +2 "$tmp/stream-bench.csv" >>"$tmp/stream.csv"
    done
    bound=$(sed -n 's/^memory bound: //p' "$tmp/stream.out")
    store=$work/big-$ROWS.drs
    bytes=$(stat -c %s "$store")
    gb=$(awk -v b="$bytes" 'BEGIN {printf "%.1f", b / 1e9}')
    # The MB/s of each kind: the last field; the names hold commas.
    ca=$(awk -F, '/^drift sgld, cyclic/ {print $NF}' "$tmp/stream.csv")
    cat_=$(awk -F, '/^cat/ {print $NF}' "$tmp/stream.csv")
    ra=$(awk -F, '/^drift sgld, random/ {print $NF}' "$tmp/stream.csv")
    case $bound in
    none*)
        avail=$(awk '/^MemAvailable:/ {print $2 * 1024}' /proc/meminfo)
        if [ "$bytes" -gt $((avail / 2)) ]; then
            where="with no memory cgroup (${bound#none: }), the store larger than half the memory available all the same"
        else
            where="with no memory cgroup (${bound#none: }): the store is smaller than half the memory available here, so drift kept it mapped instead of releasing the stretches it passed; the figures are those of a cold store that fits"
        fi ;;
    *) where="in a $LIMIT MB memory cgroup, where it is larger than half the memory available (drift releases the stretches it has passed)" ;;
    esac
    rows=$(printf '%s' "$ROWS" | sed ':a; s/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/; ta')
    {
        printf 'One cyclic SGLD pass (`--access ca`, batch 1000, under a `--seconds`\n'
        printf 'budget that never binds, which skips the check of the given step\n'
        printf 'size, whose pilot chains would read the store too) over a %s GB row\n' "$gb"
        printf 'store (%s rows of y and 54 predictors) %s,\n' "$rows" "$where"
        printf 'each run starting with the store out of the page cache: %s MB/s,\n' "$(range $ca)"
        printf 'against `cat`'"'"'s %s MB/s on the same file; random access %s\n' "$(range $cat_)" "$(range $ra)"
        printf 'MB/s (1 %% of a pass, scaled).  %s runs of\n' "$RUNS"
        printf '`examples/rowstore/stream-bench.sh %s %s`, ranges over the runs.\n' "$ROWS" "$LIMIT"
    } | fmt -w 72 >"$tmp/scaling-stream"
    echo >>"$tmp/scaling-stream"
    provenance "--only stream --rows $ROWS --limit-mb $LIMIT --runs $RUNS" "$l0" >>"$tmp/scaling-stream"
    sh "$top/doc/write-block.sh" "$doc" scaling-stream "$tmp/scaling-stream" || status=1
fi

# ---- scaling-mpi ----
if [ -z "$only" ] || [ "$only" = mpi ]; then
    if [ "${MPI_BUILT:-yes}" != yes ]; then
        echo "measure-scaling.sh: drift was built without MPI; scaling-mpi left as it is"
    else
        l0=$(load)
        r=0
        while [ $r -lt "$MPI_RUNS" ]; do
            r=$((r + 1))
            echo "== bench_mpi.sh, run $r of $MPI_RUNS"
            WORK=$work sh "$top/bench/bench_mpi.sh" >"$tmp/mpi-$r.out" 2>&1
            rc=$?
            cat "$tmp/mpi-$r.out"
            [ $rc = 0 ] || { echo "measure-scaling.sh: bench_mpi.sh failed" >&2; exit 1; }
            cp "$work/steps.txt" "$tmp/steps-$r.txt"
            cp "$work/allreduce.txt" "$tmp/allreduce-$r.txt"
        done
        # per run, one line of the figures the text quotes
        r=0
        : >"$tmp/mpi.txt"
        while [ $r -lt "$MPI_RUNS" ]; do
            r=$((r + 1))
            {
                awk '$2 == "sgld50" && $1 == 1 {a = $3 * 1e6}
                     $2 == "sgld50" && $1 == 2 {b = $3 * 1e6; c = $4 * 1e6}
                     $2 == "full" && $1 == 1 {d = $3 * 1e3}
                     $2 == "full" && $1 == 2 {e = $3 * 1e3}
                     END {printf "%g %g %g %g %g", a, b, c, d, e}' "$tmp/steps-$r.txt"
                awk '$2 == 2 && $3 == 64 {printf " %g", $4 * 1e6}' "$tmp/allreduce-$r.txt"
                sed -n 's/^fit (P = 2): alpha = \([^ ]*\) s per log2 P, beta = \([^ ]*\) s per double;$/\1 \2/p' "$tmp/mpi-$r.out" |
                    awk '{printf " %g %g", $1 * 1e6, $2 * 1e9}'
                # speed-ups on a 10 Gb/s network: the model table's last column
                for w in full sgld5000 sgld500 sgld50; do
                    awk -v w=$w '$1 == w && NF == 7 {printf " %g", $7}' "$tmp/mpi-$r.out"
                done
                # b* on a 10 Gb/s network at 2, 8, 64 ranks
                awk '/^ *P +b\*/ {f = 1; next}
                     f && NF == 4 && ($1 == 2 || $1 == 8 || $1 == 64) {printf " %g", $4}' "$tmp/mpi-$r.out"
                sed -n 's/^== computation per row (sgld, b = 5000, P = 1): \([^ ]*\) s;.*/\1/p' "$tmp/mpi-$r.out" |
                    awk '{printf " %g", $1 * 1e6}'
                echo
            } >>"$tmp/mpi.txt"
        done
        col() { awk -v k="$1" '{print $k}' "$tmp/mpi.txt" | tr '\n' ' '; }
        # shellcheck disable=SC2046 # one argument per run
        rng() { range $(col "$1"); }
        nf=$(awk '{print NF}' "$tmp/mpi.txt" | sort -u)
        [ "$nf" = 24 ] || { echo "measure-scaling.sh: could not read bench_mpi.sh's figures ($nf fields, want 24):" >&2; cat "$tmp/mpi.txt" >&2; exit 1; }
        net=$(sed -n 's/^10 Gb\/s network: beta = \([^ ]*\) s per double.*alpha = \([^ ]*\) s per round.*/\1 \2/p' "$tmp/mpi-1.out" |
              awk '{printf "beta %.3g ns per double from the line rate, alpha an assumed %.3g us per round", $1 * 1e9, $2 * 1e6}')
        lavg=$(sed -n 's/.*load average \([0-9.]*\).*/\1/p' "$tmp"/mpi-*.out | tr '\n' ' ')
        {
            printf 'On %s cores of this machine (load average %s at the start of each run;\n' "$(nproc)" "$(echo $lavg | sed 's/ /, /g')"
            printf '%s runs of `bench/bench_mpi.sh`, each figure a best of 3, ranges\n' "$MPI_RUNS"
            printf 'over the runs): sgld at batch 50 took %s us a step on one rank and\n' "$(rng 1)"
            printf '%s us on two, %s us of it in MPI_Allreduce (waiting for the\n' "$(rng 2)" "$(rng 3)"
            printf 'other rank included); a full pass %s ms on one rank and %s ms on\n' "$(rng 4)" "$(rng 5)"
            printf 'two.  MPI_Allreduce of 69 doubles (64 values and the 5 status slots)\n'
            printf 'alone took %s us on two ranks, and the fit over message sizes gives\n' "$(rng 6)"
            printf 'alpha = %s us per round and beta = %s ns per double (shared\n' "$(rng 7)" "$(rng 8)"
            printf 'memory).  For a 10 Gb/s network (%s)\n' "$net"
            printf 'the model predicts, over one rank (below 1: slower): a full pass\n'
            printf '%sx on 8 nodes, %sx on 16, %sx on 64; sgld at batch 5000\n' "$(rng 9)" "$(rng 10)" "$(rng 11)"
            printf '%sx, %sx and %sx; at batch 500 %sx, %sx and %sx;\n' "$(rng 12)" "$(rng 13)" "$(rng 14)" "$(rng 15)" "$(rng 16)" "$(rng 17)"
            printf 'at batch 50 %sx, %sx and %sx.  Communication outweighs\n' "$(rng 18)" "$(rng 19)" "$(rng 20)"
            printf 'computation below a batch of about %s rows a step on 2 nodes, %s\n' "$(rng 21)" "$(rng 22)"
            printf 'on 8 and %s on 64 (a row of d = 54 costs %s us).\n' "$(rng 23)" "$(rng 24)"
        } | fmt -w 72 >"$tmp/scaling-mpi"
        echo >>"$tmp/scaling-mpi"
        provenance "--only mpi --mpi-runs $MPI_RUNS; $("${MPIRUN:-mpirun}" --version 2>/dev/null | head -n 1)" "$l0" >>"$tmp/scaling-mpi"
        sh "$top/doc/write-block.sh" "$doc" scaling-mpi "$tmp/scaling-mpi" || status=1
    fi
fi
exit $status
