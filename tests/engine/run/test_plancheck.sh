#!/bin/sh
# test_plancheck.sh: after a minibatch run centred at a mode, the kept
# draws' spread is compared with the Laplace approximation there, and a
# sampler biased in a known way is named.  The target is Gaussian in
# closed form: U(theta) = sum_i |theta - c_i|^2 / 2 over 2000 rows, the
# posterior N(mean c, I / 2000), so its Laplace approximation is exact.
# sghmc with noise sigma and friction gamma samples the target at
# temperature sigma^2 / (2 gamma): its draws' sd is sqrt(T) times the
# posterior's.  T = 0.64 (sd ratio 0.8) must be reported as too narrow,
# T = 1.69 (1.3) as too wide, and T = 1 (sigma's default) and the
# engine's plan for sgld, right in closed form, must pass silently.
set -u
bin=${DRIFT_BIN:-./drift}
src=${srcdir:-.}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/drift-plancheck.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
model=$src/examples/gaussian/gaussian.drift
awk 'BEGIN { srand(7); print "c.1,c.2";
             for (i = 0; i < 2000; i++) {
                 u = rand(); v = rand(); w = rand(); z = rand();
                 printf "%.6f,%.6f\n",
                     sqrt(-2 * log(1 - u)) * cos(6.283185307 * v) + 1,
                     sqrt(-2 * log(1 - w)) * cos(6.283185307 * z) - 2 } }' \
    >"$tmp/rows.csv"

# run NAME ARGS...: the run's stderr in $tmp/NAME.err
run() {
    name=$1
    shift
    "$bin" sample "$model" --data "$tmp/rows.csv" --quiet \
        --out "$tmp/$name.csv" "$@" 2>"$tmp/$name.err" ||
        fail "$name: exit status $?: $(cat "$tmp/$name.err")"
}
sg="--sampler sghmc --gradient cv --set h=0.01 --iter 40000 --warmup 2000"

# shellcheck disable=SC2086
run cold $sg --set sigma=1.1313708 --seed 1
grep -q "spread narrower than the posterior's Gaussian approximation" \
    "$tmp/cold.err" || fail "T = 0.64 not reported: $(cat "$tmp/cold.err")"
grep -q "2 of 2 parameters" "$tmp/cold.err" ||
    fail "T = 0.64: not both parameters named: $(cat "$tmp/cold.err")"
# shellcheck disable=SC2086
run hot $sg --set sigma=1.8384776 --seed 1
grep -q "spread wider than" "$tmp/hot.err" ||
    fail "T = 1.69 not reported: $(cat "$tmp/hot.err")"
for seed in 1 2 3; do
    # shellcheck disable=SC2086
    run right$seed $sg --seed $seed
    grep -q "Gaussian approximation" "$tmp/right$seed.err" &&
        fail "T = 1, seed $seed: reported: $(cat "$tmp/right$seed.err")"
done
run plan --sampler sgld --seed 1
grep -q "Gaussian approximation" "$tmp/plan.err" &&
    fail "sgld's plan reported: $(cat "$tmp/plan.err")"
[ "$fails" -eq 0 ] || exit 1
echo "all passed"
