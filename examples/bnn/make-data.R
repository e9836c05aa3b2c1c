# make-data.R: writes iris.csv from R's iris data (Fisher 1936): the four
# measurements standardised as x.1 ... x.4 and the species as y = 1, 2, 3.
# Run: Rscript make-data.R
X <- scale(as.matrix(iris[, 1:4]))
d <- data.frame(round(X, 6), y = as.integer(iris$Species))
names(d) <- c(paste0("x.", 1:4), "y")
write.csv(d, "iris.csv", row.names = FALSE, quote = FALSE)
