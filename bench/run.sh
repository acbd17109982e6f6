#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# The benchmark behind `make bench`: libprof against gperftools' libprofiler and `perf
# record` on the shares workload, plus the start-up cost of each on /bin/true. The work is
# in bench/bench.py; this checks the prerequisites and starts it. About 2 minutes.
#   bench/run.sh BUILD_DIR
# Settings (environment): BENCH_ROUNDS (7), BENCH_HZ (1000), BENCH_SECONDS (2),
# BENCH_STARTUP (100 runs), BENCH_GPERF_LIB (the path of gperftools' libprofiler.so).
# Exit status: 0, or 1 with one line on stderr.
set -eu

build=${1:?usage: bench/run.sh BUILD_DIR}
here=$(dirname "$0")

command -v python3 >/dev/null 2>&1 || { echo "bench: python3 is missing" >&2; exit 1; }
for f in "$build/libprof.so" "$build/workloads/shares"; do
    [ -e "$f" ] || { echo "bench: $f is missing (make all $build/workloads/shares)" >&2; exit 1; }
done
if [ ! -e "${BENCH_GPERF_LIB:-/usr/lib/x86_64-linux-gnu/libprofiler.so}" ]; then
    echo "bench: gperftools is missing (scripts/setup.sh bench)" >&2
    exit 1
fi
exec python3 "$here/bench.py" "$build"
