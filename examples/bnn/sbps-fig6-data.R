# sbps-fig6-data.R: the stand-in for the SBPS paper's section 7.3 data
# (Pakman et al., ICML 2017: four MNIST digits, images downsampled to 7 x 7,
# N = 8340 training rows).  MNIST is not on this machine; Fashion-MNIST
# (Debian package dataset-fashion-mnist) has the same 28 x 28 format.
#   classes: Fashion-MNIST 0-3 (T-shirt/top, trouser, pullover, dress), as
#     y = 1..4.  Which four digits the paper used is not recorded in the
#     authors' released code; this choice is ours.
#   7 x 7: sums over 4 x 4 pixel blocks of the [0, 1]-scaled image, which is
#     what the authors' downsample_data does (skimage block_reduce with its
#     default reducer, a sum), so each input lies in [0, 16].
#   N = 8340: a random subset (seed 1) of the 24,000 training images of the
#     four classes; test set: all 4,000 test images of the four classes.
# Usage: Rscript sbps-fig6-data.R OUTDIR [DIR]  writes OUTDIR/fig6-train.csv,
#        OUTDIR/fig6-test.csv
args <- commandArgs(TRUE)
out <- args[1]; ntrain <- 8340L
dir <- if (length(args) > 1) args[2] else "/usr/share/datasets/fashion-mnist"
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
source(file.path(here, "idx.R"))
fashion_dir(dir)
# 4 x 4 block sums: pixel (r, c) (0-based, row-major) goes to block
# (r %/% 4, c %/% 4); B is the 784 x 49 0/1 matrix of that map
r <- rep(0:27, each = 28); cc <- rep(0:27, 28)
B <- matrix(0, 784, 49); B[cbind(1:784, (r %/% 4) * 7 + cc %/% 4 + 1)] <- 1
set.seed(1)
for (part in c("train", "t10k")) {
  X <- read_idx(file.path(dir, sprintf("%s-images-idx3-ubyte.gz", part))) / 255
  y <- read_idx(file.path(dir, sprintf("%s-labels-idx1-ubyte.gz", part)))
  keep <- which(y %in% 0:3)
  if (part == "train") keep <- sort(sample(keep, ntrain))
  Z <- X[keep, , drop = FALSE] %*% B
  colnames(Z) <- paste0("x.", 1:49)
  d <- data.frame(round(Z, 5), y = y[keep] + 1L)
  name <- if (part == "train") "fig6-train.csv" else "fig6-test.csv"
  write.csv(d, file.path(out, name), row.names = FALSE, quote = FALSE)
  cat(sprintf("%s: %d images, 49 inputs in [%.2f, %.2f], class counts %s\n", name, nrow(d),
              min(Z), max(Z), paste(tabulate(d$y, 4), collapse = " ")))
}
