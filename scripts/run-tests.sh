#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Runs the Criterion test binaries of a build and prints one closing line with the totals.
#   scripts/run-tests.sh BUILD_DIR [unit|e2e]...
# Exit status: 0 when every test passed, 1 otherwise.
set -u
build=$1
shift
suites=${*:-unit e2e}
# The caches of the library (unwind tables) and of prof (lines) are the build's, not the
# user's who runs the tests.
LIBPROF_CACHE_DIR=${LIBPROF_CACHE_DIR:-$(cd "$build" && pwd)/cache}
export LIBPROF_CACHE_DIR
passed=0
failed=0
for s in $suites; do
    bin="$build/tests/$s"
    if [ ! -x "$bin" ]; then
        echo "run-tests: $bin is missing" >&2
        failed=$((failed + 1))
        continue
    fi
    echo "== $s"
    # The end-to-end tests measure CPU shares, so they run one at a time.
    jobs=2
    [ "$s" = e2e ] && jobs=1
    out=$("$bin" --jobs "$jobs" 2>&1)
    rc=$?
    printf '%s\n' "$out"
    line=$(printf '%s\n' "$out" | grep 'Synthesis:' | tail -n 1)
    p=$(printf '%s\n' "$line" | sed -n 's/.*Passing: \([0-9]*\).*/\1/p')
    f=$(printf '%s\n' "$line" | sed -n 's/.*Failing: \([0-9]*\).*/\1/p')
    c=$(printf '%s\n' "$line" | sed -n 's/.*Crashing: \([0-9]*\).*/\1/p')
    passed=$((passed + ${p:-0}))
    failed=$((failed + ${f:-0} + ${c:-0}))
    if [ "$rc" != 0 ] && [ "${f:-0}" = 0 ] && [ "${c:-0}" = 0 ]; then
        failed=$((failed + 1))
    fi
done
echo "tests: $passed passed, $failed failed"
[ "$failed" = 0 ]
