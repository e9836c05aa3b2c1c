#!/bin/sh
# test_resume.sh: checkpoints and --resume.  A run of
# sgld, sghmc (under --gradient saga: the engine's table of row gradients
# is checkpointed), agld (tmu-rr), sbps, mala, sgnht (its preconditioner
# learned in warmup, checkpointed inside warmup) and nuts under
# metric=nutpie and nutpie_lowrank (its own metric estimators,
# checkpointed inside warmup)
# with --checkpoint-every is
# killed with SIGKILL (its whole process group, as a power loss would stop
# it) at a random moment after its first checkpoint, four times each, and
# resumed: every chain's file must be byte for byte the file of the same
# run left alone, but for the elapsed times of the trailer (wall-clock
# seconds) and the file's own name.  Then SIGINT (the run stops, keeps a
# checkpoint and says how to go on), and the refusals: a changed data
# file, another build, a damaged state, a sampler without a checkpoint
# callback, other options beside --resume, an unfinished checkpoint in
# the way of a fresh run.
set -u
# A background job of a shell without job control starts with SIGINT
# ignored, which drift honours; the runs this script stops with SIGINT
# start through `env --default-signal=INT,HUP`, as from a terminal.
src=${srcdir:-.}
bin=${DRIFT_BIN:-./drift}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/drift-resume.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
model=$src/examples/logistic/logistic.drift
cp "$src/examples/logistic/pima-train.csv" "$tmp/data.csv"
cd "$tmp" || exit 1

# The file without what legitimately differs: elapsed seconds and names.
norm() {
    sed -e 's/[0-9.]* seconds (/T seconds (/' -e "/file = /s/$2/OUT/g" "$1"
}

# Delays after the first checkpoint, as fractions of the time a
# checkpointed run of the same sampler takes from its first save to its end
# (measured below on this machine: a fixed delay in seconds lets a fast
# machine finish most runs before their kill, and a run that ended before
# its kill proves nothing): random moments from a fixed seed, the same
# fractions on every run of the test.
fracs=$(awk 'BEGIN { srand(20261125); for (i = 0; i < 32; i++)
                     printf "%.3f ", 0.05 + rand() * 0.6 }')
set -- $fracs
now() { date +%s.%N; }

killed=0
resumed=0
# sgld and sghmc choose their step size (h=auto): the pilots run again
# on --resume and must choose the same.
for spec in "sgld --iter 60000 --warmup 100" \
            "sghmc --iter 60000 --warmup 100 --gradient saga" \
            "tmu-rr --iter 60000 --warmup 100" \
            "sbps --passes 60000" \
            "mala --iter 40000 --warmup 1000" \
            "sgnht --set precond=warmup --set h=0.01 --gradient cv --warmup 40000 --iter 20000" \
            "nuts --set metric=nutpie --warmup 40000 --iter 2000" \
            "nuts --set metric=nutpie_lowrank --warmup 40000 --iter 2000"; do
    s=${spec%% *}
    opts=${spec#* }
    # shellcheck disable=SC2086
    "$bin" sample "$model" --data data.csv --sampler $s --chains 2 \
        --seed 11 --quiet --out "ref-$s.csv" $opts 2>/dev/null ||
        fail "$s: the uninterrupted run failed"
    # The same run with its checkpoints, left alone: its files must be the
    # reference's, and it times the window the kills below fall in.
    rm -rf "whole-$s"*
    t0=$(now)
    # shellcheck disable=SC2086
    "$bin" sample "$model" --data data.csv --sampler $s --chains 2 \
        --seed 11 --quiet --out "whole-$s.csv" --checkpoint-every 200 \
        $opts 2>/dev/null &
    pid=$!
    t1=
    while kill -0 $pid 2>/dev/null; do
        if [ -z "$t1" ] && [ -f "whole-$s.ckpt/chain_1.state" ]; then
            t1=$(now)
        fi
        sleep 0.01
    done
    wait $pid || fail "$s: the checkpointed run failed"
    t2=$(now)
    window=$(awk -v a="${t1:-$t0}" -v b="$t2" 'BEGIN { print b - a }')
    echo "$s: ${window} s from the first save to the end"
    for k in 1 2; do
        norm "ref-${s}_$k.csv" "ref-$s" >a.txt
        norm "whole-${s}_$k.csv" "whole-$s" >b.txt
        cmp -s a.txt b.txt ||
            fail "$s chain $k: checkpointing changed the draws"
    done
    for r in 1 2 3 4; do
        out=run-$s-$r
        rm -rf "$out"*
        # shellcheck disable=SC2086
        setsid "$bin" sample "$model" --data data.csv --sampler $s \
            --chains 2 --seed 11 --quiet --out "$out.csv" \
            --checkpoint-every 200 $opts 2>/dev/null &
        pid=$!
        # Wait for the first checkpoint, then a random moment.
        n=0
        while [ ! -f "$out.ckpt/chain_1.state" ] && [ $n -lt 600 ] &&
              kill -0 $pid 2>/dev/null; do
            sleep 0.05
            n=$((n + 1))
        done
        sleep "$(awk -v f="$1" -v w="$window" 'BEGIN { printf "%.3f", f * w }')"
        shift
        if kill -9 -$pid 2>/dev/null; then
            killed=$((killed + 1))
        fi
        wait $pid 2>/dev/null
        # The group's other processes (the run's child, which holds the
        # checkpoint's lock) may outlive the one waited for on a busy
        # machine: the resume would find the lock taken.
        n=0
        while kill -0 -$pid 2>/dev/null && [ $n -lt 200 ]; do
            sleep 0.05
            n=$((n + 1))
        done
        if [ -d "$out.ckpt" ]; then
            "$bin" sample --resume "$out.ckpt" --quiet 2>/dev/null ||
                fail "$s run $r: --resume failed"
            resumed=$((resumed + 1))
        fi
        [ -d "$out.ckpt" ] && fail "$s run $r: the checkpoint outlived the run"
        for k in 1 2; do
            if ! norm "ref-${s}_$k.csv" "ref-$s" >a.txt ||
               ! norm "${out}_$k.csv" "$out" >b.txt ||
               ! cmp -s a.txt b.txt; then
                fail "$s run $r chain $k: the resumed file differs"
                diff a.txt b.txt | head -5
            fi
        done
    done
done
echo "killed $killed of 32 runs, resumed $resumed"
# A run that ended before its kill proves nothing: most must be cut.
[ "$resumed" -ge 24 ] || fail "only $resumed of 32 runs were resumed"

# SIGINT: the run stops, keeps its checkpoint, says how to go on.
env --default-signal=INT,HUP "$bin" sample "$model" --data data.csv --sampler mala --chains 2 --seed 11 \
    --quiet --out sigint-run.csv --checkpoint-every 500 --iter 40000 \
    --warmup 1000 2>sigint-run.err &
pid=$!
n=0
# Until chain 1 has saved draws, not only its warmup (a chain stopped in
# warmup leaves no file, by design): its rows file grows past the header.
rows_saved() {
    [ -f sigint-run.ckpt/chain_1.state ] &&
        [ "$(wc -c <sigint-run.ckpt/chain_1.rows 2>/dev/null || echo 0)" -gt 4096 ]
}
while ! rows_saved && [ $n -lt 600 ]; do
    sleep 0.05
    n=$((n + 1))
done
kill -INT $pid
wait $pid
st=$?
[ $st -eq 130 ] || fail "SIGINT: exit status $st, not 130"
grep -q "drift sample --resume sigint-run.ckpt" sigint-run.err ||
    fail "SIGINT: no word of how to resume: $(cat sigint-run.err)"
grep -q "^# drift: interrupted" sigint-run_1.csv ||
    fail "SIGINT: the file kept is not marked interrupted"
"$bin" sample --resume sigint-run.ckpt --quiet 2>/dev/null || fail "SIGINT: resume"
for k in 1 2; do
    norm "ref-mala_$k.csv" ref-mala >a.txt
    norm "sigint-run_$k.csv" sigint-run >b.txt
    cmp -s a.txt b.txt || fail "SIGINT: chain $k differs once resumed"
done

# SIGKILL to a run and to the worker its guard forked (which would die of
# its parent's death only a moment later, still holding the checkpoint's
# lock when the next command starts), as a power loss stops both; returns
# once both are gone.
kill_tree() {
    parent=$1
    kids=""
    for st in /proc/[0-9]*/stat; do
        fields=$(cat "$st" 2>/dev/null) || continue
        # pid (comm) state ppid ...
        set -- $fields
        [ "${4:-}" = "$parent" ] && kids="$kids $1"
    done
    kill -KILL "$parent" $kids 2>/dev/null
    wait "$parent" 2>/dev/null
    for k in $kids; do
        n=0
        while [ -e "/proc/$k" ] && [ $n -lt 200 ]; do
            sleep 0.05
            n=$((n + 1))
        done
    done
}

# A checkpoint to refuse: stopped after its first save.  An explicit
# step size: the step-size pilots of h=auto (a tenth of 200000 steps
# each) would only delay the first save.
make_ckpt() {
    rm -rf stop*
    "$bin" sample "$model" --data "$1" --sampler sgld --set h=1e-4 \
        --chains 1 --seed 3 \
        --quiet --out stop.csv --checkpoint-every 100 --iter 200000 \
        2>/dev/null &
    p=$!
    # (the given step's check runs its pilots before the first save: under
    # load that can take most of a minute)
    n=0
    while [ ! -f stop.ckpt/chain_1.state ] && [ $n -lt 2400 ]; do
        sleep 0.05
        n=$((n + 1))
    done
    kill_tree $p
    [ -f stop.ckpt/chain_1.state ] ||
        fail "make_ckpt: no checkpoint after 120 s; the refusals below test nothing"
}
# refused: a message naming $2 and exit status 2
expect_refusal() {
    "$bin" sample --resume stop.ckpt --quiet 2>err.txt
    st=$?
    [ $st -eq 2 ] || fail "$1: exit status $st, not 2"
    grep -q "$2" err.txt || fail "$1: the message does not say '$2': $(cat err.txt)"
}

cp data.csv data2.csv
make_ckpt data2.csv
echo "1,0,0,0,0,0,0,0,0" >>data2.csv
expect_refusal "changed data" "data.*changed since"

# An edited manifest is damaged (its checksum line); a forged one that
# names another build is refused as such in test_hostile_checkpoint.
make_ckpt data.csv
sed -i 's/^file build drift \([^\t]*\)\t.*/file build drift \1\t1 0/' stop.ckpt/run
expect_refusal "an edited manifest" "run is damaged"

make_ckpt data.csv
# byte 40 made different from what it was (an 'X' written blindly left
# it as it was one time in 256)
b=$(od -An -tu1 -j40 -N1 stop.ckpt/chain_1.state | tr -d ' ')
[ -n "$b" ] || fail "damaged state: chain_1.state has no byte 40"
printf "\\$(printf %03o $(( (${b:-0} + 1) % 256 )))" |
    dd of=stop.ckpt/chain_1.state bs=1 seek=40 conv=notrunc 2>/dev/null
b2=$(od -An -tu1 -j40 -N1 stop.ckpt/chain_1.state | tr -d ' ')
[ "$b2" != "$b" ] || fail "damaged state: byte 40 unchanged ($b)"
expect_refusal "damaged state" "damaged"

make_ckpt data.csv
"$bin" sample --resume stop.ckpt --iter 5 2>err.txt
[ $? -eq 2 ] && grep -q "takes no other option" err.txt ||
    fail "--resume with other options: $(cat err.txt)"
"$bin" sample "$model" --data data.csv --sampler sgld --quiet --out stop.csv \
    --checkpoint-every 100 2>err.txt
[ $? -eq 2 ] && grep -q "did not finish" err.txt ||
    fail "a fresh run over an unfinished checkpoint: $(cat err.txt)"

plugdir=${DRIFT_TEST_PLUGIN_DIR:-}
if [ -n "$plugdir" ] && [ -f "$plugdir/crashy.so" ]; then
    "$bin" sample "$model" --data data.csv --sampler "$plugdir/crashy.so" \
        --quiet --out c.csv --checkpoint-every 10 2>err.txt
    [ $? -eq 2 ] && grep -q "cannot be checkpointed" err.txt ||
        fail "a sampler without checkpoint: $(cat err.txt)"
    [ -e c.ckpt ] && fail "a refused run left its checkpoint directory"
fi

[ $fails -eq 0 ] || exit 1
echo "test_resume: ok"
