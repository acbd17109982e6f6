/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Programs whose threads do not run on the stack the C library gave them, or whose code is
 * laid out otherwise: coroutines on small heap stacks (ucontext), a program with a 4 KiB
 * alternate signal stack of its own, a Go program that calls C through cgo (goroutines on
 * stacks of a few KiB), programs linked by LLD (a C one by Debian's lld, Rust ones by the
 * machine's rustc and Debian's). Each runs with the same output and status as without
 * libprof, writes nothing on stderr, and its stacks are whole. The Go and Rust programs are
 * built here from tests/workloads/go and tests/workloads/rust, into the build directory
 * (scripts/setup.sh installs golang-go, lld and rustc); a missing toolchain fails loudly.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/e2e/support.h"

TestSuite(e2e_runtimes, .init = e2e_setup, .fini = e2e_teardown);

#define GO_BIN BUILD_DIR "/workloads/cgospin"

/* Runs argv plain, then under libprof with env, and checks that the two agree: status,
 * stdout (when same_out), and nothing on stderr under libprof. */
static void run_both(const char *profile, const char *const *env, int same_out,
                     const char *const argv[])
{
    struct e2e_proc plain, prof;
    e2e_run(&plain, NULL, argv);
    e2e_run_profiled(&prof, profile, env, 0, argv);
    cr_expect_eq(prof.status, plain.status, "%s: status %d under libprof, %d without",
                 profile, prof.status, plain.status);
    cr_expect_eq(prof.err_len, 0, "%s: stderr under libprof:\n%s", profile, prof.err);
    if (same_out)
        cr_expect_str_eq(prof.out, plain.out, "%s: stdout differs", profile);
    e2e_proc_free(&plain);
    e2e_proc_free(&prof);
}

/* The share of samples with `leaf` whose stack is exactly path (leaf last) below a root
 * frame starting with root_prefix, in percent. */
static long whole_percent(const struct e2e_folded *f, const char *path, const char *root_prefix,
                          long *n_leaf)
{
    const char *leaf = strrchr(path, ';') ? strrchr(path, ';') + 1 : path;
    long with_leaf = 0, whole = 0;
    for (size_t i = 0; i < f->n_stacks; i++) {
        const char *s = f->stacks[i].frames;
        const char *last = strrchr(s, ';') ? strrchr(s, ';') + 1 : s;
        if (strcmp(last, leaf) != 0)
            continue;
        with_leaf += f->stacks[i].count;
        size_t ls = strlen(s), lp = strlen(path);
        if (strncmp(s, root_prefix, strlen(root_prefix)) == 0 && ls >= lp &&
            strcmp(s + ls - lp, path) == 0 && (ls == lp || s[ls - lp - 1] == ';'))
            whole += f->stacks[i].count;
        else
            cr_log_info("not whole: %s %ld", s, f->stacks[i].count);
    }
    *n_leaf = with_leaf;
    return with_leaf > 0 ? whole * 100 / with_leaf : 0;
}

/* Coroutines on 16 KiB heap stacks: the walk takes its bounds from the memory the stack
 * pointer is in and ends at the coroutine's first frame (glibc's __start_context). Before,
 * 549 of 557 samples stopped at the first frame (bounds). */
Test(e2e_runtimes, coroutines_on_heap_stacks_are_walked_whole)
{
    run_both("co.prof", E2E_ARGV("PROF_FREQ=1000"), 0,
             E2E_ARGV(E2E_WORKLOAD("coroutines"), "1"));
    struct e2e_scan s;
    e2e_scan_file(&s, e2e_path("co.prof"));
    struct e2e_folded f;
    e2e_report_folded(&f, e2e_path("co.prof"));
    long n, pct = whole_percent(&f, "coro_entry;coro_outer;coro_middle;coro_spin", "libc.so.6",
                                &n);
    cr_log_info("coroutines: %zu samples, %zu truncated; %ld%% of %ld in coro_spin whole",
                s.n_samples, s.n_truncated, pct, n);
    cr_expect_gt(n, 300, "%ld samples in coro_spin", n);
    cr_expect_geq(pct, 98, "%ld%% of the coroutine's stacks whole", pct);
    cr_expect_leq(s.n_truncated * 50, s.n_samples, "%zu of %zu samples truncated", s.n_truncated,
                  s.n_samples);
    e2e_folded_free(&f);
}

/* The program's own 4 KiB alternate stack takes our signal's kernel frame (SA_ONSTACK), and
 * the sample runs on libprof's stack: the guards around the small stack stay whole. */
Test(e2e_runtimes, a_small_alternate_stack_of_the_program_s_is_left_alone)
{
    static const char *const sources[] = {"perf", "thread", "itimer"};
    for (size_t i = 0; i < 3; i++) {
        char profile[32];
        snprintf(profile, sizeof(profile), "small.%s.prof", sources[i]);
        run_both(profile, E2E_ARGV(e2e_env("PROF_TIMER", sources[i]), "PROF_FREQ=1000"), 1,
                 E2E_ARGV(E2E_WORKLOAD("smallalt"), "0.5"));
        struct e2e_folded f;
        e2e_report_folded(&f, e2e_path(profile));
        long n, pct = whole_percent(&f, "main;small_outer;small_middle;small_spin", "main", &n);
        cr_expect_gt(n, 20, "%s: %ld samples in small_spin", sources[i], n);
        cr_expect_geq(pct, 98, "%s: %ld%% whole", sources[i], pct);
        struct e2e_scan s;
        e2e_scan_file(&s, e2e_path(profile));
        cr_expect_eq(s.stats[PROF_STAT_NO_SIGSTACK], 0, "%s: %llu samples without a stack",
                     sources[i], (unsigned long long)s.stats[PROF_STAT_NO_SIGSTACK]);
        e2e_folded_free(&f);
    }
}

/* A C program linked by LLD: its executable segment lies 0x1000 further from its file
 * offset than the read-only segment that shares its first page. The tables were looked up
 * 0x1000 off (not-code, bounds, or a wrong "complete" stack). */
Test(e2e_runtimes, a_program_linked_by_lld_is_walked_by_its_own_rows)
{
    if (access(E2E_WORKLOAD("nofp_lld"), X_OK) != 0)
        cr_assert_fail("no nofp_lld: ld.lld is missing (scripts/setup.sh installs lld)");
    run_both("lld.prof", E2E_ARGV("PROF_FREQ=1000"), 0, E2E_ARGV(E2E_WORKLOAD("nofp_lld"), "1"));
    struct e2e_folded f;
    e2e_report_folded(&f, e2e_path("lld.prof"));
    long n, pct = whole_percent(&f, "main;nofp_outer;nofp_middle;nofp_inner", "main", &n);
    cr_log_info("lld: %ld%% of %ld samples in nofp_inner whole", pct, n);
    cr_expect_gt(n, 300);
    cr_expect_geq(pct, 98, "%ld%% whole", pct);
    e2e_folded_free(&f);
}

/* Builds the cgo program once into the build directory (Go's cache there too). */
static void build_go(void)
{
    if (access("/usr/bin/go", X_OK) != 0)
        cr_assert_fail("go is missing: scripts/setup.sh installs golang-go");
    struct stat bin, src;
    const char *source = SRC_DIR "/tests/workloads/go/cgospin.go";
    if (stat(GO_BIN, &bin) == 0 && stat(source, &src) == 0 && bin.st_mtime >= src.st_mtime)
        return;
    struct e2e_proc p;
    const char *env[] = {"GOCACHE=" BUILD_DIR "/go-cache", "GOPATH=" BUILD_DIR "/go-path",
                         "GO111MODULE=off", "CGO_ENABLED=1", "GOFLAGS=", NULL};
    struct e2e_opts o = {.env = env, .timeout_s = 300};
    e2e_run(&p, &o, E2E_ARGV("/usr/bin/go", "build", "-o", GO_BIN, source));
    cr_assert_eq(p.status, 0, "go build failed:\n%s", p.err);
    e2e_proc_free(&p);
}

/* Goroutines run on stacks of a few KiB: libprof's handler ran there without SA_ONSTACK
 * and overwrote them (SIGSEGV, exit 139 or 2, 3 runs of 3). Now the same output and status
 * with every timer source, at the default rate and at 1000 Hz, and Go's own profiler
 * running too. */
Test(e2e_runtimes, a_go_program_with_cgo_runs_as_without_libprof, .timeout = 240)
{
    build_go();
    static const char *const sources[] = {"perf", "thread", "itimer"};
    for (size_t i = 0; i < 3; i++) {
        char profile[32];
        snprintf(profile, sizeof(profile), "go.%s.prof", sources[i]);
        run_both(profile, E2E_ARGV(e2e_env("PROF_TIMER", sources[i]), "PROF_FREQ=1000"), 1,
                 E2E_ARGV(GO_BIN, "10"));
        snprintf(profile, sizeof(profile), "go.%s.default.prof", sources[i]);
        run_both(profile, E2E_ARGV(e2e_env("PROF_TIMER", sources[i])), 1, E2E_ARGV(GO_BIN, "10"));
    }
    run_both("go.pprof.prof", E2E_ARGV("PROF_FREQ=1000"), 1,
             E2E_ARGV(GO_BIN, "10", "pprof", e2e_path("go.pprof")));
    struct stat st;
    cr_expect(stat(e2e_path("go.pprof"), &st) == 0 && st.st_size > 0, "Go's own profile");
}

/* The weight of the stacks with a frame above runtime.asmcgocall other than runtime.cgocall:
 * Go's switch to the system stack for a cgo call is crossed by the g and depth it saves,
 * or the walk ends there; no word of either stack becomes a caller (before the crossing:
 * a word of the scheduler's stack made runtime.exitsyscall0 or runtime.park_m one). */
static long above_cgo_call(const struct e2e_folded *f)
{
    long wrong = 0;
    for (size_t i = 0; i < f->n_stacks; i++) {
        const char *s = f->stacks[i].frames, *at = strstr(s, "runtime.asmcgocall.abi0");
        if (at == NULL || at == s)
            continue;
        static const char cgocall[] = "runtime.cgocall;";
        if (at - s < (ptrdiff_t)(sizeof(cgocall) - 1) ||
            strncmp(at - (sizeof(cgocall) - 1), cgocall, sizeof(cgocall) - 1) != 0)
            wrong += f->stacks[i].count;
    }
    return wrong;
}

/* The C function's samples (leaf cspin) whose stack crosses the cgo call to the goroutine's
 * start: runtime.goexit ... main._Cfunc_cspin;runtime.cgocall;runtime.asmcgocall;
 * _cgo_HASH_Cfunc_cspin;cspin. *n: all of cspin's. */
static long cgo_rooted(const struct e2e_folded *f, long *n)
{
    long rooted = 0;
    *n = 0;
    for (size_t i = 0; i < f->n_stacks; i++) {
        const char *s = f->stacks[i].frames, *leaf = strrchr(s, ';');
        if (strcmp(leaf ? leaf + 1 : s, "cspin") != 0)
            continue;
        *n += f->stacks[i].count;
        if (strncmp(s, "runtime.goexit.abi0;", 20) == 0 &&
            strstr(s, ";main._Cfunc_cspin.abi0;runtime.cgocall;runtime.asmcgocall.abi0;_cgo_") !=
                NULL)
            rooted += f->stacks[i].count;
    }
    return rooted;
}

/* A sample in C code called through cgo is walked from the C frames through
 * runtime.asmcgocall onto the goroutine's stack, to the goroutine's start: by the perf
 * source's handler, which reads the goroutine's stack live, and which PROF_TIMER=auto takes
 * for a Go program; the ring source, whose copy holds the system stack alone, moves such a
 * thread to the perf source after a writer period (its first samples end at asmcgocall,
 * cut: at 1000 Hz over 40 rounds about one in eight). */
Test(e2e_runtimes, samples_in_c_called_through_cgo_reach_the_goroutine_s_start, .timeout = 240)
{
    build_go();
    static const char *const sources[] = {"auto", "ring"};
    static const long least[] = {90, 75}; /* percent */
    for (size_t i = 0; i < 2; i++) {
        char profile[32];
        snprintf(profile, sizeof(profile), "cgo.%s.prof", sources[i]);
        run_both(profile, E2E_ARGV(e2e_env("PROF_TIMER", sources[i]), "PROF_FREQ=1000"), 1,
                 E2E_ARGV(GO_BIN, "40"));
        if (i == 0) {
            struct e2e_scan sc;
            e2e_scan_file(&sc, e2e_path(profile));
            cr_expect_eq(sc.timer_source, PROF_TIMER_PERF, "auto took source %u for Go",
                         sc.timer_source);
        }
        struct e2e_folded f;
        e2e_report_folded(&f, e2e_path(profile));
        long n, rooted = cgo_rooted(&f, &n);
        cr_log_info("%s: %ld of %ld samples in cspin rooted at runtime.goexit", sources[i],
                    rooted, n);
        cr_expect_gt(n, 100, "%s: %ld samples in cspin", sources[i], n);
        cr_expect_geq(rooted * 100, least[i] * n, "%s: %ld of %ld samples in cspin cross the "
                      "cgo call to runtime.goexit", sources[i], rooted, n);
        cr_expect_eq(above_cgo_call(&f), 0, "%s: a frame above runtime.asmcgocall that is not "
                     "runtime.cgocall", sources[i]);
        e2e_folded_free(&f);
        /* Go ends by exit_group, unseen: the counters are its last writer period's. */
        struct e2e_scan s;
        e2e_scan_file(&s, e2e_path(profile));
        cr_expect(s.has_stats && s.stats[PROF_STAT_CPU_NS] > 0, "%s: no counters", profile);
    }
}

/* Goroutine stacks are walked (through the probe) to the goroutine's start. */
Test(e2e_runtimes, goroutine_stacks_reach_the_goroutine_s_start, .timeout = 240)
{
    build_go();
    run_both("gs.prof", E2E_ARGV("PROF_FREQ=1000"), 1, E2E_ARGV(GO_BIN, "40"));
    struct e2e_folded f;
    e2e_report_folded(&f, e2e_path("gs.prof"));
    long n = e2e_folded_containing(&f, "main.gospin");
    long rooted = e2e_folded_containing_from(&f, "main.gospin", "runtime.goexit.abi0");
    cr_log_info("go: %ld of %ld samples in main.gospin rooted at runtime.goexit", rooted, n);
    cr_expect_gt(n, 50, "%ld samples in main.gospin", n);
    /* 95 %, or else each of the four goroutines' threads may have met a table not built
     * yet (E2E_PENDING_MAX each: 105 of 111 once in a loaded run, 100 % alone). */
    long allowed = n / 20 > 4 * E2E_PENDING_MAX ? n / 20 : 4 * E2E_PENDING_MAX;
    cr_expect_leq(n - rooted, allowed, "%ld of %ld rooted at runtime.goexit", rooted, n);
    /* Go's own call-frame information (its compressed .debug_frame) gives the goroutine's
     * closure, which frame pointers alone skip (gospin's caller keeps no frame of its own
     * at the call: its return address, not its frame pointer, names it). */
    long closure = e2e_folded_ending(&f, "main.main.func1;main.gospin");
    cr_expect_leq(n - closure, allowed, "%ld of %ld through the goroutine's closure", closure,
                  n);
    cr_expect_eq(above_cgo_call(&f), 0, "a frame above runtime.asmcgocall that is not "
                 "runtime.cgocall");
    e2e_folded_free(&f);
}

/* Builds recurse.rs with rustc into out (once); 0, or -1 when that rustc is missing. */
static int build_rust(const char *rustc, const char *out)
{
    if (access(rustc, X_OK) != 0)
        return -1;
    struct stat bin, src;
    const char *source = SRC_DIR "/tests/workloads/rust/recurse.rs";
    if (stat(out, &bin) == 0 && stat(source, &src) == 0 && bin.st_mtime >= src.st_mtime)
        return 0;
    struct e2e_proc p;
    struct e2e_opts o = {.timeout_s = 300};
    e2e_run(&p, &o, E2E_ARGV(rustc, "-O", "-g", "-o", out, source));
    cr_assert_eq(p.status, 0, "%s failed:\n%s", rustc, p.err);
    e2e_proc_free(&p);
    return 0;
}

/* Samples with frame `name`: their weight, and in *rooted that of those whose outermost
 * frame is one of the roots or holds it (NULL-terminated); the others are logged. */
static long rooted_at(const struct e2e_folded *f, const char *name, const char *const *roots,
                      long *rooted)
{
    long n = 0;
    size_t len = strlen(name);
    *rooted = 0;
    for (size_t i = 0; i < f->n_stacks; i++) {
        const char *s = f->stacks[i].frames, *at = strstr(s, name);
        if (at == NULL || (at != s && at[-1] != ';') || (at[len] != ';' && at[len] != '\0'))
            continue;
        n += f->stacks[i].count;
        int ok = 0;
        size_t first = strcspn(s, ";");
        for (const char *const *r = roots; *r != NULL && !ok; r++) {
            const char *hit = strstr(s, *r);
            ok = hit != NULL && (size_t)(hit - s) + strlen(*r) <= first;
        }
        if (ok)
            *rooted += f->stacks[i].count;
        else
            cr_log_info("not rooted: %s %ld", s, f->stacks[i].count);
    }
    return n;
}

static void check_rust(const char *bin, const char *name)
{
    char profile[64];
    snprintf(profile, sizeof(profile), "%s.prof", name);
    run_both(profile, E2E_ARGV("PROF_FREQ=1000"), 1, E2E_ARGV(bin, "100"));
    struct e2e_scan s;
    e2e_scan_file(&s, e2e_path(profile));
    struct e2e_folded f;
    e2e_report_folded(&f, e2e_path(profile));
    /* Threads from std::thread begin at std's thread_start (under libprof's trampoline, not
     * shown; rustc 1.95's std names it in the v0 mangling, which the reporter does not
     * always demangle), the main thread at main. */
    long rooted, n = rooted_at(&f, "recurse::hot", E2E_ARGV("thread_start", "main"), &rooted);
    cr_log_info("%s: %zu samples, %zu truncated; %ld of %ld in recurse::hot rooted at a thread's "
                "start or main", name, s.n_samples, s.n_truncated, rooted, n);
    cr_expect_gt(n, 100, "%s: %ld samples in recurse::hot", name, n);
    cr_expect_geq(rooted * 100, n * 97, "%s: %ld of %ld whole", name, rooted, n);
    cr_expect_leq(s.n_truncated * 20, s.n_samples, "%s: %zu of %zu truncated", name,
                  s.n_truncated, s.n_samples);
    e2e_folded_free(&f);
}

/* Rust built by the machine's current toolchain (rustup's rustc, linking with its own LLD):
 * every stack was cut (not-code, bounds); and by Debian's rustc (GNU ld). */
Test(e2e_runtimes, rust_threads_and_main_are_walked_whole, .timeout = 300)
{
    int built = 0;
    const char *home = getenv("HOME");
    char rustup[512];
    snprintf(rustup, sizeof(rustup), "%s/.cargo/bin/rustc", home ? home : "/root");
    if (build_rust(rustup, BUILD_DIR "/workloads/recurse_rustup") == 0) {
        check_rust(BUILD_DIR "/workloads/recurse_rustup", "rustup");
        built++;
    } else {
        cr_log_info("no rustup toolchain at %s: only Debian's rustc is tried", rustup);
    }
    if (build_rust("/usr/bin/rustc", BUILD_DIR "/workloads/recurse_debian") == 0) {
        check_rust(BUILD_DIR "/workloads/recurse_debian", "debian");
        built++;
    }
    cr_assert_gt(built, 0, "no rustc: scripts/setup.sh installs Debian's rustc");
}

/* The README's recipe for Java (Debian's OpenJDK 17): frame pointers kept in JIT code and a
 * perf map written at exit. 90 % of the samples stopped in JIT code (bounds) without it. */
Test(e2e_runtimes, java_with_the_readme_s_recipe_is_walked_and_named, .timeout = 240)
{
    if (access("/usr/bin/javac", X_OK) != 0 || access("/usr/bin/java", X_OK) != 0)
        cr_assert_fail("java or javac is missing: scripts/setup.sh installs openjdk-17-jdk-headless");
    struct e2e_proc p;
    struct e2e_opts o = {.timeout_s = 120};
    e2e_run(&p, &o, E2E_ARGV("/usr/bin/javac", "-d", e2e_dir(),
                             SRC_DIR "/tests/workloads/java/Pool.java"));
    cr_assert_eq(p.status, 0, "javac:\n%s", p.err);
    e2e_proc_free(&p);
    run_both("java.prof", E2E_ARGV("PROF_FREQ=1000"), 1,
             E2E_ARGV("/usr/bin/java", "-XX:+PreserveFramePointer", "-XX:+UnlockDiagnosticVMOptions",
                      "-XX:+DumpPerfMapAtExit", "-cp", e2e_dir(), "Pool", "40000000"));
    struct e2e_scan s;
    e2e_scan_file(&s, e2e_path("java.prof"));
    struct e2e_folded f;
    e2e_report_folded(&f, e2e_path("java.prof"));
    long rooted, n = rooted_at(&f, "long Pool.work(int)", E2E_ARGV("thread_native_entry"),
                               &rooted);
    cr_log_info("java: %zu samples, %zu truncated; %ld of %ld in Pool.work from "
                "thread_native_entry", s.n_samples, s.n_truncated, rooted, n);
    cr_expect_gt(n * 2, (long)s.n_samples, "%ld of %zu samples in Pool.work", n, s.n_samples);
    cr_expect_geq(rooted * 100, n * 95, "%ld of %ld whole", rooted, n);
    cr_expect_leq(s.n_truncated * 20, s.n_samples, "%zu of %zu truncated", s.n_truncated,
                  s.n_samples);
    e2e_folded_free(&f);
}

/* The README's recipe for Node.js: a perf map, interpreted frames on the native stack. */
Test(e2e_runtimes, node_with_the_readme_s_recipe_is_walked_and_named, .timeout = 240)
{
    const char *node = access("/usr/bin/node", X_OK) == 0 ? "/usr/bin/node" : "/usr/local/bin/node";
    if (access(node, X_OK) != 0)
        cr_assert_fail("node is missing: scripts/setup.sh browser installs nodejs");
    run_both("node.prof", E2E_ARGV("PROF_FREQ=1000"), 1,
             E2E_ARGV(node, "--perf-basic-prof", "--interpreted-frames-native-stack",
                      SRC_DIR "/tests/workloads/node/spin.js", "3000000"));
    struct e2e_scan s;
    e2e_scan_file(&s, e2e_path("node.prof"));
    struct e2e_folded f;
    e2e_report_folded(&f, e2e_path("node.prof"));
    long n = 0, whole = 0;
    for (size_t i = 0; i < f.n_stacks; i++) {
        const char *st = f.stacks[i].frames;
        if (strstr(st, "spin.js") == NULL || strstr(st, "work /") == NULL)
            continue;
        n += f.stacks[i].count;
        if (strstr(st, "outer /") != NULL &&
            (strncmp(st, "node::Start", 11) == 0 || strncmp(st, "main;", 5) == 0))
            whole += f.stacks[i].count;
    }
    cr_log_info("node: %zu samples, %zu truncated; %ld of %ld in work() under outer() from "
                "main", s.n_samples, s.n_truncated, whole, n);
    cr_expect_gt(n * 2, (long)s.n_samples, "%ld of %zu samples in work()", n, s.n_samples);
    cr_expect_geq(whole * 100, n * 95, "%ld of %ld whole", whole, n);
    e2e_folded_free(&f);
}
