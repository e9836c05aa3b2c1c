# ml1m-data.R: synthetic ratings at MovieLens-1M's size: 6,040 users, 3,706
# items, 1,000,209 ratings, shaped like it: every user has at least 20
# ratings and user activity is heavy-tailed (log-normal, at most 2,314 as
# in MovieLens-1M), item popularity
# is Zipf-like, and ratings are integers 1..5 from a rank-5 model
#   r = round(clamp(3.58 + b_u + b_i + U_u . V_i + e, 1, 5)),
# with the real data's mean (3.58) and overall sd (~1.12).  drift's mf.drift
# has no biases or offset, so the files hold r - 3.58 (the centred rating;
# RMSEs are unchanged).  90% of each user's ratings train, 10% are held out.
# Writes ml1m-train.csv, ml1m-test.csv (user, item, r), ml1m-oracle-rmse.txt
# (the test RMSE of the generating law's E[r | user, item]) and ml1m.json
# (n_users, n_items; K and sigma are set on the command line) into the
# directory given.
suppressMessages(library(data.table))
args <- commandArgs(TRUE); out <- if (length(args)) args[1] else "."
set.seed(1000209)
nu <- 6040; ni <- 3706; total <- 1000209; K0 <- 5
act <- rlnorm(nu, 0, 1.1); cap <- 2314                  # MovieLens-1M's most active user
cnt <- pmin(cap, 20 + floor((total - 20 * nu) * act / sum(act)))
repeat {                                                  # exact total, none above the cap
  def <- total - sum(cnt); if (def == 0) break
  open <- which(cnt < cap); ix <- sample(open, min(def, length(open)), prob = act[open])
  cnt[ix] <- cnt[ix] + 1
}
pop <- 1 / (1:ni)^0.9; pop <- pop[sample(ni)]
user <- rep(1:nu, cnt)
item <- integer(total); off <- 0
for (u in 1:nu) {                                  # distinct items per user
  item[off + 1:cnt[u]] <- sample.int(ni, cnt[u], prob = pop); off <- off + cnt[u]
}
bu <- rnorm(nu, 0, 0.35); bi <- rnorm(ni, 0, 0.45)
U <- matrix(rnorm(nu * K0, 0, 0.45), nu); V <- matrix(rnorm(ni * K0, 0, 0.45), ni)
m <- 3.58 + bu[user] + bi[item] + rowSums(U[user, ] * V[item, ])
r <- pmin(5, pmax(1, round(m + rnorm(total, 0, 0.8))))
# The best any predictor can do: E[r | user, item] from the generating law.
cuts <- c(-Inf, 1.5, 2.5, 3.5, 4.5, Inf)
Er <- Reduce(`+`, lapply(1:5, function(k) k * (pnorm(cuts[k + 1], m, 0.8) - pnorm(cuts[k], m, 0.8))))
cat(sprintf("%d ratings, %d users, %d items rated; mean %.2f, sd %.2f; fewest per user %d, most %d\n",
            length(r), length(unique(user)), length(unique(item)), mean(r), sd(r), min(cnt), max(cnt)))
test <- unlist(lapply(split(seq_len(total), user), function(ix) ix[sample.int(length(ix)) <= ceiling(0.1 * length(ix))]))
d <- data.table(user = user, item = item, r = round(r - 3.58, 2))
fwrite(d[-test], file.path(out, "ml1m-train.csv")); fwrite(d[test], file.path(out, "ml1m-test.csv"))
writeLines(sprintf('{"n_users": %d, "n_items": %d}', nu, ni), file.path(out, "ml1m.json"))
cat(sprintf("train %d, test %d ratings\n", total - length(test), length(test)))
oracle <- sqrt(mean((r[test] - Er[test])^2))
cat(sprintf("test RMSE of E[r | user, item] under the generating law (the floor): %.4f\n", oracle))
writeLines(sprintf("%.6f", oracle), file.path(out, "ml1m-oracle-rmse.txt"))
