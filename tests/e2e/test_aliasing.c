/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Sampling without aliasing: the periodic workload (tests/workloads/periodic.c) repeats
 * rounds of exactly one sampling period of CPU time (4 ms, the default 250 Hz) made of
 * three functions of 50, 30 and 20 % of it. A sampler with a fixed period takes its
 * samples at the same phases of every round and shares the three out wrong; random
 * intervals around the period (sampler/jitter.h) share them right. Two threads of 10
 * CPU-seconds each give about 5000 samples: a sampling error of 0.7 points at most (one
 * standard deviation), against a tolerance of 2.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdlib.h>

#include "tests/e2e/support.h"

#define TOLERANCE 0.02

TestSuite(e2e_aliasing, .init = e2e_setup, .fini = e2e_teardown, .timeout = 180);

Test(e2e_aliasing, a_program_periodic_at_the_sampling_period_is_shared_right_at_250_hz)
{
    struct e2e_proc p;
    const char *truth_path = e2e_path("truth.txt");
    e2e_run_profiled(&p, "periodic.prof", E2E_ARGV(e2e_env("PROF_FREQ", "250")), 150,
                     E2E_ARGV(E2E_WORKLOAD("periodic"), "2", "10", "4000", truth_path));
    cr_assert_eq(p.status, 0, "periodic exited %d:\n%s", p.status, p.err);
    e2e_proc_free(&p);
    char *truth = e2e_read_file(truth_path, NULL);
    cr_assert(truth != NULL, "no truth file");

    struct e2e_folded f;
    e2e_report_folded(&f, e2e_path("periodic.prof"));
    cr_assert(f.total >= 4000, "%ld samples for 20 CPU-seconds at 250 Hz", f.total);
    static const char *const phase[] = {"phase_a", "phase_b", "phase_c"};
    for (size_t k = 0; k < 3; k++) {
        double want = e2e_truth_value(truth, phase[k]);
        double got = (double)e2e_folded_containing(&f, phase[k]) / (double)f.total;
        cr_log_info("%s: %.4f of the CPU time, %.4f of %ld samples (%+.2f points)", phase[k],
                    want, got, f.total, 100 * (got - want));
        cr_expect(got >= want - TOLERANCE && got <= want + TOLERANCE,
                  "%s: %.2f %% of the samples, but %.2f %% of the CPU time", phase[k],
                  100 * got, 100 * want);
    }
    e2e_folded_free(&f);
    free(truth);
}
