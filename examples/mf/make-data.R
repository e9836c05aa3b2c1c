# make-data.R: writes ratings.csv (300 ratings by 20 users of 15 items
# from a rank-2 model with noise sd 0.5) and mf.json.
# Run: Rscript make-data.R
set.seed(5)
nu <- 20; ni <- 15; K <- 2; n <- 300
U <- matrix(rnorm(nu * K), nu); V <- matrix(rnorm(ni * K), ni)
user <- sample(nu, n, replace = TRUE); item <- sample(ni, n, replace = TRUE)
r <- rowSums(U[user, ] * V[item, ]) + rnorm(n, 0, 0.5)
write.csv(data.frame(user, item, r = round(r, 6)), "ratings.csv",
          row.names = FALSE, quote = FALSE)
writeLines(sprintf('{"n_users": %d, "n_items": %d, "K": %d, "sigma": 0.5}',
                   nu, ni, K), "mf.json")
