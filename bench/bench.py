# SPDX-License-Identifier: GPL-3.0-or-later
# The benchmark behind `make bench` (started by bench/run.sh): libprof next to its peers,
# gperftools' libprofiler and `perf record`, on the same workload in one batch.
#
# Part 1 profiles tests/workloads/shares, fixed to the amount of work that takes about
# BENCH_SECONDS of CPU unprofiled, at BENCH_HZ requested, in BENCH_ROUNDS rounds whose runs
# are interleaved (plain, libprof, gperftools, perf, plain, ...) so that a machine that gets
# busier or quieter affects every profiler alike. Per profiler it prints the median, min
# and max wall time with the ratios of the medians and of the minima to the unprofiled
# run; the CPU time (user + system of the whole run, the profiler's own threads and
# processes included) and its ratio; the samples received against those expected (the
# workload's own CPU seconds times the requested rate, and times 250 Hz, the most that
# setitimer delivers on a kernel with CONFIG_HZ=250); and the profile's bytes per sample.
# Part 2 is the start-up cost: BENCH_STARTUP runs of /bin/true plain, under libprof and
# under gperftools, interleaved. What one sample costs, piece by piece, against the
# kernel's own floor for a signal, is bench/decompose.py's.
#
# Timings are reported, never judged. Sample counts come from the files themselves: the
# libprof format (include/libprof/prof_format.h) and gperftools' legacy CPU profile format (64-bit
# words: header 0 3 0 period_us 0; records count n_pcs pcs...; trailer 0 1 0; text maps).
#
#   python3 bench/bench.py BUILD_DIR
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time

GPERF_LIB = os.environ.get("BENCH_GPERF_LIB", "/usr/lib/x86_64-linux-gnu/libprofiler.so")
KERNEL_HZ = 250  # the most setitimer(ITIMER_PROF) delivers per CPU-second here

PROF_REC_SAMPLE = 4
PROF_REC_STATS = 5
PROF_REC_SAMPLES = 8  # format 2: a batch of compact samples naming interned stacks
PROF_STAT_SIGNALS = 0
PROF_STAT_DROPPED = 2


def env_int(name, default):
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        sys.exit(f"bench: {name} must be an integer")


def fmt_ratios(values):
    """Ratios to plain over the rounds: 'median [min..max]'."""
    return f"{statistics.median(values):6.3f} [{min(values):.3f}..{max(values):.3f}]"


def clean_env():
    """Our environment without any profiler's variables."""
    return {k: v for k, v in os.environ.items()
            if not (k == "LD_PRELOAD" or k.startswith("PROF_") or k.startswith("CPUPROFILE"))}


def run(argv, env, stderr_path=None):
    """Runs argv to completion; returns (wall_s, cpu_s, exit_status)."""
    err = open(stderr_path, "wb") if stderr_path else subprocess.DEVNULL
    try:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=err)
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
    finally:
        if stderr_path:
            err.close()
    return wall, ru.ru_utime + ru.ru_stime, proc.returncode


def read_truth(path):
    values = {}
    with open(path) as f:
        for line in f:
            name, value = line.split()
            values[name] = float(value)
    return values


def leb128(data, off):
    """(value, next offset) of the unsigned LEB128 number at off."""
    value = shift = 0
    while True:
        byte = data[off]
        off += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, off


def samples_batch(data, off, size):
    """(entries, sum of their weights) of a SAMPLES record: 4 LEB128 numbers an entry,
    the last one the weight minus 1 (docs/FORMAT.md)."""
    count = struct.unpack_from("<I", data, off + 16)[0]
    pos, end, weight = off + 24, off + size, 0
    for _ in range(count):
        for _ in range(3):  # time step, tid, stack id
            _, pos = leb128(data, pos)
        w, pos = leb128(data, pos)
        weight += w + 1
        if pos > end:
            raise ValueError("a SAMPLES record runs past its end")
    return count, weight


def libprof_samples(path):
    """(samples, sum of their weights, signals, dropped) of a libprof profile: SAMPLE
    records (format 1) and the entries of SAMPLES batches (format 2)."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 16 or data[:8] != b"LIBPROF\0":
        raise ValueError(f"{path}: not a libprof profile")
    off = struct.unpack_from("<I", data, 12)[0]
    n = weight = signals = dropped = 0
    while off + 8 <= len(data):
        rtype, size = struct.unpack_from("<II", data, off)
        if size < 8 or size % 8 or off + size > len(data):
            break
        if rtype == PROF_REC_SAMPLE and size >= 40:
            n += 1
            weight += struct.unpack_from("<I", data, off + 20)[0]
        elif rtype == PROF_REC_SAMPLES and size >= 24:
            count, w = samples_batch(data, off, size)
            n += count
            weight += w
        elif rtype == PROF_REC_STATS and size >= 16:
            count = min(struct.unpack_from("<I", data, off + 8)[0], (size - 16) // 8)
            counters = struct.unpack_from(f"<{count}Q", data, off + 16)
            signals = counters[PROF_STAT_SIGNALS] if count > PROF_STAT_SIGNALS else 0
            dropped = counters[PROF_STAT_DROPPED] if count > PROF_STAT_DROPPED else 0
        off += size
    return n, weight, signals, dropped


def gperf_samples(path):
    """Samples in a gperftools CPU profile: the sum of its records' counts."""
    with open(path, "rb") as f:
        data = f.read()
    words = len(data) // 8
    w = struct.unpack_from(f"<{words}Q", data)
    if words < 5 or w[0] != 0 or w[1] != 3:
        raise ValueError(f"{path}: not a gperftools CPU profile")
    i = 2 + w[1]
    total = 0
    while i + 2 <= words:
        count, n_pcs = w[i], w[i + 1]
        if count == 0 and n_pcs == 1:  # the trailer
            break
        total += count
        i += 2 + n_pcs
    return total


def perf_samples(perf, path):
    """Samples in a perf.data file: one `perf script -F tid` line each."""
    out = subprocess.run([perf, "script", "-i", path, "-F", "tid"], capture_output=True,
                         check=False, text=True).stdout
    return sum(1 for line in out.splitlines() if line.strip())


def perf_works(perf, tmp):
    if not perf:
        return "perf is not installed"
    path = os.path.join(tmp, "probe.data")
    r = subprocess.run([perf, "record", "-q", "-e", "cpu-clock", "-g", "-F", "1000", "-o",
                        path, "--", "/bin/true"], capture_output=True, text=True,
                       check=False)
    if r.returncode != 0:
        return (r.stderr.strip().splitlines() or ["perf record failed"])[0]
    return None


class Profiler:
    """One column of the comparison: how to run the workload under it, how to count."""

    def __init__(self, name):
        self.name = name
        self.wall, self.cpu, self.samples, self.bytes, self.workload_cpu = [], [], [], [], []
        self.extra = []  # free-form notes per run (signals, dropped)
        self.failures = 0


def run_workload(prof, cfg, work_argv, tmp, hz):
    truth = os.path.join(tmp, "truth.txt")
    env = clean_env()
    argv = work_argv + [truth]
    out = None
    if prof.name == "libprof":
        out = os.path.join(tmp, "run.prof")
        if os.path.exists(out):
            os.remove(out)
        env.update(LD_PRELOAD=cfg["lib"], PROF_FREQ=str(hz), PROF_OUTPUT=out)
    elif prof.name == "gperftools":
        out = os.path.join(tmp, "run.gprof")
        env.update(LD_PRELOAD=GPERF_LIB, CPUPROFILE=out, CPUPROFILE_FREQUENCY=str(hz))
    elif prof.name == "perf":
        out = os.path.join(tmp, "run.perf")
        argv = [cfg["perf"], "record", "-q", "-e", "cpu-clock", "-g", "-F", str(hz), "-o",
                out, "--"] + argv
    wall, cpu, status = run(argv, env, os.path.join(tmp, "stderr.txt"))
    if status != 0 or not os.path.exists(truth):
        prof.failures += 1
        return
    prof.wall.append(wall)
    prof.cpu.append(cpu)
    prof.workload_cpu.append(read_truth(truth)["total_cpu_s"])
    if out is None:
        return
    if not os.path.exists(out):
        prof.failures += 1
        return
    size = os.path.getsize(out)
    if prof.name == "libprof":
        n, weight, signals, dropped = libprof_samples(out)
        prof.extra.append((weight, signals, dropped))
    elif prof.name == "gperftools":
        n = gperf_samples(out)
    else:
        n = perf_samples(cfg["perf"], out)
    prof.samples.append(n)
    prof.bytes.append(size / n if n else float("nan"))
    os.remove(out)


def fmt_s(v):
    return f"{v:7.3f}"


def print_workload_table(profs, hz):
    base = profs[0]
    bw, bmin, bc = statistics.median(base.wall), min(base.wall), statistics.median(base.cpu)
    # The ratio of the minima is the steadier one on a busy machine: noise only adds time.
    print(f"{'':12}{'wall median':>12}{'min':>8}{'max':>8}{'ratio':>8}{'min ratio':>10}"
          f"{'cpu median':>12}{'ratio':>8}")
    for p in profs:
        if not p.wall:
            print(f"{p.name:12} every run failed")
            continue
        w, c = statistics.median(p.wall), statistics.median(p.cpu)
        print(f"{p.name:12}{fmt_s(w):>12}{fmt_s(min(p.wall)):>8}{fmt_s(max(p.wall)):>8}"
              f"{w / bw:7.3f}x{min(p.wall) / bmin:9.3f}x{fmt_s(c):>12}{c / bc:7.3f}x"
              + (f"   ({p.failures} failed runs)" if p.failures else ""))
    print()
    print(f"{'':12}{'samples':>9}{'expected':>10}{'received':>10}{'@' + str(KERNEL_HZ) + ' Hz':>10}"
          f"{'received':>10}{'bytes/sample':>14}")
    for p in profs[1:]:
        if not p.samples:
            continue
        n = statistics.median(p.samples)
        cpu = statistics.median(p.workload_cpu)
        want, cap = cpu * hz, cpu * min(hz, KERNEL_HZ)
        # perf's cpu-clock event is an hrtimer, not setitimer: the 250 Hz cap is not its.
        capped = (f"{cap:10.0f}{100 * n / cap:9.1f}%" if p.name != "perf"
                  else f"{'-':>10}{'-':>10}")
        print(f"{p.name:12}{n:9.0f}{want:10.0f}{100 * n / want:9.1f}%{capped}"
              f"{statistics.median(p.bytes):14.1f}")
    lib = next((p for p in profs if p.name == "libprof" and p.extra), None)
    if lib:
        weight = statistics.median(e[0] for e in lib.extra)
        signals = statistics.median(e[1] for e in lib.extra)
        dropped = max(e[2] for e in lib.extra)
        print(f"\nlibprof: sample weight sum {weight:.0f}, signals handled {signals:.0f} "
              f"(medians), dropped {dropped:.0f} (max)")


def bench_workload(cfg, tmp):
    hz, rounds, seconds = cfg["hz"], cfg["rounds"], cfg["seconds"]
    truth = os.path.join(tmp, "calibrate.txt")
    _, _, status = run([cfg["shares"], str(seconds), truth], clean_env())
    if status != 0:
        sys.exit("bench: the shares workload failed to run")
    iters = int(read_truth(truth)["iterations"])
    work_argv = [cfg["shares"], "-i", str(iters)]

    names = ["plain", "libprof", "gperftools"] + (["perf"] if cfg["perf_ok"] else [])
    profs = [Profiler(n) for n in names]
    print(f"== workload: shares -i {iters} (the work a {seconds} CPU-s run did), {hz} Hz "
          f"requested, {rounds} rounds, runs interleaved")
    for r in range(rounds):
        for p in profs:
            run_workload(p, cfg, work_argv, tmp, hz)
        print(f"   round {r + 1}/{rounds} done", file=sys.stderr)
    print()
    print_workload_table(profs, hz)


def run_counting(argv, env):
    """Runs argv to completion; returns (wall_s, cpu_s, minor page faults, exit_status)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(proc.pid, 0)
    return (time.perf_counter() - t0, ru.ru_utime + ru.ru_stime, ru.ru_minflt,
            os.waitstatus_to_exitcode(status))


def bench_startup(cfg, tmp):
    n = cfg["startup_runs"]
    configs = [("plain", {}),
               ("libprof", {"LD_PRELOAD": cfg["lib"],
                            "PROF_OUTPUT": os.path.join(tmp, "true.%p.prof")}),
               ("gperftools", {"LD_PRELOAD": GPERF_LIB,
                               "CPUPROFILE": os.path.join(tmp, "true.gprof")})]
    results = {name: ([], [], []) for name, _ in configs}
    failures = {name: 0 for name, _ in configs}
    for _ in range(n):
        for name, extra in configs:
            env = clean_env()
            env.update(extra)
            wall, cpu, faults, status = run_counting(["/bin/true"], env)
            if status != 0:
                failures[name] += 1
            results[name][0].append(wall)
            results[name][1].append(cpu)
            results[name][2].append(faults)
        for f in os.listdir(tmp):
            if f.startswith("true."):
                os.remove(os.path.join(tmp, f))
    # CPU per run is the kernel's accounting of the child (user + system, all its threads),
    # in clock ticks' worth of precision each; its mean over many runs is what is compared.
    # Page faults are exact: in a virtual machine each costs several microseconds, and they
    # are most of a preloaded library's start.
    print(f"\n== start-up: {n} runs of /bin/true each, interleaved")
    print(f"{'':12}{'wall total':>12}{'per run':>10}{'median':>10}{'cpu per run':>13}"
          f"{'extra wall':>12}{'extra cpu':>11}{'faults':>8}")
    base = statistics.mean(results["plain"][0])
    base_cpu = statistics.mean(results["plain"][1])
    for name, _ in configs:
        wall, cpu, faults = results[name]
        print(f"{name:12}{sum(wall) * 1e3:10.1f}ms{statistics.mean(wall) * 1e3:8.2f}ms"
              f"{statistics.median(wall) * 1e3:8.2f}ms{statistics.mean(cpu) * 1e3:11.2f}ms"
              f"{(statistics.mean(wall) - base) * 1e3:+10.2f}ms"
              f"{(statistics.mean(cpu) - base_cpu) * 1e3:+9.2f}ms"
              f"{statistics.median(faults):8.0f}"
              + (f"   ({failures[name]} failed)" if failures[name] else ""))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: bench.py BUILD_DIR")
    build = os.path.abspath(sys.argv[1])
    cfg = {
        "lib": os.path.join(build, "libprof.so"),
        "shares": os.path.join(build, "workloads", "shares"),
        "perf": shutil.which("perf"),
        "hz": env_int("BENCH_HZ", 1000),
        "rounds": env_int("BENCH_ROUNDS", 7),
        "seconds": env_int("BENCH_SECONDS", 2),
        "startup_runs": env_int("BENCH_STARTUP", 100),
    }
    for key in ("lib", "shares"):
        if not os.access(cfg[key], os.R_OK if key == "lib" else os.X_OK):
            sys.exit(f"bench: {cfg[key]} is missing")
    if not os.access(GPERF_LIB, os.R_OK):
        sys.exit(f"bench: {GPERF_LIB} is missing (scripts/setup.sh bench)")
    with tempfile.TemporaryDirectory(prefix="libprof-bench.") as tmp:
        why = perf_works(cfg["perf"], tmp)
        cfg["perf_ok"] = why is None
        print(f"libprof bench on {os.uname().nodename}: {os.cpu_count()} CPUs, "
              f"Linux {os.uname().release}; load average {os.getloadavg()[0]:.2f}")
        if why:
            print(f"perf left out: {why}")
        bench_workload(cfg, tmp)
        bench_startup(cfg, tmp)
        print(f"\nload average at the end {os.getloadavg()[0]:.2f}; timings are as noisy as "
              "the machine, compare the ratios within this one batch")


if __name__ == "__main__":
    main()
