# sec61-seeds.R: section 6.1's distances over seeds (the output of
# sec61-seeds.sh): per sampler, the mean and 95% t-interval of W2 (2-D and
# 10-D) and of the 2-D TV distance minus its iid floor; and per sampler
# the paired difference of W2 with TMU-RA (same seed number), with its 95%
# interval.  A difference is called only where its interval excludes 0.
suppressMessages(library(data.table))
args <- commandArgs(TRUE)
out <- args[1]; eta <- args[2]; nb <- args[3]
tag <- sprintf("eta%s-n%s", eta, nb)
files <- Sys.glob(file.path(out, "s*", paste0("sec61-distances-", tag, ".csv")))
d <- rbindlist(lapply(files, function(f) {
    x <- fread(f)
    x[, seed := basename(dirname(f))]
}))
k <- length(unique(d$seed))
ci <- function(v) {
    m <- mean(v); h <- qt(0.975, length(v) - 1) * sd(v) / sqrt(length(v))
    sprintf("%.4f ± %.4f", m, h)
}
d[, TV_excess := TV_2d - TV_iid_floor]
ord <- unique(d$sampler)
tab <- d[, .(seeds = .N, W2_2d = ci(W2_2d), W2_10d = ci(W2_10d),
             TV_2d = ci(TV_2d), TV_minus_floor = ci(TV_excess)),
         by = sampler]
cat(sprintf("section 6.1, eta = %s, n = %s, %d seeds: mean ± 95%% half-width\n",
            eta, nb, k))
print(tab)
ref <- d[sampler == "TMU-RA", .(seed, W2_2d_ref = W2_2d, W2_10d_ref = W2_10d)]
p <- merge(d, ref, by = "seed")
dif <- p[sampler != "TMU-RA", .(
    W2_2d_minus_TMU = ci(W2_2d - W2_2d_ref),
    W2_10d_minus_TMU = ci(W2_10d - W2_10d_ref),
    separates_2d = {v <- W2_2d - W2_2d_ref
        h <- qt(0.975, .N - 1) * sd(v) / sqrt(.N); abs(mean(v)) > h},
    separates_10d = {v <- W2_10d - W2_10d_ref
        h <- qt(0.975, .N - 1) * sd(v) / sqrt(.N); abs(mean(v)) > h}),
    by = sampler]
cat("\npaired differences with TMU-RA (other minus TMU-RA), mean ± 95% half-width\n")
print(dif)
fwrite(merge(tab, dif, by = "sampler", all.x = TRUE, sort = FALSE),
       file.path(out, paste0("sec61-seeds-", tag, ".csv")))
fwrite(d, file.path(out, paste0("sec61-seeds-", tag, "-all.csv")))
