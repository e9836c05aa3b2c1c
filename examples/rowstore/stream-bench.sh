#!/bin/sh
# stream-bench.sh: one cyclic SGLD data pass over a row store that is not
# in the page cache, against `cat FILE > /dev/null` on the same file (the
# disk's sequential limit), and random access for contrast.  Each run
# starts cold: the page cache is dropped (needs root), or bounded with a
# memory cgroup where dropping is not allowed (cgroup v1 or v2).
#
# usage: examples/rowstore/stream-bench.sh [ROWS] [LIMIT_MB]
#   ROWS      rows of y,x.1..x.54 (default 8000000: a 3.5 GB row store)
#   LIMIT_MB  memory cgroup limit (default 1024)
# Run from the top of a built tree (drift in ./drift or on PATH).  Writes
# stream-bench.csv (what,seconds,MB_per_s) in the current directory.
set -eu
ROWS=${1:-8000000}
LIMIT=${2:-1024}
top=$(cd "$(dirname "$0")/../.." && pwd)
DRIFT=${DRIFT:-$top/drift}
export DRIFT_PLUGIN_DIR=${DRIFT_PLUGIN_DIR:-$top/plugins/samplers/.libs:$top/plugins/models/.libs}
work=${WORK:-$top/examples/rowstore/work}
mkdir -p "$work"
cc -O2 -o "$work/gen_rows" "$top/examples/rowstore/gen_rows.c" -lm

store=$work/big.drs
if [ ! -f "$store" ]; then
    echo "generating $ROWS rows and converting (streaming from a pipe)..."
    /usr/bin/time -f "convert: %e s, peak RSS %M KB" \
        sh -c "'$work/gen_rows' $ROWS 54 | '$DRIFT' data convert /dev/stdin '$store'"
fi
"$DRIFT" data info "$store"
bytes=$(stat -c %s "$store")

# A memory cgroup for the measurements.
cg=""
if [ -d /sys/fs/cgroup/memory ]; then
    cg=/sys/fs/cgroup/memory/drift-stream-bench
    mkdir -p "$cg"
    echo $((LIMIT * 1024 * 1024)) > "$cg/memory.limit_in_bytes"
elif [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    cg=/sys/fs/cgroup/drift-stream-bench
    mkdir -p "$cg"
    echo $((LIMIT * 1024 * 1024)) > "$cg/memory.max"
else
    echo "no memory cgroup: results may be served from the page cache" >&2
fi
# Some kernels (seen in a Firecracker VM) charge file pages to a memory
# cgroup as unreclaimable shared memory, so the cgroup OOM-kills a plain
# read; then measure without it and say how much the page cache holds.
if [ -n "$cg" ] && ! sh -c 'echo $$ > "$0/cgroup.procs"; exec dd if="$1" of=/dev/null bs=1M count='$((2 * LIMIT))' 2>/dev/null' "$cg" "$store"; then
    echo "the memory cgroup cannot bound the page cache here (a read was killed): measuring without it" >&2
    rmdir "$cg" 2>/dev/null || true
    cg=""
fi
grep -E '^(MemTotal|Cached):' /proc/meminfo
inside() { # runs "$@" inside the cgroup
    if [ -n "$cg" ]; then
        sh -c 'echo $$ > "$0/cgroup.procs"; shift; exec "$@"' "$cg" x "$@"
    else
        "$@"
    fi
}
now() { date +%s.%N; }

out=stream-bench.csv
echo "what,seconds,MB_per_s" > "$out"
measure() { # what command...
    what=$1
    shift
    cold
    t0=$(now)
    inside "$@"
    t1=$(now)
    awk -v w="$what" -v a="$t0" -v b="$t1" -v n="$bytes" \
        'BEGIN { s = b - a; printf "%s,%.3f,%.1f\n", w, s, n / s / 1e6 }' >> "$out"
    tail -n 1 "$out"
}
# Every measurement starts with the file out of the page cache: dropped by
# the kernel when we may (root), else pushed out by the cgroup's bound.
cold() {
    sync
    if [ -w /proc/sys/vm/drop_caches ]; then
        echo 1 > /proc/sys/vm/drop_caches
    elif [ -z "$cg" ]; then
        echo "warning: cannot drop the page cache; later runs may read from memory" >&2
    fi
}
measure "cat" sh -c "cat '$store' > /dev/null"
rows=$("$DRIFT" data info "$store" | awk '/^rows:/ {print $2}')
measure "drift sgld, cyclic access, 1 pass" "$DRIFT" sample --chains 1 --init 0 --model logistic \
    --data "$store" --sampler sgld --set h=1e-8 --batch 1000 --access ca \
    --passes 1 --thin 1000000 --seed 1 --out "$work/ca.csv" --quiet
measure "cat (again)" sh -c "cat '$store' > /dev/null"
# Random access: 1% of a pass, scaled to a whole pass in the report.
cold
t0=$(now)
inside "$DRIFT" sample --chains 1 --init 0 --model logistic --data "$store" --sampler sgld \
    --set h=1e-8 --batch 1000 --access ra --passes 0.01 --thin 1000000 \
    --seed 1 --out "$work/ra.csv" --quiet
t1=$(now)
awk -v a="$t0" -v b="$t1" -v n="$bytes" 'BEGIN { s = (b - a) * 100;
    printf "drift sgld, random access (1%% of a pass, x100),%.3f,%.1f\n", s, n / s / 1e6 }' >> "$out"
tail -n 1 "$out"
echo "rows: $rows; results in $out"
