# SPDX-License-Identifier: GPL-3.0-or-later
# Where each microsecond of a sample goes (part of `make bench`): bench/floor's modes, each a
# piece of a sampling profiler's path doing nothing else, and libprof's sources, measured
# the same way, in BENCH_DECOMP_ROUNDS rounds whose runs are interleaved in a random order.
# Each run alternates windows with its source off and on inside one process (bench/floor.c),
# so that the machine's drift, which is larger than a sample's cost here, falls on both
# alike; a row is the median [min..max] over the rounds of what a sample cost in the on
# windows above the off ones: the loop's work lost, the time in its gaps, the other
# threads' CPU (the writer's), system calls, page faults and interrupts (local timer,
# IRQ work, function calls) per sample. Then the pieces as differences of rows, and `perf
# record -g` on the same loop (a whole run under it against whole runs without, the work
# per microsecond of the loop), so that every figure has the peer beside it.
#
#   python3 bench/decompose.py BUILD_DIR
# Settings (environment): BENCH_HZ (1000), BENCH_DECOMP_ROUNDS (3), BENCH_DECOMP_SECONDS
# (6: wall seconds of a run, half of them sampled).
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile

from bench import clean_env, env_int, perf_works

FIELDS = ["lost_us", "gap_us", "others_us", "syscalls", "faults", "loc", "iwi", "cal"]


def rows(hz, lib, tmp):
    """(name, floor arguments, environment, per-sample scale) of each measured row."""
    prof = {"LD_PRELOAD": lib, "PROF_FREQ": str(hz), "PROF_OUTPUT": os.path.join(tmp, "d.prof")}
    out = [
        ("timer interrupt (irq)", ["-m", "irq"], {}, 1),
        ("signal, no re-arm (cont)", ["-m", "cont"], {}, 1),
        ("signal + REFRESH: the floor", ["-m", "refresh"], {}, 1),
        ("signal + IOC_PERIOD (period)", ["-m", "period"], {}, 1),
        ("kernel-time counter at HZ/4", ["-m", "kclock", "-F", str(max(hz // 4, 1))], {}, 0.25),
        ("ring, 4 KiB stack copy", ["-m", "ring", "-k", "4"], {}, 1),
        ("ring, 8 KiB stack copy", ["-m", "ring", "-k", "8"], {}, 1),
        ("ring, 32 KiB stack copy", ["-m", "ring", "-k", "32"], {}, 1),
        ("tick signal (per signal)", ["-m", "tick"], {}, 1),
    ]
    for timer in os.environ.get("BENCH_DECOMP_SOURCES", "auto perf thread").split():
        env = dict(prof, PROF_TIMER=timer)
        out.append((f"libprof PROF_TIMER={timer}", ["-m", "prof"], env, 1))
    return out


def run_floor(floor, args, env, hz, seconds):
    argv = [floor, "-s", str(seconds)] + (args if "-F" in args else args + ["-F", str(hz)])
    e = clean_env()
    e.update(env)
    r = subprocess.run(argv, env=e, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    for line in r.stdout.splitlines():
        if line.startswith("result:"):
            return {k: float(v) for k, v in (w.split("=") for w in line.split()[1:])}
    return None


def fmt(values):
    if not values:
        return "-"
    return f"{statistics.median(values):7.2f} [{min(values):.1f}..{max(values):.1f}]"


def perf_row(floor, perf, hz, seconds, rounds, tmp):
    """The loop's work per microsecond under `perf record -g` against plain, interleaved."""
    plain, under = [], []
    data = os.path.join(tmp, "d.perf")
    for _ in range(rounds):
        order = [0, 1]
        random.shuffle(order)
        for k in order:
            argv = [floor, "-m", "none", "-s", str(seconds)]
            if k:
                argv = [perf, "record", "-q", "-g", "-e", "cpu-clock", "-F", str(hz), "-o", data,
                        "--"] + argv
            r = subprocess.run(argv, env=clean_env(), stdin=subprocess.DEVNULL,
                               capture_output=True, text=True)
            for line in r.stdout.splitlines():
                if line.startswith("result:"):
                    v = dict(w.split("=") for w in line.split()[1:])
                    (under if k else plain).append(
                        (float(v["work_off"]) + float(v["work_on"])) / 2)
    if not plain or not under:
        return None
    # Per round: the loss against the plain run of the same round.
    losses = [1 - u / p for p, u in zip(plain, under)]
    return [loss * 1e6 / hz for loss in losses]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: decompose.py BUILD_DIR")
    build = os.path.abspath(sys.argv[1])
    floor = os.path.join(build, "bench", "floor")
    lib = os.path.join(build, "libprof.so")
    hz = env_int("BENCH_HZ", 1000)
    rounds = env_int("BENCH_DECOMP_ROUNDS", 3)
    seconds = env_int("BENCH_DECOMP_SECONDS", 6)
    if not os.access(floor, os.X_OK):
        sys.exit(f"bench: {floor} is missing")
    with tempfile.TemporaryDirectory(prefix="libprof-decomp.") as tmp:
        table = rows(hz, lib, tmp)
        got = {name: {f: [] for f in FIELDS} for name, _, _, _ in table}
        by_round = {name: [] for name, _, _, _ in table}
        for r in range(rounds):
            order = list(table)
            random.shuffle(order)
            for name, args, env, scale in order:
                res = run_floor(floor, args, env, hz, seconds)
                if res is None:
                    by_round[name].append(None)
                    continue
                for f in FIELDS:
                    got[name][f].append(res[f] * scale)
                by_round[name].append(res["lost_us"] * scale)
            print(f"   round {r + 1}/{rounds} done", file=sys.stderr)
        perf = shutil.which("perf")
        perf_costs = None
        if perf and perf_works(perf, tmp) is None:
            perf_costs = perf_row(floor, perf, hz, seconds, rounds, tmp)

    print(f"\n== where a sample's time goes: bench/floor at {hz} Hz, {rounds} rounds of "
          f"{seconds} s, interleaved; per sample, median [min..max] over the rounds; "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"{'':32}{'work lost us':>22}{'gap time us':>22}{'writer us':>22}"
          f"{'syscalls':>10}{'faults':>8}{'LOC':>7}{'IWI':>7}{'CAL':>7}")
    for name, _, _, _ in table:
        g = got[name]
        if not g["lost_us"]:
            print(f"{name:32} could not run here")
            continue
        med = {f: statistics.median(g[f]) for f in FIELDS}
        print(f"{name:32}{fmt(g['lost_us']):>22}{fmt(g['gap_us']):>22}{fmt(g['others_us']):>22}"
              f"{med['syscalls']:10.2f}{med['faults']:8.3f}{med['loc']:7.2f}{med['iwi']:7.2f}"
              f"{med['cal']:7.2f}")
    if perf_costs:
        print(f"{'perf record -g (in the loop)':32}{fmt(perf_costs):>22}")

    def diff(a, b):
        """Per-round differences of the work lost, a minus b."""
        return [x - y for x, y in zip(by_round[a], by_round[b])
                if x is not None and y is not None]

    print("\nthe pieces (per-round differences of the work lost, us a sample):")
    pieces = [
        ("the signal: IRQ work, delivery, return", "signal, no re-arm (cont)",
         "timer interrupt (irq)"),
        ("the re-arming call (REFRESH)", "signal + REFRESH: the floor",
         "signal, no re-arm (cont)"),
        ("a period change per sample", "signal + IOC_PERIOD (period)",
         "signal, no re-arm (cont)"),
        ("a 4 KiB stack copy into a ring", "ring, 4 KiB stack copy", "timer interrupt (irq)"),
        ("a 32 KiB stack copy into a ring", "ring, 32 KiB stack copy", "timer interrupt (irq)"),
    ]
    # Each source's floor is its own mechanism doing nothing else: the tick's signal, the
    # counter's signal and re-arming, the counter's interrupt and a record of a 4 KiB copy
    # (the ring source sizes a thread's copy to its walks: 4 KiB for this loop's).
    floors = {"thread": "tick signal (per signal)", "auto": "ring, 4 KiB stack copy",
              "ring": "ring, 4 KiB stack copy"}
    for timer in os.environ.get("BENCH_DECOMP_SOURCES", "auto perf thread").split():
        floor_row = floors.get(timer, "signal + REFRESH: the floor")
        pieces.append((f"libprof {timer} above its floor", f"libprof PROF_TIMER={timer}",
                       floor_row))
    for label, a, b in pieces:
        print(f"   {label:44}{fmt(diff(a, b))}")
    print(f"   {'the kernel-time counter, per user sample':44}"
          f"{fmt(got['kernel-time counter at HZ/4']['lost_us'])}")


if __name__ == "__main__":
    main()
