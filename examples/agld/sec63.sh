#!/bin/sh
# sec63.sh: Zhang et al. (AAAI 2020), section 6.3: logistic regression on
# data larger than the memory the run may use, random access (RA) against
# cyclic access (CA), test log-likelihood against wall time.
#
# Data: gen_criteo.c, synthetic click logs shaped like Criteo's (40
# non-zeros a row: bias, 13 counts, 26 hashed categorical fields with
# Zipf-distributed categories; D = 10^6 hashed features; click rate 0.26),
# NTRAIN rows (default 10^7, a store of about 4.9 GB: the size of 22% of
# Criteo's 45.8 million rows, the largest that lets four runs of a useful
# length fit in an hour here) and 10^5 held-out rows, converted to a row
# store with drift data convert.  Model: drift's `logistic` C plugin on its
# sparse path, D = 10^6, prior N(0, 10 I).
#
# Memory: each run is put in a memory cgroup limited to LIMIT_MB (default
# 1024, about a fifth of the store; the paper had 8-16 GB for 27 GB), which
# bounds the page cache holding the mapped store as well as the process's
# own memory, after the page cache is dropped; --max-memory MAXMEM (default
# 512M) bounds the sampler's own allocations inside it.  The script first
# tries systemd-run, then a cgroup v1 or v2 memory controller, and checks
# that the limit does bound the page cache (a read of twice the limit must
# be neither killed nor left charged above it); where nothing works it runs
# unbounded and says so.
#
# Runs: TMU (agld's time-based mixture update, tmu-ra / tmu-ca) and sgld,
# each with RA and CA, minibatch BATCH (default 10^4), step ETA (default
# 3e-7, the better of 1e-7 and 3e-7 in a half-pass pilot), for RUN_SECONDS
# of sampling each (default 720), test metrics every EVAL passes (default
# 0.2) over the draws kept so far (one draw every 0.1 pass after the first
# 0.2 passes: each draw is a row of 10^6 numbers in the output, so few are
# kept; writing them, and the summary over 10^6 columns drift prints at
# the end, make up the difference between wall time and sampling time).  Writes results/sec63.csv (seconds, passes, lpd,
# accuracy per run), results/sec63-memory.csv and results/sec63.png; the
# data and runs stay in build/.
# Usage (after make, as root for the cgroup):
#   sh examples/agld/sec63.sh   (env: NTRAIN, LIMIT_MB, MAXMEM, RUN_SECONDS, ETA, BATCH, EVAL, RUNS)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${BUILD:-$here/build}
NTRAIN=${NTRAIN:-10000000}; NTEST=${NTEST:-100000}; D=${D:-1000000}
LIMIT_MB=${LIMIT_MB:-1024}; MAXMEM=${MAXMEM:-512M}; RUN_SECONDS=${RUN_SECONDS:-720}
ETA=${ETA:-3e-7}; BATCH=${BATCH:-10000}; EVAL=${EVAL:-0.2}
RUNS=${RUNS:-"tmu-ca tmu-ra sgld-ca sgld-ra"}
drift=${DRIFT:-$top/drift}
export DRIFT_PLUGIN_DIR="$top/plugins/samplers/.libs:$top/plugins/models/.libs"
export DRIFT_PLUGIN_PATH=
mkdir -p "$build" "$here/results"
store=$build/criteo-$NTRAIN-$D.drs; test=$build/criteo-$NTRAIN-$D-test.svm
if [ ! -s "$store" ]; then
    cc -O2 -o "$build/gen_criteo" "$here/gen_criteo.c" -lm
    "$build/gen_criteo" "$NTRAIN" "$NTEST" "$D" "$build/criteo-train.svm" "$test"
    /usr/bin/time -f "convert: %e s, peak RSS %M KB" "$drift" data convert "$build/criteo-train.svm" "$store"
    rm -f "$build/criteo-train.svm"
fi
bytes=$(stat -c %s "$store")
echo "store: $store, $bytes bytes; memory limit $LIMIT_MB MB; sampler memory bound $MAXMEM" >&2

drop() { sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || echo "cannot drop the page cache (not root?)" >&2; }
# How to bound a command's memory: "systemd" (systemd-run --scope), a cgroup
# directory, or "" (none).
how=""; cg=""
limit=$((LIMIT_MB * 1024 * 1024))
if command -v systemd-run >/dev/null 2>&1 &&
   systemd-run --quiet --scope -p MemoryMax="$limit" true >/dev/null 2>&1; then
    how=systemd
else
    echo "systemd-run --scope does not work here (no systemd manager): trying cgroups directly" >&2
    if [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw memory /sys/fs/cgroup/cgroup.controllers; then
        cg=/sys/fs/cgroup/drift-sec63; mkdir -p "$cg" && echo "$limit" > "$cg/memory.max" && how=cgroup2
    elif [ -d /sys/fs/cgroup/memory ]; then
        cg=/sys/fs/cgroup/memory/drift-sec63
        mkdir -p "$cg" && echo "$limit" > "$cg/memory.limit_in_bytes" && how=cgroup1
    fi
fi
bounded() { # runs "$@" under the limit
    case $how in
    systemd) systemd-run --quiet --scope -p MemoryMax="$limit" "$@" ;;
    cgroup1|cgroup2) sh -c 'echo $$ > "$0/cgroup.procs"; exec "$@"' "$cg" "$@" ;;
    *) "$@" ;;
    esac
}
peak() { case $how in cgroup1) cat "$cg/memory.max_usage_in_bytes" ;; cgroup2) cat "$cg/memory.peak" 2>/dev/null || echo NA ;; *) echo NA ;; esac; }
reset_peak() { [ "$how" = cgroup1 ] && echo 0 > "$cg/memory.max_usage_in_bytes" 2>/dev/null || true; }
if [ -n "$how" ]; then
    drop; reset_peak
    if bounded dd if="$store" of=/dev/null bs=1M count=$((2 * LIMIT_MB)) 2>/dev/null; then
        p=$(peak); echo "the $how limit bounds the page cache: a read of $((2 * LIMIT_MB)) MB peaked at $p bytes" >&2
    else
        echo "the $how limit kills a plain read of the store (file pages charged as unreclaimable): running unbounded" >&2
        how=""
    fi
else
    echo "no way to bound memory found: running unbounded (the page cache may hold the whole store)" >&2
fi

mem=$here/results/sec63-memory.csv
echo "run,limit,seconds_wall,peak_cgroup_bytes,peak_rss_kb,major_faults" > "$mem"
for r in $RUNS; do
    sampler=${r%-*}; access=${r#*-}
    case $sampler in tmu) sname=tmu-$access; sets="--set eta=$ETA" ;; sgld) sname=sgld; sets="--set h=$ETA" ;; esac
    per=$((NTRAIN / BATCH)); warm=$((per / 5)); thin=$((per / 10)); [ "$thin" -ge 1 ] || thin=1
    echo "== $r ($how limit $LIMIT_MB MB)" >&2
    drop; reset_peak
    # shellcheck disable=SC2086
    bounded /usr/bin/time -f "%e %M %F" -o "$build/sec63-$r.time" "$drift" sample --model logistic \
        --model-set D=$D --data "$store" --sampler "$sname" $sets --access "$access" --batch "$BATCH" \
        --seconds "$RUN_SECONDS" --warmup "$warm" --thin "$thin" --max-memory "$MAXMEM" --init 0 \
        --test "$test" --eval-every "$EVAL" --chains 1 --seed 63 --quiet \
        --out "$build/sec63-$r.csv" 2>&1 | grep -v warning >&2 || true
    set -- $(cat "$build/sec63-$r.time")
    echo "$r,${how:-none}:$LIMIT_MB,$1,$(peak),$2,$3" >> "$mem"
done
[ "$how" = cgroup1 ] || [ "$how" = cgroup2 ] && rmdir "$cg" 2>/dev/null || true
Rscript - "$build" "$here/results" "$RUNS" "$NTRAIN" "$LIMIT_MB" "$bytes" <<'REOF'
a <- commandArgs(TRUE); build <- a[1]; out <- a[2]; runs <- strsplit(a[3], " ")[[1]]
res <- do.call(rbind, lapply(runs, function(r) {
  f <- file.path(build, sprintf("sec63-%s_metrics.csv", r)); if (!file.exists(f)) return(NULL)
  m <- read.csv(f, comment.char = "#"); m <- m[m$draws > 0, ]
  data.frame(run = r, seconds = m$seconds, passes = m$passes, draws = m$draws, lpd = m$lpd, accuracy = m$accuracy)
}))
write.csv(res, file.path(out, "sec63.csv"), row.names = FALSE, quote = FALSE)
mem <- read.csv(file.path(out, "sec63-memory.csv"))
print(mem)
for (r in unique(res$run)) { o <- res[res$run == r, ]
  cat(sprintf("%-8s %6.0f s: %5.2f passes (%.3f passes/s), test lpd %.5f, accuracy %.4f\n", r, max(o$seconds),
              max(o$passes), max(o$passes) / max(o$seconds), tail(o$lpd, 1), tail(o$accuracy, 1))) }
png(file.path(out, "sec63.png"), width = 1100, height = 480, res = 110)
par(mfrow = c(1, 2), mar = c(4.2, 4.4, 2.5, 1))
cols <- c(`tmu-ca` = "red", `tmu-ra` = "darkred", `sgld-ca` = "blue", `sgld-ra` = "lightblue3")
ltys <- c(`tmu-ca` = 1, `tmu-ra` = 2, `sgld-ca` = 1, `sgld-ra` = 2)
ttl <- sprintf("%s rows (%.1f GB) under %s MB", format(as.numeric(a[4]), big.mark = ","), as.numeric(a[6]) / 1e9, a[5])
for (x in c("seconds", "passes")) {
  plot(NA, xlim = c(0, max(res[[x]])), ylim = range(res$lpd), xlab = if (x == "seconds") "wall time (s)" else "data passes",
       ylab = "test log-likelihood per row", main = ttl)
  for (r in unique(res$run)) with(res[res$run == r, ], lines(get(x), lpd, col = cols[r], lty = ltys[r], lwd = 2))
  legend("bottomright", unique(res$run), col = cols[unique(res$run)], lty = ltys[unique(res$run)], lwd = 2, bty = "n")
}
invisible(dev.off())
REOF
