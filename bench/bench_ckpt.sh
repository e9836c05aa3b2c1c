#!/bin/sh
# bench_ckpt.sh: what checkpoints cost.  For each
# sampler, on a dense logistic regression with d = 54 (N rows of
# examples/rowstore/gen_rows) and a sparse one with d = 40,000 (LIBSVM
# rows of examples/sparse/gen_sparse, 40 non-zeros a row): the size of one
# chain's state file, and the cost of one save, from the same run made
# with and without --checkpoint-every 1 (one save per iteration, so the
# difference over the saves made is the cost of a save; best of three
# each, one chain).  Prints bytes, ms per save, and the time of one
# iteration beside it.
#
#   sh bench/bench_ckpt.sh [N]        (N rows, default 20000)
#
# sbps's iterations are its events (bounces and refreshes), each a save.
set -u
drift=${DRIFT:-./drift}
src=$(cd "$(dirname "$0")/.." && pwd)
export DRIFT_PLUGIN_DIR="${DRIFT_PLUGIN_DIR:-$src/plugins/samplers/.libs:$src/plugins/models/.libs}"
N=${1:-20000}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-ckpt.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/gen_rows" "$src/examples/rowstore/gen_rows.c" -lm || exit 1
cc -O2 -o "$tmp/gen_sparse" "$src/examples/sparse/gen_sparse.c" -lm || exit 1
"$tmp/gen_rows" "$N" 54 7 >"$tmp/dense.csv"
"$tmp/gen_sparse" "$N" 40000 40 7 >"$tmp/sparse.libsvm"
cat >"$tmp/dense.drift" <<'EOF'
rows  { x : vector[D]  y : int }
param { w : vector[D] }
prior { w ~ normal(0, sqrt(10)) }
datum { y ~ bernoulli_logit(dot(x, w)) }
EOF
cp "$src/examples/sparse/sparse_logistic.drift" "$tmp/sparse.drift"

now() { date +%s.%N; }

# best of three wall seconds of: drift sample ... "$@"
best() {
    b=
    for r in 1 2 3; do
        rm -rf "$tmp/run"
        mkdir "$tmp/run"
        t0=$(now)
        "$drift" sample "$@" --quiet --chains 1 --seed 5 --out "$tmp/run/o.csv" \
            2>/dev/null || { echo "FAIL: drift sample $*" >&2; echo nan; return; }
        t1=$(now)
        b=$(echo "$t0 $t1 ${b:-}" | awk '{ t = $2 - $1; if ($3 == "" || t < $3) print t; else print $3 }')
    done
    echo "$b"
}

# the state file's size: a run stopped (SIGINT) once it has saved
state_bytes() {
    rm -rf "$tmp/run"
    mkdir "$tmp/run"
    "$drift" sample "$@" --quiet --chains 1 --seed 5 --out "$tmp/run/s.csv" \
        --checkpoint-every 1 2>/dev/null &
    p=$!
    n=0
    while [ ! -f "$tmp/run/s.ckpt/chain_1.state" ] && [ $n -lt 1200 ]; do
        sleep 0.05
        n=$((n + 1))
    done
    sleep 0.2
    kill -INT $p 2>/dev/null
    wait $p 2>/dev/null
    if [ -f "$tmp/run/s.ckpt/chain_1.state" ]; then
        stat -c %s "$tmp/run/s.ckpt/chain_1.state"
    else
        echo nan
    fi
}

printf '%-8s %-8s %7s %12s %10s %10s\n' data sampler iters state_bytes \
    ms/save ms/iter
for set in dense sparse; do
    for spec in "sgld 2000" "sghmc 2000" "tmu-rr 2000" "sbps 400" \
                "mala 400" "nuts 200"; do
        s=${spec% *}
        it=${spec#* }
        # d = 40,000: fewer iterations, and a draw kept every 50 (a row
        # of 40,000 numbers per iteration would time the output instead)
        thin=1
        if [ "$set" = sparse ]; then
            thin=50
            case $s in
            nuts) it=40 thin=10 ;;
            mala) it=100 ;;
            sbps) it=40 ;;
            *) it=400 ;;
            esac
        fi
        case $set in
        dense) m="$tmp/dense.drift" d="$tmp/dense.csv" ;;
        *) m="$tmp/sparse.drift" d="$tmp/sparse.libsvm" ;;
        esac
        if [ "$s" = sbps ]; then
            # draws every --thin time units: few of them at d = 40,000
            budget="--passes $it"
            [ "$set" = sparse ] && budget="$budget --thin 100"
        else
            budget="--iter $it --warmup 0 --thin $thin"
        fi
        # shellcheck disable=SC2086
        plain=$(best "$m" --data "$d" --sampler $s $budget)
        # shellcheck disable=SC2086
        ck=$(best "$m" --data "$d" --sampler $s $budget --checkpoint-every 1)
        # iterations (saves) actually made, from the account line
        # shellcheck disable=SC2086
        iters=$("$drift" sample "$m" --data "$d" --sampler $s $budget \
            --chains 1 --seed 5 --out "$tmp/run/c.csv" 2>&1 |
            sed -n 's/.*chain 1: \([0-9]*\) iterations.*/\1/p')
        # shellcheck disable=SC2086
        bytes=$(state_bytes "$m" --data "$d" --sampler $s $budget)
        echo "$set $s $iters $bytes $plain $ck" | awk '{
            ms = ($6 - $5) / $3 * 1000; it = $5 / $3 * 1000
            printf "%-8s %-8s %7d %12s %10.3f %10.3f\n", $1, $2, $3, $4, ms, it }'
    done
done
