# SPDX-License-Identifier: GPL-3.0-or-later
# The overhead matrix of `make bench` (started by bench/run.sh): tests/workloads/deep with
# 16- and 64-frame stacks, 1 and 2 threads, run unprofiled and under libprof (each timer
# source at 1000 Hz, and the perf source at BENCH_HIGH_HZ, the highest rate a source
# reaches here: setitimer and the per-thread POSIX timers stop at the scheduler tick, 250
# per CPU-second, which the 1000 Hz runs already reach), gperftools' libprofiler at 1000 Hz
# (setitimer too: 250 at most) and `perf record -g -e cpu-clock` at 1000 Hz and
# BENCH_HIGH_HZ. All runs of one round are interleaved, workload by workload, so a machine
# that gets busier or quieter affects every column alike; each run is paired with the
# unprofiled run of its round and workload.
#
# Per workload and profiler it prints, as median [min..max] over BENCH_OVH_ROUNDS rounds:
# the wall and CPU overhead (profiled / unprofiled - 1; CPU is user + system of the whole
# process tree, so perf's own process counts), the cost of one sample in ns ((CPU profiled
# - CPU unprofiled) / samples taken: handler, signal delivery and the writer's share; for
# perf split into the workload's part, the kernel's sampling and unwinding, and perf's own
# process), the resident memory added (the workload's max RSS minus the unprofiled one;
# for perf, the max RSS of the perf process, which holds its buffers), and the profile's
# bytes per sample. Then the goals against the numbers, reported, never asserted.
# Samples come from the files: bench.py's readers for libprof and gperftools,
# bench/perfdata.py for perf.data.
#
#   python3 bench/overhead.py BUILD_DIR
# Settings (environment): BENCH_OVH_ROUNDS (5), BENCH_OVH_SECONDS (1: CPU seconds per thread
# and run), BENCH_HIGH_HZ (10000), BENCH_LONG=1 adds a 60-second bytes-per-sample run.
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from bench import (GPERF_LIB, clean_env, env_int, gperf_samples, libprof_samples, read_truth,
                   perf_works)
from perfdata import perf_data_samples

WORKLOADS = [(16, 1), (16, 2), (64, 1), (64, 2)]  # (stack depth, threads)


def configs(high_hz, perf_ok):
    """(label, kind, timer source or None, requested Hz) per column, plain first."""
    cols = [("plain", "plain", None, 0),
            ("libprof itimer", "libprof", "itimer", 1000),
            ("libprof thread", "libprof", "thread", 1000),
            ("libprof perf", "libprof", "perf", 1000),
            ("libprof perf", "libprof", "perf", high_hz),
            ("gperftools", "gperf", None, 1000)]
    if perf_ok:
        cols += [("perf record", "perf", None, 1000), ("perf record", "perf", None, high_hz)]
    return cols


def run_tree(argv, env):
    """Runs argv; returns (wall_s, cpu_s of the tree, max RSS KB of the tree, status)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss, os.waitstatus_to_exitcode(status)


def profile_run(cfg, col, argv, tmp):
    """One run of argv under the column's profiler: a dict of measures, or None."""
    _, kind, source, hz = col
    result = os.path.join(tmp, "result.txt")
    if os.path.exists(result):
        os.remove(result)
    env = clean_env()
    argv = argv + [result]
    out = None
    if kind == "libprof":
        out = os.path.join(tmp, "run.prof")
        env.update(LD_PRELOAD=cfg["lib"], PROF_TIMER=source, PROF_FREQ=str(hz),
                   PROF_OUTPUT=out)
    elif kind == "gperf":
        out = os.path.join(tmp, "run.gprof")
        env.update(LD_PRELOAD=GPERF_LIB, CPUPROFILE=out, CPUPROFILE_FREQUENCY=str(hz))
    elif kind == "perf":
        out = os.path.join(tmp, "run.perf")
        argv = [cfg["perf"], "record", "-q", "-e", "cpu-clock", "-g", "-F", str(hz), "-o",
                out, "--"] + argv
        # ru_maxrss carries the peak of the process that forked over exec (this Python's),
        # so perf's own peak is taken by /usr/bin/time, whose child starts small.
        if cfg["time"]:
            argv = [cfg["time"], "-f", "%M", "-o", os.path.join(tmp, "rss.txt")] + argv
    if out and os.path.exists(out):
        os.remove(out)
    wall, cpu, tree_rss, status = run_tree(argv, env)
    if kind == "perf":
        tree_rss = -1
        if cfg["time"] and status == 0:
            with open(os.path.join(tmp, "rss.txt")) as f:
                tree_rss = int(f.read().split()[-1])
    if status != 0 or not os.path.exists(result) or (out and not os.path.exists(out)):
        return None
    res = read_truth(result)
    m = {"wall": wall, "cpu": cpu, "work_cpu": res["cpu_s"], "rss": res["maxrss_kb"],
         "tree_rss": tree_rss, "samples": 0, "weight": 0, "bytes": 0}
    if out:
        m["bytes"] = os.path.getsize(out)
        if kind == "libprof":
            m["samples"], m["weight"], m["signals"], m["dropped"] = libprof_samples(out)
        elif kind == "gperf":
            m["samples"] = m["weight"] = gperf_samples(out)
        else:
            m["samples"], _ = perf_data_samples(out)
            m["weight"] = m["samples"]
        os.remove(out)
    return m


def calibrate(cfg, tmp, seconds):
    """Iterations per thread that take `seconds` of CPU unprofiled (median of 3)."""
    result = os.path.join(tmp, "calibrate.txt")
    iters = []
    for _ in range(3):
        _, _, _, status = run_tree([cfg["deep"], "16", "1", str(seconds), result], clean_env())
        if status != 0:
            sys.exit("bench: the deep workload failed to run")
        iters.append(int(read_truth(result)["iterations"]))
    return int(statistics.median(iters))


def med_range(values, scale=1.0, fmt="{:+.1f}"):
    """'median [min..max]' of values times scale."""
    if not values:
        return "-"
    v = [x * scale for x in values]
    return (fmt.format(statistics.median(v)) + " [" + fmt.format(min(v)) + ".."
            + fmt.format(max(v)) + "]")


def summarize(runs, plain_runs):
    """Per-round paired measures of one column against the plain runs of its rounds."""
    s = {k: [] for k in ("wall", "cpu", "ns", "ns_work", "ns_own", "rate", "bps", "sig_rate",
                         "drop", "ns_sig")}
    for m, p in zip(runs, plain_runs):
        if m is None or p is None:
            continue
        s["wall"].append(m["wall"] / p["wall"] - 1)
        s["cpu"].append(m["cpu"] / p["cpu"] - 1)
        if m["samples"]:
            n = m["samples"]
            s["ns"].append((m["cpu"] - p["cpu"]) / n * 1e9)
            s["ns_work"].append((m["work_cpu"] - p["work_cpu"]) / n * 1e9)
            s["ns_own"].append((m["cpu"] - m["work_cpu"]) / n * 1e9)
            s["rate"].append(n / m["work_cpu"])
            s["bps"].append(m["bytes"] / n)
        if m.get("signals"):  # libprof: every signal costs a delivery, dropped or not
            s["sig_rate"].append(m["signals"] / m["work_cpu"])
            s["drop"].append(m["dropped"] / m["signals"])
            s["ns_sig"].append((m["cpu"] - p["cpu"]) / m["signals"] * 1e9)
    return s


def rss_added(col, runs, plain_runs):
    ok = [m for m in runs if m]
    base = statistics.median(p["rss"] for p in plain_runs if p)
    if not ok:
        return "-"
    if col[1] == "perf":  # a process of its own: all of its memory is added
        rss = statistics.median(m["tree_rss"] for m in ok)
        return f"{rss:.0f} (perf)" if rss >= 0 else "-"
    return f"{statistics.median(m['rss'] for m in ok) - base:+.0f}"


def print_table(cols, results, depth, threads, iters):
    plain = results[0]
    ok = [p for p in plain if p]
    wall = statistics.median(p["wall"] for p in ok)
    print(f"\n== deep {depth} frames, {threads} thread{'s' if threads > 1 else ''}, "
          f"{iters} iterations a thread: unprofiled wall {wall:.3f} s, "
          f"CPU {statistics.median(p['cpu'] for p in ok):.3f} s, max RSS "
          f"{statistics.median(p['rss'] for p in ok):.0f} KB (medians of {len(ok)})")
    print(f"{'profiler':16}{'Hz':>6}{'samples/CPU-s':>14}  {'wall overhead %':<24}"
          f"{'CPU overhead %':<24}{'ns per sample':<26}{'RSS +KB':>13}{'B/sample':>10}")
    summary = {}
    for col, runs in zip(cols[1:], results[1:]):
        s = summarize(runs, plain)
        summary[col] = s
        fails = sum(1 for m in runs if m is None)
        rate = f"{statistics.median(s['rate']):.0f}" if s["rate"] else "-"
        bps = f"{statistics.median(s['bps']):.1f}" if s["bps"] else "-"
        print(f"{col[0]:16}{col[3]:6}{rate:>14}  {med_range(s['wall'], 100):<24}"
              f"{med_range(s['cpu'], 100):<24}{med_range(s['ns'], 1, '{:.0f}'):<26}"
              f"{rss_added(col, runs, plain):>13}{bps:>10}"
              + (f"  ({fails} failed)" if fails else ""))
    for col, s in summary.items():
        if s["drop"] and max(s["drop"]) > 0:
            print(f"   {col[0]} {col[3]} Hz: {statistics.median(s['sig_rate']):.0f} signals "
                  f"handled per CPU-s, {100 * statistics.median(s['drop']):.1f} % of them dropped "
                  f"(ring full: PROF_BUFFER_KB), ns per signal handled "
                  f"{med_range(s['ns_sig'], 1, '{:.0f}')}")
    # The marginal cost: the CPU added between the 1000 Hz run and the high-rate run over
    # the samples added, free of the fixed costs (start-up, perf's build-id pass at exit).
    for kind, label in (("libprof", "libprof perf"), ("perf", "perf record")):
        pair = [(col, runs) for col, runs in zip(cols[1:], results[1:])
                if col[0] == label and col[1] == kind]
        if len(pair) != 2:
            continue
        lo = [m for m in pair[0][1] if m]
        hi = [m for m in pair[1][1] if m]
        if not lo or not hi:
            continue
        d_n = (statistics.median(m["samples"] for m in hi)
               - statistics.median(m["samples"] for m in lo))
        d_cpu = (statistics.median(m["cpu"] for m in hi)
                 - statistics.median(m["cpu"] for m in lo))
        if d_n > 0:
            print(f"   {label}: marginal cost {d_cpu / d_n * 1e9:.0f} ns per sample "
                  f"(CPU added from {pair[0][0][3]} to {pair[1][0][3]} Hz / samples added, "
                  f"medians)")
    for col, s in summary.items():
        if col[1] == "perf" and s["ns"]:
            print(f"   perf record {col[3]} Hz, ns per sample: in the workload (kernel "
                  f"sampling and unwinding) {med_range(s['ns_work'], 1, '{:.0f}')}, in perf's "
                  f"own process {med_range(s['ns_own'], 1, '{:.0f}')}")
    return summary


def print_goals(cols, summaries, high_hz):
    """The issue's goals, against the medians."""
    print("\n== goals (reported, not asserted)")
    for key, s_all in summaries.items():
        depth, threads = key
        med = {col: statistics.median(s["cpu"]) for col, s in s_all.items() if s["cpu"]}
        lib = {c: v for c, v in med.items() if c[1] == "libprof" and c[3] == 1000}
        peers = [v for c, v in med.items() if c[1] in ("gperf", "perf") and c[3] == 1000]
        for col, v in lib.items():
            verdict = "below 1 %" if v < 0.01 else "NOT below 1 %"
            if peers:
                verdict += (", lower than both peers" if v < min(peers)
                            else ", NOT lower than both peers")
            print(f"deep {depth}x{threads}: {col[0]} 1000 Hz CPU overhead {100 * v:+.2f} %: "
                  f"{verdict}")
        if depth == 64:
            for col, s in s_all.items():
                if col[1] == "libprof" and s["ns"] and (col[3] == high_hz or col[2] != "perf"):
                    ns = statistics.median(s["ns"])
                    # At 250 samples a CPU-second, 2 us a sample is 0.05 % of the CPU time:
                    # a spread that crosses zero says the cost is below what this run shows.
                    noise = " (within the noise: the spread crosses 0)" \
                        if min(s["ns"]) < 0 < max(s["ns"]) else ""
                    print(f"deep {depth}x{threads}: {col[0]} {col[3]} Hz one sample {ns:.0f} ns: "
                          + ("under 2 us" if ns < 2000 else "NOT under 2 us") + noise)


def bench_long(cfg, tmp, perf_ok):
    """Bytes per sample over a 60-second run at 1000 Hz, one run per profiler."""
    iters = calibrate(cfg, tmp, 1) * 60
    cols = [("libprof perf", "libprof", "perf", 1000),
            ("libprof thread", "libprof", "thread", 1000),
            ("gperftools", "gperf", None, 1000)]
    if perf_ok:
        cols.append(("perf record", "perf", None, 1000))
    print(f"\n== bytes per sample over a 60 CPU-second run (deep 64 frames, 1 thread, 1000 Hz)")
    print(f"{'profiler':16}{'samples':>10}{'file bytes':>14}{'bytes/sample':>14}")
    for col in cols:
        m = profile_run(cfg, col, [cfg["deep"], "64", "1", "-i", str(iters)], tmp)
        if m is None or not m["samples"]:
            print(f"{col[0]:16} failed")
            continue
        print(f"{col[0]:16}{m['samples']:10}{m['bytes']:14}{m['bytes'] / m['samples']:14.1f}")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: overhead.py BUILD_DIR")
    build = os.path.abspath(sys.argv[1])
    cfg = {"lib": os.path.join(build, "libprof.so"),
           "deep": os.path.join(build, "workloads", "deep"),
           "perf": shutil.which("perf"), "time": shutil.which("time")}
    rounds = env_int("BENCH_OVH_ROUNDS", 5)
    seconds = float(os.environ.get("BENCH_OVH_SECONDS", "1"))
    high_hz = env_int("BENCH_HIGH_HZ", 10000)
    for f in (cfg["lib"], cfg["deep"], GPERF_LIB):
        if not os.path.exists(f):
            sys.exit(f"bench: {f} is missing")
    with tempfile.TemporaryDirectory(prefix="libprof-overhead.") as tmp:
        why = perf_works(cfg["perf"], tmp)
        cols = configs(high_hz, why is None)
        iters = calibrate(cfg, tmp, seconds)
        if rounds > 0:
            print(f"\n== overhead matrix: {len(WORKLOADS)} workloads x {len(cols)} columns x "
                  f"{rounds} rounds, runs interleaved; {os.cpu_count()} CPUs, Linux "
                  f"{os.uname().release}, load average {os.getloadavg()[0]:.2f}")
            print("   overheads and ns per sample: median [min..max] of per-round values, each "
                  "against the unprofiled run of the same round")
        if why:
            print(f"   perf left out: {why}")
        results = {w: [[] for _ in cols] for w in WORKLOADS}
        if rounds == 0:  # BENCH_OVH_ROUNDS=0 BENCH_LONG=1: the 60-second run alone
            WORKLOADS.clear()
        for r in range(rounds):
            for depth, threads in WORKLOADS:
                argv = [cfg["deep"], str(depth), str(threads), "-i", str(iters)]
                for i, col in enumerate(cols):
                    results[(depth, threads)][i].append(profile_run(cfg, col, argv, tmp))
            print(f"   round {r + 1}/{rounds} done", file=sys.stderr)
        summaries = {w: print_table(cols, results[w], w[0], w[1], iters) for w in WORKLOADS}
        if summaries:
            print_goals(cols, summaries, high_hz)
        if os.environ.get("BENCH_LONG") == "1":
            bench_long(cfg, tmp, why is None)
        print(f"\nload average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
