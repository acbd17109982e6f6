/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end tests of `prof report` on good profiles: folded output has one line per
 * distinct stack, sorted bytewise, each count positive; several files are merged, so that
 * their counts add up; and the folded and top formats agree on the total.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <string.h>

#include "tests/e2e/support.h"

TestSuite(e2e_report, .init = e2e_setup, .fini = e2e_teardown, .timeout = 60);

static const char *profile(const char *name)
{
    struct e2e_proc p;
    const char *path = e2e_path(name);
    struct e2e_opts o = {.preload = 1, .env = E2E_ARGV(e2e_env("PROF_OUTPUT", path))};
    e2e_run(&p, &o, E2E_ARGV(E2E_WORKLOAD("shares"), "0.4"));
    cr_assert_eq(p.status, 0, "shares exited %d:\n%s", p.status, p.err);
    e2e_proc_free(&p);
    return path;
}

Test(e2e_report, folded_lines_are_distinct_and_sorted)
{
    struct e2e_folded f;
    e2e_report_folded(&f, profile("one.prof"));
    cr_assert(f.n_stacks > 0, "no stacks");
    for (size_t i = 1; i < f.n_stacks; i++)
        cr_expect(strcmp(f.stacks[i - 1].frames, f.stacks[i].frames) < 0,
                  "lines %zu and %zu are not in order or not distinct:\n%s\n%s", i, i + 1,
                  f.stacks[i - 1].frames, f.stacks[i].frames);
    e2e_folded_free(&f);
}

Test(e2e_report, several_files_are_merged)
{
    const char *one = profile("one.prof"), *two = profile("two.prof");
    struct e2e_folded f1, f2, both;
    e2e_report_folded(&f1, one);
    e2e_report_folded(&f2, two);
    struct e2e_proc p;
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", "--format", "folded", one, two));
    cr_assert_eq(p.status, 0, "prof report of two files exited %d:\n%s", p.status, p.err);
    e2e_folded_parse(&both, p.out);
    cr_expect_eq(both.total, f1.total + f2.total, "merged %ld samples, the files hold %ld + %ld",
                 both.total, f1.total, f2.total);
    cr_expect_eq(e2e_folded_containing(&both, "hot_b"),
                 e2e_folded_containing(&f1, "hot_b") + e2e_folded_containing(&f2, "hot_b"),
                 "hot_b's merged count is not the sum");
    e2e_proc_free(&p);
    e2e_folded_free(&f1);
    e2e_folded_free(&f2);
    e2e_folded_free(&both);
}

Test(e2e_report, top_and_folded_agree)
{
    const char *prof = profile("one.prof");
    struct e2e_folded f;
    e2e_report_folded(&f, prof);
    struct e2e_proc p;
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", "--format", "top", prof));
    cr_assert_eq(p.status, 0, "prof report --format top exited %d:\n%s", p.status, p.err);
    /* The flat column adds up to the total: every sample has exactly one leaf. */
    long flat_sum = 0;
    for (const char *line = p.out; *line;) {
        size_t len = strcspn(line, "\n");
        long flat;
        char pct[32];
        if (sscanf(line, "%ld %31s", &flat, pct) == 2 && pct[strlen(pct) - 1] == '%')
            flat_sum += flat;
        line += len + (line[len] == '\n');
    }
    cr_expect_eq(flat_sum, f.total, "the top table's flat column sums to %ld, folded to %ld:\n%s",
                 flat_sum, f.total, p.out);
    e2e_proc_free(&p);
    e2e_folded_free(&f);
}
