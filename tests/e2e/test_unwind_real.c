/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end tests of the unwind tables on programs nobody here wrote, built without frame
 * pointers (Debian's python3, sqlite3, xz), and on the project's own workloads without
 * frame pointers and through libc callbacks, each run twice at 1000 Hz. Under
 * PROF_UNWIND=check every sample's context is walked with the tables and again with
 * libunwind, the oracle: the two agree on at least 99.9 % of the walks compared (any
 * difference is printed, as the tables and as libunwind walked it), and no sample is of
 * libprof's own handler (a signal of ours nested in it). Under the default
 * (auto), at least 99 % of the samples reach the thread's first frame, those of time in
 * the kernel too (walked from a 32 KiB copy of the user stack: sqlite3's shell keeps about
 * 20 KiB between its system calls and main). (Completeness is not measured under check,
 * where the handler runs libunwind, whose system calls are the profiler's own.)
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/e2e/support.h"

TestSuite(e2e_real, .init = e2e_setup, .fini = e2e_teardown, .timeout = 120);

#define MIN_AGREE 0.999
#define MIN_COMPLETE 0.99

/* Prints the walks libunwind disagreed with, both ways. */
static void log_disagreements(const char *profile)
{
    static const char *const sides[] = {"tables", "libunwind"};
    for (int i = 0; i < 2; i++) {
        struct e2e_proc r;
        e2e_run(&r, NULL,
                E2E_ARGV(E2E_PROF, "report", "-f", "folded", "--unwind-check", sides[i],
                         profile));
        cr_log_info("as %s walked them:\n%s", sides[i], r.out);
        e2e_proc_free(&r);
    }
}

/* Runs argv profiled with PROF_UNWIND=unwind into e2e_path(profile) and scans it. */
static void run(const char *name, const char *unwind, const char *profile,
                const char *const argv[], struct e2e_scan *s)
{
    struct e2e_proc p;
    e2e_run_profiled(&p, profile, E2E_ARGV(e2e_env("PROF_UNWIND", unwind), "PROF_FREQ=1000"),
                     0, argv);
    cr_assert_eq(p.status, 0, "%s exited %d:\n%s", name, p.status, p.err);
    e2e_proc_free(&p);
    e2e_scan_file(s, e2e_path(profile));
    cr_assert(s->has_stats, "%s: no stats record", name);
}

/* Checks the agreement with libunwind, then the completeness. */
static void check_program(const char *name, const char *const argv[])
{
    if (access(argv[0], X_OK) != 0)
        cr_skip_test("%s is not installed", argv[0]);
    struct e2e_scan s;
    run(name, "check", "check.prof", argv, &s);
    uint64_t same = s.stats[PROF_STAT_CHECK_SAME], diff = s.stats[PROF_STAT_CHECK_DIFF];
    double agree = (double)same / (double)(same + diff);
    cr_log_info("%s: %llu walks compared, %.3f %% as libunwind's (%llu not)", name,
                (unsigned long long)(same + diff), 100 * agree, (unsigned long long)diff);
    cr_assert_gt(same + diff, 500, "%s: only %llu walks compared", name,
                 (unsigned long long)(same + diff));
    if (diff > 0)
        log_disagreements(e2e_path("check.prof"));
    cr_expect_geq(agree, MIN_AGREE, "%s: %.3f %% of the walks as libunwind's", name,
                  100 * agree);
    /* libunwind's locks inside the handler once unblocked the sampling signal there (its
     * sigprocmask went through libprof's view of the mask): a second sample landed in the
     * first one's frames. No sample is of libprof's handler. */
    struct e2e_folded f;
    e2e_report_folded(&f, e2e_path("check.prof"));
    cr_expect_eq(e2e_folded_containing(&f, "smp_handler"), 0,
                 "%s: samples taken inside libprof's own handler", name);
    e2e_folded_free(&f);

    run(name, "auto", "auto.prof", argv, &s);
    size_t user = s.n_samples - s.n_kernel;
    size_t user_truncated = s.n_truncated - s.n_kernel_truncated;
    double complete = 1.0 - (double)s.n_truncated / (double)s.n_samples;
    cr_log_info("%s: %zu samples, %.2f %% complete; %zu of user time (%zu truncated, "
                "table-pending %llu in all); %zu of kernel time, %zu of them truncated; %llu "
                "frames by table, %llu by frame pointer",
                name, s.n_samples, 100 * complete, user, user_truncated,
                (unsigned long long)s.stats[PROF_STAT_STOP_PENDING], s.n_kernel,
                s.n_kernel_truncated, (unsigned long long)s.stats[PROF_STAT_FRAMES_TABLE],
                (unsigned long long)s.stats[PROF_STAT_FRAMES_FP]);
    cr_expect_geq(complete, MIN_COMPLETE, "%s: only %.2f %% of %zu samples complete", name,
                  100 * complete, s.n_samples);
}

Test(e2e_real, python3)
{
    static const char script[] =
        "import json, re, time\n"
        "def fib(n): return n if n < 2 else fib(n - 1) + fib(n - 2)\n"
        "end = time.process_time() + 1.5\n"
        "while time.process_time() < end:\n"
        "    fib(18)\n"
        "    json.loads(json.dumps([{'a': i, 'b': str(i)} for i in range(300)]))\n"
        "    sorted(re.findall(r'[a-f]+', 'deadbeef cafe babe ' * 200))\n";
    e2e_write_file(e2e_path("work.py"), script, sizeof(script) - 1);
    check_program("python3", E2E_ARGV("/usr/bin/python3", e2e_path("work.py")));
}

Test(e2e_real, sqlite3)
{
    static const char sql[] =
        "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL);\n"
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 600000)\n"
        "  INSERT INTO t SELECT i, hex(randomblob(12)), random() FROM n;\n"
        "CREATE INDEX tb ON t(b);\n"
        "SELECT count(*), sum(c) FROM t WHERE b LIKE '%AB%';\n"
        "SELECT count(*) FROM t AS x JOIN t AS y ON x.a = y.a + 1 WHERE x.c > y.c;\n"
        "SELECT b FROM t ORDER BY c LIMIT 3;\n";
    e2e_write_file(e2e_path("work.sql"), sql, sizeof(sql) - 1);
    char read[4200];
    snprintf(read, sizeof(read), ".read %s", e2e_path("work.sql"));
    check_program("sqlite3", E2E_ARGV("/usr/bin/sqlite3", ":memory:", read));
}

Test(e2e_real, xz)
{
    /* Text that compresses, not too fast: lines of numbers and words. */
    size_t cap = 3u << 19, len = 0;
    char *text = malloc(cap);
    cr_assert_not_null(text);
    for (unsigned i = 0; len + 64 < cap; i++)
        len += (size_t)snprintf(text + len, cap - len, "%u %x line of text %u\n", i * 2654435761u,
                                i, i % 977);
    e2e_write_file(e2e_path("data.txt"), text, len);
    free(text);
    check_program("xz", E2E_ARGV("/usr/bin/xz", "-k", "-f", "-T1", "-6", e2e_path("data.txt")));
}

Test(e2e_real, a_program_without_frame_pointers)
{
    check_program("nofp", E2E_ARGV(E2E_WORKLOAD("nofp"), "1.5"));
}

Test(e2e_real, a_program_through_libc_callbacks)
{
    check_program("callbacks", E2E_ARGV(E2E_WORKLOAD("callbacks"), "1.5"));
}

/* The first sample in each module of a process meets a table still to be built: its walk
 * stops there (table-pending), and with it 3-4 samples of every short Python run (1.2 % of
 * the samples of five modules of Debian's Python test suite, 62 % of the truncated
 * ones). The handler
 * keeps such a stack (sampler/defer.h) and the writer thread walks it again once the table
 * is built: none of these short runs has a sample that stopped there. */
Test(e2e_real, the_first_samples_of_a_short_run_are_whole)
{
    if (access("/usr/bin/python3", X_OK) != 0)
        cr_skip_test("/usr/bin/python3 is not installed");
    uint64_t pending = 0;
    size_t samples = 0, truncated = 0;
    for (int i = 0; i < 4; i++) {
        char name[32];
        snprintf(name, sizeof(name), "short%d.prof", i);
        struct e2e_scan s;
        run("python3", "auto", name,
            E2E_ARGV("/usr/bin/python3", "-c",
                     "import json\n"
                     "print(sum(len(json.dumps(list(range(i % 300)))) for i in range(3000)))"),
            &s);
        pending += s.stats[PROF_STAT_STOP_PENDING];
        samples += s.n_samples;
        truncated += s.n_truncated;
    }
    cr_log_info("4 short runs: %zu samples, %zu truncated, %llu table-pending", samples,
                truncated, (unsigned long long)pending);
    cr_assert_gt(samples, 100, "only %zu samples", samples);
    /* (Samples truncated for other reasons, a few a run: a kernel-time sample under a
     * frame the kernel's copy does not reach, are not this test's.) */
    cr_expect_eq(pending, 0, "%llu samples stopped at a pending table",
                 (unsigned long long)pending);
}
