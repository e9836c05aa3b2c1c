#!/bin/sh
# tsan-smoke.sh: runs tests/tsan/tsan_smoke.c built with ThreadSanitizer (make
# check builds it when configure found $CC able to build and run
# -fsanitize=thread programs; otherwise this test is skipped, exit 77).
# Any data race reported fails it.
if [ "$DRIFT_TSAN_USABLE" != yes ] || [ ! -x "$DRIFT_TSAN_SMOKE" ]; then
    echo "tsan-smoke: skipped: no ThreadSanitizer smoke in this build (the compiler cannot build such programs, or this is an --enable-sanitizers build, whose plugins cannot load into it)"
    exit 77
fi
# halt_on_error: the first race fails the test with its report.
TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 $TSAN_OPTIONS"
export TSAN_OPTIONS
exec "$DRIFT_TSAN_SMOKE"
