/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end accuracy: profile the shares workload (tests/workloads/shares.c), whose three
 * hot functions measure their own CPU time, and compare the profile with that truth. The
 * shares are of CPU time, not wall time, so a busy machine does not change them. Each
 * sample's interval is drawn at random, so a share's count varies as a binomial one: at
 * 1000 Hz, about 2000 samples, its standard error is about one point (two at the default
 * 250 Hz), against a tolerance of three points or three standard errors, whichever is wider.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/e2e/support.h"

#define SHARES_CPU_S "2"
#define TOLERANCE 0.03    /* absolute, in share of all samples, at least */
#define SIGMAS 3.0        /* standard errors of a binomial share */
#define MIN_COMPLETE 0.90 /* of a hot function's samples, the part with its full path */

static const char *const hot[] = {"hot_a", "hot_b", "hot_c"};
static const char *const full_path[] = {
    "main;stage_one;hot_a",
    "main;stage_two;middle;hot_b",
    "main;stage_three;deep1;deep2;deep3;deep4;deep5;hot_c",
};

TestSuite(e2e_shares, .init = e2e_setup, .fini = e2e_teardown, .timeout = 90);

/* Runs shares under the library; returns the profile's path, the truth file's text. */
static const char *profile_shares(char **truth)
{
    struct e2e_proc p;
    const char *output = e2e_env("PROF_OUTPUT", e2e_path("shares.%p.prof"));
    struct e2e_opts o = {.preload = 1, .env = E2E_ARGV(output, "PROF_FREQ=1000")};
    const char *truth_path = e2e_path("truth.txt");
    e2e_run(&p, &o, E2E_ARGV(E2E_WORKLOAD("shares"), SHARES_CPU_S, truth_path));
    cr_assert_eq(p.status, 0, "shares exited %d; stderr:\n%s", p.status, p.err);
    cr_assert_eq(p.out_len + p.err_len, 0, "shares printed:\n%s%s", p.out, p.err);
    e2e_proc_free(&p);

    const char *found[4];
    size_t n = e2e_find_files("shares.", ".prof", found, 4);
    cr_assert_eq(n, 1, "expected one profile shares.<pid>.prof in %s, found %zu", e2e_dir(), n);
    *truth = e2e_read_file(truth_path, NULL);
    cr_assert(*truth != NULL, "shares wrote no truth file");
    cr_log_info("truth:\n%s", *truth);
    return found[0];
}

static void log_folded(const struct e2e_folded *f)
{
    for (size_t i = 0; i < f->n_stacks && i < 40; i++)
        cr_log_info("  %s %ld", f->stacks[i].frames, f->stacks[i].count);
}

Test(e2e_shares, hot_functions_within_3_points)
{
    char *truth;
    const char *prof = profile_shares(&truth);
    struct e2e_folded f;
    e2e_report_folded(&f, prof);

    /* The profile must hold enough samples for shares to mean something: the kernel
     * delivers at most 250 a CPU-second here; ask for 40 % of that at least. */
    double cpu_s = e2e_truth_value(truth, "total_cpu_s");
    cr_assert(f.total >= (long)(0.4 * 250 * cpu_s), "%ld samples for %.2f CPU-seconds", f.total,
              cpu_s);
    for (size_t k = 0; k < 3; k++) {
        double want = e2e_truth_value(truth, hot[k]);
        double got = (double)e2e_folded_containing(&f, hot[k]) / (double)f.total;
        double tol = SIGMAS * sqrt(want * (1 - want) / (double)f.total);
        tol = tol > TOLERANCE ? tol : TOLERANCE;
        cr_log_info("%s: measured %.4f, sampled %.4f (%ld samples, within %.4f)", hot[k], want,
                    got, f.total, tol);
        if (got < want - tol || got > want + tol)
            log_folded(&f);
        cr_expect(got >= want - tol && got <= want + tol,
                  "%s: %.1f %% of the samples, but %.1f %% of the CPU time (within %.1f points)",
                  hot[k], 100 * got, 100 * want, 100 * tol);
    }
    e2e_folded_free(&f);
    free(truth);
}

Test(e2e_shares, full_call_paths_are_reported)
{
    char *truth;
    const char *prof = profile_shares(&truth);
    struct e2e_folded f;
    e2e_report_folded(&f, prof);

    for (size_t k = 0; k < 3; k++) {
        long all = e2e_folded_containing(&f, hot[k]);
        long complete = e2e_folded_ending(&f, full_path[k]);
        cr_log_info("%s: %ld of %ld samples end with %s", hot[k], complete, all, full_path[k]);
        if (complete < MIN_COMPLETE * (double)all || all == 0)
            log_folded(&f);
        cr_expect(all > 0, "no sample has %s", hot[k]);
        cr_expect(complete >= MIN_COMPLETE * (double)all,
                  "only %ld of %ld samples in %s have the full path %s", complete, all, hot[k],
                  full_path[k]);
    }
    e2e_folded_free(&f);
    free(truth);
}

Test(e2e_shares, top_table_ranks_hot_functions)
{
    char *truth;
    const char *prof = profile_shares(&truth);
    struct e2e_proc p;
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", "--format", "top", prof));
    cr_assert_eq(p.status, 0, "prof report --format top exited %d:\n%s", p.status, p.err);
    char *names[8];
    size_t n = e2e_top_names(p.out, names, 8);
    cr_assert(n >= 3, "fewer than 3 rows in the top table:\n%s", p.out);
    cr_expect_str_eq(names[0], "hot_a", "top table:\n%s", p.out);
    cr_expect_str_eq(names[1], "hot_b", "top table:\n%s", p.out);
    cr_expect_str_eq(names[2], "hot_c", "top table:\n%s", p.out);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    e2e_proc_free(&p);

    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", "--format", "top", "--limit", "2", prof));
    cr_assert_eq(p.status, 0, "prof report --limit 2 exited %d:\n%s", p.status, p.err);
    n = e2e_top_names(p.out, names, 8);
    cr_expect_eq(n, 2, "--limit 2 gave %zu rows:\n%s", n, p.out);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    e2e_proc_free(&p);
    free(truth);
}

Test(e2e_shares, depth_limit_keeps_the_leaf_end)
{
    struct e2e_proc p;
    const char *output = e2e_env("PROF_OUTPUT", e2e_path("depth4.prof"));
    struct e2e_opts o = {.preload = 1, .env = E2E_ARGV(output, "PROF_DEPTH=4")};
    e2e_run(&p, &o, E2E_ARGV(E2E_WORKLOAD("shares"), "0.5"));
    cr_assert_eq(p.status, 0, "shares exited %d:\n%s", p.status, p.err);
    e2e_proc_free(&p);

    struct e2e_folded f;
    e2e_report_folded(&f, e2e_path("depth4.prof"));
    /* hot_c is 8 frames deep: its stacks keep the 4 frames nearest the leaf. Only stacks
     * with the hot function as the leaf are compared: a sample inside clock_gettime,
     * called by the hot function, has other frames at the leaf end. */
    long hot_c = e2e_folded_ending(&f, "hot_c");
    cr_expect(hot_c > 0, "no sample in hot_c");
    cr_expect_eq(e2e_folded_ending(&f, "deep3;deep4;deep5;hot_c"), hot_c,
                 "not every hot_c stack ends with its 4 innermost frames");
    cr_expect_eq(e2e_folded_containing(&f, "stage_three"), 0,
                 "frames beyond PROF_DEPTH=4 were reported");
    long leaf_only = e2e_folded_exactly(&f, "hot_a"); /* before the table was there */
    cr_expect_leq(leaf_only, E2E_PENDING_MAX);
    cr_expect_eq(e2e_folded_ending(&f, "main;stage_one;hot_a") + leaf_only,
                 e2e_folded_ending(&f, "hot_a"), "hot_a's 3-frame stacks were cut");
    if (e2e_folded_containing(&f, "stage_three") > 0 ||
        e2e_folded_ending(&f, "deep3;deep4;deep5;hot_c") != hot_c)
        for (size_t i = 0; i < f.n_stacks; i++)
            cr_log_info("  %s %ld", f.stacks[i].frames, f.stacks[i].count);
    e2e_folded_free(&f);
}
