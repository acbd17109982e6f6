#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# The stack-walk benchmark of `make bench`: the probe's cost and each stepper's cost per
# frame at depths 16, 64 and 256 (BUILD/bench/walk: frame pointers, unwind tables,
# libunwind), then stack completeness per stepper (fp, auto: the tables, libunwind):
# the share of samples whose stack reaches main, on a workload built without frame
# pointers (nofp) and on one whose hot path runs through libc callbacks (callbacks).
# About 10 s.
#   bench/walk.sh BUILD_DIR
# Exit status: 0, or 1 with one line on stderr.
set -eu

build=${1:?usage: bench/walk.sh BUILD_DIR}
for f in "$build/bench/walk" "$build/libprof.so" "$build/prof" "$build/workloads/nofp" \
    "$build/workloads/callbacks"; do
    [ -e "$f" ] || { echo "bench: $f is missing (make all $build/bench/walk)" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== stack walk cost (best of 5 batches)"
"$build/bench/walk"

echo "== stack completeness: samples whose stack reaches main (PROF_FREQ=1000, 1 s)"
printf '%-10s %-10s %8s %10s\n' workload stepper samples "to main"
for w in nofp callbacks; do
    for u in fp auto libunwind; do
        PROF_UNWIND=$u PROF_FREQ=1000 PROF_OUTPUT="$tmp/$w.$u.prof" \
            LD_PRELOAD="$build/libprof.so" "$build/workloads/$w" 1 2>"$tmp/err"
        "$build/prof" report --format folded "$tmp/$w.$u.prof" 2>/dev/null |
            awk -v w="$w" -v u="$u" '
                { n = $NF; total += n; if ($0 ~ /^main;/) main += n }
                END { printf "%-10s %-10s %8d %9.1f%%\n", w, u, total,
                      total ? 100 * main / total : 0 }'
        if grep -q 'using frame pointers' "$tmp/err"; then
            echo "           (libprof was built without libunwind)"
        fi
    done
done
