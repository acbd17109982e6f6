# SPDX-License-Identifier: GPL-3.0-or-later
# The benchmark of the commands that look at a running process (part of `make bench`,
# about 1 minute):
#  1. sampling from outside: the shares workload doing a fixed amount of work, run plain,
#     under `prof record -p`, and under `perf record -g -p` (the peer), interleaved, the
#     recorder attached right after the start and stopping when the workload exits. Per
#     run: the workload's CPU time (what sampling costs it: the kernel copies stacks in its
#     timer interrupts), the recorder's own CPU time, samples, bytes per sample, and for
#     prof the largest share error of the three hot functions against the workload's own
#     measure (perf's needs `perf script`, left out);
#  2. all-thread stacks: the parked fixture (6 threads), the wall time of `prof stacks`
#     through ptrace with and without symbols, through libprof's snapshot signal, and of
#     `gdb -batch -ex 'thread apply all bt'` (the peer), median of several runs.
#   python3 bench/attach.py BUILD_DIR
# Settings (environment): BENCH_ROUNDS (5), BENCH_HZ (1000), BENCH_ITERS (1000000000:
# about 2.3 s of work here).
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from bench import clean_env, env_int, libprof_samples, read_truth
from perfdata import perf_data_samples


def rusage_run(argv, env, recorder=None, tmp=None):
    """Runs argv, with recorder(pid) started right after it (a list of argv, or None).
    Returns (workload cpu s, recorder cpu s, recorder exit status)."""
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rec = None
    if recorder:
        rec = subprocess.Popen(recorder(proc.pid), env=clean_env(), stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL,
                               stderr=open(os.path.join(tmp, "recorder.err"), "wb"))
    _, status, ru = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"bench: {argv[0]} failed")
    rec_cpu, rec_status = 0.0, 0
    if rec:
        try:
            _, rstatus, rru = os.wait4(rec.pid, 0)
        except ChildProcessError:
            rstatus, rru = 0, None
        rec_status = os.waitstatus_to_exitcode(rstatus)
        rec_cpu = rru.ru_utime + rru.ru_stime if rru else 0.0
    return ru.ru_utime + ru.ru_stime, rec_cpu, rec_status


def prof_shares(build, path):
    """{function: share} of the three hot functions in a profile, by `prof report`."""
    out = subprocess.run([os.path.join(build, "prof"), "report", path], env=clean_env(),
                         capture_output=True, text=True, check=True).stdout
    total, hot = 0, {"hot_a": 0, "hot_b": 0, "hot_c": 0}
    for line in out.splitlines():
        stack, _, count = line.rpartition(" ")
        total += int(count)
        leaf = stack.split(";")[-1]
        if leaf in hot:
            hot[leaf] += int(count)
    return {k: v / total for k, v in hot.items()} if total else {}


def bench_record(build, tmp, rounds, hz, iters):
    shares = os.path.join(build, "workloads", "shares")
    prof = os.path.join(build, "prof")
    truth_path = os.path.join(tmp, "truth.txt")
    work = [shares, "-i", str(iters), truth_path]
    rows = {"plain": [], "prof record -p": [], "perf record -p": []}
    prof_out = os.path.join(tmp, "p.prof")
    perf_out = os.path.join(tmp, "perf.data")
    recorders = {
        "plain": None,
        "prof record -p": lambda pid: [prof, "record", "-p", str(pid), "-F", str(hz),
                                       "-o", prof_out],
        "perf record -p": lambda pid: ["perf", "record", "-q", "-F", str(hz), "-g", "-p",
                                       str(pid), "-o", perf_out],
    }
    have_perf = shutil.which("perf") is not None
    errors = []
    for _ in range(rounds):
        for name, rec in recorders.items():
            if name.startswith("perf") and not have_perf:
                continue
            cpu, rec_cpu, status = rusage_run(work, clean_env(), rec, tmp)
            if status not in (0, -signal.SIGINT):
                sys.exit(f"bench: {name} exited {status}: "
                         + open(os.path.join(tmp, "recorder.err")).read().strip())
            samples = size = 0
            if name.startswith("prof"):
                samples = libprof_samples(prof_out)[0]
                size = os.path.getsize(prof_out)
                truth = read_truth(truth_path)
                got = prof_shares(build, prof_out)
                errors.append(max(abs(got.get(f, 0) - truth[f]) for f in got))
            elif rec:
                samples = perf_data_samples(perf_out)[0]
                size = os.path.getsize(perf_out)
            rows[name].append((cpu, rec_cpu, samples, size))
    base = statistics.median(r[0] for r in rows["plain"])
    print(f"== sampling a running process: shares -i {iters}, {hz} Hz, {rounds} rounds, "
          "medians")
    print(f"{'recorder':<16} {'work cpu s':>10} {'vs plain':>9} {'recorder cpu s':>15} "
          f"{'samples':>8} {'bytes/sample':>13}")
    for name, r in rows.items():
        if not r:
            continue
        cpu = statistics.median(x[0] for x in r)
        rec_cpu = statistics.median(x[1] for x in r)
        samples = statistics.median(x[2] for x in r)
        per = statistics.median(x[3] / x[2] for x in r if x[2]) if samples else 0
        print(f"{name:<16} {cpu:>10.3f} {cpu / base:>8.3f}x {rec_cpu:>15.3f} "
              f"{samples:>8.0f} {per:>13.1f}")
    if errors:
        print(f"prof record -p: largest share error of hot_a/b/c against the truth: median "
              f"{100 * statistics.median(errors):.2f} points, worst {100 * max(errors):.2f}")


def time_cmd(argv, env=None):
    t0 = time.perf_counter()
    r = subprocess.run(argv, env=env or clean_env(), stdin=subprocess.DEVNULL,
                       capture_output=True)
    if r.returncode != 0:
        sys.exit(f"bench: {' '.join(argv[:3])} failed: {r.stderr.decode().strip()}")
    return time.perf_counter() - t0


def start_parked(build, preload):
    env = clean_env()
    if preload:
        env["LD_PRELOAD"] = os.path.join(build, "libprof.so")
        env["PROF_OUTPUT"] = os.path.join(tempfile.gettempdir(), "bench-parked.%p.prof")
    proc = subprocess.Popen([os.path.join(build, "workloads", "parked")], env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    line = proc.stdout.readline().decode()
    if not line.startswith("ready"):
        sys.exit("bench: the parked fixture did not get ready")
    return proc


def stop_parked(proc):
    proc.stdin.close()
    proc.wait(timeout=10)
    if proc.returncode != 0:
        sys.exit("bench: the parked fixture failed")


def bench_stacks(build, runs):
    prof = os.path.join(build, "prof")
    print(f"== all-thread stacks of the parked fixture (6 threads), wall time, median of "
          f"{runs}")
    plain = start_parked(build, False)
    cases = [
        ("prof stacks --ptrace --no-symbols",
         [prof, "stacks", "--ptrace", "--no-symbols", str(plain.pid)]),
        ("prof stacks --ptrace", [prof, "stacks", "--ptrace", str(plain.pid)]),
        ("gdb thread apply all bt",
         ["gdb", "-batch", "-nx", "-p", str(plain.pid), "-ex", "thread apply all bt"]),
    ]
    try:
        for name, argv in cases:
            if shutil.which(argv[0]) is None:
                print(f"{name:<36} (not installed)")
                continue
            t = statistics.median(time_cmd(argv) for _ in range(runs))
            print(f"{name:<36} {1000 * t:8.1f} ms")
    finally:
        stop_parked(plain)
    under = start_parked(build, True)
    try:
        t = statistics.median(time_cmd([prof, "stacks", str(under.pid)]) for _ in range(runs))
        print(f"{'prof stacks (libprof snapshot)':<36} {1000 * t:8.1f} ms")
    finally:
        stop_parked(under)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: bench/attach.py BUILD_DIR")
    build = sys.argv[1]
    for f in ("prof", "libprof.so", "workloads/shares", "workloads/parked"):
        if not os.path.exists(os.path.join(build, f)):
            sys.exit(f"bench: {build}/{f} is missing (make all {build}/workloads/parked)")
    rounds = env_int("BENCH_ROUNDS", 5)
    with tempfile.TemporaryDirectory() as tmp:
        bench_record(build, tmp, rounds, env_int("BENCH_HZ", 1000),
                     env_int("BENCH_ITERS", 1000000000))
    bench_stacks(build, rounds)


if __name__ == "__main__":
    main()
