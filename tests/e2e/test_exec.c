/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end tests of exec and fork under the library. An interval timer survives execve,
 * and SIGPROF kills a program that has no handler for it; so a profiled process that
 * execs, whether the new program loads the library again or not, must not leave its timer
 * armed. A forked child that exits with exit() or _exit() while the parent keeps running
 * must not damage the parent's profile. A process killed outright leaves a profile that
 * reads up to its last whole record. The forker workload is tests/workloads/forker.c.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/e2e/support.h"

TestSuite(e2e_exec, .init = e2e_setup, .fini = e2e_teardown, .timeout = 60);

/* Runs `sh -c SCRIPT shares` (the script sees the workload's path as $0) under the
 * library; returns its exit status. */
static int run_sh_under_library(const char *script)
{
    struct e2e_proc p;
    const char *output = e2e_env("PROF_OUTPUT", e2e_path("exec.%p.prof"));
    struct e2e_opts o = {.preload = 1, .env = E2E_ARGV(output)};
    e2e_run(&p, &o, E2E_ARGV("/bin/sh", "-c", script, E2E_WORKLOAD("shares")));
    int status = p.status;
    if (status != 0)
        cr_log_error("sh -c '%s' exited %d; stderr:\n%s", script, status, p.err);
    e2e_proc_free(&p);
    return status;
}

Test(e2e_exec, exec_of_a_profiled_program)
{
    cr_expect_eq(run_sh_under_library("exec \"$0\" 0.3"), 0,
                 "the exec'd program did not finish cleanly (142 = killed by SIGPROF)");
    /* The shell and the program it became share a pid, hence a profile path; what is
     * left there must be a whole profile of the program. */
    const char *found[4];
    size_t n = e2e_find_files("exec.", ".prof", found, 4);
    cr_assert_eq(n, 1, "%zu profiles for one pid", n);
    struct e2e_scan s;
    e2e_scan_file(&s, found[0]);
    cr_expect(s.header_ok && s.has_end && s.trailing_bytes == 0,
              "%s is not one whole profile (%zu records, %zu bytes past them)", found[0],
              s.n_records, s.trailing_bytes);
    struct e2e_folded f;
    e2e_report_folded(&f, found[0]);
    cr_expect(e2e_folded_containing(&f, "hot_a") > 0, "the exec'd program's samples are missing");
    e2e_folded_free(&f);
}

Test(e2e_exec, exec_of_an_unprofiled_program)
{
    cr_expect_eq(run_sh_under_library("unset LD_PRELOAD; exec \"$0\" 0.3"), 0,
                 "the exec'd program did not finish cleanly (142 = killed by SIGPROF)");
}

Test(e2e_exec, forked_children_exit_cleanly)
{
    struct e2e_proc p;
    const char *output = e2e_env("PROF_OUTPUT", e2e_path("fork.%p.prof"));
    struct e2e_opts o = {.preload = 1, .env = E2E_ARGV(output)};
    e2e_run(&p, &o, E2E_ARGV(E2E_WORKLOAD("forker"), E2E_WORKLOAD("shares"), "0.3"));
    cr_assert_eq(p.status, 0, "forker exited %d; stdout:\n%s\nstderr:\n%s", p.status, p.out, p.err);
    cr_expect(strstr(p.out, "forker ok\n") != NULL, "stdout:\n%s", p.out);
    int pid = 0;
    cr_assert(sscanf(p.out, "forker pid %d", &pid) == 1, "stdout:\n%s", p.out);
    e2e_proc_free(&p);

    /* The parent's profile is whole and has the parent's work. */
    char name[64];
    snprintf(name, sizeof(name), "fork.%d.prof", pid);
    struct e2e_scan s;
    e2e_scan_file(&s, e2e_path(name));
    cr_expect(s.header_ok && s.has_end && s.trailing_bytes == 0,
              "the parent's profile is not whole (%zu records, %zu bytes past them)", s.n_records,
              s.trailing_bytes);
    cr_expect(s.has_process && s.pid == (uint32_t)pid, "the parent's profile names pid %u", s.pid);
    struct e2e_folded f;
    e2e_report_folded(&f, e2e_path(name));
    cr_expect(e2e_folded_containing(&f, "parent_work") > 0, "no sample in parent_work");
    e2e_folded_free(&f);

    /* Any other profile (a child's, if children are followed) must be readable too. */
    const char *found[8];
    size_t n = e2e_find_files("fork.", ".prof", found, 8);
    for (size_t i = 0; i < n; i++) {
        e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", found[i]));
        cr_expect_eq(p.status, 0, "prof report %s exited %d:\n%s", found[i], p.status, p.err);
        e2e_proc_free(&p);
    }
    cr_log_info("%zu profile(s) from forker and its children", n);
}

Test(e2e_exec, killed_process_leaves_a_readable_profile)
{
    struct e2e_proc p;
    const char *output = e2e_env("PROF_OUTPUT", e2e_path("killed.prof"));
    struct e2e_opts o = {.preload = 1, .env = E2E_ARGV(output), .kill_after_s = 0.8};
    e2e_run(&p, &o, E2E_ARGV(E2E_WORKLOAD("shares"), "30"));
    cr_assert_eq(p.status, 128 + SIGKILL, "shares was not killed: status %d", p.status);
    e2e_proc_free(&p);

    struct e2e_scan s;
    e2e_scan_file(&s, e2e_path("killed.prof"));
    cr_expect(s.header_ok && s.has_process, "no header or process record");
    cr_expect(!s.has_end, "a killed process wrote an END record");
    struct e2e_folded f;
    e2e_report_folded(&f, e2e_path("killed.prof"));
    cr_log_info("%ld samples in %zu records before the kill", f.total, s.n_records);
    cr_expect(e2e_folded_containing(&f, "hot_a") > 0, "no samples from before the kill");
    e2e_folded_free(&f);
}

/* An exec that fails (a bad path, as a launcher's first try or Python's tests make) used
 * to end the profile for good: the program and its later children ran unprofiled, and a
 * child that dropped root then found no file to take over ("cannot create ...:
 * Permission denied" on its stderr). The profile now goes on in the next file. */
Test(e2e_exec, the_profile_goes_on_after_an_exec_that_failed)
{
    struct e2e_proc p;
    e2e_run_profiled(&p, "fx.%p.prof", E2E_ARGV("PROF_FREQ=1000"), 30,
                     E2E_ARGV(E2E_WORKLOAD("execfamily"), "failexec", "0.6"));
    cr_assert_eq(p.status, 0, "execfamily failexec exited %d: %s", p.status, p.err);
    cr_expect_eq(p.err_len, 0, "stderr: %s", p.err);
    int pid = 0, child = 0;
    cr_assert_eq(sscanf(p.out, "failed exec %d child %d", &pid, &child), 2, "%s", p.out);
    e2e_proc_free(&p);
    char first[64], again[64], forked[64];
    snprintf(first, sizeof(first), "fx.%d.prof", pid);
    snprintf(again, sizeof(again), "fx.%d.prof.2", pid);
    snprintf(forked, sizeof(forked), "fx.%d.prof", child);
    struct e2e_folded before, after, kid;
    e2e_report_folded(&before, e2e_path(first));
    e2e_report_folded(&after, e2e_path(again));
    e2e_report_folded(&kid, e2e_path(forked));
    long b = e2e_folded_containing(&before, "parent_work");
    long a = e2e_folded_containing(&after, "after_failed_exec");
    long k = e2e_folded_containing(&kid, "fork_work");
    cr_log_info("before the exec %ld, after it %ld, its child %ld", b, a, k);
    cr_expect_gt(b, 200, "samples before the exec: %ld", b);
    cr_expect_gt(a, 200, "samples after the failed exec: %ld", a);
    cr_expect_gt(k, 100, "samples of the child forked after it: %ld", k);
    e2e_folded_free(&before);
    e2e_folded_free(&after);
    e2e_folded_free(&kid);
}
