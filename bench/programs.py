# SPDX-License-Identifier: GPL-3.0-or-later
# What a profile costs programs nobody here wrote (part of `make bench`): Debian's sqlite3 on
# a disk database (autocommit inserts: a journal written, synced and removed per row) and
# in memory (a CPU-bound table build, index and join), xz compressing text, fifty starts
# of python3, and, with BENCH_PROG_MAKE=1, a `make -j2` of this project. Each runs plain,
# under libprof at the default rate and at 1000 Hz, and under `perf record -g` at 1000 Hz,
# in BENCH_PROG_ROUNDS rounds whose runs are interleaved in a random order; every run goes
# through bench/cputime.c (the CPU of the program's whole process tree, libprof's writer
# thread in it, perf's own process not). Per program and column: the median [min..max]
# over the rounds of the wall time and the program's CPU as ratios to the plain run of the
# same round.
#
#   python3 bench/programs.py BUILD_DIR
# Settings (environment): BENCH_PROG_ROUNDS (5), BENCH_PROG_PERF (1: with the perf column),
# BENCH_PROG_MAKE (0: 1 adds make -j2 of this project, about a minute a run),
# BENCH_PROG_ONLY (all: names of the programs to run, "sqlite-disk sqlite-mem xz python").
import os
import random
import shutil
import statistics
import sys
import tempfile

from bench import clean_env, env_int, fmt_ratios as fmt, perf_works
from cost import run_one

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def programs(tmp, wanted, with_make):
    """(name, argv, before) of each program found; before() runs ahead of every run."""
    out = []
    sqlite = "/usr/bin/sqlite3"
    if os.access(sqlite, os.X_OK) and "sqlite-disk" in wanted:
        sql = os.path.join(tmp, "disk.sql")
        rows = "".join("INSERT INTO t(b, c) VALUES (hex(randomblob(16)), random());\n"
                       for _ in range(1000))
        write(sql, "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL);\n" + rows +
              "CREATE INDEX tb ON t(b);\nSELECT count(*), sum(c) FROM t WHERE b LIKE '%AB%';\n")
        db = os.path.join(tmp, "disk.db")

        def fresh_db():
            for p in (db, db + "-journal"):
                if os.path.exists(p):
                    os.remove(p)
        out.append(("sqlite3, disk, 1000 inserts", [sqlite, db, ".read " + sql], fresh_db))
    if os.access(sqlite, os.X_OK) and "sqlite-mem" in wanted:
        sql = os.path.join(tmp, "mem.sql")
        write(sql, "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL);\n"
              "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400000)\n"
              "  INSERT INTO t SELECT i, hex(randomblob(12)), random() FROM n;\n"
              "CREATE INDEX tb ON t(b);\n"
              "SELECT count(*) FROM t AS x JOIN t AS y ON x.a = y.a + 1 WHERE x.c > y.c;\n")
        out.append(("sqlite3, memory, 400k rows", [sqlite, ":memory:", ".read " + sql], None))
    xz = shutil.which("xz")
    if xz and "xz" in wanted:
        text = os.path.join(tmp, "text.txt")
        with open(text, "w") as f:
            for i in range(120000):
                f.write(f"{i * 7919 % 100003} line {i} of words {i % 97} and {i * 31 % 1009}\n")
        out.append(("xz -6, 6 MB of text", ["/bin/sh", "-c", f'exec "$0" -6 -T1 -c "$1" >/dev/null',
                                           xz, text], None))
    py = "/usr/bin/python3"
    if os.access(py, os.X_OK) and "python" in wanted:
        loop = 'i=0; while [ $i -lt 50 ]; do "$0" -c pass; i=$((i + 1)); done'
        out.append(("python3 -c pass x50", ["/bin/sh", "-c", loop, py], None))
    if with_make:
        tree = os.path.join(tmp, "tree")
        shutil.copytree(SRC, tree, ignore=shutil.ignore_patterns("build", ".git"))
        build = os.path.join(tmp, "mbuild")

        def clean_build():
            shutil.rmtree(build, ignore_errors=True)
        out.append(("make -j2 of this project", ["make", "-s", "-C", tree, "-j2",
                                                 f"BUILD={build}", "all"], clean_build))
    return out


def configs(lib, perf, tmp):
    """(name, argv prefix, environment additions) of each column."""
    prof = os.path.join(tmp, "p", "run.%p.prof")
    out = [("plain", [], {}),
           ("libprof", [], {"LD_PRELOAD": lib, "PROF_OUTPUT": prof}),
           ("libprof 1000 Hz", [], {"LD_PRELOAD": lib, "PROF_OUTPUT": prof, "PROF_FREQ": "1000"})]
    if perf:
        out.append(("perf record -g 1000 Hz", [perf, "record", "-q", "-g", "-F", "1000", "-o",
                                               os.path.join(tmp, "perf.data"), "--"], {}))
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: programs.py BUILD_DIR")
    build = os.path.abspath(sys.argv[1])
    cputime = os.path.join(build, "bench", "cputime")
    lib = os.path.join(build, "libprof.so")
    rounds = env_int("BENCH_PROG_ROUNDS", 5)
    wanted = os.environ.get("BENCH_PROG_ONLY", "sqlite-disk sqlite-mem xz python").split()
    with tempfile.TemporaryDirectory(prefix="libprof-programs.") as tmp:
        os.makedirs(os.path.join(tmp, "p"))
        perf = shutil.which("perf") if env_int("BENCH_PROG_PERF", 1) else None
        if perf and perf_works(perf, tmp) is not None:
            perf = None
        work = programs(tmp, wanted, env_int("BENCH_PROG_MAKE", 0) == 1)
        cols = configs(lib, perf, tmp)
        cells = [(w, c) for w in work for c in cols]
        got = {}
        for r in range(rounds):
            order = list(cells)
            random.shuffle(order)
            for (wname, argv, before), (cname, prefix, extra) in order:
                if before:
                    before()
                env = clean_env()
                env.update(extra)
                # (program CPU s, whole tree CPU s, wall s), None when the run failed
                got.setdefault((wname, cname), []).append(run_one(prefix + [argv], env, tmp,
                                                                  cputime))
                for f in os.listdir(os.path.join(tmp, "p")):
                    os.remove(os.path.join(tmp, "p", f))
            print(f"   round {r + 1}/{rounds} done", file=sys.stderr)

    print(f"\n== programs nobody here wrote: {rounds} rounds, runs interleaved in a random "
          f"order; ratios to the plain run of the same round, median [min..max]; load "
          f"average {os.getloadavg()[0]:.2f}")
    for wname, _, _ in work:
        base = got[(wname, "plain")]
        ok = [b for b in base if b]
        if not ok:
            print(f"{wname}: every plain run failed")
            continue
        print(f"{wname} (plain: {statistics.median(b[2] for b in ok):.3f} s wall, "
              f"{statistics.median(b[0] for b in ok):.3f} CPU-s)")
        for cname, _, _ in cols[1:]:
            pairs = [(b, x) for b, x in zip(base, got[(wname, cname)]) if b and x]
            if not pairs:
                print(f"   {cname:24} every run failed")
                continue
            print(f"   {cname:24} wall {fmt([x[2] / b[2] for b, x in pairs])}   "
                  f"CPU {fmt([x[0] / b[0] for b, x in pairs])}")


if __name__ == "__main__":
    main()
