#!/bin/sh
# sec63.sh: Zhang et al. (AAAI 2020), section 6.3: logistic regression on
# data larger than the memory the run may use, random access (RA) against
# cyclic access (CA), test log-likelihood against wall time.
#
# Data: gen_criteo.c, synthetic click logs shaped like Criteo's (40
# non-zeros a row: bias, 13 counts, 26 hashed categorical fields with
# Zipf-distributed categories; D = 10^6 hashed features; click rate 0.26),
# NTRAIN rows (default 10^7, a store of about 4.9 GB, 22% of Criteo's
# 45,840,617 rows; NTRAIN=45840617 gives Criteo's size, a 22.4 GB store
# made in about 14 minutes here) and 10^5 held-out rows, converted to a row
# store with drift data convert.  Model: drift's `logistic` C plugin on its
# sparse path, D = 10^6, prior N(0, PRIOR_SD^2 I) (default 1: the hidden
# weights have sds 0.3-0.5; the model's default N(0, 10 I) leaves the
# weights of rarely seen hashed features wide: in a trial at full size
# sgld's test lpd fell below the click rate's own as its draws spread).
#
# Memory: each run is put in a memory cgroup limited to LIMIT_MB (default
# 1024, about a fifth of the store; the paper had 8-16 GB for 27 GB), which
# bounds the page cache holding the mapped store as well as the process's
# own memory, after the store is evicted from the page cache; --max-memory MAXMEM (default
# 512M) bounds the sampler's own allocations inside it.  The script first
# tries systemd-run, then a cgroup v1 or v2 memory controller, and checks
# that the limit does bound the page cache (a read of twice the limit must
# be neither killed nor left charged above it); where nothing works it runs
# unbounded and says so.
#
# Runs: TMU (agld's time-based mixture update, tmu-ra / tmu-ca) and sgld,
# each with RA and CA (TMU where its memory, one scalar snapshot a row and
# 7 vectors of D, fits in MAXMEM), minibatch BATCH (default 10^4), step ETA (default
# 3e-7, the better of 1e-7 and 3e-7 in a half-pass pilot), for RUN_SECONDS
# of sampling each (default 720), test metrics every EVAL passes (default
# 0.2) over the draws kept so far (one draw every THIN_PASSES passes,
# default 0.1, after the first 0.2: each draw is a row of D numbers in
# the output, so few are
# kept; writing them, and the summary over 10^6 columns drift prints at
# the end, make up the difference between wall time and sampling time).
# Writes results/sec63.csv (seconds, passes, lpd, accuracy per run),
# results/sec63-memory.csv, results/sec63-summary.csv (throughput, last
# lpd, memory per run) and results/sec63.png (sec63-TAG.* when TAG is
# set); the data and runs stay in build/.
# Usage (after make, as root for the cgroup):
#   sh examples/agld/sec63.sh   (env: NTRAIN, NTEST, D, LIMIT_MB, MAXMEM, RUN_SECONDS, ETA, BATCH,
#                                EVAL, RUNS, TAG, PRIOR_SD, THIN_PASSES;
#                                PLOT_ONLY=1 redoes the tables and figure)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${BUILD:-$here/build}
NTRAIN=${NTRAIN:-10000000}; NTEST=${NTEST:-100000}; D=${D:-1000000}
LIMIT_MB=${LIMIT_MB:-1024}; MAXMEM=${MAXMEM:-512M}; RUN_SECONDS=${RUN_SECONDS:-720}
ETA=${ETA:-3e-7}; BATCH=${BATCH:-10000}; EVAL=${EVAL:-0.2}
PRIOR_SD=${PRIOR_SD:-1}; THIN_PASSES=${THIN_PASSES:-0.1}
# TMU keeps one scalar snapshot a row and 7 vectors of D (its design sums
# come from the engine's glm_design_sum, O(non-zeros) a row); by default it
# runs where that fits in --max-memory.
tmu_bytes=$(awk -v d="$D" -v b="$BATCH" -v n="$NTRAIN" 'BEGIN { c = b > 256 ? b : 256; printf "%.0f", 8 * (n + 3 * c + 7 * d) }')
max_bytes=$(echo "$MAXMEM" | awk '{ v = $0 + 0; u = toupper(substr($0, length($0))); m = u == "K" ? 1024 : u == "M" ? 1048576 : u == "G" ? 1073741824 : 1; printf "%.0f", v * m }')
if [ -z "${RUNS:-}" ]; then
    if [ "$tmu_bytes" -le "$max_bytes" ]; then RUNS="tmu-ca tmu-ra sgld-ca sgld-ra"
    else
        RUNS="sgld-ca sgld-ra"
        echo "sec63.sh: TMU needs $tmu_bytes bytes at NTRAIN = $NTRAIN, D = $D, more than --max-memory $MAXMEM: running sgld only (a larger MAXMEM, or RUNS=..., to run TMU)" >&2
    fi
fi
name=sec63${TAG:+-$TAG}   # results/$name.csv ...: TAG keeps configurations apart
drift=${DRIFT:-$top/drift}
export DRIFT_PLUGIN_DIR="$top/plugins/samplers/.libs:$top/plugins/models/.libs"
export DRIFT_PLUGIN_PATH=
mkdir -p "$build" "$here/results"
store=$build/criteo-$NTRAIN-$D.drs; test=$build/criteo-$NTRAIN-$D-test.svm
if [ "${PLOT_ONLY:-0}" = 1 ]; then   # the table and figure again from build/'s runs
    bytes=$(stat -c %s "$store" 2>/dev/null || echo 0); failed=""
else
if [ ! -s "$store" ]; then
    cc -O2 -o "$build/gen_criteo" "$here/gen_criteo.c" -lm
    "$build/gen_criteo" "$NTRAIN" "$NTEST" "$D" "$build/criteo-train.svm" "$test"
    /usr/bin/time -f "convert: %e s, peak RSS %M KB" "$drift" data convert "$build/criteo-train.svm" "$store"
    rm -f "$build/criteo-train.svm"
fi
bytes=$(stat -c %s "$store")
echo "store: $store, $bytes bytes; memory limit $LIMIT_MB MB; sampler memory bound $MAXMEM" >&2

# Evict the store's pages from the page cache (fadvise DONTNEED through dd's
# nocache flag), so that each run starts cold without dropping every other
# process's cache on a shared machine.
drop() { sync; dd if="$store" iflag=nocache count=0 2>/dev/null || echo "cannot evict the store from the page cache" >&2; }
# How to bound a command's memory: "systemd" (systemd-run --scope), a cgroup
# directory, or "" (none).
how=""; cg=""
limit=$((LIMIT_MB * 1024 * 1024))
if command -v systemd-run >/dev/null 2>&1 &&
   systemd-run --quiet --scope -p MemoryMax="$limit" true >/dev/null 2>&1; then
    how=systemd
else
    echo "systemd-run --scope does not work here (no systemd manager): trying cgroups directly" >&2
    # A child of this shell's own memory cgroup, so that the runs stay
    # inside whatever limits already hold this process.
    own1=$(awk -F: '$2 == "memory" { print $3 }' /proc/self/cgroup)
    own2=$(awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup)
    if [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw memory /sys/fs/cgroup/cgroup.controllers; then
        cg=/sys/fs/cgroup${own2%/}/drift-sec63-$$
        mkdir -p "$cg" 2>/dev/null && echo "$limit" > "$cg/memory.max" && how=cgroup2
    elif [ -d "/sys/fs/cgroup/memory$own1" ]; then
        cg=/sys/fs/cgroup/memory${own1%/}/drift-sec63-$$
        mkdir -p "$cg" 2>/dev/null && echo "$limit" > "$cg/memory.limit_in_bytes" && how=cgroup1
    fi
fi
[ -z "$cg" ] || trap 'rmdir "$cg" 2>/dev/null || true' EXIT
[ -z "$cg" ] || trap 'exit 130' INT TERM
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

mem=$here/results/$name-memory.csv
echo "run,limit,seconds_wall,peak_cgroup_bytes,peak_rss_kb,major_faults,exit_status" > "$mem"
failed=""
for r in $RUNS; do
    sampler=${r%-*}; access=${r#*-}
    case $sampler in tmu) sname=tmu-$access; sets="--set eta=$ETA" ;; sgld) sname=sgld; sets="--set h=$ETA" ;; esac
    per=$((NTRAIN / BATCH)); warm=$((per / 5))
    thin=$(awk -v p="$per" -v t="$THIN_PASSES" 'BEGIN { x = int(p * t); print x < 1 ? 1 : x }')
    echo "== $r ($how limit $LIMIT_MB MB)" >&2
    drop; reset_peak
    # shellcheck disable=SC2086
    { bounded /usr/bin/time -f "%e %M %F" -o "$build/$name-$r.time" "$drift" sample --model logistic \
        --model-set D=$D --model-set s=$PRIOR_SD --data "$store" --sampler "$sname" $sets --access "$access" --batch "$BATCH" \
        --seconds "$RUN_SECONDS" --warmup "$warm" --thin "$thin" --max-memory "$MAXMEM" --init 0 \
        --test "$test" --eval-every "$EVAL" --chains 1 --seed 63 --quiet \
        --out "$build/$name-$r.csv"; echo $? > "$build/$name-$r.rc"; } 2>&1 | grep -v warning >&2 || true
    rc=$(cat "$build/$name-$r.rc")
    [ "$rc" = 0 ] || { echo "sec63.sh: run $r failed (exit status $rc)" >&2; failed="$failed $r"; }
    # (time writes "Command exited with non-zero status" first when it did)
    set -- $(tail -n 1 "$build/$name-$r.time")
    echo "$r,${how:-none}:$LIMIT_MB,$1,$(peak),$2,$3,$rc" >> "$mem"
done
case $how in cgroup1|cgroup2) rmdir "$cg" 2>/dev/null || true ;; esac
fi
Rscript - "$build" "$here/results" "$RUNS" "$NTRAIN" "$LIMIT_MB" "$bytes" "$name" "$D" "$test" <<'REOF'
a <- commandArgs(TRUE); build <- a[1]; out <- a[2]; runs <- strsplit(a[3], " ")[[1]]; nm <- a[7]
res <- do.call(rbind, lapply(runs, function(r) {
  f <- file.path(build, sprintf("%s-%s_metrics.csv", nm, r)); if (!file.exists(f)) return(NULL)
  m <- read.csv(f, comment.char = "#"); m <- m[m$draws > 0, ]; if (!nrow(m)) return(NULL)
  data.frame(run = r, seconds = m$seconds, passes = m$passes, draws = m$draws, lpd = m$lpd, accuracy = m$accuracy)
}))
# Throughput from every metrics row, draws or not (a run under RA may not
# get through its burn-in), joined with the memory figures.
mem <- read.csv(file.path(out, paste0(nm, "-memory.csv")))
thr <- do.call(rbind, lapply(runs, function(r) {
  f <- file.path(build, sprintf("%s-%s_metrics.csv", nm, r)); if (!file.exists(f)) return(NULL)
  m <- read.csv(f, comment.char = "#"); if (!nrow(m)) return(NULL); o <- m[m$draws > 0, ]
  data.frame(run = r, seconds = max(m$seconds), passes = max(m$passes), passes_per_s = max(m$passes) / max(m$seconds),
             draws = max(m$draws), last_lpd = if (nrow(o)) tail(o$lpd, 1) else NA,
             last_accuracy = if (nrow(o)) tail(o$accuracy, 1) else NA)
}))
thr <- merge(thr, mem, by = "run", all = TRUE)
# The test set's click rate and what always predicting it scores.
lab <- as.numeric(sub("[ \t].*", "", readLines(a[9]))); p1 <- mean(lab > 0)
writeLines(c(sprintf("test rows %d, click rate %.4f", length(lab), p1),
             sprintf("constant predictor: accuracy %.4f, lpd %.4f", max(p1, 1 - p1), p1 * log(p1) + (1 - p1) * log(1 - p1))),
           file.path(out, paste0(nm, "-data.txt")))
write.csv(thr, file.path(out, paste0(nm, "-summary.csv")), row.names = FALSE, quote = FALSE)
print(thr, digits = 5)
if (is.null(res)) stop("sec63.sh: no run kept a draw (RUN_SECONDS too short for the burn-in of 0.2 passes?)")
write.csv(res, file.path(out, paste0(nm, ".csv")), row.names = FALSE, quote = FALSE)
allm <- do.call(rbind, lapply(runs, function(r) {
  f <- file.path(build, sprintf("%s-%s_metrics.csv", nm, r)); if (!file.exists(f)) return(NULL)
  m <- read.csv(f, comment.char = "#"); if (!nrow(m)) return(NULL)
  rbind(data.frame(run = r, seconds = 0, passes = 0), data.frame(run = r, seconds = m$seconds, passes = m$passes))
}))
png(file.path(out, paste0(nm, ".png")), width = 1500, height = 500, res = 110)
par(mfrow = c(1, 3), mar = c(4.2, 4.4, 3.2, 1), oma = c(0, 0, 1.5, 0))
cols <- c(`tmu-ca` = "red", `tmu-ra` = "darkred", `sgld-ca` = "blue", `sgld-ra` = "lightblue3")
ltys <- c(`tmu-ca` = 1, `tmu-ra` = 2, `sgld-ca` = 1, `sgld-ra` = 2)
ttl <- sprintf("AGLD 6.3: %s rows x D = %s (store %.2f GB) in a %s MB memory cgroup", format(as.numeric(a[4]), big.mark = ",", scientific = FALSE),
               format(as.numeric(a[8]), big.mark = ",", scientific = FALSE), as.numeric(a[6]) / 1e9, a[5])
# "passes" is grads__ / N: data passes for sgld, about twice them for TMU
# (its total refresh evaluates every row once more a pass).  The lpd axis
# stops at -1: a first draw far from the posterior (TMU's, taken before
# its snapshots cover a pass) would flatten every other curve.
ylo <- max(min(res$lpd), -1)
for (x in c("seconds", "passes")) {
  plot(NA, xlim = c(0, max(res[[x]])), ylim = c(ylo, max(res$lpd)), xlab = if (x == "seconds") "wall time (s)" else "gradient evaluations / N",
       ylab = "test log-likelihood per row", main = "test lpd (posterior predictive)")
  for (r in unique(res$run)) with(res[res$run == r, ], lines(get(x), lpd, col = cols[r], lty = ltys[r], lwd = 2))
  legend("bottomright", unique(res$run), col = cols[unique(res$run)], lty = ltys[unique(res$run)], lwd = 2, bty = "n")
}
plot(NA, xlim = c(0, max(allm$seconds)), ylim = c(0, max(allm$passes)), xlab = "wall time (s)", ylab = "gradient evaluations / N",
     main = "throughput (every run, draws or not)")
for (r in unique(allm$run)) with(allm[allm$run == r, ], lines(seconds, passes, col = cols[r], lty = ltys[r], lwd = 2))
legend("topleft", unique(allm$run), col = cols[unique(allm$run)], lty = ltys[unique(allm$run)], lwd = 2, bty = "n")
mtext(ttl, outer = TRUE, cex = 0.9)
invisible(dev.off())
REOF
[ -z "$failed" ] || { echo "sec63.sh: failed runs:$failed" >&2; exit 1; }
