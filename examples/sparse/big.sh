#!/bin/sh
# big.sh: the sparse .drift model on a row store larger than the memory it
# may use.  Writes N sparse rows (K of D features each) as LIBSVM, converts
# them to a row store, and runs one cyclic SGLD data pass with the .drift
# model (x : sparse_vector[D]) and with the C plugin `logistic`, each in a
# memory cgroup limited to LIMIT_MB where the kernel lets a cgroup bound the
# page cache (cgroup v1 or v2; otherwise without, and the script says so).
# Reports seconds, MB/s of the store, and the peak resident memory of each
# run split into anonymous (the model's and sampler's own) and file-backed
# (pages of the mapped store, which the kernel may drop at any time).
#
# usage: examples/sparse/big.sh [N] [D] [K] [LIMIT_MB] [BATCH]
#   defaults: 10000000 rows, D = 1000000, K = 20 (a 2.6 GB store), 1024 MB,
#   batch 5000
# Run from the top of a built tree.  Writes big.csv
# (what,seconds,MB_per_s,peak_anon_MB,peak_file_MB) in the current directory; the data go
# to examples/sparse/work (WORK=... to move them).  Not run by make check.
set -eu
N=${1:-10000000}
D=${2:-1000000}
K=${3:-20}
LIMIT=${4:-1024}
BATCH=${5:-5000}
top=$(cd "$(dirname "$0")/../.." && pwd)
DRIFT=${DRIFT:-$top/drift}
export DRIFT_PLUGIN_DIR=${DRIFT_PLUGIN_DIR:-$top/plugins/samplers/.libs:$top/plugins/models/.libs}
work=${WORK:-$top/examples/sparse/work}
mkdir -p "$work"
cc -O2 -o "$work/gen_sparse" "$top/examples/sparse/gen_sparse.c" -lm

store=$work/big-$N-$D-$K.drs
if [ ! -f "$store" ]; then
    echo "generating $N rows of $K features out of $D and converting..."
    "$work/gen_sparse" "$N" "$D" "$K" > "$work/big.libsvm"
    /usr/bin/time -f "convert: %e s, peak RSS %M KB" \
        "$DRIFT" data convert "$work/big.libsvm" "$store"
    rm -f "$work/big.libsvm"
fi
"$DRIFT" data info "$store"
bytes=$(stat -c %s "$store")

cg=""
if [ -d /sys/fs/cgroup/memory ]; then
    cg=/sys/fs/cgroup/memory/drift-sparse-big
    mkdir -p "$cg"
    echo $((LIMIT * 1024 * 1024)) > "$cg/memory.limit_in_bytes"
elif [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    cg=/sys/fs/cgroup/drift-sparse-big
    mkdir -p "$cg"
    echo $((LIMIT * 1024 * 1024)) > "$cg/memory.max"
else
    echo "no memory cgroup: the page cache may hold the whole store" >&2
fi
# Some kernels (seen in a Firecracker VM) charge file pages to a memory
# cgroup as unreclaimable, so the cgroup kills a plain read of the file;
# then run without it (the peaks below still tell the model's own memory
# from the mapped file's pages).
if [ -n "$cg" ] && ! sh -c 'echo $$ > "$0/cgroup.procs"; exec dd if="$1" of=/dev/null bs=1M count='$((2 * LIMIT))' 2>/dev/null' "$cg" "$store"; then
    echo "the memory cgroup cannot bound the page cache here (a read was killed): running without it" >&2
    rmdir "$cg" 2>/dev/null || true
    cg=""
fi
inside() { # replaces the (background) shell with the command
    if [ -n "$cg" ]; then
        exec sh -c 'echo $$ > "$0/cgroup.procs"; shift; exec "$@"' "$cg" x "$@"
    else
        exec "$@"
    fi
}
cold() {
    sync
    if [ -w /proc/sys/vm/drop_caches ]; then
        echo 1 > /proc/sys/vm/drop_caches 2>/dev/null || true
    fi
}
now() { date +%s.%N; }
out=big.csv
echo "what,seconds,MB_per_s,peak_anon_MB,peak_file_MB" > "$out"
# Runs a command, polling its resident memory: anonymous (the model's and
# sampler's own) and file-backed (pages of the mapped store).
measure() { # what command...
    what=$1
    shift
    cold
    t0=$(now)
    (inside "$@") &
    pid=$!
    anon=0
    file=0
    while kill -0 "$pid" 2>/dev/null; do
        set -- $(awk '/^RssAnon:/ {a = $2} /^RssFile:/ {f = $2}
                      END {print a + 0, f + 0}' "/proc/$pid/status" 2>/dev/null || echo 0 0)
        [ "${1:-0}" -gt "$anon" ] && anon=$1
        [ "${2:-0}" -gt "$file" ] && file=$2
        sleep 0.2
    done
    wait "$pid"
    t1=$(now)
    awk -v w="$what" -v a="$t0" -v b="$t1" -v n="$bytes" -v pa="$anon" \
        -v pf="$file" 'BEGIN { s = b - a; printf "%s,%.2f,%.1f,%.0f,%.0f\n",
        w, s, n / s / 1e6, pa / 1024, pf / 1024 }' >> "$out"
    tail -n 1 "$out"
}
echo "store: $bytes bytes; memory limit: ${cg:+$LIMIT MB}${cg:-none}"
measure "cat" sh -c "cat '$store' > /dev/null"
measure ".drift sparse_vector, sgld, cyclic, 1 pass" "$DRIFT" sample --chains 1 --init 0 \
    "$top/examples/sparse/sparse_logistic.drift" --data "$store" \
    --sampler sgld --set h=1e-7 --batch "$BATCH" --access ca --passes 1 \
    --thin 1000000 --seed 1 --out "$work/lang.csv" --quiet
measure "C plugin logistic, sgld, cyclic, 1 pass" "$DRIFT" sample --chains 1 --init 0 \
    --model logistic --data "$store" \
    --sampler sgld --set h=1e-7 --batch "$BATCH" --access ca --passes 1 \
    --thin 1000000 --seed 1 --out "$work/plugin.csv" --quiet
[ -n "$cg" ] && rmdir "$cg" 2>/dev/null || true
echo "results in $out"
