#!/bin/sh
# Judge drift against posteriordb's reference posteriors.
#
#   sh tests/posteriordb/run.sh DRIFT [--fast] [NAME...]
#
# For each posterior (default: every name in posteriors.txt; --fast: those
# marked `fast` there; or the NAMEs given) this runs
#
#   DRIFT sample NAME/model.drift [--data NAME/rows.csv] [--data NAME/data.json] \
#       --seed 1 --out TMP/NAME.csv $DRIFT_FLAGS
#
# with no sampler or tuning flags of its own (drift's defaults; put any in
# the environment variable DRIFT_FLAGS, e.g. "--sampler mala --warmup 1000"),
# pools the draws of every chain (TMP/NAME.csv, or TMP/NAME_1.csv,
# TMP/NAME_2.csv ... with --chains K), and compares each parameter of
# NAME/reference.csv with the draws' mean and sd:
#
#   pass  iff  |mean - ref_mean| <= 0.2 ref_sd  and  0.8 <= sd / ref_sd <= 1.25
#
# for every parameter.  One line per posterior (parameters, worst |z| of the
# means, worst sd ratio (the one farthest from 1, as a factor), verdict,
# wall seconds), then `N passed, M failed`.  Exit status 0 when all pass,
# 1 when one fails, 77 (automake's skip) when DRIFT is not an executable,
# 2 on a usage error.
#
# Environment: SET (the directory holding the NAME directories; default
# this script's), MODEL (the model file's name in each, default
# model.drift: model.stan runs posteriordb's own Stan program, see
# stan-survey.sh), DRIFT_FLAGS (extra flags for `drift sample`), DRIFT_TIMEOUT
# (seconds per posterior, through timeout(1) where it exists), KEEP=1 (keep
# the draws directory and print its path), DRIFT_PLUGIN_DIR (set from
# DRIFT's build tree when unset).  Z_TOL (0.2) and SD_LO, SD_HI (0.8, 1.25)
# override the thresholds.

here=$(cd "$(dirname "$0")" && pwd)

if [ $# -lt 1 ]; then
    echo "usage: sh $0 DRIFT [--fast] [NAME...]" >&2
    exit 2
fi
drift=$1
shift
if [ ! -x "$drift" ] || [ -d "$drift" ]; then
    echo "run.sh: $drift: no drift executable; skipped" >&2
    exit 77
fi
case $drift in
/*) ;;
*) drift=$(pwd)/$drift ;;
esac

# A drift in its build tree finds its plugins there.
if [ -z "${DRIFT_PLUGIN_DIR:-}" ]; then
    top=$(dirname "$drift")
    if [ -d "$top/plugins/samplers/.libs" ]; then
        DRIFT_PLUGIN_DIR=$top/plugins/samplers/.libs:$top/plugins/models/.libs
        export DRIFT_PLUGIN_DIR
    fi
fi

fast=0
names=
for a in "$@"; do
    case $a in
    --fast) fast=1 ;;
    -*) echo "run.sh: unknown option $a" >&2; exit 2 ;;
    *) names="$names $a" ;;
    esac
done
if [ -z "$names" ]; then
    if [ $fast = 1 ]; then
        names=$(awk '$2 == "fast" { print $1 }' "$here/posteriors.txt")
    else
        names=$(awk '$1 !~ /^#/ && NF { print $1 }' "$here/posteriors.txt")
    fi
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/drift-pdb.XXXXXX") || exit 2
if [ "${KEEP:-0}" = 1 ]; then
    echo "draws in $tmp"
else
    trap 'rm -rf "$tmp"' EXIT
    trap 'rm -rf "$tmp"; exit 130' INT TERM
fi

now() {
    t=$(date +%s.%N 2>/dev/null)
    case $t in
    *N*|'') date +%s ;;
    *) echo "$t" ;;
    esac
}

to=
if [ -n "${DRIFT_TIMEOUT:-}" ] && command -v timeout >/dev/null 2>&1; then
    to="timeout $DRIFT_TIMEOUT"
fi

printf '%-45s %4s %9s %9s %-5s %8s\n' posterior d 'max|z|' 'worst sd' '' seconds
passed=0
failed=0
for name in $names; do
    dir=${SET:-$here}/$name
    if [ ! -f "$dir/${MODEL:-model.drift}" ] || [ ! -f "$dir/reference.csv" ]; then
        printf '%-45s %4s %9s %9s %-5s %8s  (no such posterior)\n' \
            "$name" - - - FAIL -
        failed=$((failed + 1))
        continue
    fi
    set --
    [ -f "$dir/rows.csv" ] && set -- --data "$dir/rows.csv"
    [ -f "$dir/data.json" ] && set -- "$@" --data "$dir/data.json"
    t0=$(now)
    # DRIFT_FLAGS is split on blanks on purpose.
    # shellcheck disable=SC2086
    $to "$drift" sample "$dir/${MODEL:-model.drift}" "$@" --seed 1 \
        --out "$tmp/$name.csv" $DRIFT_FLAGS >"$tmp/$name.log" 2>&1
    rc=$?
    t1=$(now)
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    files=
    if [ -f "$tmp/$name.csv" ]; then
        files=$tmp/$name.csv
    else
        k=1
        while [ -f "$tmp/${name}_$k.csv" ]; do
            files="$files $tmp/${name}_$k.csv"
            k=$((k + 1))
        done
    fi
    if [ -z "$files" ]; then
        why=$(grep -v '^drift: chain' "$tmp/$name.log" | head -n 1)
        printf '%-45s %4s %9s %9s %-5s %8s  (drift exit %s: %s)\n' \
            "$name" - - - FAIL "$secs" "$rc" "$why"
        failed=$((failed + 1))
        continue
    fi
    # shellcheck disable=SC2086
    line=$(awk -F, -v ztol="${Z_TOL:-0.2}" -v lo="${SD_LO:-0.8}" \
        -v hi="${SD_HI:-1.25}" -v rc="$rc" '
        FNR == 1 { fileno++; header = 0 }
        fileno == 1 {                      # reference.csv: name,mean,sd
            if (FNR > 1) { nref++; rname[nref] = $1; rmean[$1] = $2; rsd[$1] = $3 }
            next
        }
        /^#/ || NF == 0 { next }
        !header {                          # a draws file header
            header = 1
            for (i = 1; i <= NF; i++) col[i] = $i
            ncol = NF
            next
        }
        {
            if (NF != ncol) { bad = "ragged draws file"; next }
            for (i = 1; i <= ncol; i++) {
                c = col[i]
                if (c ~ /__$/) continue
                v = $i
                if (v !~ /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/) {
                    nonfinite[c] = 1; continue
                }
                v += 0
                n[c]++
                # Welford: stable for means far from zero (earnings)
                dlt = v - m[c]; m[c] += dlt / n[c]; s2[c] += dlt * (v - m[c])
            }
        }
        END {
            zmax = 0; worst = 1; ok = 1; why = ""
            for (k = 1; k <= nref; k++) {
                p = rname[k]
                if (p in nonfinite) { ok = 0; why = why " " p ":non-finite"; continue }
                if (!(p in n) || n[p] < 2) { ok = 0; why = why " " p ":missing"; continue }
                sd = sqrt(s2[p] / (n[p] - 1))
                z = (m[p] - rmean[p]) / rsd[p]; if (z < 0) z = -z
                r = sd / rsd[p]
                if (z > zmax) zmax = z
                f = r >= 1 ? r : (r > 0 ? 1 / r : 1e300)
                fw = worst >= 1 ? worst : 1 / worst
                if (f > fw) worst = r
                if (z > ztol || r < lo || r > hi) ok = 0
            }
            if (bad != "") { ok = 0; why = why " " bad }
            printf "%d %.3g %.3g %s%s\n", nref, zmax, worst, ok ? "pass" : "FAIL", \
                why == "" ? "" : "  (" substr(why, 2) ")"
        }' "$dir/reference.csv" $files)
    set -- $line
    d=$1 z=$2 w=$3 verdict=$4
    shift 4
    if [ "$rc" != 0 ]; then
        # drift failed part-way: its message says more than the columns.
        why=$(grep -v '^drift: chain' "$tmp/$name.log" | head -n 1)
        verdict=FAIL z=- w=-
        set -- "(drift exit $rc: $why)"
    fi
    printf '%-45s %4s %9s %9s %-5s %8s%s\n' "$name" "$d" "$z" "$w" \
        "$verdict" "$secs" "${*:+  $*}"
    if [ "$verdict" = pass ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
    fi
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
