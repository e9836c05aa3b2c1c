#!/bin/sh
# bench_metric.sh: drift's nuts under several metric settings side by
# side, in one sitting: min bulk ESS per CPU second and per gradient
# evaluation (warmup included in both), divergences, and each setting's
# largest error in the means against posteriordb's reference (in reference
# sds; for the logistic case, against the first setting's means).  Cases
# as bench_nuts.sh: logistic regression (N rows of D standard normal
# predictors, a fixed seed) and posteriors of tests/posteriordb.  Not a
# test.
#
#   sh bench/bench_metric.sh [SEEDS]          (from a built tree)
#
# SEEDS: how many seeds per case and setting (default 1; the table gives
# the median ESS rates and the worst errors over them).  Runs keep their
# warmup draws (--save-warmup: a data-free model's gradients are counted
# as its leapfrog steps); the last 1000 draws of each chain are the
# sample.  Environment: BENCH_CASES (default: logistic and nine
# posteriors, below), BENCH_N, BENCH_D (10000, 20), and BENCH_SETTINGS:
# the settings, each LABEL=FLAGS with the flags' spaces written as commas
# (default "diag=--set,metric=diag grad=--set,metric=grad
# nutpie=--set,metric=nutpie lowrank=--set,metric=nutpie_lowrank").  Needs
# Rscript with the posterior package.
set -u
NSEEDS=${1:-1}
top=$(cd "$(dirname "$0")/.." && pwd)
DRIFT=${DRIFT:-$top/drift}
export DRIFT_PLUGIN_DIR="${DRIFT_PLUGIN_DIR:-$top/plugins/samplers/.libs:$top/plugins/models/.libs}"
export DRIFT_PLUGIN_PATH=
if ! command -v Rscript >/dev/null 2>&1 ||
    ! Rscript -e 'library(posterior)' >/dev/null 2>&1; then
    echo "bench_metric: Rscript with the posterior package is needed; skipped"
    exit 0
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/drift-bench-metric.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
CASES=${BENCH_CASES:-"logistic arK-arK kidiq-kidscore_momhsiq earnings-logearn_interaction mesquite-logmesquite kilpisjarvi_mod-kilpisjarvi eight_schools-eight_schools_noncentered eight_schools-eight_schools_centered gp_pois_regr-gp_pois_regr low_dim_gauss_mix-low_dim_gauss_mix"}
SETTINGS=${BENCH_SETTINGS:-"diag=--set,metric=diag grad=--set,metric=grad nutpie=--set,metric=nutpie lowrank=--set,metric=nutpie_lowrank"}
echo "bench_metric: load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
Rscript - "$work" "$top" "$DRIFT" "$NSEEDS" "${BENCH_N:-10000}" "${BENCH_D:-20}" "$SETTINGS" $CASES <<'REOF'
a <- commandArgs(TRUE)
work <- a[1]; top <- a[2]; drift <- a[3]; nseeds <- as.integer(a[4])
N <- as.integer(a[5]); D <- as.integer(a[6])
settings <- strsplit(strsplit(a[7], " ")[[1]], "=")
labels <- sapply(settings, `[`, 1)
flags <- lapply(settings, function(s) strsplit(paste(s[-1], collapse = "="), ",")[[1]])
cases <- a[-(1:7)]
suppressMessages(library(posterior))
set.seed(1)
X <- matrix(rnorm(N * D), N, D)
y <- rbinom(N, 1, plogis(X %*% rnorm(D, 0, 1 / sqrt(D))))
d <- data.frame(y = y, X); names(d) <- c("y", paste0("x.", 1:D))
write.csv(d, file.path(work, "lr.csv"), row.names = FALSE)

case_args <- function(name) {
  if (name == "logistic")
    return(c(file.path(top, "examples/logistic/logistic.drift"), "--data",
             file.path(work, "lr.csv")))
  dir <- file.path(top, "tests/posteriordb", name)
  args <- file.path(dir, "model.drift")
  for (f in c("rows.csv", "data.json"))
    if (file.exists(file.path(dir, f))) args <- c(args, "--data", file.path(dir, f))
  args
}

run_one <- function(name, k, seed) {
  out <- file.path(work, sprintf("%s_%s_%d.csv", gsub("[^A-Za-z0-9]", "_", name),
                                 labels[k], seed))
  t <- system.time(st <- system2(drift, c("sample", case_args(name), flags[[k]],
                                          "--save-warmup", "--seed", seed, "--out", out,
                                          "--quiet"),
                                 stdout = FALSE, stderr = FALSE))
  if (st != 0) return(NULL)
  files <- sprintf("%s_%d.csv", sub("\\.csv$", "", out), 1:4)
  all <- lapply(files, function(p) read.csv(p, comment.char = "#", check.names = FALSE))
  ch <- lapply(all, function(x) tail(x, 1000))
  hdr <- readLines(files[1], n = 200)
  nrow_ <- as.numeric(sub(".*= *", "", grep("^# N = ", hdr, value = TRUE)[1]))
  vars <- grep("__$", names(ch[[1]]), value = TRUE, invert = TRUE)
  dm <- function(v) sapply(ch, function(x) x[[v]])
  ess <- sapply(vars, function(v) ess_bulk(dm(v)))
  # grads__ counts per-datum evaluations, N to a full gradient; a model
  # without rows counts none, so its leapfrog steps are summed instead.
  grads <- if (is.na(nrow_) || nrow_ < 1) sum(sapply(all, function(x) sum(x$n_leapfrog__))) else
    sum(sapply(all, function(x) tail(x$grads__, 1))) / nrow_
  list(ess = min(ess), cpu = t[["user.child"]] + t[["sys.child"]], grads = grads,
       div = sum(sapply(ch, function(x) sum(x$divergent__))),
       means = sapply(vars, function(v) mean(dm(v))), sds = sapply(vars, function(v) sd(dm(v))))
}

cat(sprintf("%-40s %-6s %3s %7s %7s %8s %9s %9s %5s %6s\n", "case", "metric", "d",
            "minESS", "cpu s", "ESS/s", "grads", "ESS/1kg", "div", "|dz|"))
for (name in cases) {
  ref <- NULL
  rf <- file.path(top, "tests/posteriordb", name, "reference.csv")
  if (file.exists(rf)) ref <- read.csv(rf)
  res <- lapply(seq_along(labels), function(k) lapply(seq_len(nseeds), function(s) run_one(name, k, s)))
  if (is.null(ref) && !is.null(res[[1]][[1]]))
    ref <- data.frame(name = names(res[[1]][[1]]$means), mean = res[[1]][[1]]$means,
                      sd = res[[1]][[1]]$sds)
  for (k in seq_along(labels)) {
    r <- Filter(Negate(is.null), res[[k]])
    if (length(r) < nseeds) {
      cat(sprintf("%-40s %-6s failed in %d of %d seeds\n", name, labels[k],
                  nseeds - length(r), nseeds))
      if (!length(r)) next
    }
    z <- max(sapply(r, function(x) {
      m <- x$means[ref$name]
      max(abs(m - ref$mean) / ref$sd, na.rm = TRUE)
    }))
    cat(sprintf("%-40s %-6s %3d %7.0f %7.2f %8.1f %9.0f %9.2f %5d %6.3f\n", name, labels[k],
                length(r[[1]]$means), median(sapply(r, `[[`, "ess")),
                median(sapply(r, `[[`, "cpu")),
                median(sapply(r, function(x) x$ess / x$cpu)),
                median(sapply(r, `[[`, "grads")),
                median(sapply(r, function(x) 1000 * x$ess / x$grads)),
                as.integer(sum(sapply(r, `[[`, "div"))), z))
  }
  flush.console()
}
cat("minESS: min bulk ESS over the parameters (4 chains x 1000 draws); cpu s: drift's",
    "CPU seconds, warmup included;\ngrads: full-data gradient evaluations of all",
    "chains, warmup included (a model without rows: its leapfrog steps);",
    "ESS/1kg: minESS per 1000 of them;\n|dz|: largest",
    "|mean - reference| in reference sds (logistic: the first setting's means);",
    "medians over seeds, worst |dz|, divergences summed\n")
REOF
