# SPDX-License-Identifier: GPL-3.0-or-later
# What a process's start and exit cost (part of `make bench`): /bin/true and
# `/usr/bin/python3 -c pass` started plain, with a preloaded library that does nothing
# (bench/empty.c), with libprof idle (PROF_START=0), with libprof at its default settings,
# and under `perf record -g`; then a loop of fork() and _exit() (bench/forkexit.c). Runs are
# interleaved: every round runs a batch of BENCH_SE_BATCH starts of each column, the columns
# in a random order, and a row is the median [min..max] over the rounds of the batch's mean.
# CPU is the started process's user + system time as wait4() reports it (all its threads);
# under `perf record` the command runs through bench/cputime, which reports the command's
# own, so perf's process is left out (its whole tree is the "+perf" figure). "added" is a
# round's mean less the plain mean of the same round. Page faults are the process's minor
# faults (the median start); system calls are counted by `strace -f -c` over one start
# (libprof's threads included). Libraries to compare (an older build) are given as
# NAME=PATH: each adds its idle and default columns.
#
#   python3 bench/startexit.py BUILD_DIR [NAME=LIBRARY ...]
# Settings (environment): BENCH_SE_ROUNDS (15), BENCH_SE_BATCH (20), BENCH_SE_FORKS (200
# forks a run), BENCH_SE_PERF (1: with the `perf record -g` column, whose batch is
# BENCH_SE_PERF_BATCH, 3: perf takes a second of wall time a start), BENCH_SE_PROGRAMS
# ("true python": which programs), BENCH_SE_OUTPUT (where profiles go: a directory, by
# default a temporary one under /tmp).
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from bench import clean_env, env_int, perf_works

PROGRAMS = {"true": ["/bin/true"], "python": ["/usr/bin/python3", "-c", "pass"]}


def columns(build, extra_libs, out_dir, perf, data):
    """(name, argv prefix, environment additions, runs through cputime) of each column."""
    lib = os.path.join(build, "libprof.so")
    prof = {"PROF_OUTPUT": os.path.join(out_dir, "se.%p.prof")}
    cols = [("plain", [], {}, False),
            ("empty library", [], {"LD_PRELOAD": os.path.join(build, "bench", "empty.so")},
             False),
            ("libprof idle", [], dict(prof, LD_PRELOAD=lib, PROF_START="0"), False),
            ("libprof", [], dict(prof, LD_PRELOAD=lib), False)]
    for name, path in extra_libs:
        cols.append((f"{name} idle", [], dict(prof, LD_PRELOAD=path, PROF_START="0"), False))
        cols.append((name, [], dict(prof, LD_PRELOAD=path), False))
    if perf:
        cols.append(("perf record -g", [perf, "record", "-q", "-g", "-o", data, "--"], {},
                     True))
    return cols


def start_once(prefix, argv, env, through, cputime, times):
    """(command CPU s, whole tree CPU s, minor faults, wall s) of one start."""
    if through:
        argv = [cputime, times] + argv
    t0 = time.perf_counter()
    pid = os.posix_spawn((prefix + argv)[0], prefix + argv, env)
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        return None
    tree = ru.ru_utime + ru.ru_stime
    if not through:
        return tree, tree, ru.ru_minflt, wall
    with open(times) as f:
        user, system = (float(x) for x in f.read().split()[:2])
    return user + system, tree, ru.ru_minflt, wall


def syscalls(prefix, argv, env, tmp):
    """System calls of one start, libprof's threads included (strace -f -c)."""
    strace = shutil.which("strace")
    if not strace or prefix:
        return None
    out = os.path.join(tmp, "strace.txt")
    r = subprocess.run([strace, "-f", "-c", "-o", out, "--"] + argv, env=env,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    if r.returncode != 0:
        return None
    with open(out) as f:
        for line in f:
            w = line.split()
            if w and w[-1] == "total":
                return int(w[3])
    return None


def fmt(values, scale=1e3, digits=2):
    if not values:
        return "-"
    m = statistics.median(values) * scale
    return f"{m:.{digits}f} [{min(values) * scale:.{digits}f}..{max(values) * scale:.{digits}f}]"


def clear(out_dir):
    for f in os.listdir(out_dir):
        if f.startswith("se."):
            os.remove(os.path.join(out_dir, f))


def bench_program(pname, argv, cols, rounds, batch, perf_batch, cputime, tmp, out_dir):
    means = {c[0]: {"cpu": [], "tree": [], "wall": []} for c in cols}
    faults = {c[0]: [] for c in cols}
    failed = {c[0]: 0 for c in cols}
    for r in range(rounds):
        order = list(cols)
        random.shuffle(order)
        for name, prefix, extra, through in order:
            env = clean_env()
            env.update(extra)
            got = []
            for _ in range(perf_batch if through else batch):
                res = start_once(prefix, argv, env, through, cputime,
                                 os.path.join(tmp, "times.txt"))
                if res is None:
                    failed[name] += 1
                    continue
                got.append(res)
                faults[name].append(res[2])
            clear(out_dir)
            if got:
                means[name]["cpu"].append(statistics.mean(g[0] for g in got))
                means[name]["tree"].append(statistics.mean(g[1] for g in got))
                means[name]["wall"].append(statistics.mean(g[3] for g in got))
        print(f"   {pname}: round {r + 1}/{rounds} done", file=sys.stderr)
    calls = {}
    for name, prefix, extra, _ in cols:
        env = clean_env()
        env.update(extra)
        calls[name] = syscalls(prefix, argv, env, tmp)
        clear(out_dir)
    print(f"\n== {' '.join(argv)}: {rounds} rounds of {batch} starts a column ({perf_batch} "
          f"under perf), interleaved; "
          f"ms a start, median [min..max] of the rounds' means; load average "
          f"{os.getloadavg()[0]:.2f}")
    print(f"{'':18}{'CPU':>22}{'added CPU':>24}{'wall':>22}{'faults':>8}{'syscalls':>10}")
    plain = means["plain"]["cpu"]
    for name, _, _, through in cols:
        m = means[name]
        if not m["cpu"]:
            print(f"{name:18} every start failed")
            continue
        added = [x - p for x, p in zip(m["cpu"], plain)]
        line = (f"{name:18}{fmt(m['cpu']):>22}{fmt(added):>24}{fmt(m['wall']):>22}"
                f"{statistics.median(faults[name]):8.0f}"
                f"{calls[name] if calls[name] is not None else '-':>10}")
        if through:
            line += f"   (+perf: whole tree {fmt(m['tree'])})"
        if failed[name]:
            line += f"   ({failed[name]} failed)"
        print(line)


def bench_forks(cols, rounds, forks, forkexit):
    per = {c[0]: {"cpu": [], "wall": []} for c in cols if not c[3]}
    for r in range(rounds):
        order = [c for c in cols if not c[3]]
        random.shuffle(order)
        for name, _, extra, _ in order:
            env = clean_env()
            env.update(extra)
            out = subprocess.run([forkexit, str(forks)], env=env, stdin=subprocess.DEVNULL,
                                 capture_output=True, text=True).stdout
            for line in out.splitlines():
                if line.startswith("forkexit:"):
                    v = dict(w.split("=") for w in line.split()[3:])
                    per[name]["cpu"].append(float(v["cpu_us"]))
                    per[name]["wall"].append(float(v["wall_us"]))
    print(f"\n== fork() and _exit(): {rounds} rounds of {forks} forks a column, interleaved; "
          "us a fork (parent and child), median [min..max]; ratios to plain, per round")
    print(f"{'':18}{'CPU us':>24}{'CPU ratio':>24}{'wall us':>24}{'wall ratio':>22}")
    for name in per:
        m, p = per[name], per["plain"]
        if not m["cpu"]:
            print(f"{name:18} every run failed")
            continue
        ratio = [x / b for x, b in zip(m["cpu"], p["cpu"])]
        wratio = [x / b for x, b in zip(m["wall"], p["wall"])]
        print(f"{name:18}{fmt(m['cpu'], 1, 1):>24}{fmt(ratio, 1, 3):>24}"
              f"{fmt(m['wall'], 1, 1):>24}{fmt(wratio, 1, 3):>22}")


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: startexit.py BUILD_DIR [NAME=LIBRARY ...]")
    build = os.path.abspath(sys.argv[1])
    extra = []
    for a in sys.argv[2:]:
        name, _, path = a.partition("=")
        if not path or not os.access(path, os.R_OK):
            sys.exit(f"bench: {a}: expected NAME=LIBRARY, a library that exists")
        extra.append((name, os.path.abspath(path)))
    rounds = env_int("BENCH_SE_ROUNDS", 15)
    batch = env_int("BENCH_SE_BATCH", 20)
    forks = env_int("BENCH_SE_FORKS", 200)
    perf_batch = env_int("BENCH_SE_PERF_BATCH", 3)
    programs = os.environ.get("BENCH_SE_PROGRAMS", "true python").split()
    cputime = os.path.join(build, "bench", "cputime")
    forkexit = os.path.join(build, "bench", "forkexit")
    for f in (cputime, forkexit, os.path.join(build, "bench", "empty.so")):
        if not os.access(f, os.R_OK):
            sys.exit(f"bench: {f} is missing")
    with tempfile.TemporaryDirectory(prefix="libprof-se.") as tmp:
        out_dir = os.environ.get("BENCH_SE_OUTPUT", tmp)
        perf = shutil.which("perf") if env_int("BENCH_SE_PERF", 1) else None
        if perf and perf_works(perf, tmp) is not None:
            perf = None
        cols = columns(build, extra, out_dir, perf, os.path.join(tmp, "perf.data"))
        print(f"start and exit: {os.cpu_count()} CPUs, Linux {os.uname().release}; load "
              f"average {os.getloadavg()[0]:.2f}; profiles in {out_dir}")
        for p in programs:
            bench_program(p, PROGRAMS[p], cols, rounds, batch, perf_batch, cputime, tmp,
                          out_dir)
        bench_forks(cols, rounds, forks, forkexit)


if __name__ == "__main__":
    main()
