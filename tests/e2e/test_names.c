/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end tests of names for frames that have none in the file they run from:
 *
 * - a stripped program whose debug file only a debuginfod server has: the test builds
 *   tests/workloads/inlined.c, splits it into a stripped program and its debug file
 *   (objcopy --only-keep-debug, strip), serves the debug file with Debian's `debuginfod`
 *   on a local port, and checks that `prof report` names the frames (inline frames and,
 *   with --lines, files and lines included); with the server stopped, and with a server
 *   that never answers, that the report ends within its budget, names the frames
 *   program+0xOFFSET and says once which build-id it could not name;
 * - a stripped program carrying MiniDebugInfo (.gnu_debugdata), built as Fedora builds
 *   theirs;
 * - JIT code named from /tmp/perf-PID.map: tests/workloads/jit.c writes a function into
 *   anonymous memory and names it there; its frame shows between its caller and callee,
 *   also when the map is read from another directory (--perf-map-dir);
 * - python3.12 -X perf and node --perf-basic-prof, whose perf maps name their JIT frames.
 *   Their stacks reach those frames only where the walk crosses the runtimes' own code,
 *   built without frame pointers (the unwind-table stepper); until then each test checks
 *   what it can and skips, saying why.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/e2e/support.h"

#define DEBUGINFOD "/usr/bin/debuginfod"
#define PYTHON312 "/root/.pyenv/versions/3.12.1/bin/python3.12"
#define NODE "/usr/bin/node"

extern char **environ;

TestSuite(e2e_names, .init = e2e_setup, .fini = e2e_teardown, .timeout = 120);

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Runs "sh -c script" in the test directory and asserts it succeeded. */
static void shell(const char *script)
{
    struct e2e_proc p;
    e2e_run(&p, NULL, E2E_ARGV("/bin/sh", "-c", script));
    cr_assert_eq(p.status, 0, "%s\nexited %d:\n%s%s", script, p.status, p.out, p.err);
    e2e_proc_free(&p);
}

/* Profiles argv under libprof into e2e_path(name); returns the profile's path. */
static const char *profile(const char *name, const char *const argv[])
{
    const char *path = e2e_path(name);
    struct e2e_proc p;
    e2e_run_profiled(&p, name, NULL, 0, argv);
    cr_assert_eq(p.status, 0, "%s exited %d:\n%s", argv[0], p.status, p.err);
    e2e_proc_free(&p);
    return path;
}

/* `prof report` with the options in args (NULL-terminated, at most 8) and env; the
 * environment always gets a line cache of the test's own. */
static void report(struct e2e_proc *p, const char *const *env, const char *const *args)
{
    const char *argv[16] = {E2E_PROF, "report"};
    size_t n = 2;
    for (size_t i = 0; args[i] != NULL && n < 14; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    const char *all_env[16] = {e2e_env("LIBPROF_CACHE_DIR", e2e_path("prof-cache"))};
    for (size_t i = 0; env != NULL && env[i] != NULL && i < 14; i++)
        all_env[i + 1] = env[i];
    struct e2e_opts o = {.env = all_env};
    e2e_run(p, &o, argv);
    cr_assert_eq(p->status, 0, "prof report exited %d:\n%s", p->status, p->err);
}

/* Samples of stacks that hold every one of the n substrings. */
static long count_with(const struct e2e_folded *f, const char *const *subs, size_t n)
{
    long sum = 0;
    for (size_t i = 0; i < f->n_stacks; i++) {
        size_t k = 0;
        while (k < n && strstr(f->stacks[i].frames, subs[k]) != NULL)
            k++;
        sum += k == n ? f->stacks[i].count : 0;
    }
    return sum;
}

static void log_stacks(const struct e2e_folded *f)
{
    for (size_t i = 0; i < f->n_stacks && i < 20; i++)
        cr_log_info("  %.300s %ld", f->stacks[i].frames, f->stacks[i].count);
}

/* How many times needle occurs in hay. */
static size_t occurrences(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* A TCP port on 127.0.0.1 that was free a moment ago. */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(fd, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    return ntohs(a.sin_port);
}

/* Builds inlined.c with DWARF into DIR/full, then DIR/inl (stripped) and DIR/srv/inl.debug;
 * returns the stripped program's build-id in hex. */
static const char *build_stripped(void)
{
    char script[2048];
    snprintf(script, sizeof(script),
             "set -e; cd '%s'; mkdir -p srv; gcc -O2 -g -fno-omit-frame-pointer -o full '%s'; "
             "objcopy --only-keep-debug full srv/inl.debug; strip --strip-all -o inl full; "
             "readelf -n inl | sed -n 's/.*Build ID: *//p' > build-id",
             e2e_dir(), SRC_DIR "/tests/workloads/inlined.c");
    shell(script);
    char *id = e2e_read_file(e2e_path("build-id"), NULL);
    cr_assert(id != NULL && strlen(id) >= 40, "no build-id in the stripped program");
    id[strcspn(id, "\n")] = '\0';
    const char *kept = e2e_env("ID", id) + 3;
    free(id);
    return kept;
}

/* Starts debuginfod serving DIR/srv on port; returns its pid once it serves build-id id. */
static pid_t start_debuginfod(int port, const char *id)
{
    char port_s[16];
    snprintf(port_s, sizeof(port_s), "%d", port);
    const char *argv[] = {
        DEBUGINFOD, "-F", "-p", port_s,          "-d", e2e_path("db.sqlite"), "-t",
        "0",        "-g", "0",  e2e_path("srv"), NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, e2e_path("debuginfod.log"),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    pid_t pid;
    cr_assert_eq(posix_spawn(&pid, DEBUGINFOD, &fa, NULL, (char *const *)argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    char url[256];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/buildid/%s/debuginfo", port, id);
    for (double end = now_s() + 20; now_s() < end; usleep(100 * 1000)) {
        struct e2e_proc c;
        e2e_run(&c, NULL, E2E_ARGV("/usr/bin/curl", "-sf", "-o", "/dev/null", url));
        int ok = c.status == 0;
        e2e_proc_free(&c);
        if (ok)
            return pid;
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    cr_assert_fail("debuginfod did not serve %s within 20 s", id);
    return -1;
}

static void stop(pid_t pid)
{
    kill(pid, SIGTERM);
    for (int i = 0; i < 50 && waitpid(pid, NULL, WNOHANG) == 0; i++)
        usleep(100 * 1000);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

Test(e2e_names, a_stripped_program_is_named_through_debuginfod)
{
    cr_assert(access(DEBUGINFOD, X_OK) == 0, "debuginfod is missing: scripts/setup.sh");
    const char *id = build_stripped();
    const char *prof = profile("inl.prof", E2E_ARGV(e2e_path("inl"), "0.3"));
    int port = free_port();
    pid_t server = start_debuginfod(port, id);
    char urls[64];
    snprintf(urls, sizeof(urls), "http://127.0.0.1:%d", port);
    const char *env[] = {e2e_env("DEBUGINFOD_URLS", urls),
                         e2e_env("DEBUGINFOD_CACHE_PATH", e2e_path("client-cache")), NULL};
    struct e2e_proc r, lines;
    report(&r, env, E2E_ARGV(prof));
    report(&lines, env, E2E_ARGV("--lines", prof));
    stop(server);
    struct e2e_folded f;
    e2e_folded_parse(&f, r.out);
    log_stacks(&f);
    long named = e2e_folded_ending(&f, "main;outer_work;mix_step [inlined]");
    cr_expect_geq(named, 0.8 * (double)f.total,
                  "only %ld of %ld samples named through "
                  "debuginfod:\n%s",
                  named, f.total, r.err);
    cr_expect(strstr(lines.out, "mix_step (inlined.c:") != NULL, "no lines:\n%s", lines.out);
    cr_expect(strstr(r.err, id) == NULL, "a named build-id was reported unnamed:\n%s", r.err);
    e2e_folded_free(&f);
    e2e_proc_free(&r);
    e2e_proc_free(&lines);

    /* The server is gone, and the client's cache is new: nothing names the frames. */
    const char *env_gone[] = {e2e_env("DEBUGINFOD_URLS", urls),
                              e2e_env("DEBUGINFOD_CACHE_PATH", e2e_path("client-cache-2")), NULL};
    double t0 = now_s();
    report(&r, env_gone, E2E_ARGV("--debuginfod-budget", "5", prof));
    double took = now_s() - t0;
    cr_log_info("server stopped: %.2f s\n%s", took, r.err);
    cr_expect_lt(took, 8.0, "prof report took %.1f s with a budget of 5 s", took);
    cr_expect_eq(occurrences(r.err, id), 1, "the build-id is not named once:\n%s", r.err);
    cr_expect(strstr(r.out, "inl+0x") != NULL, "%s", r.out);
    e2e_proc_free(&r);
}

Test(e2e_names, a_server_that_never_answers_costs_the_budget_and_no_more)
{
    const char *id = build_stripped();
    const char *prof = profile("inl.prof", E2E_ARGV(e2e_path("inl"), "0.2"));
    /* A socket that listens and never accepts: connections hang until the client gives
     * up. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    cr_assert_eq(listen(fd, 16), 0);
    cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    char urls[64];
    snprintf(urls, sizeof(urls), "http://127.0.0.1:%d", ntohs(a.sin_port));
    const char *env[] = {e2e_env("DEBUGINFOD_URLS", urls),
                         e2e_env("DEBUGINFOD_CACHE_PATH", e2e_path("client-cache")), NULL};
    struct e2e_proc r;
    double t0 = now_s();
    report(&r, env, E2E_ARGV("--debuginfod-budget", "2", prof));
    double took = now_s() - t0;
    close(fd);
    cr_log_info("no answer: %.2f s\n%s", took, r.err);
    cr_expect_geq(took, 1.5, "the budget was not used: %.1f s", took);
    cr_expect_lt(took, 5.0, "prof report took %.1f s with a budget of 2 s", took);
    cr_expect_eq(occurrences(r.err, id), 1, "the build-id is not named once:\n%s", r.err);
    cr_expect(strstr(r.err, "budget") != NULL, "%s", r.err);
    e2e_proc_free(&r);
}

Test(e2e_names, minidebuginfo_names_a_stripped_program)
{
    /* Fedora's recipe (find-debuginfo): the functions the dynamic table lacks, in a
     * symbol-only ELF, xz-compressed into .gnu_debugdata of the stripped program. */
    char script[2048];
    snprintf(script, sizeof(script),
             "set -e; cd '%s'; gcc -O2 -g -fno-omit-frame-pointer -o full '%s'; "
             "nm -D full --format=posix --defined-only | awk '{print $1}' | sort > dynsyms; "
             "nm full --format=posix --defined-only | "
             "awk '{ if ($2 == \"T\" || $2 == \"t\" || $2 == \"D\") print $1 }' | sort > funcs; "
             "comm -13 dynsyms funcs > keep; objcopy --only-keep-debug full debug; "
             "objcopy -S --remove-section .gdb_index --remove-section .comment "
             "--keep-symbols=keep debug mini; xz -f mini; "
             "strip --strip-all -R .comment -o inl full; "
             "objcopy --add-section .gnu_debugdata=mini.xz inl",
             e2e_dir(), SRC_DIR "/tests/workloads/inlined.c");
    shell(script);
    const char *prof = profile("mini.prof", E2E_ARGV(e2e_path("inl"), "0.3"));
    struct e2e_proc r;
    report(&r, NULL, E2E_ARGV(prof));
    struct e2e_folded f;
    e2e_folded_parse(&f, r.out);
    log_stacks(&f);
    /* No DWARF: no inline frame, but both functions by name. */
    long named = e2e_folded_ending(&f, "main;outer_work");
    cr_expect_geq(named, 0.8 * (double)f.total,
                  "only %ld of %ld samples named from "
                  ".gnu_debugdata",
                  named, f.total);
    e2e_folded_free(&f);
    e2e_proc_free(&r);
}

/* Moves /tmp/perf-PID.map of the profile's process into the test directory (so that no
 * file is left in /tmp); returns whether there was one. */
static int take_perf_map(const char *prof)
{
    struct e2e_scan s;
    e2e_scan_file(&s, prof);
    char from[64], cmd[512];
    snprintf(from, sizeof(from), "/tmp/perf-%u.map", s.pid);
    if (access(from, R_OK) != 0)
        return 0;
    snprintf(cmd, sizeof(cmd), "mv '%s' '%s/'", from, e2e_dir());
    shell(cmd);
    return 1;
}

Test(e2e_names, jit_code_is_named_from_the_perf_map)
{
    const char *prof = profile("jit.prof", E2E_ARGV(E2E_WORKLOAD("jit"), "0.3"));
    struct e2e_proc r, gone, moved;
    report(&r, NULL, E2E_ARGV(prof));
    cr_assert(take_perf_map(prof), "the workload wrote no /tmp/perf-PID.map");
    report(&gone, NULL, E2E_ARGV(prof));
    report(&moved, NULL, E2E_ARGV("--perf-map-dir", e2e_dir(), prof));
    struct e2e_folded f, g, m;
    e2e_folded_parse(&f, r.out);
    e2e_folded_parse(&g, gone.out);
    e2e_folded_parse(&m, moved.out);
    log_stacks(&f);
    long named = e2e_folded_ending(&f, "main;drive;jit::hot_caller;hot_loop");
    cr_expect_geq(named, 0.8 * (double)f.total,
                  "only %ld of %ld samples show the JIT frame "
                  "between drive and hot_loop",
                  named, f.total);
    long anon = e2e_folded_ending(&g, "main;drive;[anon];hot_loop");
    cr_expect_geq(anon, 0.8 * (double)g.total, "without the map the frame is not [anon]");
    long again = e2e_folded_ending(&m, "main;drive;jit::hot_caller;hot_loop");
    cr_expect_eq(again, named, "--perf-map-dir: %ld samples named, not %ld", again, named);
    e2e_folded_free(&f);
    e2e_folded_free(&g);
    e2e_folded_free(&m);
    e2e_proc_free(&r);
    e2e_proc_free(&gone);
    e2e_proc_free(&moved);
}

/* Profiles a runtime that writes a perf map, running script (written to NAME.SUFFIX)
 * with the interpreter's options; reports it into f. */
static void run_runtime(struct e2e_folded *f, const char *name, const char *source,
                        const char *const argv_head[3])
{
    char file[64];
    snprintf(file, sizeof(file), "%s", name);
    const char *path = e2e_path(file);
    e2e_write_file(path, source, strlen(source));
    char prof_name[64];
    snprintf(prof_name, sizeof(prof_name), "%s.prof", name);
    const char *prof = profile(prof_name, E2E_ARGV(argv_head[0], argv_head[1], path, "1.0"));
    int has_map = take_perf_map(prof);
    cr_assert(has_map, "%s wrote no perf map", argv_head[0]);
    struct e2e_proc r;
    report(&r, NULL, E2E_ARGV("--perf-map-dir", e2e_dir(), prof));
    e2e_folded_parse(f, r.out);
    log_stacks(f);
    e2e_proc_free(&r);
}

Test(e2e_names, python_frames_are_named_from_its_perf_map)
{
    if (access(PYTHON312, X_OK) != 0)
        cr_skip_test("%s is not installed (pyenv's CPython 3.12 build)", PYTHON312);
    static const char app[] = "import sys, time\n"
                              "def fib(n):\n"
                              "    return n if n < 2 else fib(n - 1) + fib(n - 2)\n"
                              "end = time.process_time() + float(sys.argv[1])\n"
                              "while time.process_time() < end:\n"
                              "    fib(18)\n";
    struct e2e_folded f;
    run_runtime(&f, "app.py", app, (const char *const[3]){PYTHON312, "-Xperf", NULL});
    const char *py[] = {"py::fib:", "app.py"};
    long any = count_with(&f, py, 2);
    /* Interleaved: a py:: frame, the interpreter's, then a py:: frame again. */
    const char *deep[] = {"py::fib:", ";_PyEval_EvalFrameDefault;", ";py::fib:"};
    long interleaved = count_with(&f, deep, 3);
    /* The interpreter is walked by its unwind tables, its perf trampolines (frameless,
     * in anonymous memory, without unwind information) by their recognized bytes. */
    cr_expect_geq(interleaved, 0.5 * (double)f.total,
                  "only %ld of %ld samples show py::fib frames interleaved with the "
                  "interpreter's (%ld hold one)",
                  interleaved, f.total, any);
    e2e_folded_free(&f);
}

Test(e2e_names, node_frames_are_named_from_its_perf_map)
{
    if (access(NODE, X_OK) != 0)
        cr_skip_test("%s is not installed", NODE);
    static const char app[] =
        "function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\n"
        "const end = process.cpuUsage().user + 1e6 * Number(process.argv[2]);\n"
        "while (process.cpuUsage().user < end) fib(20);\n";
    struct e2e_folded f;
    run_runtime(&f, "app.js", app, (const char *const[3]){NODE, "--perf-basic-prof", NULL});
    const char *js[] = {"fib ", "app.js:"};
    long named = count_with(&f, js, 2);
    /* What is sampled in V8's code is named from the map, stack walk or not. */
    cr_expect_geq(named, 0.3 * (double)f.total,
                  "only %ld of %ld samples hold a frame named "
                  "'... fib .../app.js:L:C' from node's perf map",
                  named, f.total);
    long deep = 0;
    for (size_t i = 0; i < f.n_stacks; i++)
        deep += occurrences(f.stacks[i].frames, "app.js:") >= 2 ? f.stacks[i].count : 0;
    /* V8's code keeps frame pointers; the walk reads the maps again when it meets code
     * mapped after it last read them. */
    cr_expect_geq(deep, 0.3 * (double)f.total, "only %ld of %ld samples show fib calling fib", deep,
                  f.total);
    e2e_folded_free(&f);
}
