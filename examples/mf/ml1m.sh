#!/bin/sh
# ml1m.sh: Bayesian matrix factorisation at MovieLens-1M's size (the SGNHT
# paper's section 5.2 comparison of SGNHT with SGHMC and SGLD; Chen et al.
# 2014 ran SGHMC on MovieLens too).  Synthetic ratings (ml1m-data.R): 6,040
# users x 3,706 items, 1,000,209 ratings, 10% of each user's held out.
# Model mf.drift (r ~ N(U[user] . V[item], sigma), U, V ~ N(0, 1)) with
# K = 10 factors and sigma = 0.9 (about the noise of the ratings around a
# low-rank fit), d = (6040 + 3706) x 10 = 97,460 parameters.  Samplers, all
# from the same random start (U(-0.1, 0.1)), minibatches of BATCH (default
# 1000) rows, PASSES data passes (default 50), test RMSE evaluated every
# pass over the draws kept so far (--test, --eval-every 1; about 20 draws a
# pass kept after a burn-in of 2 passes):
#   sgld h = H_SGLD (1e-4); sghmc h = H_HMC (3e-3), gamma = G_HMC (30),
#   noise sqrt(2 gamma), Ding et al.'s symplectic scheme; sgnht h = H_NHT
#   (5e-3), A = A_NHT (30): each the best of a 3-pass pilot (README.md);
#   h = 3e-4 diverges for sgld, h = 1e-2 for the others; msgnht h = H_MNHT
#   (1e-3: it diverged at sgnht's 5e-3 and at
#   3e-3), A = A_NHT.
# Writes results/ml1m-rmse.csv (passes, seconds, RMSE per sampler),
# results/ml1m-summary.txt (the data, baselines and RMSE table) and
# results/ml1m.png; build/ holds the data and runs.
# Usage (after make): sh examples/mf/ml1m.sh  (env: PASSES, BATCH, H_SGLD,
#                     H_HMC, G_HMC, H_NHT, A_NHT, SAMPLERS)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${BUILD:-$here/build}
PASSES=${PASSES:-50}; BATCH=${BATCH:-1000}
H_SGLD=${H_SGLD:-1e-4}; H_HMC=${H_HMC:-3e-3}; G_HMC=${G_HMC:-30}; H_NHT=${H_NHT:-5e-3}; A_NHT=${A_NHT:-30}; H_MNHT=${H_MNHT:-1e-3}
SAMPLERS=${SAMPLERS-"sgld sghmc sgnht msgnht"}   # SAMPLERS="" redoes the table and figure only
drift=${DRIFT:-$top/drift}
export DRIFT_PLUGIN_DIR="$top/plugins/samplers/.libs:$top/plugins/models/.libs"
export DRIFT_PLUGIN_PATH=
mkdir -p "$build" "$here/results"
[ -s "$build/ml1m-train.csv" ] || Rscript "$here/ml1m-data.R" "$build"
[ -s "$build/ml1m-train.drs" ] || "$drift" data convert "$build/ml1m-train.csv" "$build/ml1m-train.drs" \
    --rows-schema "$here/mf.drift"
N=$(($(wc -l < "$build/ml1m-train.csv") - 1))
per=$((N / BATCH)); warm=$((2 * per)); thin=$((per / 20)); [ "$thin" -ge 1 ] || thin=1
for s in $SAMPLERS; do
    case $s in
    sgld) sets="--set h=$H_SGLD" ;;
    sghmc) sets="--set h=$H_HMC --set gamma=$G_HMC --set scheme=symplectic" ;;
    sgnht) sets="--set h=$H_NHT --set A=$A_NHT" ;;
    msgnht) sets="--set h=$H_MNHT --set A=$A_NHT" ;;
    psgld) sets="--set h=${H_PSGLD:-1e-4}" ;;
    *) echo "ml1m.sh: unknown sampler $s" >&2; exit 2 ;;
    esac
    echo "== $s $sets" >&2
    # shellcheck disable=SC2086
    /usr/bin/time -f "   %e s wall, %M KB" "$drift" sample "$here/mf.drift" --data "$build/ml1m-train.drs" \
        --data "$build/ml1m.json" --data-set K=10 --data-set sigma=0.9 --init 0.1 \
        --sampler "$s" $sets --batch "$BATCH" --passes "$PASSES" --warmup "$warm" --thin "$thin" \
        --test "$build/ml1m-test.csv" --eval-every 1 --chains 1 --seed 1 --quiet \
        --out "$build/ml1m-$s.csv" 2>&1 | grep -v "warning" >&2 || true
done
Rscript - "$build" "$here/results" "sgld psgld sghmc sgnht msgnht" <<'REOF'
a <- commandArgs(TRUE); build <- a[1]; out <- a[2]; ss <- strsplit(a[3], " ")[[1]]
te <- read.csv(file.path(build, "ml1m-test.csv"))
base <- sqrt(mean((te$r - mean(read.csv(file.path(build, "ml1m-train.csv"))$r))^2))
res <- do.call(rbind, lapply(ss, function(s) {   # every sampler run so far
  f <- file.path(build, sprintf("ml1m-%s_metrics.csv", s))
  if (!file.exists(f)) return(NULL)
  m <- read.csv(f, comment.char = "#"); m <- m[m$draws > 0, ]; if (!nrow(m)) return(NULL); data.frame(sampler = s, passes = m$passes, seconds = m$seconds,
                                                 draws = m$draws, rmse = sqrt(m$mse), lpd = m$lpd)
}))
if (is.null(res)) stop("ml1m.sh: no run has kept draws yet (PASSES must exceed the 2-pass burn-in)")
write.csv(res, file.path(out, "ml1m-rmse.csv"), row.names = FALSE, quote = FALSE)
oracle <- as.numeric(readLines(file.path(build, "ml1m-oracle-rmse.txt")))
tr <- read.csv(file.path(build, "ml1m-train.csv")); all <- rbind(tr, te); per <- table(all$user)
sm <- c(sprintf("data: %d ratings (%d train, %d test), %d users, %d items rated; rating mean %.2f, sd %.2f; fewest per user %d, most %d",
                nrow(all), nrow(tr), nrow(te), length(per), length(unique(all$item)), mean(all$r + 3.58), sd(all$r), min(per), max(per)),
        sprintf("test RMSE of the training mean: %.4f; of the generating law's E[r | user, item]: %.4f", base, oracle))
for (s in unique(res$sampler)) { o <- res[res$sampler == s, ]
  at <- sapply(c(3, 5, 10, 20, 50), function(p) if (max(o$passes) >= p - 0.01) sprintf("%.4f", o$rmse[which.min(abs(o$passes - p))]) else "-")
  sm <- c(sm, sprintf("%-7s RMSE after 3/5/10/20/50 passes %s; after %5.1f passes (%6.1f s of sampling): %.4f; best %.4f", s,
                      paste(at, collapse = " / "), tail(o$passes, 1), tail(o$seconds, 1), tail(o$rmse, 1), min(o$rmse, na.rm = TRUE))) }
writeLines(sm, file.path(out, "ml1m-summary.txt")); writeLines(sm)
png(file.path(out, "ml1m.png"), width = 1100, height = 480, res = 110)
par(mfrow = c(1, 2), mar = c(4.2, 4.4, 2, 1))
cols <- c(sgld = "orange", psgld = "darkgreen", sghmc = "blue", sgnht = "red", msgnht = "purple")
for (x in c("passes", "seconds")) {
  plot(NA, xlim = range(res[[x]]), ylim = range(c(res$rmse, base, oracle), na.rm = TRUE), xlab = if (x == "passes") "data passes" else "seconds",
       ylab = "test RMSE (posterior predictive mean)", main = "MovieLens-1M-sized MF, K = 10")
  abline(h = base, lty = 3, col = "grey40"); abline(h = oracle, lty = 2, col = "grey40")
  for (s in unique(res$sampler)) with(res[res$sampler == s, ], lines(get(x), rmse, col = cols[s], lwd = 2))
  legend("topright", c(unique(res$sampler), "training mean", "generating law (floor)"),
         col = c(cols[unique(res$sampler)], "grey40", "grey40"),
         lty = c(rep(1, length(unique(res$sampler))), 3, 2), bty = "n")
}
invisible(dev.off())
REOF
