# idx.R: Fashion-MNIST's files as Debian's dataset-fashion-mnist installs
# them, for fashion-data.R and sbps-fig6-data.R (sourced by both).
# fashion_dir(DIR) stops with what to install when DIR lacks the files;
# read_idx(FILE) reads one gzipped IDX file: a vector of labels, or a
# matrix of images (one row each, pixels 0-255 row-major).
fashion_dir <- function(dir) {
  if (!file.exists(file.path(dir, "train-images-idx3-ubyte.gz")))
    stop(sprintf("no Fashion-MNIST in %s: apt-get install dataset-fashion-mnist", dir))
  dir
}
read_idx <- function(f) {
  con <- gzfile(f, "rb"); on.exit(close(con))
  magic <- readBin(con, "integer", 1, size = 4, endian = "big")
  dims <- readBin(con, "integer", magic %% 256, size = 4, endian = "big")
  v <- readBin(con, "integer", prod(dims), size = 1, signed = FALSE)
  if (length(dims) == 1) v else matrix(v, dims[1], prod(dims[-1]), byrow = TRUE)
}
