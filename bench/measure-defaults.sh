#!/bin/sh
# measure-defaults.sh: measures the tables of doc/minibatch-defaults.md
# and writes them in place, between the lines "<!-- measured: NAME -->"
# and "<!-- /measured -->" (doc/measure.sh's markers; doc/write-block.sh
# writes them), printing what changed.  Each block ends with a line saying
# what produced it, when and on which machine (tests/docs/test_docs.sh
# requires it).  Too heavy for make check: make measure-defaults runs it
# with the build's drift.
#
#   bench/measure-defaults.sh [--small NxD] [--large NxD] [--only small|large]
#                             [--samplers "NAME..."]
#
# The blocks, one table each:
#   defaults-small  N x D = 100000x20 (--small)
#   defaults-large  N x D = 1000000x50 (--large)
# For each: synthetic logistic-regression rows (examples/rowstore/gen_rows.c
# N D, its default seed) as CSV and as a row store, the reference from
# bench/cv/laplace.R (Newton to the mode in R, the Laplace sds), and every
# sampler of --samplers (default: every minibatch sampler the doc lists)
# run by bench/cv/defaults.sh at its defaults (`drift sample
# examples/logistic/logistic.drift --data ROWS --sampler NAME --seed 1`)
# and judged by bench/cv/judge.py: its max |z|, worst sd ratio, wall
# seconds, chain 1's data passes, and its warnings (listed below the
# table, each cut to 160 characters).  The large table takes 10-30
# minutes on 2 cores (ewsg alone several).
#
# DRIFT names the drift to run (default: the build's); WORK (default
# bench/work-defaults) keeps the data and references between runs.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
DRIFT=${DRIFT:-$top/drift}
export DRIFT
small=100000x20
large=1000000x50
only=""
all="sgld psgld sghmc sgnht msgnht svrg-ld saga-ld tmu-ra ewsg sbps psbps"
samplers=$all
while [ $# -gt 0 ]; do
    case $1 in
    --small) small=$2; shift 2 ;;
    --large) large=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --samplers) samplers=$2; shift 2 ;;
    *) echo "usage: measure-defaults.sh [--small NxD] [--large NxD] [--only small|large] [--samplers \"NAME...\"]" >&2
       exit 2 ;;
    esac
done
command -v Rscript >/dev/null || { echo "measure-defaults.sh: needs Rscript (bench/cv/laplace.R)" >&2; exit 1; }
work=${WORK:-$top/bench/work-defaults}
mkdir -p "$work" || exit 1
work=$(cd "$work" && pwd)
doc=$top/doc/minibatch-defaults.md
tmp=$(mktemp -d "${TMPDIR:-/tmp}/drift-measure-defaults-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
load() { cut -d' ' -f1 /proc/loadavg; }
status=0
cc -O2 -o "$work/gen_rows" "$top/examples/rowstore/gen_rows.c" -lm || exit 1

# table NAME NxD: measures one table into the block NAME.
table() {
    name=$1
    N=${2%x*}
    D=${2#*x}
    l0=$(load)
    rows=$work/lr-$N-$D.drs
    ref=$work/ref-$N-$D.csv
    if [ ! -f "$rows" ] || [ ! -f "$ref" ]; then
        echo "== generating $N rows of $D columns, the row store and R's reference"
        "$work/gen_rows" "$N" "$D" >"$work/lr-$N-$D.csv" || return 1
        "$DRIFT" data convert "$work/lr-$N-$D.csv" "$rows.part.drs" >/dev/null &&
            mv "$rows.part.drs" "$rows" || return 1
        Rscript "$top/bench/cv/laplace.R" "$work/lr-$N-$D.csv" "$ref.part" >/dev/null &&
            mv "$ref.part" "$ref" || return 1
        rm -f "$work/lr-$N-$D.csv"
    fi
    echo "== bench/cv/defaults.sh, N = $N, d = $D"
    # shellcheck disable=SC2086
    sh "$top/bench/cv/defaults.sh" "$rows" "$ref" $samplers | tee "$tmp/$name.out"
    # One row per sampler: its line is
    # NAME rc=R warnings=W wall T s | draws n max|z| Z (w) worst sd ratio S (w) PASS | chain 1: I iterations, P data passes
    awk -v zt="${ZTOL:-0.1}" -v st="${SDTOL:-0.1}" '
        function f(x) { return x >= 10 ? sprintf("%.0f", x) : sprintf("%.2g", x) }
        / rc=[0-9]+ warnings=/ {
            s = $1; rc = substr($2, 4); w = substr($3, 10); t = $5
            z = ""; r = ""; p = ""
            for (i = 1; i <= NF; i++) {
                if ($i == "max|z|") z = $(i + 1)
                if ($i == "ratio") r = $(i + 1)
                if ($i == "data" && $(i + 1) == "passes") p = $(i - 1)
            }
            zs = z == "" ? "none" : z (z + 0 > zt ? " (fails)" : "")
            d = r + 0 > 1 ? r - 1 : 1 - r
            rs = r == "" ? "none" : r (d > st ? " (fails)" : "")
            ws = w (rc != 0 ? ", exit status " rc : "")
            printf "| %s | %s | %s | %s | %s | %s |\n", s, zs, rs, f(t), p == "" ? "none" : f(p + 0), ws
        }' "$tmp/$name.out" >"$tmp/$name.rows"
    awk '/ rc=[0-9]+ warnings=/ {s = $1; next}
         /^    / {sub(/^ +/, ""); sub(/^drift: /, ""); sub(/^warning: /, "")
                  if (length($0) > 160) $0 = substr($0, 1, 157) "..."
                  print "- " s ": " $0}' "$tmp/$name.out" >"$tmp/$name.warn"
    nn=$(printf '%s' "$N" | sed ':a; s/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/; ta')
    {
        printf 'N = %s, d = %s (`gen_rows %s %s`; `sh bench/cv/defaults.sh ROWS REF NAME...`):\n' "$nn" "$D" "$N" "$D"
        echo
        echo '| sampler | max \|z\| | worst sd ratio | wall s | passes (chain 1) | warnings |'
        echo '|---|---|---|---|---|---|'
        cat "$tmp/$name.rows"
        if [ -s "$tmp/$name.warn" ]; then
            echo
            echo 'The warnings (each cut to 160 characters):'
            echo
            cat "$tmp/$name.warn"
        fi
        echo
        mem=$(awk '/^MemTotal:/ {printf "%.0f", $2 / 1048576}' /proc/meminfo)
        args="--only ${name#defaults-} --${name#defaults-} $2"
        [ "$samplers" = "$all" ] || args="$args --samplers \"$samplers\""
        printf 'Measured by `make measure-defaults` (bench/measure-defaults.sh %s) on %s, host %s: %s cores, %s GB memory, Linux %s; load average %s at the start, %s at the end.\n' \
            "$args" "$(date -u '+%Y-%m-%d at %H:%M UTC')" \
            "$(uname -n)" "$(nproc)" "$mem" "$(uname -r)" "$l0" "$(load)"
    } >"$tmp/$name"
    sh "$top/doc/write-block.sh" "$doc" "$name" "$tmp/$name"
}

if [ -z "$only" ] || [ "$only" = small ]; then
    table defaults-small "$small" || status=1
fi
if [ -z "$only" ] || [ "$only" = large ]; then
    table defaults-large "$large" || status=1
fi
exit $status
