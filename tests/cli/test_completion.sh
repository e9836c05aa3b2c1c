#!/bin/sh
# test_completion.sh: the bash completion (contrib/drift.bash-completion)
# completes drift's commands, each command's options, sampler names after
# --sampler and model names after --model, asking the drift under test
# ($DRIFT_BIN).  Skipped (77) without bash.
set -u
src=${srcdir:-.}
bin=${DRIFT_BIN:-./drift}
command -v bash >/dev/null 2>&1 || { echo "test_completion: SKIP: no bash"; exit 77; }
bash -c '
    . "$1/contrib/drift.bash-completion" || exit 1
    bin=$2
    fail=0
    # want WORDS... -- EXPECTED...: completing the last word gives each
    # EXPECTED.
    want() {
        words=()
        while [ "$1" != -- ]; do words+=("$1"); shift; done
        shift
        COMP_WORDS=("$bin" "${words[@]}")
        COMP_CWORD=${#words[@]}
        COMPREPLY=()
        _drift
        for w in "$@"; do
            case " ${COMPREPLY[*]} " in
            *" $w "*) ;;
            *) echo "FAIL: drift ${words[*]}<TAB> gives \"${COMPREPLY[*]}\", not $w"; fail=1 ;;
            esac
        done
    }
    want sa -- sample samplers
    want su -- summary
    want tr -- translate
    want translate --o -- --out
    want sample --sa -- --sampler --save-warmup
    want sample --num-w -- 
    want sample --sampler sg -- sgld sghmc sgnht
    want sample --sampler nu -- nuts
    want sample --model lo -- logistic
    want sample --emit "" -- draws segments
    want summary --p -- --percentiles
    want data "" -- convert info
    want data convert --rows -- --rows-schema
    exit $fail
' sh "$src" "$bin"
st=$?
[ $st = 0 ] && echo "test_completion: commands, options, sampler and model names complete"
exit $st
