# fmnist-data.sh: Fashion-MNIST as drift data, shared by fmnist.sh and
# sgnht-grid.sh (sourced, not run).  Needs here, top, build and drift set;
# writes build/fmnist-train.csv and build/fmnist-test.csv (fashion-data.R,
# from the Debian package dataset-fashion-mnist) and their row stores
# build/fmnist-train.drs and build/fmnist-test.drs, each once; sets N, the
# training size.
mkdir -p "$build"
[ -s "$build/fmnist-train.csv" ] || Rscript "$here/fashion-data.R" "$build"
[ -s "$build/fmnist-train.drs" ] || "$drift" data convert "$build/fmnist-train.csv" \
    "$build/fmnist-train.drs" --rows-schema "$here/bnn.drift"
[ -s "$build/fmnist-test.drs" ] || "$drift" data convert "$build/fmnist-test.csv" \
    "$build/fmnist-test.drs" --rows-schema "$here/bnn.drift"
N=60000
