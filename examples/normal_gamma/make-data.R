# make-data.R: writes normal_gamma.csv (100 draws of N(1.5, 0.8^2)) and
# normal_gamma.json (mu0 = 0, kappa0 = 0.1, a0 = 2, b0 = 1).
# Run: Rscript make-data.R
set.seed(4)
write.csv(data.frame(y = rnorm(100, 1.5, 0.8)), "normal_gamma.csv",
          row.names = FALSE, quote = FALSE)
writeLines('{"mu0": 0, "kappa0": 0.1, "a0": 2, "b0": 1}', "normal_gamma.json")
