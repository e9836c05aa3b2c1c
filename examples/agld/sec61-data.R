# sec61-data.R: the a_i of section 6.1 (N = 500, d = 10, a_i ~ N(2*1, I)).
args <- commandArgs(TRUE)
set.seed(20200207)
N <- 500; d <- 10
a <- matrix(rnorm(N * d, mean = 2), N, d)
colnames(a) <- paste0("a.", 1:d)
write.csv(a, file.path(args[1], "sec61-a.csv"), row.names = FALSE,
          quote = FALSE)
