# make-pima.R: writes pima-train.csv and pima-test.csv for drift's logistic
# regression example from MASS's Pima.tr and Pima.te (Smith et al. 1988,
# National Institute of Diabetes and Digestive and Kidney Diseases).
# Predictors are standardised with the training set's mean and sd; x.1 is
# the intercept.  Run: Rscript make-pima.R  (Debian: r-cran-mass)
library(MASS)
prep <- function(d, ref) {
  X <- as.matrix(d[, 1:7])
  X <- scale(X, center = colMeans(ref[, 1:7]), scale = apply(ref[, 1:7], 2, sd))
  out <- data.frame(y = as.integer(d$type == "Yes"), x.1 = 1, X)
  names(out) <- c("y", paste0("x.", 1:8))
  out
}
write.csv(prep(Pima.tr, Pima.tr), "pima-train.csv", row.names = FALSE, quote = FALSE)
write.csv(prep(Pima.te, Pima.tr), "pima-test.csv", row.names = FALSE, quote = FALSE)
