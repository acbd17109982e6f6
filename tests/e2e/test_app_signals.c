/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end tests of the program's own signals and system calls under the profiler:
 * handlers that never return (siglongjmp out of the timeout idiom's SIGALRM handler at
 * 2 kHz; pthread_exit() from a thread's handler) leave sampling whole; a 4 MiB blocking
 * pipe write is never cut short by a profiling signal; time spent in system calls is
 * counted where the calls are; a profiling signal left pending and blocked never meets a
 * default action (across an exec into an unprofiled program, or when SIGPROF goes back to
 * the program with PROF_TIMER=itimer).
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/e2e/support.h"

TestSuite(e2e_appsig, .init = e2e_setup, .fini = e2e_teardown, .timeout = 120);

/* Runs a workload under the library at `freq` with extra settings; asserts exit 0 and that
 * the program's stderr is empty. */
static void run_lib(struct e2e_proc *p, const char *profile, const char *freq,
                    const char *const *env, const char *const argv[])
{
    const char *all[8] = {e2e_env("PROF_FREQ", freq)};
    for (size_t i = 0; env && env[i]; i++) {
        cr_assert_lt(i, 6);
        all[i + 1] = env[i];
    }
    e2e_run_profiled(p, profile, all, 0, argv);
    cr_assert_eq(p->status, 0, "%s exited %d under the library; stdout:\n%s\nstderr:\n%s", argv[0],
                 p->status, p->out, p->err);
    cr_expect_eq(p->err_len, 0, "the library printed on the program's stderr:\n%s", p->err);
}

/* The samples' weight per CPU-second of the workload (its "cpu_s X" line). */
static double weight_per_cpu_s(const struct e2e_proc *p, const char *profile)
{
    const char *at = strstr(p->out, "cpu_s ");
    cr_assert_not_null(at, "no cpu_s line:\n%s", p->out);
    double cpu = atof(at + 6);
    struct e2e_scan s;
    e2e_scan_file(&s, e2e_path(profile));
    cr_assert(s.has_end, "%s has no end record", profile);
    return (double)s.weight_sum / cpu;
}

Test(e2e_appsig, a_handler_that_leaves_by_siglongjmp_leaves_sampling_whole)
{
    struct e2e_proc p;
    run_lib(&p, "jump.prof", "1000", NULL, E2E_ARGV(E2E_WORKLOAD("jumper"), "longjmp", "1.5"));
    double rate = weight_per_cpu_s(&p, "jump.prof");
    cr_log_info("siglongjmp at 2 kHz: %.0f samples per CPU-second at 1000 Hz; %s", rate, p.out);
    /* Before the fix no sample was kept after the first jump. The weights stay near the
     * thread's CPU time, which here includes the kernel's delivery of 3000 signals and our
     * handler's time (both more on a loaded machine: 740-1104 per CPU-second measured on a
     * shared 2-core virtual machine, 1233 once with the whole suite running beside it),
     * and samples come until the end of the run. */
    cr_expect(rate > 600 && rate < 1300, "%.0f samples per CPU-second, 1000 asked", rate);
    struct e2e_scan s;
    e2e_scan_file(&s, e2e_path("jump.prof"));
    double first = (double)(s.first_time_ns - s.start_mono_ns) / 1e9;
    double last = (double)(s.last_time_ns - s.start_mono_ns) / 1e9;
    cr_expect(first < 0.2 && last > 1.3, "samples from %.2f s to %.2f s of a 1.5 s run", first,
              last);
    struct e2e_folded f;
    e2e_report_folded(&f, e2e_path("jump.prof"));
    long spin = e2e_folded_ending(&f, "main;run_longjmp;spin_until_alarm");
    cr_expect(spin > 0.9 * (double)f.total, "%ld of %ld samples in spin_until_alarm", spin,
              f.total);
    e2e_folded_free(&f);
    e2e_proc_free(&p);
}

Test(e2e_appsig, a_handler_that_calls_pthread_exit_leaves_sampling_whole)
{
    struct e2e_proc p;
    run_lib(&p, "exit.prof", "1000", E2E_ARGV("PROF_TIMER=perf"),
            E2E_ARGV(E2E_WORKLOAD("jumper"), "exit", "1.5"));
    /* Each worker lives about 2 ms, and each thread's counter starts afresh: the part of a
     * period a thread leaves unfinished is never sampled, about a quarter here. What must
     * not happen is sampling stopping after the first handler that never returned. The
     * perf source, whose every sample is a signal and a handler, is the one that could;
     * the ring source samples such threads far less (a thread's first samples come on
     * scheduler ticks, which a 2 ms thread often never meets: 160 a CPU-second here, see
     * docs/ARCHITECTURE.md), so it is not the measure of this. */
    double rate = weight_per_cpu_s(&p, "exit.prof");
    cr_log_info("pthread_exit from handlers: %.0f samples per CPU-second; %s", rate, p.out);
    cr_expect(rate > 350 && rate < 1150, "%.0f samples per CPU-second, 1000 asked", rate);
    struct e2e_folded f;
    e2e_report_folded(&f, e2e_path("exit.prof"));
    cr_expect(e2e_folded_containing(&f, "worker_spin") > 0.7 * (double)f.total,
              "the short-lived workers' samples are missing");
    e2e_folded_free(&f);
    e2e_proc_free(&p);
}

Test(e2e_appsig, a_blocking_pipe_write_is_never_cut_short)
{
    struct e2e_proc p;
    run_lib(&p, "pipe.%p.prof", "1000", NULL, E2E_ARGV(E2E_WORKLOAD("pipewrite"), "pipe", "40"));
    cr_log_info("%s", p.out);
    cr_expect(strstr(p.out, "partial 0 of 40") != NULL, "%s", p.out);
    e2e_proc_free(&p);
}

/* Where kernel-only counters are permitted (root here), the time of the read()s of
 * kernel_phase() is sampled at the calls: the share of samples in read() is the share of
 * CPU time the workload measured around them, within 2 points or three standard errors of
 * the kernel-time samples' count, whichever is wider (the kernel-only counter runs at a
 * quarter of the rate, its samples weigh 4 periods each: at 2000 Hz, about 80 samples
 * carry an 8 % share, whose count alone varies by about 0.9 points). */
Test(e2e_appsig, time_in_system_calls_is_counted_at_the_calls)
{
    struct e2e_proc p;
    const char *truth = e2e_path("share.truth");
    run_lib(&p, "share.prof", "2000", E2E_ARGV("PROF_TIMER=perf"),
            E2E_ARGV(E2E_WORKLOAD("pipewrite"), "share", "2", truth));
    e2e_proc_free(&p);
    char *text = e2e_read_file(truth, NULL);
    double want = e2e_truth_value(text, "kernel_phase");
    free(text);
    struct e2e_folded f;
    e2e_report_folded(&f, e2e_path("share.prof"));
    /* glibc's DWARF has __GI___libc_read inlined into read: a frame of its own. */
    double got = (double)(e2e_folded_ending(&f, "read") +
                          e2e_folded_ending(&f, "read;__GI___libc_read [inlined]")) /
                 (double)f.total;
    struct e2e_scan s;
    e2e_scan_file(&s, e2e_path("share.prof"));
    double tol = s.n_kernel > 0 ? 3 * got / sqrt((double)s.n_kernel) : 0;
    tol = tol > 0.02 ? tol : 0.02;
    cr_log_info("time in kernel_phase's read()s: measured %.3f, sampled %.3f (%zu kernel-time "
                "samples; within %.3f)", want, got, s.n_kernel, tol);
    cr_expect(got > want - tol && got < want + tol,
              "%.1f %% of the samples in read() for %.1f %% of the CPU time (within %.1f "
              "points)", 100 * got, 100 * want, 100 * tol);
    /* run_share, called once, is inlined into main: "main;run_share [inlined];user_phase". */
    cr_expect(e2e_folded_ending(&f, "user_phase") > 0.8 * (double)f.total * (1 - want),
              "user_phase is missing its samples");
    e2e_folded_free(&f);
}

/* A system call 24 KiB of stack below main: its kernel-time samples are walked over the
 * kernel's copy of the user stack, which reaches main's frame (with an 8 KiB copy they all
 * stopped at the copy's end, "bounds"). */
Test(e2e_appsig, kernel_time_samples_under_a_large_frame_reach_main)
{
    struct e2e_proc p;
    run_lib(&p, "deepk.prof", "1000", E2E_ARGV("PROF_TIMER=perf"),
            E2E_ARGV(E2E_WORKLOAD("pipewrite"), "deep", "2", e2e_path("deepk.truth")));
    e2e_proc_free(&p);
    struct e2e_folded f;
    e2e_report_folded(&f, e2e_path("deepk.prof"));
    long in_read = 0, whole = 0;
    for (size_t i = 0; i < f.n_stacks; i++) {
        const char *s = f.stacks[i].frames;
        if (strstr(s, ";kernel_phase;read") == NULL)
            continue;
        in_read += f.stacks[i].count;
        if (strncmp(s, "main;deep_frame;", strlen("main;deep_frame;")) == 0)
            whole += f.stacks[i].count;
    }
    cr_log_info("kernel_phase's read()s: %ld samples, %ld reaching main", in_read, whole);
    /* Enough to judge the stacks by: 80-120 alone, 30 once in a loaded full run. */
    cr_expect(in_read >= 20, "only %ld samples in kernel_phase's read()s", in_read);
    cr_expect(in_read - whole <= E2E_PENDING_MAX, "%ld of %ld samples in read() stop before main",
              in_read - whole, in_read);
    e2e_folded_free(&f);
}

/* PROF_FOLLOW=0: the exec'd image is not profiled, and unblocks every signal. The
 * interval timer's SIGPROF is the one a closed counter or a deleted timer does not take
 * back with it. */
Test(e2e_appsig, a_pending_profiling_signal_does_not_survive_an_exec)
{
    struct e2e_proc p;
    run_lib(&p, "pend.prof", "1000", E2E_ARGV("PROF_FOLLOW=0", "PROF_TIMER=itimer"),
            E2E_ARGV(E2E_WORKLOAD("sigpending"), "exec"));
    cr_expect(strstr(p.out, "sigpending ok") != NULL, "%s", p.out);
    e2e_proc_free(&p);
}

Test(e2e_appsig, sigprof_goes_back_to_the_program_without_a_tick_of_ours)
{
    struct e2e_proc p;
    run_lib(&p, "itimer.prof", "1000", E2E_ARGV("PROF_TIMER=itimer"),
            E2E_ARGV(E2E_WORKLOAD("sigpending"), "itimer"));
    cr_expect(strstr(p.out, "sigpending ok") != NULL, "%s", p.out);
    e2e_proc_free(&p);
    /* The move is told in the profile. */
    e2e_run(&p, &(struct e2e_opts){0}, E2E_ARGV(E2E_PROF, "report", e2e_path("itimer.prof")));
    cr_expect(strstr(p.err, "libprof: the application arms ITIMER_PROF") != NULL, "%s", p.err);
    e2e_proc_free(&p);
}

/* A thread that turned the TSC off faults on rdtsc, which the vDSO's clocks execute: the
 * handler reads its clocks by system call. */
Test(e2e_appsig, a_thread_without_the_tsc_is_sampled_without_a_fault)
{
    struct e2e_proc p;
    struct e2e_opts o = {.preload = 1,
                         .env = E2E_ARGV(e2e_env("PROF_OUTPUT", e2e_path("tsc.prof")),
                                         "PROF_FREQ=1000")};
    e2e_run(&p, &o, E2E_ARGV(E2E_WORKLOAD("privdrop"), "notsc"));
    if (p.status == 77) {
        e2e_proc_free(&p);
        cr_skip_test("PR_SET_TSC is not available here");
    }
    cr_expect_eq(p.status, 0, "privdrop notsc exited %d", p.status);
    e2e_proc_free(&p);
    struct e2e_folded f;
    e2e_report_folded(&f, e2e_path("tsc.prof"));
    /* busy_no_tsc() works 0.1 to 0.3 s: 100 samples or more at 1000 Hz, none before the
     * fix (the process died at its first sample). */
    long got = e2e_folded_containing(&f, "busy_no_tsc");
    cr_expect(got > 40, "busy_no_tsc has %ld samples", got);
    e2e_folded_free(&f);
}

/* Threads that block every signal (xz's workers, thread pools that leave signals to one
 * thread) are sampled by the per-thread sources: the signal stays unblocked for the
 * kernel, while the program sees its masks as it set them, a signal of its own on that
 * number waits until it unblocks it, and a program it execs starts with the mask it set.
 * Before, neither worker had a single sample. */
static void check_blocked_threads(const char *source)
{
    const char *argv[] = {E2E_WORKLOAD("sigblock"), "0.5", NULL};
    struct e2e_proc plain, p;
    e2e_run(&plain, NULL, argv);
    cr_assert_eq(plain.status, 0, "sigblock exited %d:\n%s", plain.status, plain.err);
    char prof[64];
    snprintf(prof, sizeof(prof), "sigblock-%s.prof", source);
    e2e_run_profiled(&p, prof, E2E_ARGV(e2e_env("PROF_TIMER", source), "PROF_FREQ=1000"), 0,
                     argv);
    cr_expect_eq(p.status, 0, "%s: sigblock exited %d:\n%s", source, p.status, p.err);
    cr_expect(p.out_len == plain.out_len && memcmp(p.out, plain.out, plain.out_len) == 0,
              "%s: what the program saw differs:\n--- profiled:\n%s--- plain:\n%s", source,
              p.out, plain.out);
    struct e2e_folded f;
    e2e_report_folded(&f, e2e_path(prof));
    long inherited = e2e_folded_containing(&f, "inherited_worker");
    long self = e2e_folded_containing(&f, "self_blocked_worker");
    cr_log_info("%s: inherited_worker %ld, self_blocked_worker %ld of 500 each", source,
                inherited, self);
    /* 0.5 CPU-seconds each at 1000 Hz: 500 periods; the thread source's samples weigh
     * the ticks they stand for. */
    cr_expect(inherited >= 350, "%s: the thread that inherited a full mask has %ld of 500",
              source, inherited);
    cr_expect(self >= 350, "%s: the thread that blocked every signal itself has %ld of 500",
              source, self);
    e2e_folded_free(&f);
    e2e_proc_free(&p);
    e2e_proc_free(&plain);
}

Test(e2e_appsig, threads_that_block_every_signal_are_sampled_perf_source)
{
    check_blocked_threads("perf");
}

Test(e2e_appsig, threads_that_block_every_signal_are_sampled_thread_source)
{
    check_blocked_threads("thread");
}
