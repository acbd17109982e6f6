/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end tests of `prof record -p PID`: sampling a process that was started without
 * libprof, from outside. The shares workload (tests/workloads/shares.c) gives the truth
 * to compare with, and the same call paths as the LD_PRELOAD route; attachlate
 * (tests/workloads/attachlate.c) starts a thread and loads a library only after prof has
 * attached. Each test checks that the process runs on untouched and ends with its own
 * exit status, and that errors are one line with exit status 125 (record's own failures,
 * apart from any status of a command).
 *
 * The processes sampled here run in the background while prof runs: they are started and
 * waited for with spawn() and wait_exit() below, not e2e_run(), which waits at once.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "include/libprof/prof_format.h"
#include "tests/e2e/support.h"

#define TOLERANCE 0.03  /* absolute, in share of all samples */
#define PATH_SHARE 0.02 /* stacks compared between the two routes: at least this share ... */
#define PATH_FOUND 0.01 /* ... in one, and this much at least in the other */
#define SETPRIV "/usr/bin/setpriv"

extern char **environ;

TestSuite(e2e_record_pid, .init = e2e_setup, .fini = e2e_teardown, .timeout = 60);

static const char *const hot[] = {"hot_a", "hot_b", "hot_c"};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* Starts argv in the background, without LD_PRELOAD and PROF_*, stdin /dev/null and its
 * output into the files name.out and name.err of the test directory. */
static pid_t spawn(const char *name, const char *const argv[])
{
    static const char *env[1024];
    size_t n = 0;
    for (char **e = environ; *e && n < 1023; e++)
        if (strncmp(*e, "LD_PRELOAD=", 11) != 0 && strncmp(*e, "PROF_", 5) != 0)
            env[n++] = *e;
    env[n] = NULL;
    char file[64];
    snprintf(file, sizeof(file), "%s.out", name);
    int out = open(e2e_path(file), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    snprintf(file, sizeof(file), "%s.err", name);
    int err = open(e2e_path(file), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    cr_assert(out > 2 && err > 2 && in > 2, "open: %s", strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    cr_assert(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        if (chdir(e2e_dir()) != 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
            _exit(126);
        execve(argv[0], (char *const *)argv, (char *const *)env);
        _exit(127);
    }
    close(in);
    close(out);
    close(err);
    return pid;
}

/* Waits for pid for timeout_s at most (then kills it and fails); its exit status, 128 + N
 * when killed by signal N. */
static int wait_exit(pid_t pid, double timeout_s)
{
    double deadline = now_s() + timeout_s;
    int st;
    for (;;) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        cr_assert(r >= 0, "waitpid: %s", strerror(errno));
        if (r == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (now_s() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            cr_assert_fail("process %d did not end within %.0f s", (int)pid, timeout_s);
        }
        sleep_s(0.005);
    }
}

/* The CPU time pid's main thread has run, in seconds (/proc/PID/schedstat). */
static double cpu_s(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
    char *text = e2e_read_file(path, NULL);
    cr_assert(text != NULL, "%s: %s (the workload ended early?)", path, strerror(errno));
    double ran_s = strtod(text, NULL) / 1e9;
    free(text);
    return ran_s;
}

/* Waits until pid's main thread has run for min_s of CPU time, so that it is past its
 * start and in its work. */
static void wait_running(pid_t pid, double min_s)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
    for (double deadline = now_s() + 10; now_s() < deadline; sleep_s(0.01)) {
        char *text = e2e_read_file(path, NULL);
        cr_assert(text != NULL, "%s: %s (the workload ended early?)", path, strerror(errno));
        double ran_s = strtod(text, NULL) / 1e9;
        free(text);
        if (ran_s >= min_s)
            return;
    }
    cr_assert_fail("process %d did not start working", (int)pid);
}

/* Waits until pid runs the program at path: spawn() returns right after fork(), and a
 * prof that attached to the child before its execve() would (rightly) stop at the exec. */
static void wait_exec(pid_t pid, const char *path)
{
    char link[64], exe[4096];
    snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
    for (double deadline = now_s() + 10; now_s() < deadline; sleep_s(0.002)) {
        ssize_t n = readlink(link, exe, sizeof(exe) - 1);
        if (n > 0) {
            exe[n] = '\0';
            if (strcmp(exe, path) == 0)
                return;
        }
    }
    cr_assert_fail("process %d did not start %s", (int)pid, path);
}

/* Waits until the file at path holds something: prof writes its profile's head only once
 * it has attached, and flushes it when it starts sampling. */
static void wait_nonempty(const char *path, pid_t prof)
{
    struct stat st;
    for (double deadline = now_s() + 10; now_s() < deadline; sleep_s(0.005)) {
        if (stat(path, &st) == 0 && st.st_size > 0)
            return;
        cr_assert(waitpid(prof, NULL, WNOHANG) == 0, "prof ended before it wrote %s", path);
    }
    cr_assert_fail("prof did not attach within 10 s");
}

/* The number of lines of an error output, and that it says what it should. */
static void expect_one_line(const struct e2e_proc *p, const char *what, const char *needle)
{
    size_t n_lines = e2e_count_lines(p->err, "prof: ", NULL);
    cr_expect_eq(p->status, 125, "%s: exit status %d, not 125; stderr:\n%s", what, p->status,
                 p->err);
    cr_expect_eq(n_lines, 1, "%s: %zu lines on stderr, not one:\n%s", what, n_lines, p->err);
    cr_expect(strstr(p->err, needle) != NULL, "%s: stderr does not say '%s':\n%s", what, needle,
              p->err);
}

static void log_folded(const char *title, const struct e2e_folded *f)
{
    cr_log_info("%s:", title);
    for (size_t i = 0; i < f->n_stacks && i < 30; i++)
        cr_log_info("  %s %ld", f->stacks[i].frames, f->stacks[i].count);
}

/* The share of the stacks that are path once the frames below main() (the C library's
 * start code, which the preloaded library hides behind its trampoline) are dropped. */
static double path_share(const struct e2e_folded *f, const char *path)
{
    long sum = 0;
    for (size_t i = 0; i < f->n_stacks; i++) {
        const char *s = f->stacks[i].frames, *main_at = strstr(s, ";main;");
        if (strncmp(s, "main;", 5) != 0 && main_at != NULL)
            s = main_at + 1;
        if (strcmp(s, path) == 0)
            sum += f->stacks[i].count;
    }
    return f->total > 0 ? (double)sum / (double)f->total : 0;
}

/* Every stack that has PATH_SHARE of a's samples has PATH_FOUND of b's at least. */
static void expect_paths_in(const struct e2e_folded *a, const char *a_name,
                            const struct e2e_folded *b, const char *b_name)
{
    for (size_t i = 0; i < a->n_stacks; i++) {
        const char *s = a->stacks[i].frames, *main_at = strstr(s, ";main;");
        if (strncmp(s, "main;", 5) != 0 && main_at != NULL)
            s = main_at + 1;
        double in_a = path_share(a, s), in_b = path_share(b, s);
        cr_expect(in_a < PATH_SHARE || in_b >= PATH_FOUND,
                  "%s has %.1f %% of its samples in %s, %s %.1f %%", a_name, 100 * in_a, s, b_name,
                  100 * in_b);
    }
}

/* prof record -p on the shares workload: prof's own checks of the file. */
static void expect_complete_file(const char *profile, pid_t pid)
{
    struct e2e_scan s;
    e2e_scan_file(&s, profile);
    cr_assert(s.header_ok, "%s has no valid header", profile);
    cr_expect(s.has_end && s.trailing_bytes == 0, "%s does not end with an END record", profile);
    cr_expect(s.has_process && s.pid == (uint32_t)pid, "the process record names pid %u, not %d",
              s.pid, (int)pid);
    cr_expect_eq(s.timer_source, PROF_TIMER_PERF, "timer_source %u", s.timer_source);
    cr_expect(s.has_stats && s.stat_samples == s.n_samples,
              "the stats count %lu samples, the file holds %zu", (unsigned long)s.stat_samples,
              s.n_samples);
    cr_expect(s.first_time_ns >= s.start_mono_ns, "samples are not on the process record's clock");
}

Test(e2e_record_pid, shares_match_the_truth_and_the_preload_route)
{
    const char *truth_path = e2e_path("truth.txt"), *profile = e2e_path("pid.prof");
    pid_t pid = spawn("shares", E2E_ARGV(E2E_WORKLOAD("shares"), "3", truth_path));
    wait_running(pid, 0.1);
    char pid_text[16];
    snprintf(pid_text, sizeof(pid_text), "%d", (int)pid);
    struct e2e_proc p;
    /* 1000 Hz: four times the samples of the default rate halves the sampling error. */
    double cpu_before = cpu_s(pid);
    e2e_run(&p, NULL,
            E2E_ARGV(E2E_PROF, "record", "-p", pid_text, "-d", "2", "-F", "1000", "-o",
                     profile));
    double cpu_during = cpu_s(pid) - cpu_before;
    cr_assert_eq(p.status, 0, "prof record -p exited %d; stderr:\n%s", p.status, p.err);
    cr_log_info("%s", p.err);
    e2e_proc_free(&p);
    /* The workload ran on after prof detached and finished its work as usual. */
    cr_assert(kill(pid, 0) == 0, "the workload ended with prof");
    int status = wait_exit(pid, 30);
    cr_assert_eq(status, 0, "the workload exited %d after prof detached", status);
    char *truth = e2e_read_file(truth_path, NULL);
    cr_assert(truth != NULL, "the workload wrote no truth file");
    expect_complete_file(profile, pid);

    struct e2e_folded f;
    e2e_report_folded(&f, profile);
    /* Samples come per CPU-second of the thread: a loaded machine gives it less than the
     * 2 s of wall time. */
    cr_assert(f.total >= (long)(0.8 * 1000 * cpu_during) && f.total >= 200,
              "%ld samples in %.2f CPU-s of one busy thread at 1000 Hz", f.total, cpu_during);
    for (size_t k = 0; k < 3; k++) {
        double want = e2e_truth_value(truth, hot[k]);
        double got = (double)e2e_folded_containing(&f, hot[k]) / (double)f.total;
        cr_log_info("%s: measured %.4f, sampled from outside %.4f", hot[k], want, got);
        cr_expect(got >= want - TOLERANCE && got <= want + TOLERANCE,
                  "%s: %.1f %% of the samples, but %.1f %% of the CPU time", hot[k], 100 * got,
                  100 * want);
    }

    /* The same program under the preloaded library: the same call paths. */
    const char *preload = e2e_path("preload.prof");
    e2e_run(&p, NULL,
            E2E_ARGV(E2E_PROF, "record", "-o", preload, "--", E2E_WORKLOAD("shares"), "1"));
    cr_assert_eq(p.status, 0, "prof record -- shares exited %d:\n%s", p.status, p.err);
    e2e_proc_free(&p);
    struct e2e_folded g;
    e2e_report_folded(&g, preload);
    log_folded("prof record -p", &f);
    log_folded("LD_PRELOAD", &g);
    expect_paths_in(&f, "prof record -p", &g, "LD_PRELOAD");
    expect_paths_in(&g, "LD_PRELOAD", &f, "prof record -p");
    cr_expect(path_share(&f, "main;stage_three;deep1;deep2;deep3;deep4;deep5;hot_c") > 0.1,
              "hot_c's full path is missing from the outside profile");
    e2e_folded_free(&f);
    e2e_folded_free(&g);
    free(truth);
}

Test(e2e_record_pid, kernel_callchain_gives_the_same_paths)
{
    const char *profile = e2e_path("kernel.prof");
    pid_t pid = spawn("shares", E2E_ARGV(E2E_WORKLOAD("shares"), "1.5"));
    wait_running(pid, 0.1);
    char pid_text[16];
    snprintf(pid_text, sizeof(pid_text), "%d", (int)pid);
    struct e2e_proc p;
    double cpu_before = cpu_s(pid);
    e2e_run(&p, NULL,
            E2E_ARGV(E2E_PROF, "record", "-p", pid_text, "-d", "800ms", "--unwind", "kernel",
                     "-F", "500", "-o", profile));
    double cpu_during = cpu_s(pid) - cpu_before;
    cr_assert_eq(p.status, 0, "prof record --unwind kernel exited %d:\n%s", p.status, p.err);
    e2e_proc_free(&p);
    cr_expect_eq(wait_exit(pid, 30), 0, "the workload did not exit 0 after prof detached");
    expect_complete_file(profile, pid);
    struct e2e_folded f;
    e2e_report_folded(&f, profile);
    log_folded("--unwind kernel", &f);
    cr_expect(f.total >= (long)(0.8 * 500 * cpu_during) && f.total >= 50,
              "%ld samples in %.2f CPU-s at 500 Hz", f.total, cpu_during);
    double complete = path_share(&f, "main;stage_one;hot_a") +
                      path_share(&f, "main;stage_two;middle;hot_b") +
                      path_share(&f, "main;stage_three;deep1;deep2;deep3;deep4;deep5;hot_c");
    cr_expect(complete >= 0.9, "only %.1f %% of the samples have a hot function's full path",
              100 * complete);
    e2e_folded_free(&f);
}

/* The share of f's samples in leaf that are exactly path (root first, leaf last). */
static double exact_share(const struct e2e_folded *f, const char *leaf, const char *path)
{
    long in_leaf = e2e_folded_ending(f, leaf);
    return in_leaf > 0 ? (double)e2e_folded_exactly(f, path) / (double)in_leaf : 0;
}

/* tests/workloads/nofp.c is built without frame pointers: the default walk, by the unwind
 * tables prof builds from the program's and libc's files, gives whole stacks with the
 * leaf's caller exact, where frame pointers give the leaf alone. */
Test(e2e_record_pid, whole_stacks_of_code_without_frame_pointers)
{
    const char *tables = e2e_path("tables.prof"), *fp = e2e_path("fp.prof");
    const char *whole = "_start;__libc_start_main;__libc_start_call_main;main;nofp_outer;"
                        "nofp_middle;nofp_inner";
    pid_t pid = spawn("nofp", E2E_ARGV(E2E_WORKLOAD("nofp"), "3"));
    wait_running(pid, 0.1);
    char pid_text[16];
    snprintf(pid_text, sizeof(pid_text), "%d", (int)pid);
    struct e2e_proc p;
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "record", "-p", pid_text, "-D", "1", "-F", "1000",
                               "-o", tables));
    cr_assert_eq(p.status, 0, "prof record -p exited %d:\n%s", p.status, p.err);
    cr_log_info("%s", p.err);
    cr_expect(strstr(p.err, "unwind tables of ") != NULL, "%s", p.err);
    e2e_proc_free(&p);
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "record", "-p", pid_text, "-D", "0.5", "-F", "1000",
                               "--unwind", "fp", "-o", fp));
    cr_assert_eq(p.status, 0, "prof record -p --unwind fp exited %d:\n%s", p.status, p.err);
    e2e_proc_free(&p);
    cr_expect_eq(wait_exit(pid, 30), 0, "the workload did not exit 0 after prof detached");

    struct e2e_scan s;
    e2e_scan_file(&s, tables);
    cr_expect_eq(s.unwinder, PROF_UNWIND_AUTO);
    cr_assert_geq(s.n_samples, 200, "too few samples");
    struct e2e_folded f;
    e2e_report_folded(&f, tables);
    log_folded("unwind tables", &f);
    double complete = 1 - (double)s.n_truncated / (double)s.n_samples;
    double exact = exact_share(&f, "nofp_inner", whole);
    cr_log_info("tables: %.2f %% of %lu samples complete, %.2f %% of nofp_inner's exactly %s",
                100 * complete, (unsigned long)s.n_samples, 100 * exact, whole);
    cr_expect_geq(complete, 0.99, "only %.1f %% of the samples are complete", 100 * complete);
    cr_expect_geq(exact, 0.99, "only %.1f %% of nofp_inner's samples are %s", 100 * exact, whole);
    /* Never a caller that did not call: nofp_inner is under nofp_middle in every sample. */
    cr_expect_eq(e2e_folded_containing(&f, "nofp_inner"),
                 e2e_folded_ending(&f, "nofp_middle;nofp_inner"));
    e2e_folded_free(&f);

    e2e_scan_file(&s, fp);
    cr_expect_eq(s.unwinder, PROF_UNWIND_FP);
    e2e_report_folded(&f, fp);
    log_folded("frame pointers", &f);
    double fp_complete = 1 - (double)s.n_truncated / (double)s.n_samples;
    cr_log_info("frame pointers: %.2f %% of %lu samples complete", 100 * fp_complete,
                (unsigned long)s.n_samples);
    cr_expect_lt(fp_complete, 0.1, "frame pointers followed code built without them");
    e2e_folded_free(&f);
}

/* A program whose file was deleted since it started, sampled by an unprivileged user:
 * its own path is gone and /proc/PID/map_files needs privilege, so its module has no
 * unwind table; the profile's note names it and says why, and its frames are walked by
 * frame pointer: cut short (the program keeps none), and said so. */
Test(e2e_record_pid, a_module_whose_file_is_gone_is_named_in_a_note)
{
    if (geteuid() != 0 || access(SETPRIV, X_OK) != 0)
        cr_skip_test("needs root and %s to run as another user", SETPRIV);
    char *level = e2e_read_file("/proc/sys/kernel/perf_event_paranoid", NULL);
    cr_assert(level != NULL, "no /proc/sys/kernel/perf_event_paranoid");
    int paranoid = atoi(level);
    free(level);
    if (paranoid > 2)
        cr_skip_test("kernel.perf_event_paranoid is %d: no sampling without privilege", paranoid);
    char dir[512], exe[600], profile[600];
    snprintf(dir, sizeof(dir), "%s/nobody", e2e_dir());
    snprintf(exe, sizeof(exe), "%s/nofp", dir);
    snprintf(profile, sizeof(profile), "%s/gone.prof", dir);
    cr_assert(chmod(e2e_dir(), 0711) == 0 && mkdir(dir, 0777) == 0 && chmod(dir, 0777) == 0,
              "%s: %s", dir, strerror(errno));
    size_t len;
    char *bytes = e2e_read_file(E2E_WORKLOAD("nofp"), &len);
    cr_assert_not_null(bytes);
    e2e_write_file(exe, bytes, len);
    free(bytes);
    cr_assert_eq(chmod(exe, 0755), 0);
    pid_t pid = spawn("nofp", E2E_ARGV(SETPRIV, "--reuid=65534", "--regid=65534",
                                       "--clear-groups", exe, "2"));
    wait_exec(pid, exe);
    wait_running(pid, 0.1);
    cr_assert_eq(unlink(exe), 0);
    char pid_text[16];
    snprintf(pid_text, sizeof(pid_text), "%d", (int)pid);
    struct e2e_proc p;
    struct e2e_opts o = {.cwd = "/"};
    e2e_run(&p, &o,
            E2E_ARGV(SETPRIV, "--reuid=65534", "--regid=65534", "--clear-groups", E2E_PROF,
                     "record", "-p", pid_text, "-D", "0.5", "-o", profile));
    cr_assert_eq(p.status, 0, "prof record -p as nobody exited %d:\n%s", p.status, p.err);
    e2e_proc_free(&p);
    cr_expect_eq(wait_exit(pid, 30), 0, "the workload did not exit 0");
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", "-f", "folded", profile));
    cr_assert_eq(p.status, 0, "prof report exited %d:\n%s", p.status, p.err);
    cr_log_info("%s", p.err);
    cr_expect(strstr(p.err, "no unwind table for ") != NULL &&
                  strstr(p.err, "nofp (deleted) (its file cannot be opened as mapped") != NULL,
              "no note names the deleted program:\n%s", p.err);
    e2e_proc_free(&p);
    struct e2e_scan s;
    e2e_scan_file(&s, profile);
    cr_expect_gt(s.n_samples, 0);
    cr_expect_eq(s.n_truncated, s.n_samples, "stacks through code without a table look whole");
}

Test(e2e_record_pid, a_thread_started_after_the_attach_is_sampled)
{
    const char *go = e2e_path("go"), *profile = e2e_path("late.prof");
    pid_t pid = spawn("attachlate", E2E_ARGV(E2E_WORKLOAD("attachlate"), go, "0.6"));
    wait_exec(pid, E2E_WORKLOAD("attachlate"));
    char pid_text[16];
    snprintf(pid_text, sizeof(pid_text), "%d", (int)pid);
    /* No duration: prof stops when the process exits. */
    pid_t prof = spawn("prof", E2E_ARGV(E2E_PROF, "record", "-p", pid_text, "-o", profile));
    wait_nonempty(profile, prof);
    e2e_write_file(go, "", 0);
    cr_expect_eq(wait_exit(pid, 30), 3, "attachlate did not exit with its own status 3");
    cr_assert_eq(wait_exit(prof, 10), 0, "prof did not end well when the process exited:\n%s",
                 e2e_read_file(e2e_path("prof.err"), NULL));
    cr_log_info("prof said: %s", e2e_read_file(e2e_path("prof.err"), NULL));
    expect_complete_file(profile, pid);

    struct e2e_scan s;
    e2e_scan_file(&s, profile);
    int is_named = 0;
    for (size_t i = 0; i < s.n_names; i++)
        is_named |= strcmp(s.names[i], "late-worker") == 0 && s.name_tids[i] != (uint32_t)pid;
    cr_expect(is_named, "no THREAD record names the late thread \"late-worker\"");
    struct e2e_proc p;
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", "--threads", profile));
    cr_assert_eq(p.status, 0, "prof report --threads exited %d:\n%s", p.status, p.err);
    struct e2e_folded f;
    e2e_folded_parse(&f, p.out);
    e2e_proc_free(&p);
    log_folded("attachlate", &f);
    long late = 0, in_zlib = 0;
    for (size_t i = 0; i < f.n_stacks; i++) {
        if (strncmp(f.stacks[i].frames, "late-worker (", 13) != 0)
            continue;
        late += f.stacks[i].count;
        if (strstr(f.stacks[i].frames, ";adler32") != NULL)
            in_zlib += f.stacks[i].count;
    }
    /* 0.6 s of CPU at 250 Hz is 150 samples. */
    cr_expect(late >= 100, "%ld samples of the late thread, of %ld", late, f.total);
    cr_expect(in_zlib >= 0.8 * (double)late,
              "only %ld of the late thread's %ld samples are named after zlib, loaded after the "
              "attach",
              in_zlib, late);
    e2e_folded_free(&f);
}

Test(e2e_record_pid, interrupt_writes_a_complete_file)
{
    const char *profile = e2e_path("int.prof");
    pid_t pid = spawn("shares", E2E_ARGV(E2E_WORKLOAD("shares"), "1.5"));
    wait_exec(pid, E2E_WORKLOAD("shares"));
    char pid_text[16];
    snprintf(pid_text, sizeof(pid_text), "%d", (int)pid);
    pid_t prof = spawn("prof", E2E_ARGV(E2E_PROF, "record", "-p", pid_text, "-o", profile));
    wait_nonempty(profile, prof);
    sleep_s(0.4);
    kill(prof, SIGINT);
    cr_expect_eq(wait_exit(prof, 10), 0, "prof did not stop well on SIGINT:\n%s",
                 e2e_read_file(e2e_path("prof.err"), NULL));
    cr_expect(kill(pid, 0) == 0, "the workload ended with prof");
    cr_expect_eq(wait_exit(pid, 30), 0, "the workload did not exit 0 after prof detached");
    expect_complete_file(profile, pid);
    struct e2e_scan s;
    e2e_scan_file(&s, profile);
    cr_expect(s.n_samples >= 50, "%zu samples in 0.4 s", s.n_samples);
}

Test(e2e_record_pid, bad_requests_are_one_line_and_exit_2)
{
    /* A process that is surely gone: a child that exited and was waited for. */
    pid_t gone = fork();
    cr_assert(gone >= 0);
    if (gone == 0)
        _exit(0);
    waitpid(gone, NULL, 0);
    char gone_text[16];
    snprintf(gone_text, sizeof(gone_text), "%d", (int)gone);
    const char *out = e2e_path("never.prof");
    struct e2e_proc p;
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "record", "-p", gone_text, "-o", out));
    expect_one_line(&p, "a process that is gone", "no process");
    e2e_proc_free(&p);
    cr_expect(access(out, F_OK) != 0, "prof created %s for a process that is gone", out);

    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "record", "-p", "12x", "-o", out));
    expect_one_line(&p, "-p 12x", "not a process id");
    e2e_proc_free(&p);
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "record", "-p", "1"));
    expect_one_line(&p, "no -o", "needs -o");
    e2e_proc_free(&p);
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "record", "-p", "1", "-o", out, "--", "/bin/true"));
    expect_one_line(&p, "-p and a command", "not both");
    e2e_proc_free(&p);
    /* -d is a duration, with -p as with a command: a value that is no time is refused. */
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "record", "-d", "abc", "-p", "1", "-o", out));
    expect_one_line(&p, "-d abc with -p", "not a duration");
    e2e_proc_free(&p);
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "record", "--callchain", "kernel", "--", "/bin/true"));
    expect_one_line(&p, "--callchain without -p", "goes with -p");
    e2e_proc_free(&p);
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "record", "-p", "1", "-o", out, "--timer", "perf"));
    expect_one_line(&p, "--timer with -p", "goes with a command");
    e2e_proc_free(&p);
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "record", "-p", "1", "-o", out, "--unwind", "check"));
    expect_one_line(&p, "--unwind check with -p", "not auto, dwarf, fp or kernel");
    e2e_proc_free(&p);
    e2e_run(&p, NULL,
            E2E_ARGV(E2E_PROF, "record", "-p", "1", "-o", out, "--callchain", "libunwind"));
    expect_one_line(&p, "--callchain libunwind", "not auto, dwarf, fp or kernel");
    e2e_proc_free(&p);
}

Test(e2e_record_pid, another_users_process_is_refused_with_the_reason)
{
    if (geteuid() != 0 || access(SETPRIV, X_OK) != 0)
        cr_skip_test("needs root and %s to run prof as another user", SETPRIV);
    pid_t pid = spawn("shares", E2E_ARGV(E2E_WORKLOAD("shares"), "2"));
    char pid_text[16];
    snprintf(pid_text, sizeof(pid_text), "%d", (int)pid);
    struct e2e_proc p;
    struct e2e_opts o = {.cwd = "/"};
    e2e_run(&p, &o,
            E2E_ARGV(SETPRIV, "--reuid=65534", "--regid=65534", "--clear-groups", E2E_PROF,
                     "record", "-p", pid_text, "-D", "1", "-o", e2e_path("nobody.prof")));
    expect_one_line(&p, "prof as nobody on root's process", "belongs to another user");
    e2e_proc_free(&p);
    cr_expect(kill(pid, 0) == 0, "the workload ended");
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* An unprivileged user samples a process of its own where kernel.perf_event_paranoid allows
 * it (2 or lower); above that, prof says why in one line. */
Test(e2e_record_pid, a_user_samples_its_own_process)
{
    if (geteuid() != 0 || access(SETPRIV, X_OK) != 0)
        cr_skip_test("needs root and %s to run as another user", SETPRIV);
    char *level = e2e_read_file("/proc/sys/kernel/perf_event_paranoid", NULL);
    cr_assert(level != NULL, "no /proc/sys/kernel/perf_event_paranoid");
    int paranoid = atoi(level);
    free(level);
    /* A directory nobody can write in, inside the test's own. */
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/nobody", e2e_dir());
    cr_assert(chmod(e2e_dir(), 0711) == 0 && mkdir(dir, 0777) == 0 && chmod(dir, 0777) == 0,
              "%s: %s", dir, strerror(errno));
    char profile[600];
    snprintf(profile, sizeof(profile), "%s/own.prof", dir);
    pid_t pid = spawn("shares", E2E_ARGV(SETPRIV, "--reuid=65534", "--regid=65534",
                                         "--clear-groups", E2E_WORKLOAD("shares"), "1.5"));
    wait_exec(pid, E2E_WORKLOAD("shares"));
    char pid_text[16];
    snprintf(pid_text, sizeof(pid_text), "%d", (int)pid);
    struct e2e_proc p;
    struct e2e_opts o = {.cwd = "/"};
    e2e_run(&p, &o,
            E2E_ARGV(SETPRIV, "--reuid=65534", "--regid=65534", "--clear-groups", E2E_PROF,
                     "record", "-p", pid_text, "-d", "0.5", "-o", profile));
    if (paranoid <= 2) {
        cr_expect_eq(p.status, 0, "prof as nobody on nobody's process exited %d:\n%s", p.status,
                     p.err);
        e2e_proc_free(&p);
        struct e2e_scan s;
        e2e_scan_file(&s, profile);
        cr_expect(s.has_end && s.n_samples >= 20, "%zu samples, end record %d", s.n_samples,
                  s.has_end);
    } else {
        expect_one_line(&p, "prof as nobody with perf_event_paranoid > 2",
                        "perf_event_paranoid");
        e2e_proc_free(&p);
    }
    cr_expect_eq(wait_exit(pid, 30), 0, "the workload did not exit 0");
}
