/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end tests of `prof record [-o FILE] [-F HZ] -- cmd args`: it profiles the command
 * like LD_PRELOAD does, writes a profile `prof report` can read, leaves the command's
 * stdout alone and passes its exit status on (128 + signal when it was killed, 127 when
 * it could not be run).
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "tests/e2e/support.h"

TestSuite(e2e_record, .init = e2e_setup, .fini = e2e_teardown, .timeout = 60);

Test(e2e_record, writes_a_readable_profile)
{
    const char *out = e2e_path("rec.prof");
    struct e2e_proc p;
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "record", "-o", out, "--", E2E_WORKLOAD("shares"), "0.5"));
    cr_assert_eq(p.status, 0, "prof record exited %d; stderr:\n%s", p.status, p.err);
    cr_expect_eq(p.out_len, 0, "prof record wrote to stdout:\n%s", p.out);
    e2e_proc_free(&p);

    struct e2e_scan s;
    e2e_scan_file(&s, out);
    cr_assert(s.header_ok, "%s has no valid header", out);
    cr_expect(s.has_end && s.trailing_bytes == 0, "%s does not end with an END record", out);
    cr_expect(s.n_samples > 0, "%s holds no samples", out);
    /* A clean run writes every sample it recorded, and the stats record says how many. */
    cr_expect(s.has_stats, "%s has no stats record", out);
    cr_expect_eq(s.stat_samples, s.n_samples, "the stats count %lu samples, the file holds %zu",
                 (unsigned long)s.stat_samples, s.n_samples);
    /* A sample comes from a signal, from the kernel-time counter or from the ring source's
     * counter, which send none. */
    cr_expect(s.stat_signals + s.stat_kernel_samples + s.stat_ring_samples >= s.stat_samples,
              "%lu signals, %lu kernel-time and %lu ring samples for %lu samples",
              (unsigned long)s.stat_signals, (unsigned long)s.stat_kernel_samples,
              (unsigned long)s.stat_ring_samples, (unsigned long)s.stat_samples);

    struct e2e_folded f;
    e2e_report_folded(&f, out);
    cr_expect(e2e_folded_containing(&f, "hot_a") > 0, "no sample in hot_a");
    e2e_folded_free(&f);
}

Test(e2e_record, default_output_is_in_the_working_directory)
{
    struct e2e_proc p;
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "record", "--", E2E_WORKLOAD("shares"), "0.3"));
    cr_assert_eq(p.status, 0, "prof record exited %d; stderr:\n%s", p.status, p.err);
    e2e_proc_free(&p);
    const char *found[4];
    size_t n = e2e_find_files("prof.", ".prof", found, 4);
    cr_assert_eq(n, 1, "expected one prof.<pid>.prof in the working directory, found %zu", n);
    struct e2e_scan s;
    e2e_scan_file(&s, found[0]);
    cr_expect(s.header_ok && s.has_end, "%s is not a complete profile", found[0]);
}

Test(e2e_record, frequency_option_reaches_the_library)
{
    const char *out = e2e_path("f100.prof");
    struct e2e_proc p;
    e2e_run(
        &p, NULL,
        E2E_ARGV(E2E_PROF, "record", "-F", "100", "-o", out, "--", E2E_WORKLOAD("shares"), "0.5"));
    cr_assert_eq(p.status, 0, "prof record -F 100 exited %d; stderr:\n%s", p.status, p.err);
    e2e_proc_free(&p);
    struct e2e_scan s;
    e2e_scan_file(&s, out);
    cr_assert(s.has_process, "%s has no process record", out);
    cr_expect_eq(s.requested_hz, 100, "requested_hz is %u", s.requested_hz);
    /* 0.5 CPU-seconds at 100 Hz: about 50 samples, surely not the 125 of 250 Hz. */
    cr_expect(s.weight_sum > 0 && s.weight_sum <= 80, "%lu samples at 100 Hz in 0.5 s",
              (unsigned long)s.weight_sum);
}

Test(e2e_record, passes_stdout_through)
{
    struct e2e_proc p;
    e2e_run(&p, NULL,
            E2E_ARGV(E2E_PROF, "record", "-o", e2e_path("echo.prof"), "--", "/bin/sh", "-c",
                     "echo hello from the command; echo and its stderr >&2"));
    cr_assert_eq(p.status, 0, "exit status %d; stderr:\n%s", p.status, p.err);
    cr_expect_str_eq(p.out, "hello from the command\n");
    cr_expect(strstr(p.err, "and its stderr\n") != NULL, "stderr:\n%s", p.err);
    e2e_proc_free(&p);
}

Test(e2e_record, passes_the_exit_status_on)
{
    struct e2e_proc p;
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "record", "--", "/bin/sh", "-c", "exit 3"));
    cr_expect_eq(p.status, 3, "sh -c 'exit 3' gave %d; stderr:\n%s", p.status, p.err);
    e2e_proc_free(&p);
}

Test(e2e_record, killed_command_gives_128_plus_signal)
{
    struct e2e_proc p;
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "record", "--", "/bin/sh", "-c", "kill -TERM $$"));
    cr_expect_eq(p.status, 128 + SIGTERM, "a command killed by SIGTERM gave %d; stderr:\n%s",
                 p.status, p.err);
    e2e_proc_free(&p);
}

Test(e2e_record, missing_command_gives_127)
{
    struct e2e_proc p;
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "record", "--", "/nonexistent/libprof-e2e-cmd"));
    cr_expect_eq(p.status, 127, "a missing command by path gave %d; stderr:\n%s", p.status, p.err);
    e2e_proc_free(&p);
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "record", "--", "libprof-e2e-no-such-command"));
    cr_expect_eq(p.status, 127, "a command not on PATH gave %d; stderr:\n%s", p.status, p.err);
    e2e_proc_free(&p);
}
