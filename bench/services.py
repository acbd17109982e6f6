# SPDX-License-Identifier: GPL-3.0-or-later
# What a profile costs a busy server (part of `make bench`): nginx (2 workers, a 4 KiB
# static file) under `wrk -t2 -c64` and redis under `redis-benchmark -t get,set -c 50`,
# both on the loopback, run plain, under libprof (the default source at the default rate and
# at 1000 Hz, and the thread source at 1000 Hz) and under `perf record -g -p` of the server
# at 1000 Hz, in BENCH_SVC_ROUNDS rounds whose columns run in a random order (this machine
# drifts by +-15 % within minutes: a server benchmark needs interleaved rounds). Per server
# and column: the median [min..max] over the rounds of throughput and median latency as
# ratios to the plain run of the same round.
#
#   python3 bench/services.py BUILD_DIR
# Settings (environment): BENCH_SVC_ROUNDS (5), BENCH_SVC_SECONDS (5: each load run),
# BENCH_SVC_SERVERS ("nginx redis"), BENCH_SVC_PERF (1: with the perf record column).
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from bench import clean_env, env_int, perf_works


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, seconds=10):
    end = time.time() + seconds
    while time.time() < end:
        if proc.poll() is not None:
            raise RuntimeError("the server exited %d before listening" % proc.returncode)
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("the server did not listen on %d" % port)


def nginx_cmd(tmp, port):
    root = os.path.join(tmp, "www")
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "index.html"), "w") as f:
        f.write("x" * 4096)
    conf = os.path.join(tmp, "nginx.conf")
    with open(conf, "w") as f:
        f.write("daemon off; master_process on; worker_processes 2; pid %s/nginx.pid;\n"
                "error_log %s/error.log; events { worker_connections 1024; }\n"
                "http { access_log off; server { listen 127.0.0.1:%d; root %s; } }\n"
                % (tmp, tmp, port, root))
    return ["/usr/sbin/nginx", "-p", tmp, "-c", conf]


def redis_cmd(tmp, port):
    return ["/usr/bin/redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
            "--appendonly", "no", "--dir", tmp]


def load_nginx(port, seconds):
    out = subprocess.run(["wrk", "-t2", "-c64", "-d%ds" % seconds, "--latency",
                          "http://127.0.0.1:%d/index.html" % port],
                         capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    m = re.search(r"50%\s+([\d.]+)(us|ms|s)", out)
    scale = {"us": 1e-3, "ms": 1.0, "s": 1e3}[m.group(2)]
    return rps, float(m.group(1)) * scale


def load_redis(port, seconds):
    # redis-benchmark runs a number of requests, not a time: about `seconds` at 60 000 a second.
    n = 60000 * seconds
    out = subprocess.run(["redis-benchmark", "-p", str(port), "-t", "get,set", "-c", "50",
                          "-n", str(n), "--csv"], capture_output=True, text=True,
                         check=True).stdout
    rps, p50 = [], []
    for line in out.splitlines():
        f = [x.strip('"') for x in line.split(",")]
        if f[0] in ("GET", "SET"):
            rps.append(float(f[1]))
            p50.append(float(f[4]) if len(f) > 4 else float("nan"))
    return statistics.mean(rps), statistics.mean(p50)


SERVERS = {"nginx": (nginx_cmd, load_nginx), "redis": (redis_cmd, load_redis)}


def run_one(server, column, build, tmp, seconds):
    cmd_of, load = SERVERS[server]
    port = free_port()
    work = tempfile.mkdtemp(dir=tmp)
    env = clean_env()
    lib = os.path.join(build, "libprof.so")
    if column.startswith("libprof"):
        env["LD_PRELOAD"] = lib
        env["PROF_OUTPUT"] = os.path.join(work, "p.%p.prof")
        env["PROF_FOLLOW"] = "1"
        if "1000" in column:
            env["PROF_FREQ"] = "1000"
        if "thread" in column:
            env["PROF_TIMER"] = "thread"
    srv = subprocess.Popen(cmd_of(work, port), env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, start_new_session=True)
    perf = None
    try:
        wait_port(port, srv)
        if column == "perf -g":
            pids = [str(srv.pid)] + subprocess.run(
                ["pgrep", "-P", str(srv.pid)], capture_output=True, text=True).stdout.split()
            perf = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-g", "-F", "1000", "-o",
                                     os.path.join(work, "perf.data"), "-p", ",".join(pids)],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.5)
        return load(port, seconds)
    finally:
        if perf is not None:
            perf.send_signal(signal.SIGINT)
            perf.wait(timeout=60)
        os.killpg(srv.pid, signal.SIGTERM if server == "nginx" else signal.SIGINT)
        try:
            srv.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(srv.pid, signal.SIGKILL)
            srv.wait()
        shutil.rmtree(work, ignore_errors=True)


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    rounds = env_int("BENCH_SVC_ROUNDS", 5)
    seconds = env_int("BENCH_SVC_SECONDS", 5)
    servers = [s for s in os.environ.get("BENCH_SVC_SERVERS", "nginx redis").split()
               if shutil.which(SERVERS[s][0]("/tmp", 0)[0]) and
               shutil.which("wrk" if s == "nginx" else "redis-benchmark")]
    columns = ["plain", "libprof", "libprof 1000", "libprof thread 1000"]
    tmp = tempfile.mkdtemp(prefix="libprof-svc.")
    why = perf_works(shutil.which("perf"), tmp) if env_int("BENCH_SVC_PERF", 1) else "off"
    if why is None:
        columns.append("perf -g")
    elif why != "off":
        print("services: no perf record column: %s" % why)
    if not servers:
        print("services: neither nginx with wrk nor redis with redis-benchmark is installed "
              "(scripts/setup.sh bench)")
        return 0
    res = {(s, c): [] for s in servers for c in columns}
    for r in range(rounds):
        for s in servers:
            order = columns[:]
            random.shuffle(order)
            got = {c: run_one(s, c, build, tmp, seconds) for c in order}
            for c in columns:
                res[(s, c)].append((got[c][0] / got["plain"][0], got[c][1] / got["plain"][1],
                                    got[c][0], got[c][1]))
        print("   services: round %d/%d done" % (r + 1, rounds), flush=True)
    shutil.rmtree(tmp, ignore_errors=True)
    load = os.getloadavg()[0]

    def fmt(v):
        return "%.3f [%.3f..%.3f]" % (statistics.median(v), min(v), max(v))

    for s in servers:
        what = ("wrk -t2 -c64, 4 KiB file, 2 workers" if s == "nginx"
                else "redis-benchmark -t get,set -c 50")
        print("\n== %s (%s): %d rounds of %d s, columns interleaved; ratios to plain in the "
              "same round, median [min..max]; load average %.2f" % (s, what, rounds, seconds, load))
        print("%-22s %14s %26s %14s %26s" % ("", "req/s", "throughput ratio", "p50 ms",
                                               "p50 latency ratio"))
        for c in columns:
            v = res[(s, c)]
            print("%-22s %14.0f %26s %14.3f %26s" % (
                c, statistics.median(x[2] for x in v), fmt([x[0] for x in v]),
                statistics.median(x[3] for x in v), fmt([x[1] for x in v])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
