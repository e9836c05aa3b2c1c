#!/bin/sh
# sgnht-grid.sh: Ding et al. (NIPS 2014) section 5.2, the Bayesian neural
# network: sgnht against sghmc and sgld over the paper's grid of step sizes,
# a in {0.001, 0.01} and eta in {2, 4, 6, 8} x 10^-7, on Fashion-MNIST in
# MNIST's place (same sizes; fmnist-data.sh), the paper's 784-100-10 network
# (bnn.drift, d = 79,510), minibatches of 100, from U(-0.1, 0.1) weights,
# PASSES data passes (default 10), the first 2 as burn-in, 4 draws kept a
# pass; test error and lpd of the posterior predictive over the draws kept so
# far, every pass (--test, --eval-every 1).  One run per sampler, setting
# and seed (SEEDS, default "1 2 3"; the seed sets the initial weights too).
#
# The paper's (eta, a) are SGHMC's parameterisation (Chen, Fox and Guestrin
# 2014): v <- (1 - a) v - eta grad U~ + N(0, 2 a eta), theta <- theta + v.
# With v = h r that is drift's sghmc with scheme=symplectic (theta moves
# with the new momentum, as in the paper) at h = sqrt(eta) and gamma = a / h,
# and drift's sgnht (whose thermostat xi plays gamma, started at A) at
# h = sqrt(eta) and A = a / h.  SGLD is SGHMC's a = 1 limit,
# theta <- theta - eta grad U~ + N(0, 2 eta), so drift's sgld runs at
# h = eta (the same learning rate on the summed potential; it has no a, so
# its runs are shared by both panels).
#
# Writes results/sgnht-grid.csv (one row a run: the final test error and
# lpd, whether it diverged: drift's error or a non-finite metric, and for
# sgnht its thermostat xi at the last draw, the friction it settled on),
# results/sgnht-grid-passes.csv (every run's metrics every pass) and
# results/sgnht-grid.png; the draws are deleted after each run.
# Usage (after make): sh examples/bnn/sgnht-grid.sh   (env: PASSES, SEEDS,
# JOBS runs at a time (default 1), SAMPLERS, AS, ETAS; RUN=0 only tabulates
# and plots what has run).  Runs already done (their .status files in
# build/grid) are not rerun; a rerun gives the same metrics (checked on 4).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${BUILD:-$here/build}
grid=$build/grid
drift=${DRIFT:-$top/drift}
PASSES=${PASSES:-10}; HIDDEN=${HIDDEN:-100}
export DRIFT_PLUGIN_DIR="$top/plugins/samplers/.libs:$top/plugins/models/.libs"
export DRIFT_PLUGIN_PATH=

# One run: sgnht-grid.sh one SAMPLER A ETA SEED
if [ "${1:-}" = one ]; then
    s=$2; a=$3; eta=$4; seed=$5; N=60000
    per=$((N / 100)); warm=$((2 * per)); thin=$((per / 4))
    h=$(awk -v e="$eta" 'BEGIN { printf "%.6g", sqrt(e) }')
    f=$(awk -v a="$a" -v h="$h" 'BEGIN { printf "%.6g", a / h }')
    case $s in
    sgld) sets="--set h=$eta" ;;
    sghmc) sets="--set h=$h --set gamma=$f --set scheme=symplectic" ;;
    sgnht) sets="--set h=$h --set A=$f" ;;
    *) echo "sgnht-grid.sh: unknown sampler $s" >&2; exit 2 ;;
    esac
    tag=$s-a$a-eta$eta-s$seed
    t0=$(date +%s.%N)
    rc=0
    # shellcheck disable=SC2086
    "$drift" sample "$here/bnn.drift" --data "$build/fmnist-train.drs" \
        --data-set H="$HIDDEN" --data-set K=10 --init 0.1 --sampler "$s" $sets \
        --batch 100 --passes "$PASSES" --warmup $warm --thin $thin \
        --test "$build/fmnist-test.drs" --eval-every 1 --chains 1 --seed "$seed" \
        --quiet --out "$grid/$tag.csv" > "$grid/$tag.log" 2>&1 || rc=$?
    t1=$(date +%s.%N)
    # sgnht's thermostat at the last draw kept: the friction it settled on
    if [ "$s" = sgnht ] && [ -s "$grid/$tag.csv" ]; then
        awk -F, '/^#/ { next } !h { for (i = 1; i <= NF; i++) if ($i == "xi__") x = i; h = 1; next }
                 { v = $x } END { print v }' "$grid/$tag.csv" > "$grid/$tag.xi"
    fi
    rm -f "$grid/$tag.csv"
    echo "$s,$a,$eta,$h,$f,$seed,$rc,$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')" \
        > "$grid/$tag.status"
    echo "   $tag: rc $rc" >&2
    exit 0
fi

mkdir -p "$grid" "$here/results"
. "$here/fmnist-data.sh"
SEEDS=${SEEDS:-"1 2 3"}; JOBS=${JOBS:-1}
SAMPLERS=${SAMPLERS:-"sgnht sghmc sgld"}
AS=${AS:-"0.001 0.01"}; ETAS=${ETAS:-"2e-7 4e-7 6e-7 8e-7"}
if [ "${RUN:-1}" != 0 ]; then
    # seed-major, so that an interrupted grid is whole at fewer seeds
    for seed in $SEEDS; do for eta in $ETAS; do for s in $SAMPLERS; do
        if [ "$s" = sgld ]; then as=-; else as=$AS; fi
        for a in $as; do
            [ -s "$grid/$s-a$a-eta$eta-s$seed.status" ] || echo "$s $a $eta $seed"
        done
    done; done; done | xargs -r -P "$JOBS" -L 1 sh "$0" one
fi

Rscript - "$grid" "$here/results" <<'REOF'
a <- commandArgs(TRUE); grid <- a[1]; out <- a[2]
st <- list.files(grid, "\\.status$", full.names = TRUE)
if (!length(st)) stop("no runs in ", grid)
runs <- do.call(rbind, lapply(st, function(f) read.csv(f, header = FALSE,
  col.names = c("sampler", "a", "eta", "h", "friction", "seed", "rc", "seconds"),
  colClasses = c("character", "character", "character", "numeric", "numeric", "numeric",
                 "integer", "numeric"))))
runs$eta_tag <- runs$eta; runs$eta <- as.numeric(runs$eta)
per <- list(); fin <- list()
for (i in seq_len(nrow(runs))) {
  r <- runs[i, ]
  tag <- sprintf("%s-a%s-eta%s-s%d", r$sampler, r$a, r$eta_tag, r$seed)
  mf <- file.path(grid, paste0(tag, "_metrics.csv"))
  m <- if (file.exists(mf)) read.csv(mf, comment.char = "#") else NULL
  m <- if (!is.null(m)) m[m$draws > 0, ] else NULL
  if (!is.null(m) && nrow(m))
    per[[i]] <- data.frame(r[c("sampler", "a", "eta", "seed")], passes = m$passes,
                           draws = m$draws, test_error = 1 - m$accuracy, lpd = m$lpd,
                           row.names = NULL)
  last <- if (!is.null(m) && nrow(m)) m[nrow(m), ] else NULL
  err <- if (is.null(last)) NA else 1 - last$accuracy
  lpd <- if (is.null(last)) NA else last$lpd
  xf <- file.path(grid, paste0(tag, ".xi"))
  xi <- if (file.exists(xf)) suppressWarnings(as.numeric(readLines(xf, 1))) else NA
  fin[[i]] <- data.frame(r[names(r) != "eta_tag"], xi_end = xi,
                         passes = if (is.null(last)) 0 else last$passes,
                         test_error = err, lpd = lpd,
                         diverged = r$rc != 0 || !is.finite(err) || !is.finite(lpd))
}
fin <- do.call(rbind, fin); per <- do.call(rbind, per)
fin <- fin[order(fin$sampler, fin$a, fin$eta, fin$seed), ]
write.csv(fin, file.path(out, "sgnht-grid.csv"), row.names = FALSE, quote = FALSE)
if (!is.null(per))
  write.csv(per, file.path(out, "sgnht-grid-passes.csv"), row.names = FALSE, quote = FALSE)
# summary: mean, min and max over seeds
for (k in split(fin, list(fin$sampler, fin$a, fin$eta), drop = TRUE))
  cat(sprintf("%-6s a %-5s eta %.0e (h %.3g, friction %6.3g): %d seeds, %d diverged; test error %s; lpd %s\n",
    k$sampler[1], k$a[1], k$eta[1], k$h[1], k$friction[1], nrow(k), sum(k$diverged),
    paste(sprintf("%.4f", k$test_error), collapse = " "), paste(sprintf("%.4f", k$lpd), collapse = " ")))
png(file.path(out, "sgnht-grid.png"), width = 1100, height = 850, res = 110)
par(mfrow = c(2, 2), mar = c(4.2, 4.4, 2.2, 1))
cols <- c(sgnht = "brown", sghmc = "blue", sgld = "orange")
ok <- fin[!fin$diverged, ]
for (what in c("test_error", "lpd")) for (av in c("0.001", "0.01")) {
  d <- fin[fin$sampler == "sgld" | fin$a == av, ]
  o <- d[!d$diverged, ]
  yl <- if (nrow(ok)) range(ok[[what]]) else c(0, 1)
  if (what == "test_error") yl[2] <- yl[2] + 0.35 * diff(yl)   # room for the legend
  plot(NA, xlim = c(1.5e-7, 8.5e-7), ylim = yl, xaxt = "n",
       xlab = "eta, x 1e-7 (SGHMC's parameterisation; sgld at h = eta)",
       ylab = if (what == "lpd") "test log-likelihood per image" else "test error",
       main = sprintf("a = %s: test %s after %d passes", av,
                      if (what == "lpd") "lpd" else "error", max(fin$passes)))
  axis(1, at = c(2, 4, 6, 8) * 1e-7, labels = c(2, 4, 6, 8))
  for (s in names(cols)) {
    e <- o[o$sampler == s, ]
    if (!nrow(e)) next
    points(e$eta, e[[what]], col = cols[s], pch = 1, cex = 0.7)
    mm <- aggregate(e[[what]], list(eta = e$eta), mean)
    lines(mm$eta, mm$x, col = cols[s], lwd = 2, type = "o", pch = 19)
    dv <- d[d$sampler == s & d$diverged, ]
    if (nrow(dv)) points(dv$eta, rep(yl[if (what == "lpd") 1 else 2], nrow(dv)), pch = 4, col = cols[s], cex = 1.5)
  }
  if (what == "test_error" && av == "0.001")
    legend("topleft", c(names(cols), "x: diverged", "o: one seed"),
         col = c(cols, "black", "black"), lwd = c(2, 2, 2, NA, NA), pch = c(19, 19, 19, 4, 1),
         bty = "n", cex = 0.8)
}
invisible(dev.off())
REOF
