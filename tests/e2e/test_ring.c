/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The ring source's stack copies (libprof/timers.c, resize_copies_locked()): the kernel
 * copies a thread's stack at every sample, as much as it is asked for whatever the
 * stack's depth, so each thread's copy is sized to what its walks read; a thread whose
 * stack deepens past its copy gets a large one again, and its stacks come out whole once
 * it has (tests/workloads/deepening.c: a shallow phase, a deep one of 40 frames of 256
 * bytes, a shallow one).
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>

#include "tests/e2e/support.h"

TestSuite(e2e_ring, .init = e2e_setup, .fini = e2e_teardown, .timeout = 60);

Test(e2e_ring, a_threads_copy_follows_its_stack_and_its_stacks_stay_whole)
{
    struct e2e_proc p;
    e2e_run_profiled(&p, "deepening.prof", E2E_ARGV("PROF_FREQ=1000"), 0,
                     E2E_ARGV(E2E_WORKLOAD("deepening"), "0.3", "0.6", "40"));
    cr_assert_eq(p.status, 0, "deepening exited %d: %s", p.status, p.err);
    cr_expect_eq(p.err_len, 0, "stderr: %s", p.err);
    e2e_proc_free(&p);
    struct e2e_scan s;
    e2e_scan_file(&s, e2e_path("deepening.prof"));
    cr_assert(s.has_end, "the profile has no END");
    if (s.stat_ring_samples < s.n_samples / 2)
        cr_skip_test("the ring source is not available here (%llu ring samples of %zu)",
                     (unsigned long long)s.stat_ring_samples, s.n_samples);
    /* Made smaller in the first phase, larger again at the deep one. */
    cr_expect_geq(s.stats[PROF_STAT_RING_RESIZES], 2, "the copy was sized %llu times",
                  (unsigned long long)s.stats[PROF_STAT_RING_RESIZES]);
    /* What went past the small copy before it grew: a writer period (50 ms) or so. */
    cr_expect_leq(s.n_truncated, 120, "%zu of %zu samples truncated", s.n_truncated,
                  s.n_samples);

    struct e2e_folded f;
    e2e_report_folded(&f, e2e_path("deepening.prof"));
    long deep = e2e_folded_containing(&f, "deep_spin");
    long whole = e2e_folded_containing_from(&f, "deep_spin", "run");
    long shallow = e2e_folded_containing_from(&f, "shallow_spin", "run");
    cr_expect_geq(deep, 400, "%ld samples in deep_spin (0.6 s at 1000 Hz)", deep);
    cr_expect_geq(whole * 10, deep * 8, "%ld of %ld deep_spin samples whole", whole, deep);
    cr_expect_geq(shallow, 400, "%ld whole samples in shallow_spin (0.6 s)", shallow);
    e2e_folded_free(&f);
}
