# SPDX-License-Identifier: GPL-3.0-or-later
# Per-thread fairness, for `make bench`: the fair workload (tests/workloads/fair.c) runs
# three threads that burn CPU in the ratio 1:2:3, each in its own function (burn_1,
# burn_2, burn_3), and measures each thread's CPU time. Each profiler's share of samples
# per function is compared with the measured share of CPU time; the table prints the
# largest error in percentage points, median over the rounds. libprof with each timer
# source and gperftools' libprofiler (which records no thread ids, hence the functions)
# run interleaved, at 250 Hz.
#   python3 bench/fairness.py BUILD_DIR
import os
import re
import statistics
import subprocess
import sys
import tempfile

GPERF_LIB = os.environ.get("BENCH_GPERF_LIB", "/usr/lib/x86_64-linux-gnu/libprofiler.so")
ROUNDS = int(os.environ.get("BENCH_FAIR_ROUNDS", "5"))
HZ = "250"
FUNCS = ["burn_1", "burn_2", "burn_3"]


def truth_shares(path):
    """Measured CPU shares of the three workers, in thread order (burn_1..burn_3)."""
    with open(path) as f:
        return [float(line.split()[1]) for line in f if line.strip()]


def shares_from_folded(text):
    """Share of samples per burn function among the three."""
    w = {k: 0 for k in FUNCS}
    for line in text.splitlines():
        stack, _, count = line.rpartition(" ")
        for k in FUNCS:
            if k in stack.split(";"):
                w[k] += int(count)
    total = sum(w.values())
    return [w[k] / total for k in FUNCS] if total else None


def shares_from_pprof_text(text):
    """Share per burn function from `google-pprof --text` (flat column)."""
    w = {k: 0.0 for k in FUNCS}
    for line in text.splitlines():
        m = re.match(r"\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+\d+\s+[\d.]+%\s+(\S+)", line)
        if m and m.group(2) in w:
            w[m.group(2)] += int(m.group(1))
    total = sum(w.values())
    return [w[k] / total for k in FUNCS] if total else None


def run_one(build, kind, tmp):
    fair = os.path.join(build, "workloads", "fair")
    truth = os.path.join(tmp, "truth")
    out = os.path.join(tmp, "out.prof")
    env = dict(os.environ)
    for k in list(env):
        if k.startswith(("PROF_", "CPUPROFILE", "LD_PRELOAD")):
            del env[k]
    if kind == "gperftools":
        env.update(LD_PRELOAD=GPERF_LIB, CPUPROFILE=out, CPUPROFILE_FREQUENCY=HZ)
    else:
        env.update(LD_PRELOAD=os.path.join(build, "libprof.so"), PROF_OUTPUT=out,
                   PROF_FREQ=HZ, PROF_TIMER=kind.split()[1])
    subprocess.run([fair, "1.5", truth], env=env, check=True, stderr=subprocess.DEVNULL)
    want = truth_shares(truth)
    if kind == "gperftools":
        text = subprocess.run(["google-pprof", "--text", fair, out], capture_output=True,
                              text=True).stdout
        got = shares_from_pprof_text(text)
    else:
        text = subprocess.run([os.path.join(build, "prof"), "report", out],
                              capture_output=True, text=True).stdout
        got = shares_from_folded(text)
    if got is None:
        return None
    return max(abs(a - b) for a, b in zip(got, want)) * 100


def main():
    build = sys.argv[1]
    kinds = ["libprof ring", "libprof perf", "libprof thread", "libprof itimer"]
    if os.path.exists(GPERF_LIB):
        kinds.append("gperftools")
    errs = {k: [] for k in kinds}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(ROUNDS):
            for k in kinds:
                e = run_one(build, k, tmp)
                if e is not None:
                    errs[k].append(e)
    print("== per-thread fairness: threads burning 1:2:3, %s Hz, %d rounds" % (HZ, ROUNDS))
    print("%-16s %22s %10s" % ("profiler", "max error (points)", "worst"))
    for k in kinds:
        v = errs[k]
        if v:
            print("%-16s %22.2f %10.2f" % (k, statistics.median(v), max(v)))
        else:
            print("%-16s %22s" % (k, "no samples"))


if __name__ == "__main__":
    main()
