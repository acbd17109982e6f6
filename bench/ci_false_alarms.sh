#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# How often `prof check` is wrong, measured (part of `make bench`; docs/CI.md quotes it).
# On the regress workload (tests/workloads/regress.c, parse_input half of the work):
#
#   1. false alarms, one run a side: CI_PAIRS pairs of runs of the same unchanged program
#      under `prof record` with its defaults, each pair checked with the defaults;
#   2. detection, one run a side: CI_PAIRS pairs of the program against itself with
#      parse_input made 10 % slower, same settings;
#   3. repeated runs: CI_TRIALS trials of CI_RUNS interleaved runs a side at CI_HZ,
#      checked with the defaults: the 10 % slower build against the old one (detection)
#      and the old build's runs split in two halves (false alarms).
#
# Prints one line per pair or trial and a summary per part. About 4 minutes with the
# defaults: CI_PAIRS=20 CI_TRIALS=5 CI_RUNS=12 CI_HZ=4000, CI_MILLIONS=200 (iterations of
# a single run; repeated runs do 400, as the example of docs/CI.md).
#   bench/ci_false_alarms.sh BUILD_DIR
# Exit status: 0 (the numbers are reported, not judged), 1 if something could not run.
set -eu

build=${1:?usage: bench/ci_false_alarms.sh BUILD_DIR}
prof=$build/prof
work=$build/workloads/regress
pairs=${CI_PAIRS:-20}
trials=${CI_TRIALS:-5}
runs=${CI_RUNS:-12}
hz=${CI_HZ:-4000}
millions=${CI_MILLIONS:-200}
for f in "$prof" "$build/libprof.so" "$work"; do
    [ -e "$f" ] || { echo "ci-bench: $f is missing (make all $work)" >&2; exit 1; }
done
tmp=$(mktemp -d /tmp/libprof-ci-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM

# record OUT [prof record options] -- workload args
record() {
    out=$1
    shift
    if ! "$prof" record -o "$out" "$@" >/dev/null 2>&1; then
        echo "ci-bench: prof record failed" >&2
        exit 1
    fi
}

# check BASE... -- NEW...: prints the check's status (0 or 1), logs its first lines
check() {
    status=0
    "$prof" check "$@" >"$tmp/check.out" 2>&1 || status=$?
    [ "$status" -le 1 ] || { cat "$tmp/check.out" >&2; exit 1; }
    echo "$status"
}

# The first finding (or the summary) of the last check, for the log.
first_line() {
    grep -v '^prof: warning: ' "$tmp/check.out" | head -n 1
}

echo "== prof check on regress: $pairs pairs of single runs (default rate), then $trials trials"
echo "   of $runs interleaved runs a side at $hz Hz; parse_input is ~50 % of the work"

alarms=0
i=1
while [ "$i" -le "$pairs" ]; do
    record "$tmp/a.prof" -- "$work" "$millions"
    record "$tmp/b.prof" -- "$work" "$millions"
    s=$(check "$tmp/a.prof" "$tmp/b.prof")
    alarms=$((alarms + s))
    echo "unchanged pair $i: exit $s: $(first_line)"
    i=$((i + 1))
done
echo "false alarms, one run a side: $alarms of $pairs unchanged pairs failed the check"

caught=0
i=1
while [ "$i" -le "$pairs" ]; do
    record "$tmp/a.prof" -- "$work" "$millions"
    record "$tmp/b.prof" -- "$work" -s 10 "$millions"
    s=$(check "$tmp/a.prof" "$tmp/b.prof")
    caught=$((caught + s))
    echo "10 % slower pair $i: exit $s: $(first_line)"
    i=$((i + 1))
done
echo "detection, one run a side: $caught of $pairs pairs with parse_input 10 % slower caught"

# As in docs/CI.md: room for bursts of samples at a high rate on a busy machine.
export PROF_BUFFER_KB=16384
t_caught=0
t_alarms=0
t=1
while [ "$t" -le "$trials" ]; do
    rm -f "$tmp"/base-*.prof "$tmp"/new-*.prof
    r=1
    base_a=
    base_b=
    new=
    while [ "$r" -le "$runs" ]; do        record "$tmp/base-$r.prof" -F "$hz" -- "$work" 400
        record "$tmp/new-$r.prof" -F "$hz" -- "$work" -s 10 400
        if [ "$r" -le $((runs / 2)) ]; then
            base_a="$base_a $tmp/base-$r.prof"
        else
            base_b="$base_b $tmp/base-$r.prof"
        fi
        new="$new $tmp/new-$r.prof"
        r=$((r + 1))
    done
    # shellcheck disable=SC2086 # the lists are space-separated paths without blanks
    s=$(check $base_a $base_b -- $new)
    t_caught=$((t_caught + s))
    echo "trial $t, 10 % slower: exit $s: $(first_line)"
    # shellcheck disable=SC2086
    s=$(check $base_a -- $base_b)
    t_alarms=$((t_alarms + s))
    echo "trial $t, old build's halves: exit $s: $(first_line)"
    t=$((t + 1))
done
echo "detection, $runs runs a side at $hz Hz:" \
    "$t_caught of $trials trials caught parse_input 10 % slower"
echo "false alarms, $((runs / 2)) runs a side at $hz Hz:" \
    "$t_alarms of $trials unchanged comparisons failed"
