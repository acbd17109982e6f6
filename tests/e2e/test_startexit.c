/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What a process's start and exit leave behind when they do as little as they can
 * (bench/startexit.py measures what they cost): a process that ends before its first
 * sample still leaves a whole profile (its file header, PROCESS, STATS and END records,
 * nothing cut short) and writes nothing on its stderr, whichever way it ends.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tests/e2e/support.h"

TestSuite(e2e_startexit, .init = e2e_setup, .fini = e2e_teardown, .timeout = 60);

/* The profile at path is whole and holds no sample. */
static void expect_whole_and_empty(const char *path, const char *what)
{
    struct e2e_scan s;
    e2e_scan_file(&s, path);
    cr_expect(s.header_ok && s.has_process && s.has_stats && s.has_end && s.trailing_bytes == 0,
              "%s: header %d, PROCESS %d, STATS %d, END %d, %zu trailing bytes", what,
              s.header_ok, s.has_process, s.has_stats, s.has_end, s.trailing_bytes);
    cr_expect_eq(s.n_samples, 0, "%s: %zu samples", what, s.n_samples);
}

/* The writer thread is left parked at exit: the exiting thread takes its buffer and ends
 * the file itself. */
Test(e2e_startexit, a_short_process_leaves_a_whole_profile_and_says_nothing)
{
    struct e2e_proc p;
    e2e_run_profiled(&p, "true.prof", NULL, 0, E2E_ARGV("/bin/true"));
    cr_expect_eq(p.status, 0, "/bin/true exited %d", p.status);
    cr_expect_eq(p.err_len, 0, "stderr: %s", p.err);
    e2e_proc_free(&p);
    expect_whole_and_empty(e2e_path("true.prof"), "/bin/true");
}

/* 1 when this machine counts CPU cycles for a process's own threads (a PMU, and the
 * permission). */
static int has_cycles_counter(void)
{
    struct perf_event_attr a = {.size = sizeof(a), .type = PERF_TYPE_HARDWARE,
                                .config = PERF_COUNT_HW_CPU_CYCLES, .disabled = 1,
                                .exclude_kernel = 1, .exclude_hv = 1};
    long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd >= 0)
        close((int)fd);
    return fd >= 0;
}

/* The ring source is chosen without a trial counter at start: the first thread that runs
 * a period tries what the kernel gives, here a PROF_EVENT it does not have, and the
 * session goes on with task-clock rings, saying so in a note. */
Test(e2e_startexit, the_ring_source_is_tried_when_a_thread_first_runs_a_period)
{
    if (has_cycles_counter())
        cr_skip_test("this machine counts cycles: PROF_EVENT=cycles is available");
    struct e2e_proc p;
    e2e_run_profiled(&p, "deep.prof", E2E_ARGV("PROF_EVENT=cycles", "PROF_FREQ=1000"), 0,
                     E2E_ARGV(E2E_WORKLOAD("deep"), "16", "1", "0.3"));
    cr_assert_eq(p.status, 0, "deep exited %d: %s", p.status, p.err);
    cr_expect_eq(p.err_len, 0, "stderr: %s", p.err);
    e2e_proc_free(&p);
    struct e2e_scan s;
    e2e_scan_file(&s, e2e_path("deep.prof"));
    cr_expect(s.has_end && s.stat_ring_samples >= 200,
              "%llu of %zu samples from the ring (0.3 s at 1000 Hz)",
              (unsigned long long)s.stat_ring_samples, s.n_samples);
    struct e2e_proc r;
    e2e_run(&r, &(struct e2e_opts){0},
            E2E_ARGV(E2E_PROF, "report", "-f", "top", e2e_path("deep.prof")));
    cr_expect(strstr(r.err, "PROF_EVENT=cycles is not available here") != NULL,
              "no note of the event: %s", r.err);
    e2e_proc_free(&r);
}

/* PROF_START=0: nothing is started before prof_start() (no file, no writer thread, no
 * handler); the thread that ends the process writes its profile, whole. */
Test(e2e_startexit, an_idle_process_leaves_a_whole_profile)
{
    struct e2e_proc p;
    e2e_run_profiled(&p, "idle.prof", E2E_ARGV("PROF_START=0"), 0, E2E_ARGV("/bin/true"));
    cr_expect_eq(p.status, 0, "/bin/true exited %d", p.status);
    cr_expect_eq(p.err_len, 0, "stderr: %s", p.err);
    e2e_proc_free(&p);
    expect_whole_and_empty(e2e_path("idle.prof"), "idle /bin/true");
}

/* The idle profile is written by async-signal-safe code: _exit() from a SIGALRM handler
 * that interrupts malloc() and free() (dies handler) neither hangs nor loses the file. */
Test(e2e_startexit, an_idle_process_that_leaves_from_a_handler_writes_its_profile)
{
    struct e2e_proc p;
    e2e_run_profiled(&p, "handler.prof", E2E_ARGV("PROF_START=0"), 20,
                     E2E_ARGV(E2E_WORKLOAD("dies"), "handler", "0.05"));
    cr_expect(p.status == 0 && !p.timed_out, "dies handler: status %d, timed out %d: %s",
              p.status, p.timed_out, p.err);
    cr_expect_eq(p.err_len, 0, "stderr: %s", p.err);
    e2e_proc_free(&p);
    expect_whole_and_empty(e2e_path("handler.prof"), "idle, _exit from a handler");
}

/* An idle parent's fork child is idle in turn and leaves by _exit(): a file of its own,
 * PATH.PID, whole. */
Test(e2e_startexit, an_idle_parent_s_fork_child_writes_its_own_profile)
{
    struct e2e_proc p;
    e2e_run_profiled(&p, "fork.prof", E2E_ARGV("PROF_START=0"), 0,
                     E2E_ARGV(E2E_WORKLOAD("dies"), "fork", "0.02"));
    cr_expect_eq(p.status, 0, "dies fork exited %d: %s", p.status, p.err);
    cr_expect_eq(p.err_len, 0, "stderr: %s", p.err);
    int child = 0;
    cr_assert(sscanf(p.out, "child %d", &child) == 1, "stdout: %s", p.out);
    e2e_proc_free(&p);
    char name[64];
    snprintf(name, sizeof(name), "fork.prof.%d", child);
    expect_whole_and_empty(e2e_path("fork.prof"), "the idle parent");
    expect_whole_and_empty(e2e_path(name), "its fork child");
}
