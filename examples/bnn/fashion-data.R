# fashion-data.R: Fashion-MNIST (Xiao, Rasul and Vollgraf 2017; Debian
# package dataset-fashion-mnist, files under /usr/share/datasets/fashion-mnist)
# as drift CSV: x.1 ... x.784 the pixels scaled to [0, 1], y = class + 1
# (1 ... 10).  Used where the papers used MNIST (same size: 60,000 training
# and 10,000 test images of 28 x 28 pixels, 10 classes).
# Usage: Rscript fashion-data.R OUTDIR [DIR]   writes OUTDIR/fmnist-train.csv
#        and OUTDIR/fmnist-test.csv
suppressMessages(library(data.table))
args <- commandArgs(TRUE)
out <- args[1]
dir <- if (length(args) > 1) args[2] else "/usr/share/datasets/fashion-mnist"
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
source(file.path(here, "idx.R"))
fashion_dir(dir)
for (part in c("train", "t10k")) {
  X <- read_idx(file.path(dir, sprintf("%s-images-idx3-ubyte.gz", part))) / 255
  y <- read_idx(file.path(dir, sprintf("%s-labels-idx1-ubyte.gz", part))) + 1L
  colnames(X) <- paste0("x.", seq_len(ncol(X)))
  name <- if (part == "train") "fmnist-train.csv" else "fmnist-test.csv"
  fwrite(data.table(round(X, 5), y = y), file.path(out, name))
  cat(sprintf("%s: %d images, %d pixels, classes %s\n", name, nrow(X), ncol(X),
              paste(range(y), collapse = "-")))
}
