# make-data.R: writes train.libsvm and test.libsvm for drift's sparse
# logistic regression example: synthetic "documents" over D = 200 terms,
# bag-of-words style.  Feature 1 is a bias (1 in every row); each row has
# 1 + Poisson(5) further distinct terms drawn with Zipf-like frequencies,
# valued log(1 + count); 25 terms carry weight (N(0, 1.5^2)), the rest
# none.  Labels are 0/1 from the logistic model.  Run: Rscript make-data.R
set.seed(20240901)
D <- 200
freq <- 1 / (1:(D - 1))^0.8
w <- numeric(D)
w[1] <- -0.5
w[1 + sample(D - 1, 25)] <- rnorm(25, 0, 1.5)
rows <- function(n) {
  lines <- character(n)
  for (i in 1:n) {
    k <- 1 + rpois(1, 5)
    terms <- sort(1 + sample(D - 1, k, prob = freq))
    val <- round(log1p(1 + rpois(k, 0.7)), 4)
    z <- w[1] + sum(w[terms] * val)
    y <- as.integer(runif(1) < plogis(z))
    lines[i] <- paste(c(y, "1:1", paste0(terms, ":", val)), collapse = " ")
  }
  lines
}
writeLines(rows(1000), "train.libsvm")
writeLines(rows(300), "test.libsvm")
write.csv(data.frame(term = 1:D, w = w), "true-weights.csv",
          row.names = FALSE)
