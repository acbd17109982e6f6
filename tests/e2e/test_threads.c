/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end tests of a multi-threaded program: the twothreads workload
 * (tests/workloads/twothreads.c) burns CPU in spin_one and spin_two on two threads. Both
 * must show in the profile with a fair part of the samples each, the samples must come
 * from two thread ids, each with a thread record carrying the name the thread gave itself
 * (pthread_setname_np, after it started), and the program's result must not change under
 * the profiler.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <string.h>

#include "tests/e2e/support.h"

#define MIN_SHARE 0.25 /* each thread should have about half the samples */

TestSuite(e2e_threads, .init = e2e_setup, .fini = e2e_teardown, .timeout = 60);

/* Runs twothreads under the library; returns the profile's path. */
static const char *profile_twothreads(void)
{
    struct e2e_proc plain, lib;
    e2e_run(&plain, NULL, E2E_ARGV(E2E_WORKLOAD("twothreads")));
    cr_assert_eq(plain.status, 0, "twothreads exited %d", plain.status);
    const char *output = e2e_env("PROF_OUTPUT", e2e_path("threads.prof"));
    struct e2e_opts o = {.preload = 1, .env = E2E_ARGV(output)};
    e2e_run(&lib, &o, E2E_ARGV(E2E_WORKLOAD("twothreads")));
    cr_assert_eq(lib.status, 0, "twothreads exited %d under the library:\n%s", lib.status, lib.err);
    cr_expect_str_eq(lib.out, plain.out, "the result changed under the library");
    e2e_proc_free(&plain);
    e2e_proc_free(&lib);
    return e2e_path("threads.prof");
}

Test(e2e_threads, both_threads_are_sampled)
{
    const char *prof = profile_twothreads();
    struct e2e_folded f;
    e2e_report_folded(&f, prof);
    long one = e2e_folded_containing(&f, "spin_one");
    long two = e2e_folded_containing(&f, "spin_two");
    cr_log_info("spin_one %ld, spin_two %ld of %ld samples", one, two, f.total);
    cr_assert(f.total > 0, "no samples");
    cr_expect(one >= MIN_SHARE * (double)f.total, "spin_one has %ld of %ld samples", one, f.total);
    cr_expect(two >= MIN_SHARE * (double)f.total, "spin_two has %ld of %ld samples", two, f.total);
    e2e_folded_free(&f);

    struct e2e_scan s;
    e2e_scan_file(&s, prof);
    cr_expect(s.n_tids >= 2, "the samples come from %zu thread id(s)", s.n_tids);
}

Test(e2e_threads, every_sampled_thread_has_a_thread_record)
{
    const char *prof = profile_twothreads();
    struct e2e_scan s;
    e2e_scan_file(&s, prof);
    for (size_t i = 0; i < s.n_tids; i++) {
        size_t j = 0;
        while (j < s.n_names && s.name_tids[j] != s.tids[i])
            j++;
        cr_expect(j < s.n_names, "samples from tid %u, but no thread record for it (%zu in all)",
                  s.tids[i], s.n_names);
    }
}

Test(e2e_threads, names_set_by_the_threads_are_recorded)
{
    const char *prof = profile_twothreads();
    struct e2e_scan s;
    e2e_scan_file(&s, prof);
    int one = 0, two = 0;
    for (size_t i = 0; i < s.n_names; i++) {
        cr_log_info("thread record: tid %u \"%s\"", s.name_tids[i], s.names[i]);
        one |= strcmp(s.names[i], "worker-one") == 0;
        two |= strcmp(s.names[i], "worker-two") == 0;
    }
    cr_expect(one && two, "%zu thread records; worker-one %s, worker-two %s", s.n_names,
              one ? "found" : "missing", two ? "found" : "missing");
}

/* The kernel time of libprof's own handlers (their system calls, the sigreturn that ends
 * them) is libprof's cost: counted, never a stack of the program's. At 4000 Hz the
 * kernel-time counters sample at 1000 Hz, and a build that kept those samples put 4 to 20
 * of them on stacks of libprof's functions in this run. */
Test(e2e_threads, libprofs_own_kernel_time_is_no_stack_of_the_program)
{
    struct e2e_proc p;
    const char *output = e2e_env("PROF_OUTPUT", e2e_path("self.prof"));
    struct e2e_opts o = {.preload = 1, .env = E2E_ARGV(output, "PROF_FREQ=4000")};
    e2e_run(&p, &o, E2E_ARGV(E2E_WORKLOAD("twothreads"), "400"));
    cr_assert_eq(p.status, 0, "twothreads exited %d:\n%s", p.status, p.err);
    e2e_proc_free(&p);
    struct e2e_folded f;
    e2e_report_folded(&f, e2e_path("self.prof"));
    const char *ours[] = {"refresh_counter", "smp_", "take_sample", "__restore_rt", "lp_"};
    for (size_t i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
        cr_expect_eq(e2e_folded_containing(&f, ours[i]), 0, "%ld samples in %s",
                     e2e_folded_containing(&f, ours[i]), ours[i]);
    cr_expect_gt(f.total, 1000);
    e2e_folded_free(&f);
}
