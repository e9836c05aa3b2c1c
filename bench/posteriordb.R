# posteriordb.R: a posteriordb posterior for rstan beside drift's copy of
# it in tests/posteriordb, for the benchmarks that run both (source()d by
# bench_nuts.R and methods/modes.R, with pdb, work and top set).
#   pdb_case(name): list(code = the Stan program (Stan 2.21's syntax),
#     data = its data, drift = drift's model and --data arguments,
#     dir = drift's folder of it)
#   stan_name(v): drift's column name (beta.1, a.2.3) as Stan's (beta[1],
#     a[2,3])

# Stan 2.21 (rstan in Debian) predates `array[N] T x`: rewritten as the old
# `T x[N]` (enough for the programs used here).
old_arrays <- function(code)
  gsub("array\\[([^]]+)\\]\\s+([A-Za-z_]+(<[^>]*>)?(\\[[^]]*\\])?)\\s+([A-Za-z_][A-Za-z0-9_]*)",
       "\\2 \\5[\\1]", code, perl = TRUE)

pdb_show <- function(path, out) {
  st <- system2("git", c(paste0("--git-dir=", pdb), "show", paste0("HEAD:", path)),
                stdout = out)
  if (st != 0) stop("no ", path, " in ", pdb)
}

pdb_case <- function(name) {
  meta_file <- file.path(work, paste0(name, ".meta.json"))
  pdb_show(paste0("posterior_database/posteriors/", name, ".json"), meta_file)
  meta <- jsonlite::fromJSON(meta_file)
  sfile <- file.path(work, paste0(name, ".stan"))
  pdb_show(paste0("posterior_database/models/stan/", meta$model_name, ".stan"), sfile)
  zfile <- file.path(work, paste0(name, ".json.zip"))
  pdb_show(paste0("posterior_database/data/data/", meta$data_name, ".json.zip"), zfile)
  data <- jsonlite::fromJSON(paste(system2("unzip", c("-p", zfile), stdout = TRUE),
                                   collapse = "\n"))
  dir <- file.path(top, "tests/posteriordb", name)
  dargs <- file.path(dir, "model.drift")
  for (f in c("rows.csv", "data.json"))
    if (file.exists(file.path(dir, f))) dargs <- c(dargs, "--data", file.path(dir, f))
  list(code = old_arrays(paste(readLines(sfile), collapse = "\n")), data = data,
       drift = dargs, dir = dir)
}

stan_name <- function(v) {
  m <- regmatches(v, regexec("^(.*?)((\\.[0-9]+)+)$", v))[[1]]
  if (!length(m)) return(v)
  idx <- strsplit(substring(m[3], 2), ".", fixed = TRUE)[[1]]
  paste0(m[2], "[", paste(idx, collapse = ","), "]")
}
