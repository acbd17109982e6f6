/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * PROF_TOGGLE_SIGNAL (`prof record --toggle-signal`): a signal to the process turns
 * sampling on and off; a program that catches that signal itself gets every instance, and
 * nothing toggles. tests/workloads/toggler.c sends itself SIGUSR2 at given times.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <string.h>

#include "tests/e2e/support.h"

TestSuite(e2e_toggle, .init = e2e_setup, .fini = e2e_teardown, .timeout = 60);

Test(e2e_toggle, the_signal_turns_sampling_on_then_off)
{
    struct e2e_proc p;
    e2e_run_profiled(&p, "t.prof", E2E_ARGV("PROF_TOGGLE_SIGNAL=USR2", "PROF_START=0"), 0,
                     E2E_ARGV(E2E_WORKLOAD("toggler"), "none", "1.3", "0.3", "0.8"));
    cr_assert_eq(p.status, 0, "toggler exited %d:\n%s", p.status, p.err);
    cr_expect_str_eq(p.out, "handled 0 view ok\n");
    cr_expect_eq(p.err_len, 0, "stderr:\n%s", p.err);
    e2e_proc_free(&p);
    struct e2e_scan s;
    e2e_scan_file(&s, e2e_path("t.prof"));
    cr_assert(s.has_end && s.n_samples > 0, "no samples, or no end");
    double first = (double)(s.first_time_ns - s.start_mono_ns) / 1e9;
    double last = (double)(s.last_time_ns - s.start_mono_ns) / 1e9;
    cr_log_info("samples from %.3f s to %.3f s", first, last);
    cr_expect(first >= 0.29 && last <= 0.9, "samples from %.3f s to %.3f s: outside 0.3-0.8",
              first, last);
    cr_expect(s.weight_sum >= 80 && s.weight_sum <= 170, "%lu samples for 0.5 s at 250 Hz",
              (unsigned long)s.weight_sum);
}

Test(e2e_toggle, a_program_that_catches_the_signal_gets_it_and_nothing_toggles)
{
    struct e2e_proc p;
    e2e_run(&p, NULL,
            E2E_ARGV(E2E_PROF, "record", "-q", "--toggle-signal", "USR2", "-o", e2e_path("o.prof"),
                     "--", E2E_WORKLOAD("toggler"), "own", "1.0", "0.2", "0.5"));
    cr_assert_eq(p.status, 0, "toggler exited %d:\n%s", p.status, p.err);
    cr_expect_str_eq(p.out, "handled 2 view ok\n");
    e2e_proc_free(&p);
    struct e2e_scan s;
    e2e_scan_file(&s, e2e_path("o.prof"));
    double last = (double)(s.last_time_ns - s.start_mono_ns) / 1e9;
    cr_expect(s.weight_sum >= 180 && last > 0.8, "%lu samples, the last at %.3f s: sampling "
              "was toggled", (unsigned long)s.weight_sum, last);
}
