/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What a process's start and exit leave behind when they do as little as they can
 * (bench/startexit.py measures what they cost): a process that ends before its first
 * sample still leaves a whole profile (its file header, PROCESS, STATS and END records,
 * nothing cut short) and writes nothing on its stderr, whichever way it ends.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>

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
