#!/bin/sh
# stream-bench.sh: one cyclic SGLD data pass over a row store that is not
# in the page cache, against `cat FILE > /dev/null` on the same file (the
# disk's sequential limit), and random access for contrast.  Each run
# starts cold: the store's pages are evicted from the page cache
# (posix_fadvise DONTNEED through dd's nocache flag: no root needed, and
# other files' pages stay), and the runs are bounded by a memory cgroup
# (v1 or v2), made under this shell's own so that the limits above it
# still hold: in it the store is larger than half the memory available,
# which is what makes drift release the stretches it has passed.
#
# usage: examples/rowstore/stream-bench.sh [ROWS] [LIMIT_MB]
#   ROWS      rows of y,x.1..x.54 (default 8000000: a 3.5 GB row store)
#   LIMIT_MB  memory cgroup limit (default 1024)
# Run from the top of a built tree (drift in ./drift or on PATH).  Writes
# stream-bench.csv (what,seconds,MB_per_s) in the current directory, and
# a line "memory bound: ..." saying which bound the runs had.  WORK
# (default examples/rowstore/work) keeps the store, big-ROWS.drs, between
# runs.
set -eu
ROWS=${1:-8000000}
LIMIT=${2:-1024}
top=$(cd "$(dirname "$0")/../.." && pwd)
DRIFT=${DRIFT:-$top/drift}
export DRIFT_PLUGIN_DIR=${DRIFT_PLUGIN_DIR:-$top/plugins/samplers/.libs:$top/plugins/models/.libs}
work=${WORK:-$top/examples/rowstore/work}
mkdir -p "$work"
cc -O2 -o "$work/gen_rows" "$top/examples/rowstore/gen_rows.c" -lm

store=$work/big-$ROWS.drs
if [ ! -f "$store" ]; then
    echo "generating $ROWS rows and converting (streaming from a pipe)..."
    /usr/bin/time -f "convert: %e s, peak RSS %M KB" \
        sh -c "'$work/gen_rows' $ROWS 54 | '$DRIFT' data convert /dev/stdin '$store'"
fi
"$DRIFT" data info "$store"
bytes=$(stat -c %s "$store")

# A memory cgroup for the measurements, a child of this shell's own (v1:
# the memory controller's path in /proc/self/cgroup; v2: the "0::" path),
# so that it nests inside whatever bounds this shell already.
cg=""
bound=""
v1=$(sed -n 's/^[0-9]*:\([^:]*,\)\{0,1\}memory\(,[^:]*\)\{0,1\}:\(.*\)$/\3/p' /proc/self/cgroup)
v2=$(sed -n 's/^0:://p' /proc/self/cgroup)
if [ -n "$v1" ] && [ -d "/sys/fs/cgroup/memory$v1" ]; then
    cg=/sys/fs/cgroup/memory${v1%/}/drift-stream-bench-$$
    if mkdir "$cg" 2>/dev/null &&
        echo $((LIMIT * 1024 * 1024)) 2>/dev/null > "$cg/memory.limit_in_bytes"; then
        bound="a $LIMIT MB memory cgroup (v1, $cg)"
    else
        bound="none: cannot make a v1 memory cgroup at $cg"
        rmdir "$cg" 2>/dev/null || true
        cg=""
    fi
elif [ -n "$v2" ] && [ -f "/sys/fs/cgroup${v2%/}/cgroup.controllers" ]; then
    # v2 puts processes only in leaves: a parent that holds processes
    # cannot enable the memory controller for a child (no delegation).
    cg=/sys/fs/cgroup${v2%/}/drift-stream-bench-$$
    if grep -qw memory "/sys/fs/cgroup${v2%/}/cgroup.subtree_control" 2>/dev/null ||
        echo +memory 2>/dev/null > "/sys/fs/cgroup${v2%/}/cgroup.subtree_control"; then
        if mkdir "$cg" 2>/dev/null &&
            echo $((LIMIT * 1024 * 1024)) 2>/dev/null > "$cg/memory.max"; then
            bound="a $LIMIT MB memory cgroup (v2, $cg)"
        else
            bound="none: cannot make a v2 memory cgroup at $cg"
            rmdir "$cg" 2>/dev/null || true
            cg=""
        fi
    else
        bound="none: the memory controller cannot be enabled below /sys/fs/cgroup${v2%/} (cgroup v2 without delegation)"
        cg=""
    fi
else
    bound="none: no memory cgroup hierarchy found"
fi
[ -n "$cg" ] && trap 'rmdir "$cg" 2>/dev/null || true' EXIT
# Some kernels (seen in a Firecracker VM) charge file pages to a memory
# cgroup as unreclaimable shared memory, so the cgroup OOM-kills a plain
# read; then measure without it and say how much the page cache holds.
if [ -n "$cg" ] && ! sh -c 'echo $$ > "$0/cgroup.procs"; exec dd if="$1" of=/dev/null bs=1M count='$((2 * LIMIT))' 2>/dev/null' "$cg" "$store"; then
    bound="none: the memory cgroup cannot bound the page cache here (a read in it was killed)"
    rmdir "$cg" 2>/dev/null || true
    cg=""
fi
echo "memory bound: $bound"
[ -n "$cg" ] || echo "warning: no memory bound; the store may fit in memory, and then drift keeps it mapped" >&2
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
# Every measurement starts with the store out of the page cache: its
# pages are evicted (written ones first), the rest of the cache left be.
cold() {
    sync "$store"
    dd if="$store" iflag=nocache count=0 status=none
}
measure "cat" sh -c "cat '$store' > /dev/null"
rows=$("$DRIFT" data info "$store" | awk '/^rows:/ {print $2}')
# The pass alone: under a wall-clock budget (one that never binds) drift
# skips its check of a given step size, whose pilot chains would read the
# store too, beyond the one pass measured.
measure "drift sgld, cyclic access, 1 pass" "$DRIFT" sample --chains 1 --init 0 --model logistic \
    --data "$store" --sampler sgld --set h=1e-8 --batch 1000 --access ca \
    --passes 1 --seconds 86400 --thin 1000000 --seed 1 --out "$work/ca.csv" --quiet
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
