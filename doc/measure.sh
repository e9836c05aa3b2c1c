#!/bin/sh
# measure.sh: measures the figures the documentation quotes and writes them
# in place, between the lines "<!-- measured: NAME -->" and
# "<!-- /measured -->" of README.md and doc/*.md, so that no figure in
# them is typed by hand or goes stale: rerun it after a change that moves
# them (make measure-docs does, with the build's drift).
#
#   doc/measure.sh [--check]
#
# DRIFT_BIN names the drift to run (default: ./drift, else drift on PATH);
# the sampler plugins are those it finds (make measure-docs points it at
# the build's).  With --check nothing is written: the blocks' texts are
# compared with a fresh measurement, times within a factor of 5 (the
# machine's load varies, a stale figure is off by more; not in a sanitizer
# build, DRIFT_SANITIZED=yes), the rest in form;
# exit status 1 when one differs (tests/docs/test_docs.sh runs this).
#
# The blocks:
#   pima-run    the account lines of the README's first command (the
#               logistic example on the Pima data, 4 chains of nuts, seed 1)
#   pima-table  that run's posterior means and sds beside R's glm (whose
#               figures, from examples/logistic/make-pima.R's data, are
#               R's and fixed)
#   pima-stats  its ESS, R-hat, divergences, step size, leapfrog steps and
#               seconds per chain
#   help        every command's --help (doc/reference.md), compared exactly
# Blocks named scaling-* and defaults-* hold figures too heavy to measure
# here (bench/measure-scaling.sh, bench/measure-defaults.sh write them);
# they are skipped, and tests/docs/test_docs.sh checks that each says what
# produced it, when and where.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
check=0
[ "${1:-}" = --check ] && check=1
bin=${DRIFT_BIN:-}
if [ -z "$bin" ]; then
    if [ -x ./drift ]; then bin=$(pwd)/drift; else bin=drift; fi
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/drift-measure-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# ---- the measurements ----
(cd "$tmp" && "$bin" sample "$src/examples/logistic/logistic.drift" \
    --data "$src/examples/logistic/pima-train.csv" --seed 1 --out pima.csv) \
    >"$tmp/run.out" 2>"$tmp/run.err" || {
    echo "measure.sh: the pima run failed:" >&2
    cat "$tmp/run.err" >&2
    exit 1
}
grep '^drift: chain ' "$tmp/run.err" | sed 's/^/    /' >"$tmp/pima-run"
(cd "$tmp" && "$bin" summary pima_1.csv pima_2.csv pima_3.csv pima_4.csv \
    --csv summary.csv >/dev/null) || exit 1
awk -F, '
    NR == 1 {next}
    $1 ~ /^w\./ {n++; name[n] = $1; mean[n] = $2; sd[n] = $4
                 eb = $8 + 0; if (!lo || eb < lo) lo = eb; if (eb > hi) hi = eb
                 if ($10 + 0 > rh) rh = $10 + 0}
    END {
        printf "| |"; for (i = 1; i <= n; i++) printf " %s |", name[i]; print ""
        printf "|---|"; for (i = 1; i <= n; i++) printf "---|"; print ""
        printf "| drift nuts mean |"; for (i = 1; i <= n; i++) printf " %.3f |", mean[i]; print ""
        printf "| drift nuts sd |"; for (i = 1; i <= n; i++) printf " %.3f |", sd[i]; print ""
        print "| R glm estimate | -0.956 | 0.347 | 1.017 | -0.055 | -0.022 | 0.513 | 0.559 | 0.452 |"
        print "| R glm std. error | 0.199 | 0.218 | 0.215 | 0.213 | 0.264 | 0.263 | 0.204 | 0.242 |"
        printf "%d %d %.2f\n", lo, hi, rh > "/dev/stderr"
    }' "$tmp/summary.csv" >"$tmp/pima-table" 2>"$tmp/ess" || exit 1
read lo hi rh <"$tmp/ess"
# Divergences, step size, leapfrog steps: from the files; seconds per
# chain: from the account lines.
stats=$(cat "$tmp"/pima_[1-4].csv | awk -F, '
    /^lp__,/ {for (i = 1; i <= NF; i++) col[$i] = i; next}
    /^# Step size = / {st += $0 ~ /=/ ? substr($0, 15) : 0; ns++; next}
    /^#/ || !NF {next}
    {div += $col["divergent__"]; lf += $col["n_leapfrog__"]; n++}
    END {printf "%d %.2f %.0f", div, st / ns, lf / n}')
secs=$(sed -n 's/.* draws in \([0-9.e+-]*\) s -> .*/\1/p' "$tmp/pima-run" |
    awk '{s += $1; n++} END {printf "%.2g", s / n}')
set -- $stats
draws=$(awk -F, '/^lp__,/ {h = 1; next} h && !/^#/ && NF {n++} END {print n}' "$tmp"/pima_[1-4].csv)
printf '(bulk ESS %s-%s of %s draws for every coefficient, R-hat %.2f, %s\ndivergences, step size %s, %s leapfrog steps per iteration, %s s per\nchain.)\n' \
    "$lo" "$hi" "$draws" "$rh" "$1" "$2" "$3" "$secs" >"$tmp/pima-stats"

# Every command's --help, for doc/reference.md (the install prefix left
# out of it).
{
    echo '```'
    "$bin" --help
    echo '```'
    for c in $("$bin" --help | awk '/^commands:/ {f = 1; next} f && /^  [a-z]/ {print $1} f && /^$/ {exit}'); do
        hs=$c
        [ "$c" = data ] && hs="data convert|data info"
        IFS='|'
        for h in $hs; do
            unset IFS
            printf '\n### drift %s\n\n```\n' "$h"
            # shellcheck disable=SC2086
            "$bin" $h --help
            echo '```'
            IFS='|'
        done
        unset IFS
    done
} | sed -E 's|/[^ )]*/lib/drift/plugins|PREFIX/lib/drift/plugins|g' >"$tmp/help"

# ---- the blocks, written or checked ----
# A block's text with times (a number before " s") as one token each, for
# --check, and the times apart.
norm() { sed -E 's/[0-9.]+(e[-+]?[0-9]+)? s( |$|\))/T s\2/g; s/ESS [0-9]+-[0-9]+/ESS N-N/; s/[0-9]+\.[0-9]+e\+[0-9]+ data passes/P data passes/; s/-?[0-9]+\.[0-9]{3}/X/g; s/step size [0-9.]+/step size S/; s/[0-9]+ leapfrog/L leapfrog/; s/R-hat [0-9.]+/R-hat R/' "$1"; }
secs_of() { grep -oE '[0-9.]+(e[-+]?[0-9]+)? s( |$|\))' "$1" | sed 's/ s.*//'; }
status=0
for f in "$src/README.md" "$src"/doc/*.md; do
    names=$(sed -n 's/^<!-- measured: \([a-z-]*\) -->$/\1/p' "$f")
    [ -n "$names" ] || continue
    for name in $names; do
        case $name in scaling-* | defaults-*) continue ;; esac
        [ -f "$tmp/$name" ] || { echo "measure.sh: $f: no measurement named $name" >&2; status=1; continue; }
        awk -v n="$name" '$0 == "<!-- measured: " n " -->" {f = 1; next}
            f && $0 == "<!-- /measured -->" {exit} f {print}' "$f" >"$tmp/old"
        if [ $check = 1 ]; then
            if { [ "$name" = help ] && ! cmp -s "$tmp/old" "$tmp/help"; } ||
               [ "$(norm "$tmp/old")" != "$(norm "$tmp/$name")" ]; then
                echo "FAIL: $f: the block $name is not what measure.sh measures now:"
                diff "$tmp/old" "$tmp/$name" | sed 's/^/    /'
                status=1
                continue
            fi
            secs_of "$tmp/old" >"$tmp/t.old"
            secs_of "$tmp/$name" >"$tmp/t.new"
            # (an instrumented build, DRIFT_SANITIZED=yes, runs 2-20x
            # slower: its times are not compared)
            if [ "${DRIFT_SANITIZED:-no}" != yes ] && ! paste "$tmp/t.old" "$tmp/t.new" | awk '
                    {r = $1 / $2; if (!($2 > 0) || r > 5 || r < 0.2) bad = 1}
                    END {exit bad}'; then
                echo "FAIL: $f: the times of block $name are stale (measured now, by doc/measure.sh):"
                diff "$tmp/old" "$tmp/$name" | sed 's/^/    /'
                status=1
            fi
        else
            awk -v n="$name" -v new="$tmp/$name" '
                $0 == "<!-- measured: " n " -->" {print; while ((getline l < new) > 0) print l; skip = 1; next}
                skip && $0 == "<!-- /measured -->" {skip = 0}
                !skip {print}' "$f" >"$tmp/new.md" && cat "$tmp/new.md" >"$f"
        fi
    done
done
[ $check = 0 ] && echo "measure.sh: the measured blocks of README.md and doc/*.md are rewritten"
exit $status
