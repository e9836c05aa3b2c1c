# ewsg-scaling-plot.R: the numbers, slopes and figure of ewsg-scaling.sh.
# Usage: Rscript ewsg-scaling-plot.R AVG CENTRES OUT B HJ TK TMAX
#   AVG: lines "sampler h chain T mean1 mean2 mean|theta - mean c|^2", the
#   time averages of each chain over its first T time units.
args <- commandArgs(TRUE)
a <- read.table(args[1], col.names = c("sampler", "h", "chain", "T", "m1", "m2", "q"),
                stringsAsFactors = FALSE)
cen <- read.csv(args[2]); out <- args[3]; B <- as.integer(args[4])
HJ <- as.numeric(args[5]); TK <- as.numeric(args[6]); TMAX <- as.numeric(args[7])
# the small steps, where the index weights are close to first order in h
HSMALL <- if (length(args) >= 8) as.numeric(args[8]) else 0.0125
m0 <- colMeans(cen); q0 <- 2 / nrow(cen)          # exact E|theta - m0|^2
a$e1 <- a$m1 - m0[1]; a$e2 <- a$m2 - m0[2]; a$eq <- a$q - q0
key <- paste(a$sampler, a$h, a$T)
groups <- split(seq_len(nrow(a)), key)
# per group, with chain multiplicities w: MSE, variance and squared bias
# of both test functions (phi = theta: summed over the two coordinates)
stats <- function(i, w) {
  W <- sum(w); C <- length(i)
  mv <- function(e) { m <- sum(w * e) / W; v <- sum(w * (e - m)^2) / (W - 1)
                      c(mse = sum(w * e^2) / W, m = m, v = v) }
  s1 <- mv(a$e1[i]); s2 <- mv(a$e2[i]); sq <- mv(a$eq[i])
  c(mse_mean = s1[["mse"]] + s2[["mse"]], var_mean = s1[["v"]] + s2[["v"]],
    bias2_mean = s1[["m"]]^2 + s2[["m"]]^2 - (s1[["v"]] + s2[["v"]]) / C,
    mse_sq = sq[["mse"]], var_sq = sq[["v"]], bias2_sq = sq[["m"]]^2 - sq[["v"]] / C,
    bias_sq = sq[["m"]], err1 = s1[["m"]], err2 = s2[["m"]])
}
# chains are resampled jointly across T (the T rows of a chain are one run)
# and independently across (sampler, h)
chains <- split(seq_len(nrow(a)), paste(a$sampler, a$h))
pt <- unique(a[, c("sampler", "h", "T")])
pt <- pt[order(pt$sampler, pt$h, pt$T), ]
pk <- paste(pt$sampler, pt$h, pt$T)
est <- t(sapply(pk, function(k) { i <- groups[[k]]; stats(i, rep(1, length(i))) }))
set.seed(20200220)
boot <- array(NA, c(B, nrow(pt), ncol(est)), dimnames = list(NULL, pk, colnames(est)))
for (b in seq_len(B)) {
  for (sh in names(chains)) {
    i <- chains[[sh]]; ids <- sort(unique(a$chain[i])); C <- length(ids)
    w <- tabulate(sample.int(C, C, TRUE), C); names(w) <- ids
    for (k in pk[paste(pt$sampler, pt$h) == sh]) {
      g <- groups[[k]]; boot[b, k, ] <- stats(g, w[as.character(a$chain[g])])
    }
  }
}
res <- cbind(pt, est)
for (v in colnames(est)) {
  res[[paste0(v, "_lo")]] <- apply(boot[, , v], 2, quantile, 0.025, na.rm = TRUE)
  res[[paste0(v, "_hi")]] <- apply(boot[, , v], 2, quantile, 0.975, na.rm = TRUE)
}
res$chains <- as.vector(table(key)[pk])
# ewsg's mean bias to first order in h (examples/langevin/README.md): the
# index weights add u Cov_i(f_i, g_i) to the gradient, u = h / sigma^2
# (sigma^2 = 2 gamma = 20), whose constant part u (1/N) sum_i b_i |b_i|^2 / 2
# (b_i = g_i - gbar = N (mean c - c_i)) moves the stationary mean by minus
# itself over the curvature N.
N <- nrow(cen); bb <- N * (matrix(m0, N, 2, byrow = TRUE) - as.matrix(cen))
F3 <- colMeans(bb * rowSums(bb^2) / 2)
res$ewsg_bias_first_order <- ifelse(res$sampler == "ewsg", sqrt(sum(F3^2)) * res$h / 20 / N, NA)
write.csv(res, file.path(out, "ewsg-scaling.csv"), row.names = FALSE)

# log-log slopes with bootstrap intervals; NA where a value is <= 0
slope <- function(x, y) if (length(unique(x)) >= 2 && all(is.finite(y)) && all(y > 0))
  unname(coef(lm(log(y) ~ log(x)))[2]) else NA
sl <- NULL
fit <- function(panel, s, sel, xv, v, predicted) {
  if (sum(sel) < 2) return(invisible())
  k <- pk[sel]
  e <- slope(xv, est[k, v])
  bs <- apply(boot[, k, v, drop = FALSE], 1, function(y) slope(xv, y))
  sl <<- rbind(sl, data.frame(panel = panel, sampler = s, quantity = v,
    x = if (panel == "j") "T" else "h",
    range = sprintf("%g-%g", min(xv), max(xv)), slope = e,
    lo = quantile(bs, 0.025, na.rm = TRUE), hi = quantile(bs, 0.975, na.rm = TRUE),
    boot_na = mean(is.na(bs)), theorem = predicted))
}
for (s in unique(pt$sampler)) {
  j <- pt$sampler == s & abs(pt$h - HJ) < 1e-12 & pt$T >= 5
  for (v in c("mse_mean", "var_mean", "mse_sq", "var_sq")) fit("j", s, j, pt$T[j], v, "-1")
  k <- pt$sampler == s & pt$T == TK
  for (v in c("mse_mean", "var_mean", "mse_sq", "var_sq")) fit("k", s, k, pt$h[k], v, "<= +1 (h/T term)")
  # the variance at T = TK as a + b h (the bound's 1/T + h/T form): b / a
  for (v in c("var_mean", "var_sq")) {
    if (sum(k) < 2) next
    kk <- pk[k]; hv <- pt$h[k]
    ba <- function(y) { cf <- coef(lm(y ~ hv)); unname(cf[2] / cf[1]) }
    bs <- apply(boot[, kk, v, drop = FALSE], 1, ba)
    sl <- rbind(sl, data.frame(panel = "k", sampler = s, quantity = paste0(v, ": b/a in a + b h"),
      x = "h (linear)", range = sprintf("%g-%g", min(hv), max(hv)), slope = ba(est[kk, v]),
      lo = quantile(bs, 0.025), hi = quantile(bs, 0.975), boot_na = 0, theorem = "b >= 0"))
  }
  l <- pt$sampler == s & pt$T == TMAX
  for (v in c("bias2_mean", "bias2_sq", "mse_mean", "mse_sq")) fit("l", s, l, pt$h[l], v, "+2 (h^2 term)")
  l <- l & pt$h <= HSMALL + 1e-12
  for (v in c("bias2_mean", "bias2_sq")) fit("l", s, l, pt$h[l], v, "+2 (h^2 term)")
}
rownames(sl) <- NULL
write.csv(sl, file.path(out, "ewsg-scaling-slopes.csv"), row.names = FALSE)
print(sl, digits = 3)
show <- c("sampler", "h", "T", "mse_mean", "bias2_mean", "mse_sq", "bias_sq", "bias2_sq")
print(res[res$T %in% c(TK, TMAX) | abs(res$h - HJ) < 1e-12, show], digits = 3, row.names = FALSE)

png(file.path(out, "ewsg-scaling.png"), width = 1200, height = 800)
par(mfrow = c(2, 3))
cols <- c(sghmc = "blue", ewsg = "red")
panel <- function(sel, xv, v, xlab, main, ref) {
  y <- res[[v]]; lo <- res[[paste0(v, "_lo")]]; hi <- res[[paste0(v, "_hi")]]
  ok <- sel & y > 0
  yl <- range(c(y[ok], lo[ok & lo > 0], hi[ok]))
  plot(NULL, xlim = range(xv[sel]), ylim = yl, log = "xy", xlab = xlab, ylab = v, main = main)
  for (s in names(cols)) {
    i <- which(ok & res$sampler == s); i <- i[order(xv[i])]
    lines(xv[i], y[i], col = cols[s], type = "b", pch = 19)
    lo2 <- pmax(lo[i], yl[1] / 10)
    arrows(xv[i], lo2, xv[i], hi[i], col = cols[s], angle = 90, code = 3, length = 0.03)
  }
  # reference slope through the geometric middle
  x0 <- exp(mean(log(range(xv[sel])))); y0 <- exp(mean(log(yl)))
  xx <- range(xv[sel]); lines(xx, y0 * (xx / x0)^ref, lty = 2, col = "gray40")
  legend("topleft", legend = c(names(cols), paste("slope", ref)), col = c(cols, "gray40"),
         lty = c(1, 1, 2), pch = c(19, 19, NA), bty = "n")
}
hj <- abs(res$h - HJ) < 1e-12
panel(hj, res$T, "mse_mean", "T (time units)", paste0("j: MSE of the mean, h = ", HJ), -1)
panel(res$T == TK, res$h, "mse_mean", "h", paste0("k: MSE of the mean, T = ", TK), 1)
panel(res$T == TMAX, res$h, "bias2_mean", "h", paste0("l: squared bias of the mean, T = ", TMAX), 2)
i <- which(res$sampler == "ewsg" & res$T == TMAX); i <- i[order(res$h[i])]
lines(res$h[i], res$ewsg_bias_first_order[i]^2, col = "red", lty = 3)
legend("bottomright", legend = "ewsg, first order in h", col = "red", lty = 3, bty = "n")
panel(hj, res$T, "mse_sq", "T (time units)", paste0("j: MSE of E|theta - m|^2, h = ", HJ), -1)
panel(res$T == TK, res$h, "mse_sq", "h", paste0("k: MSE of E|theta - m|^2, T = ", TK), 1)
panel(res$T == TMAX, res$h, "bias2_sq", "h", paste0("l: squared bias of E|theta - m|^2, T = ", TMAX), 2)
invisible(dev.off())
