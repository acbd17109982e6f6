#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# The benchmark behind `make bench`: libprof against gperftools' libprofiler and `perf
# record` on the shares workload, plus the start-up cost of each on /bin/true
# (bench/bench.py, about 2 minutes); where each microsecond of a sample goes, piece by
# piece, next to `perf record -g` (bench/decompose.py, about 4 minutes) and what a second
# thread costs a program that unmaps memory (bench/tlb.c) and what a thread label's call
# costs (bench/labels.c, seconds); the price on CPU-bound work
# at 1000 Hz and the default rate, next to `perf record -g` (bench/cost.py, about 8
# minutes); what a process's start and exit cost, /bin/true and python3 -c pass, and a loop
# of fork and _exit, plain, with an empty preloaded library, libprof idle and sampling, and
# under perf record -g (bench/startexit.py, about 6 minutes); nginx under wrk and redis under
# redis-benchmark on the loopback, plain, under libprof and perf record -g (bench/services.py,
# about 5 minutes); then each timer source's
# delivered rate at 100 to 10000 Hz (bench/rates.py, about 1 minute); `prof record -p` against `perf record -p` and
# `prof stacks` against gdb on a running process (bench/attach.py, about 30 s); stacks on
# Debian's python3, sqlite3 and xz against perf's two call graphs (bench/unwind.py, about
# 3 minutes); and the overhead matrix on the deep workload:
# 16 and 64 frames, 1 and 2 threads, cost per sample, memory, bytes per sample
# (bench/overhead.py, about 5 minutes on an idle machine). docs/BENCH.md has the results.
#   bench/run.sh BUILD_DIR
# Settings (environment): BENCH_ROUNDS (7 for bench.py; overhead.py uses BENCH_OVH_ROUNDS,
# 5), BENCH_HZ (1000), BENCH_SECONDS (2), BENCH_STARTUP (100 runs), BENCH_GPERF_LIB (the
# path of gperftools' libprofiler.so), BENCH_OVH_SECONDS (1), BENCH_HIGH_HZ (10000),
# BENCH_LONG=1 (adds a 60-second bytes-per-sample run).
# Exit status: 0, or 1 with one line on stderr.
set -eu

build=${1:?usage: bench/run.sh BUILD_DIR}
here=$(dirname "$0")

command -v python3 >/dev/null 2>&1 || { echo "bench: python3 is missing" >&2; exit 1; }
for f in "$build/libprof.so" "$build/workloads/shares" "$build/workloads/deep" \
    "$build/workloads/parked"; do
    [ -e "$f" ] || { echo "bench: $f is missing (make all $build/workloads/shares)" >&2; exit 1; }
done
if [ ! -e "${BENCH_GPERF_LIB:-/usr/lib/x86_64-linux-gnu/libprofiler.so}" ]; then
    echo "bench: gperftools is missing (scripts/setup.sh bench)" >&2
    exit 1
fi
python3 "$here/bench.py" "$build"
python3 "$here/decompose.py" "$build"
python3 "$here/cost.py" "$build"
python3 "$here/startexit.py" "$build"
for t in none idle writer busy; do "$build/bench/tlb" -t $t; done
# A thread label's cost, ns a call: without libprof (the weak calls), idle, sampling.
echo "== thread labels: ns a call, best of 5 runs of 2 000 000"
echo "without libprof:"; "$build/bench/labels"
echo "libprof idle (PROF_START=0):"
LD_PRELOAD="$build/libprof.so" PROF_START=0 PROF_OUTPUT=/dev/null "$build/bench/labels"
echo "libprof sampling at 1000 Hz:"
LD_PRELOAD="$build/libprof.so" PROF_FREQ=1000 PROF_OUTPUT="${TMPDIR:-/tmp}/labels-bench.prof" \
    "$build/bench/labels"
rm -f "${TMPDIR:-/tmp}/labels-bench.prof"
python3 "$here/services.py" "$build"
python3 "$here/programs.py" "$build"
python3 "$here/rates.py" "$build"
python3 "$here/attach.py" "$build"
python3 "$here/unwind.py" "$build"
exec python3 "$here/overhead.py" "$build"
