# sec62-panels-summary.R: the late-epoch level of every curve of
# sec62-panels.sh's runs, over the seeds run: mean excess test MSE over
# epochs 6-10, per data set, access strategy, method and seed, and the
# ranking by its mean over seeds.  Usage: Rscript sec62-panels-summary.R BUILD OUTCSV
suppressMessages(library(data.table))
args <- commandArgs(TRUE)
files <- Sys.glob(file.path(args[1], "panels-*-mse.csv"))
r <- rbindlist(lapply(files, function(f) {
  x <- fread(f); t <- sub("^panels-(.*)-mse\\.csv$", "\\1", basename(f))
  x[, `:=`(data = sub("-s[0-9]+$", "", t),
           seed = if (grepl("-s[0-9]+$", t)) as.integer(sub(".*-s", "", t)) else 62L)]
}))
a <- r[epoch >= 6, .(late_excess = mean(excess)), by = .(data, access, method, seed)]
m <- a[, .(mean_late_excess = mean(late_excess), min_seed = min(late_excess),
           max_seed = max(late_excess), seeds = .N), by = .(data, access, method)]
m <- m[order(data, access, mean_late_excess)]
m[, rank := seq_len(.N), by = .(data, access)]
fwrite(m, args[2])
print(m, digits = 2)
