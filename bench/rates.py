# SPDX-License-Identifier: GPL-3.0-or-later
# The timer-rate table of `make bench` (started by bench/run.sh): what each libprof timer
# source (PROF_TIMER=itimer, thread, perf), gperftools' libprofiler and `perf record -e
# cpu-clock` deliver at 100, 1000, 4000 and 10000 Hz requested, on one thread of
# tests/workloads/deep (16 frames) doing the work of about BENCH_RATE_SECONDS (1) CPU
# seconds. Per run it prints the samples received per CPU-second of the workload and, for
# libprof, the weight per CPU-second (the sum of the samples' weights: a per-thread timer
# counts the ticks it could not deliver, si_overrun, as weight), each also as a percentage
# of the requested rate, and the samples libprof dropped because its ring was full (its
# STATS record; they are not in the samples). POSIX CPU timers fire at most once per
# scheduler tick (250 per CPU-second with CONFIG_HZ=250); perf events are hrtimers and go
# above it. One run per cell (BENCH_RATE_ROUNDS, the median of several otherwise); rates
# are counts, far less noisy than timings.
#
#   python3 bench/rates.py BUILD_DIR
import os
import shutil
import statistics
import sys
import tempfile

from bench import env_int, perf_works
from overhead import calibrate, profile_run

RATES = [100, 1000, 4000, 10000]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: rates.py BUILD_DIR")
    build = os.path.abspath(sys.argv[1])
    cfg = {"lib": os.path.join(build, "libprof.so"),
           "deep": os.path.join(build, "workloads", "deep"),
           "perf": shutil.which("perf"), "time": None}
    rounds = env_int("BENCH_RATE_ROUNDS", 1)
    seconds = float(os.environ.get("BENCH_RATE_SECONDS", "1"))
    with tempfile.TemporaryDirectory(prefix="libprof-rates.") as tmp:
        why = perf_works(cfg["perf"], tmp)
        cols = [("libprof itimer", "libprof", "itimer"), ("libprof thread", "libprof", "thread"),
                ("libprof perf", "libprof", "perf"), ("gperftools", "gperf", None)]
        if why is None:
            cols.append(("perf record", "perf", None))
        iters = calibrate(cfg, tmp, seconds)
        argv = [cfg["deep"], "16", "1", "-i", str(iters)]
        print(f"\n== timer rates: deep 16 frames, 1 thread, {iters} iterations (about "
              f"{seconds:g} CPU-s), {rounds} run(s) a cell; per CPU-second of the workload")
        if why:
            print(f"   perf left out: {why}")
        print(f"{'source':16}{'requested':>10}{'samples/s':>11}{'%':>7}{'weight/s':>10}{'%':>7}"
              f"{'CPU-s':>7}{'dropped':>9}")
        for label, kind, source in cols:
            for hz in RATES:
                runs = [profile_run(cfg, (label, kind, source, hz), argv, tmp)
                        for _ in range(rounds)]
                runs = [m for m in runs if m and m["work_cpu"] > 0]
                if not runs:
                    print(f"{label:16}{hz:10}   failed")
                    continue
                rate = statistics.median(m["samples"] / m["work_cpu"] for m in runs)
                weight = statistics.median(m["weight"] / m["work_cpu"] for m in runs)
                cpu = statistics.median(m["work_cpu"] for m in runs)
                wcol = (f"{weight:10.0f}{100 * weight / hz:6.0f}%" if kind == "libprof"
                        else f"{'-':>10}{'-':>7}")
                # libprof's signals that found the ring full (counted in its STATS record)
                dropped = (f"{statistics.median(m['dropped'] for m in runs):9.0f}"
                           if kind == "libprof" else f"{'-':>9}")
                print(f"{label:16}{hz:10}{rate:11.0f}{100 * rate / hz:6.0f}%{wcol}{cpu:7.2f}"
                      f"{dropped}")


if __name__ == "__main__":
    main()
