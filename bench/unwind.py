# SPDX-License-Identifier: GPL-3.0-or-later
# Stacks on real programs, side by side (started by bench/run.sh): Debian's python3, sqlite3
# and xz, built without frame pointers, profiled at BENCH_HZ (1000) by libprof with its
# unwind tables (the default), by libprof with frame pointers only, by `perf record -g`
# (frame pointers) and by `perf record --call-graph dwarf` (8 KiB stack copies), with an
# unprofiled run in each round, the runs of a round interleaved so that a machine that gets
# busier affects all alike. Per program and profiler it prints:
#   complete  the share of samples whose stack reaches the thread's first frame (for
#             libprof: the walk ended complete; for perf: the outermost frame is _start,
#             __libc_start_main, __libc_start_call_main, main, clone, clone3 or
#             start_thread);
#   cpu       the median CPU time (user + system, the profiler's own threads and processes
#             included) against the unprofiled run's; libprof's own writer thread is in it,
#             perf's separate process too;
#   wall      the median wall time against the unprofiled run's;
#   B/sample  the profile's bytes per sample; tables: libprof's unwind-table memory.
# The unwind-table cache (LIBPROF_CACHE_DIR) is a directory of the run's own, warmed by
# one run of each program first, as a second run on a user's machine would find it.
# Timings are reported, never judged.
#
#   python3 bench/unwind.py BUILD_DIR
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile

from bench import clean_env, env_int, leb128, run

PROF_REC_STATS = 5
PROF_REC_STACK = 7
PROF_REC_SAMPLES = 8
PROF_STAT_UNWIND_BYTES = 23
PERF_ROOTS = {"_start", "__libc_start_main", "__libc_start_call_main", "main", "clone",
              "clone3", "start_thread"}

PY = """import json, re, time
def fib(n): return n if n < 2 else fib(n - 1) + fib(n - 2)
end = time.process_time() + 2
while time.process_time() < end:
    fib(18)
    json.loads(json.dumps([{'a': i, 'b': str(i)} for i in range(300)]))
    sorted(re.findall(r'[a-f]+', 'deadbeef cafe babe ' * 200))
"""
SQL = """CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400000)
  INSERT INTO t SELECT i, hex(randomblob(12)), random() FROM n;
CREATE INDEX tb ON t(b);
SELECT count(*), sum(c) FROM t WHERE b LIKE '%AB%';
SELECT count(*) FROM t AS x JOIN t AS y ON x.a = y.a + 1 WHERE x.c > y.c;
"""


def programs(tmp):
    """(name, argv) of each program, with its input written into tmp."""
    with open(os.path.join(tmp, "work.py"), "w") as f:
        f.write(PY)
    with open(os.path.join(tmp, "work.sql"), "w") as f:
        f.write(SQL)
    with open(os.path.join(tmp, "data.txt"), "w") as f:
        for i in range(120000):
            f.write("%d %x line of text %d\n" % (i * 2654435761 % 2**32, i, i % 977))
    return [("python3", ["/usr/bin/python3", os.path.join(tmp, "work.py")]),
            ("sqlite3", ["/usr/bin/sqlite3", ":memory:", ".read " + os.path.join(tmp, "work.sql")]),
            ("xz", ["/usr/bin/xz", "-k", "-f", "-T1", "-6", os.path.join(tmp, "data.txt")])]


def libprof_stacks(path):
    """(samples, complete ones, table bytes) of a libprof profile: SAMPLES batches name
    STACK records, whose stop reason 0 is a complete walk (docs/FORMAT.md)."""
    with open(path, "rb") as f:
        data = f.read()
    off = struct.unpack_from("<I", data, 12)[0]
    stops, n, complete, table_bytes = [], 0, 0, 0
    while off + 8 <= len(data):
        rtype, size = struct.unpack_from("<II", data, off)
        if size < 8 or off + size > len(data):
            break
        if rtype == PROF_REC_STACK:
            stops.append((data[off + 14], data[off + 15]))
        elif rtype == PROF_REC_SAMPLES:
            count = struct.unpack_from("<I", data, off + 16)[0]
            pos = off + 24
            for _ in range(count):
                _, pos = leb128(data, pos)
                _, pos = leb128(data, pos)
                sid, pos = leb128(data, pos)
                _, pos = leb128(data, pos)
                stop, flags = stops[sid]
                if flags & 16:  # libunwind's twin (PROF_UNWIND=check): no sample
                    continue
                n += 1
                complete += stop == 0
        elif rtype == PROF_REC_STATS:
            count = min(struct.unpack_from("<I", data, off + 8)[0], (size - 16) // 8)
            if count > PROF_STAT_UNWIND_BYTES:
                table_bytes = struct.unpack_from("<Q", data, off + 16 + 8 * PROF_STAT_UNWIND_BYTES)[0]
        off += size
    return n, complete, table_bytes


def perf_stacks(perf, path):
    """(samples, complete ones) of a perf.data file: a stack is complete when its
    outermost frame is a thread's first function."""
    out = subprocess.run([perf, "script", "-i", path, "-F", "ip,sym"], capture_output=True,
                         check=False, text=True).stdout
    n = complete = 0
    for block in out.split("\n\n"):
        lines = [l.split() for l in block.strip().splitlines() if l.strip()]
        if not lines:
            continue
        n += 1
        last = lines[-1]
        complete += len(last) > 1 and last[1].split("+")[0] in PERF_ROOTS
    return n, complete


def configs(build, perf):
    lib = os.path.join(build, "libprof.so")
    cols = [("plain", None), ("libprof", ("lib", "auto")), ("libprof fp", ("lib", "fp"))]
    if perf:
        cols += [("perf -g", ("perf", "fp")), ("perf dwarf", ("perf", "dwarf"))]
    return lib, cols


def run_one(col, argv, tmp, lib, perf, hz, env):
    """(wall, cpu, samples, complete, bytes, table_bytes) of one run."""
    out = os.path.join(tmp, "out")
    if os.path.exists(out):
        os.remove(out)
    kind = col[1]
    if kind is None:
        wall, cpu, rc = run(argv, env)
        return wall, cpu, 0, 0, 0, 0
    if kind[0] == "lib":
        e = dict(env, LD_PRELOAD=lib, PROF_OUTPUT=out, PROF_FREQ=str(hz), PROF_UNWIND=kind[1])
        wall, cpu, rc = run(argv, e)
        n, complete, tables = libprof_stacks(out)
        return wall, cpu, n, complete, os.path.getsize(out), tables
    graph = ["-g"] if kind[1] == "fp" else ["--call-graph", "dwarf"]
    wall, cpu, rc = run([perf, "record", "-q", "-e", "cpu-clock", "-F", str(hz)] + graph +
                        ["-o", out, "--"] + argv, env)
    n, complete = perf_stacks(perf, out)
    return wall, cpu, n, complete, os.path.getsize(out), 0


def main():
    build = sys.argv[1]
    hz = env_int("BENCH_HZ", 1000)
    rounds = env_int("BENCH_UNWIND_ROUNDS", 3)
    perf = shutil.which("perf")
    tmp = tempfile.mkdtemp(prefix="libprof-bench-unwind.")
    env = clean_env()
    env["LIBPROF_CACHE_DIR"] = os.path.join(tmp, "cache")
    lib, cols = configs(build, perf)
    print(f"== stacks on real programs, {hz} Hz, {rounds} rounds, medians "
          "(cpu and wall against the unprofiled run)")
    print("%-8s %-11s %9s %8s %8s %9s %8s" % ("program", "profiler", "complete", "cpu",
                                              "wall", "B/sample", "tables"))
    try:
        for name, argv in programs(tmp):
            run_one(cols[1], argv, tmp, lib, perf, hz, env)  # warms the table cache
            res = {c[0]: [] for c in cols}
            for _ in range(rounds):
                for col in cols:
                    res[col[0]].append(run_one(col, argv, tmp, lib, perf, hz, env))
            plain_cpu = statistics.median(r[1] for r in res["plain"])
            plain_wall = statistics.median(r[0] for r in res["plain"])
            for col in cols:
                rs = res[col[0]]
                wall = statistics.median(r[0] for r in rs)
                cpu = statistics.median(r[1] for r in rs)
                if col[1] is None:
                    print("%-8s %-11s %9s %7.2fs %7.2fs" % (name, col[0], "", cpu, wall))
                    continue
                n = sum(r[2] for r in rs)
                complete = sum(r[3] for r in rs) / n if n else 0
                per = sum(r[4] for r in rs) / n if n else 0
                tables = max(r[5] for r in rs)
                print("%-8s %-11s %8.1f%% %+7.1f%% %+7.1f%% %9.0f %7s" % (
                    name, col[0], 100 * complete, 100 * (cpu / plain_cpu - 1),
                    100 * (wall / plain_wall - 1), per,
                    "%.1fM" % (tables / 2**20) if tables else ""))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
