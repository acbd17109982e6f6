# SPDX-License-Identifier: GPL-3.0-or-later
# The price of a profile on CPU-bound work (part of `make bench`): tests/workloads/deep with
# 8-, 64- and 256-frame stacks on one thread, 16 frames on four threads, and a shell that
# forks and execs deep twenty times, each doing a fixed amount of work, run plain, under
# libprof (its default source and each source named in BENCH_COST_SOURCES) and under `perf
# record -g`, at each rate of BENCH_COST_RATES, in BENCH_COST_ROUNDS rounds whose runs are
# interleaved in a random order. Every run goes through bench/cputime.c, which reports the
# CPU time (user + system) of the work's whole process tree: the application's CPU, with
# libprof's writer thread in it (it runs in the application), without `perf record`'s own
# process, reported apart (perf's column "+perf" is the whole tree's, wall its wall time).
# Per workload, rate and profiler: the median [min..max] over the rounds of the ratio to
# the plain run of the same round.
#
#   python3 bench/cost.py BUILD_DIR
# Settings (environment): BENCH_COST_ROUNDS (5), BENCH_COST_RATES ("1000 250"),
# BENCH_COST_SECONDS (1.5: CPU seconds a thread works), BENCH_COST_SOURCES ("perf thread"),
# BENCH_COST_WORKLOADS (all: "8x1 64x1 256x1 16x4 exec").
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from bench import clean_env, env_int, fmt_ratios as fmt, perf_works, read_truth


def calibrate(deep, depth, threads, seconds, tmp):
    truth = os.path.join(tmp, "calibrate.txt")
    subprocess.run([deep, str(depth), str(threads), str(seconds), truth], env=clean_env(),
                   stdout=subprocess.DEVNULL, check=True)
    return int(read_truth(truth)["iterations"])


def workloads(deep, seconds, tmp, wanted):
    out = []
    for name, depth, threads in [("8x1", 8, 1), ("64x1", 64, 1), ("256x1", 256, 1),
                                 ("16x4", 16, 4)]:
        if name in wanted:
            iters = calibrate(deep, depth, threads, seconds, tmp)
            out.append((f"deep {name}", [deep, str(depth), str(threads), "-i", str(iters)]))
    if "exec" in wanted:
        iters = calibrate(deep, 16, 1, seconds / 20, tmp)
        loop = (f'i=0; while [ $i -lt 20 ]; do "$0" 16 1 -i {iters}; i=$((i + 1)); done')
        out.append(("fork+exec x20", ["/bin/sh", "-c", loop, deep]))
    return out


def run_one(argv, env, tmp, cputime):
    """(application CPU s, whole tree CPU s, wall s) of one run through bench/cputime."""
    times = os.path.join(tmp, "time.txt")
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv[:-1] + [cputime, times] + argv[-1], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        return None
    with open(times) as f:
        user, system = (float(x) for x in f.read().split()[-2:])
    return user + system, ru.ru_utime + ru.ru_stime, wall


def configs(lib, perf, sources, hz, tmp):
    """(name, argv prefix, environment additions) of each column at rate hz."""
    out = [("plain", [], {}), ("libprof", [], {"LD_PRELOAD": lib, "PROF_FREQ": str(hz)})]
    for s in sources:
        out.append((f"libprof {s}", [], {"LD_PRELOAD": lib, "PROF_FREQ": str(hz),
                                         "PROF_TIMER": s}))
    if perf:
        out.append(("perf record -g", [perf, "record", "-q", "-g", "-F", str(hz), "-o",
                                       os.path.join(tmp, "perf.data"), "--"], {}))
    for _, _, env in out:
        if env:
            env["PROF_OUTPUT"] = os.path.join(tmp, "p", "run.%p.prof")
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: cost.py BUILD_DIR")
    build = os.path.abspath(sys.argv[1])
    deep = os.path.join(build, "workloads", "deep")
    cputime = os.path.join(build, "bench", "cputime")
    lib = os.path.join(build, "libprof.so")
    rounds = env_int("BENCH_COST_ROUNDS", 5)
    rates = [int(r) for r in os.environ.get("BENCH_COST_RATES", "1000 250").split()]
    seconds = float(os.environ.get("BENCH_COST_SECONDS", "1.5"))
    sources = os.environ.get("BENCH_COST_SOURCES", "perf thread").split()
    wanted = os.environ.get("BENCH_COST_WORKLOADS", "8x1 64x1 256x1 16x4 exec").split()
    with tempfile.TemporaryDirectory(prefix="libprof-cost.") as tmp:
        os.makedirs(os.path.join(tmp, "p"))
        perf = shutil.which("perf")
        if perf and perf_works(perf, tmp) is not None:
            perf = None
        work = workloads(deep, seconds, tmp, wanted)
        cells = []  # (workload, hz, config name, argv, env)
        for wname, wargv in work:
            for hz in rates:
                for cname, prefix, extra in configs(lib, perf, sources, hz, tmp):
                    env = clean_env()
                    env.update(extra)
                    cells.append((wname, hz, cname, prefix, wargv, env))
        got = {}
        for r in range(rounds):
            order = list(cells)
            random.shuffle(order)
            for wname, hz, cname, prefix, wargv, env in order:
                res = run_one(prefix + [wargv], env, tmp, cputime)
                got.setdefault((wname, hz, cname), []).append(res)
                for f in os.listdir(os.path.join(tmp, "p")):
                    os.remove(os.path.join(tmp, "p", f))
            print(f"   round {r + 1}/{rounds} done", file=sys.stderr)

    print(f"\n== the price on CPU-bound work: {rounds} rounds, runs interleaved in a random "
          f"order; ratios to the plain run of the same round, median [min..max]; load "
          f"average {os.getloadavg()[0]:.2f}")
    for wname, _ in work:
        for hz in rates:
            base = got[(wname, hz, "plain")]
            print(f"{wname}, {hz} Hz (plain: {statistics.median(b[0] for b in base if b):.3f} "
                  "CPU-s)")
            for cname, _, _ in configs(lib, perf, sources, hz, "/"):
                if cname == "plain":
                    continue
                runs = got[(wname, hz, cname)]
                pairs = [(b, x) for b, x in zip(base, runs) if b and x]
                if not pairs:
                    print(f"   {cname:22} every run failed")
                    continue
                app = [x[0] / b[0] for b, x in pairs]
                line = f"   {cname:22} app CPU {fmt(app)}"
                if cname.startswith("perf"):
                    line += (f"   +perf {fmt([x[1] / b[1] for b, x in pairs])}"
                             f"   wall {fmt([x[2] / b[2] for b, x in pairs])}")
                print(line)


if __name__ == "__main__":
    main()
