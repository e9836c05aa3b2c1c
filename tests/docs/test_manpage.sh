#!/bin/sh
# test_manpage.sh: the manual page docs/drift.1 (or $MANPAGE) describes
# every command that 'drift --help' ($DRIFT_BIN) lists and every option
# that each command's --help prints, so that neither can grow without the
# other.
set -u
man="${MANPAGE:-${srcdir:-.}/docs/drift.1}"
bin="${DRIFT_BIN:-./drift}"
fail=0
[ -r "$man" ] || { echo "test_manpage: cannot read $man"; exit 1; }
commands=$("$bin" --help | awk '/^commands:/ {f = 1; next} f && /^  [a-z]/ {print $1} f && /^$/ {exit}')
[ -n "$commands" ] || { echo "test_manpage: '$bin --help' lists no commands"; exit 1; }
for c in $commands; do
    if ! grep -q "^\.SS \"drift $c\"" "$man"; then
        echo "FAIL: command '$c' (drift --help) has no section .SS \"drift $c\" in $man"
        fail=1
    fi
    helps="$c"
    [ "$c" = data ] && helps="data convert|data info"
    IFS='|'
    for h in $helps; do
        unset IFS
        # shellcheck disable=SC2086
        opts=$("$bin" $h --help | awk '/^options:/ {f = 1; next} f && /^  --/ {print $1}')
        [ -n "$opts" ] || { echo "FAIL: 'drift $h --help' prints no options"; fail=1; }
        for o in $opts; do
            esc=$(printf '%s\n' "$o" | sed 's/-/\\\\-/g')
            if ! grep -q -- "$esc" "$man"; then
                echo "FAIL: option $o of 'drift $h' is not documented in $man"
                fail=1
            fi
        done
        IFS='|'
    done
    unset IFS
done
[ $fail = 0 ] && echo "test_manpage: every command and option of drift --help is in $man"
exit $fail
