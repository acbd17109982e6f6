/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end tests that no guess becomes a frame and that no read of the profiler faults:
 * a framed leaf whose stack pointer points at a stale return address (into a function that
 * never calls it) keeps its real caller in every sample; a stale return address into code
 * unmapped behind libprof's back is never read; a crash handler's backtrace of a jump into
 * such code completes; a daemon's descriptors keep their numbers and their bytes (a pipe on
 * the numbers libunwind's validation pipe had, PROF_UNWIND=libunwind; the numbers of
 * counters libprof closes at prof_stop()).
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <string.h>

#include "tests/e2e/support.h"

TestSuite(e2e_noguess, .init = e2e_setup, .fini = e2e_teardown, .timeout = 90);

static void run_lib(struct e2e_proc *p, const char *profile, const char *const *env,
                    const char *const argv[])
{
    const char *all[8] = {"PROF_FREQ=1000"};
    for (size_t i = 0; env && env[i]; i++) {
        cr_assert_lt(i, 6);
        all[i + 1] = env[i];
    }
    e2e_run_profiled(p, profile, all, 0, argv);
}

Test(e2e_noguess, a_stale_return_address_at_sp_never_becomes_a_caller)
{
    struct e2e_proc p;
    run_lib(&p, "slot.prof", NULL, E2E_ARGV(E2E_WORKLOAD("staleslot"), "1.5"));
    cr_assert_eq(p.status, 0, "staleslot exited %d: %s", p.status, p.err);
    e2e_proc_free(&p);
    struct e2e_folded f;
    e2e_report_folded(&f, e2e_path("slot.prof"));
    long all = e2e_folded_containing(&f, "leaf_with_slot");
    long right = e2e_folded_ending(&f, "main;caller_with_slot;leaf_with_slot");
    cr_log_info("%ld of %ld samples of leaf_with_slot end with its true path", right, all);
    cr_assert(all > 200, "only %ld samples in leaf_with_slot", all);
    for (size_t i = 0; i < f.n_stacks; i++)
        if (strstr(f.stacks[i].frames, "deep_alloc;leaf_with_slot"))
            cr_expect_fail("a wrong caller: %s %ld", f.stacks[i].frames, f.stacks[i].count);
    /* The first sample, taken before the module's unwind table was built, stops at the
     * leaf: truncated, not wrong. */
    long leaf_only = e2e_folded_exactly(&f, "leaf_with_slot");
    cr_expect_leq(leaf_only, E2E_PENDING_MAX, "%ld samples of the leaf alone", leaf_only);
    cr_expect_eq(right + leaf_only, all,
                 "%ld of %ld samples have main;caller_with_slot;leaf_with_slot", right, all);
    e2e_folded_free(&f);
}

Test(e2e_noguess, a_return_address_into_unmapped_code_is_never_read)
{
    struct e2e_proc p;
    run_lib(&p, "stale.prof", NULL, E2E_ARGV(E2E_WORKLOAD("stalemap"), "stack", "1"));
    cr_expect_eq(p.status, 0, "stalemap exited %d (a fault in the handler?)", p.status);
    cr_expect(strstr(p.out, "stalemap ok") != NULL);
    e2e_proc_free(&p);
}

Test(e2e_noguess, a_crash_into_unmapped_code_still_gets_its_backtrace)
{
    struct e2e_proc p;
    run_lib(&p, "crash.prof", NULL, E2E_ARGV(E2E_WORKLOAD("stalemap"), "crash"));
    cr_expect_eq(p.status, 3, "stalemap crash exited %d (a fault in prof_backtrace_fd?):\n%s",
                 p.status, p.out);
    size_t n_lines = 0;
    e2e_count_lines(p.out, "", &n_lines);
    cr_expect_geq(n_lines, 2, "no frames after the header:\n%s", p.out);
    e2e_proc_free(&p);
}

Test(e2e_noguess, a_pipe_on_libunwinds_old_numbers_keeps_its_bytes)
{
    struct e2e_proc p;
    run_lib(&p, "unw.prof", E2E_ARGV("PROF_UNWIND=libunwind", "PROF_FREQ=2000"),
            E2E_ARGV(E2E_WORKLOAD("fdreuse"), "pipe", "2"));
    cr_log_info("%s", p.out);
    cr_expect_eq(p.status, 0, "fdreuse pipe exited %d: %s", p.status, p.out);
    cr_expect(strstr(p.out, "pipe ok") != NULL, "%s", p.out);
    e2e_proc_free(&p);
}

Test(e2e_noguess, prof_stop_closes_no_descriptor_of_the_program)
{
    struct e2e_proc p;
    run_lib(&p, "td.prof", NULL, E2E_ARGV(E2E_WORKLOAD("fdreuse"), "teardown"));
    cr_expect_eq(p.status, 0, "fdreuse teardown exited %d: %s", p.status, p.out);
    cr_expect(strstr(p.out, "teardown ok") != NULL, "%s", p.out);
    e2e_proc_free(&p);
}
