#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# The reporter's speed and memory (`make bench` runs it after bench/run.sh): how many
# samples per second `prof report` turns from a profile into folded stacks, next to the
# peers' own converters on profiles of the same workload (shares): google-pprof
# --collapsed on gperftools' profile, and `perf script` (piped into stackcollapse-perf.pl
# when the FlameGraph scripts are installed; else perf script alone, a lower bound on that
# pipeline's time). libprof's profile is made large with bench/gen_profile.c, which
# repeats a real profile's samples (same stacks, same addresses) up to 1M and 2M samples;
# peak RSS at both sizes shows whether memory grows with samples. Numbers are printed,
# never asserted; each time is the best of 3 runs. The peers' profiles are as large as their samplers make them in a few
# seconds (gperftools' timer is capped by the scheduler tick; perf records at
# BENCH_PERF_HZ, 20000 by default), so their rates include their start-up. About 30 s.
#   bench/reporter.sh BUILD_DIR
set -eu

build=${1:?usage: bench/reporter.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
prof=$build/prof
shares=$build/workloads/shares
for f in "$prof" "$shares" "$build/libprof.so"; do
    [ -e "$f" ] || { echo "bench: $f is missing" >&2; exit 1; }
done
tmp=$(mktemp -d /tmp/prof-bench-reporter.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cc=${CC:-gcc}
$cc -O2 -I"$root" -o "$tmp/gen_profile" "$here/gen_profile.c"

# Seconds of wall time that a command takes (stdout discarded), the best of 3 runs, so that
# other load on the machine counts less.
seconds() {
    python3 -c 'import subprocess,sys,time
best = None
for _ in range(3):
    t = time.perf_counter()
    subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    t = time.perf_counter() - t
    best = t if best is None or t < best else best
print("%.3f" % best)' "$@"
}
# Peak RSS in MiB of a command.
peak_mib() {
    /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -n 1 | awk '{printf "%.1f", $1/1024}'
}
rate() { python3 -c "import sys; print('%.0f' % (float(sys.argv[1])/float(sys.argv[2])))" "$@"; }

echo "== reporter: samples per second, profile to folded stacks"
LD_PRELOAD=$build/libprof.so PROF_OUTPUT=$tmp/template.prof PROF_FREQ=1000 "$shares" 2 \
    >/dev/null
"$tmp/gen_profile" "$tmp/template.prof" 1000000 "$tmp/1m.prof"
"$tmp/gen_profile" "$tmp/template.prof" 2000000 "$tmp/2m.prof"
# Warm the page cache, the debug files and the line cache (inline frames and lines come
# from DWARF once per build-id and address, then from ~/.cache/prof/lines).
"$prof" report "$tmp/1m.prof" >/dev/null 2>&1
t1=$(seconds "$prof" report "$tmp/1m.prof")
t2=$(seconds "$prof" report "$tmp/2m.prof")
tl=$(seconds "$prof" report --lines "$tmp/1m.prof")
tn=$(seconds "$prof" report --no-inline "$tmp/1m.prof")
r1=$(peak_mib "$prof" report "$tmp/1m.prof")
r2=$(peak_mib "$prof" report "$tmp/2m.prof")
printf '%-44s %10s %9s %14s\n' tool samples seconds samples/s
printf '%-44s %10s %9s %14s\n' "prof report (1M)" 1000000 "$t1" "$(rate 1000000 "$t1")"
printf '%-44s %10s %9s %14s\n' "prof report (2M)" 2000000 "$t2" "$(rate 2000000 "$t2")"
printf '%-44s %10s %9s %14s\n' "prof report --lines (1M)" 1000000 "$tl" "$(rate 1000000 "$tl")"
printf '%-44s %10s %9s %14s\n' "prof report --no-inline (1M)" 1000000 "$tn" "$(rate 1000000 "$tn")"

gperf_lib=${BENCH_GPERF_LIB:-/usr/lib/x86_64-linux-gnu/libprofiler.so}
if [ -e "$gperf_lib" ] && command -v google-pprof >/dev/null 2>&1; then
    LD_PRELOAD=$gperf_lib CPUPROFILE=$tmp/gperf.prof CPUPROFILE_FREQUENCY=1000 "$shares" 4 \
        >/dev/null
    n=$(google-pprof --text "$shares" "$tmp/gperf.prof" 2>/dev/null |
        sed -n 's/^Total: \([0-9]*\) samples.*/\1/p')
    t=$(seconds google-pprof --collapsed "$shares" "$tmp/gperf.prof")
    printf '%-44s %10s %9s %14s\n' "google-pprof --collapsed" "$n" "$t" "$(rate "$n" "$t")"
else
    echo "google-pprof: not installed (scripts/setup.sh bench)"
fi

if command -v perf >/dev/null 2>&1 &&
    perf record -F "${BENCH_PERF_HZ:-20000}" -g -o "$tmp/perf.data" "$shares" 4 \
        >/dev/null 2>&1; then
    perf script -i "$tmp/perf.data" >"$tmp/perf.txt" 2>/dev/null
    n=$(grep -c 'cpu-clock\|cycles' "$tmp/perf.txt" || true)
    collapse=$(command -v stackcollapse-perf.pl || true)
    if [ -n "$collapse" ]; then
        t=$(seconds sh -c "perf script -i '$tmp/perf.data' | '$collapse'")
        label="perf script | stackcollapse-perf.pl"
    else
        t=$(seconds perf script -i "$tmp/perf.data")
        label="perf script (no stackcollapse-perf.pl)"
    fi
    printf '%-44s %10s %9s %14s\n' "$label" "$n" "$t" "$(rate "$n" "$t")"
else
    echo "perf: cannot record here (perf_event_paranoid or no perf)"
fi
echo "== reporter: peak RSS, same stacks"
printf '%-44s %8s MiB\n' "prof report, 1M samples" "$r1"
printf '%-44s %8s MiB\n' "prof report, 2M samples" "$r2"
