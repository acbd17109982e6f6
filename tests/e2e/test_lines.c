/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end tests of `prof report --lines` and of symbolization through separate debug
 * files and the vDSO. tests/workloads/inlined.c burns its time in mix_step, an
 * always_inline function that has no symbol of its own at -O2: with --lines it must show
 * as a frame "mix_step (inlined.c:N) [inlined]" under "outer_work (inlined.c:M)".
 * tests/workloads/vdsoloop.c calls clock_gettime in a loop: the C library's frame must be
 * named (from the stripped libc's dynamic symbols or libc6-dbg's debug file) and, with
 * --lines, get its file and line from libc6-dbg; frames in the vDSO are named from prof's
 * own vDSO when the profile recorded the vDSO's build-id, else "[vdso]+0xOFFSET".
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <string.h>

#include "tests/e2e/support.h"

TestSuite(e2e_lines, .init = e2e_setup, .fini = e2e_teardown, .timeout = 60);

/* Profiles workload name (0.4 CPU seconds) into NAME.prof; returns its path. */
static const char *profile(const char *name, const char *workload)
{
    char file[64];
    snprintf(file, sizeof(file), "%s.prof", name);
    const char *path = e2e_path(file);
    struct e2e_proc p;
    struct e2e_opts o = {.preload = 1, .env = E2E_ARGV(e2e_env("PROF_OUTPUT", path))};
    e2e_run(&p, &o, E2E_ARGV(workload, "0.4"));
    cr_assert_eq(p.status, 0, "%s exited %d:\n%s", name, p.status, p.err);
    e2e_proc_free(&p);
    return path;
}

static void report(struct e2e_folded *f, const char *prof, const char *opt)
{
    struct e2e_proc p;
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", opt, prof));
    cr_assert_eq(p.status, 0, "prof report %s exited %d:\n%s", opt, p.status, p.err);
    e2e_folded_parse(f, p.out);
    for (size_t i = 0; i < f->n_stacks && i < 30; i++)
        cr_log_info("  %s %ld", f->stacks[i].frames, f->stacks[i].count);
    e2e_proc_free(&p);
}

/* Sum of the counts of stacks whose text contains every one of the n substrings. */
static long count_with(const struct e2e_folded *f, const char *const *subs, size_t n)
{
    long sum = 0;
    for (size_t i = 0; i < f->n_stacks; i++) {
        size_t k = 0;
        while (k < n && strstr(f->stacks[i].frames, subs[k]) != NULL)
            k++;
        sum += k == n ? f->stacks[i].count : 0;
    }
    return sum;
}

Test(e2e_lines, inlined_function_is_a_frame_of_its_own)
{
    const char *prof = profile("inlined", E2E_WORKLOAD("inlined"));
    struct e2e_folded plain, lines;
    report(&plain, prof, "--format=folded");
    cr_assert_gt(plain.total, 0);
    cr_expect_eq(e2e_folded_containing(&plain, "mix_step"), 0,
                 "without --lines an inlined function has no frame");
    report(&lines, prof, "--lines");
    cr_assert_eq(lines.total, plain.total, "--lines changed the total");
    const char *path[] = {"outer_work (inlined.c:", ");mix_step (inlined.c:", ") [inlined]"};
    long inl = count_with(&lines, path, 3);
    long outer = count_with(&lines, path, 1);
    cr_log_info("%ld of %ld samples under outer_work are in the inlined mix_step", inl, outer);
    cr_assert_gt(outer, 0, "no frame 'outer_work (inlined.c:N)'");
    cr_expect_geq(inl, 0.8 * (double)outer, "only %ld of %ld samples in outer_work show mix_step",
                  inl, outer);
    const char *root[] = {"main (inlined.c:"};
    /* A sample or two may fall in start-up or exit code, outside main. */
    long under_main = count_with(&lines, root, 1);
    cr_expect_geq(under_main, 0.9 * (double)lines.total, "only %ld of %ld stacks start at "
                  "'main (inlined.c:N)'", under_main, lines.total);
    e2e_folded_free(&plain);
    e2e_folded_free(&lines);
}

Test(e2e_lines, libc_frame_has_a_function_file_and_line)
{
    const char *prof = profile("vdso", E2E_WORKLOAD("vdsoloop"));
    struct e2e_folded plain, lines;
    report(&plain, prof, "--format=folded");
    long in_libc = e2e_folded_containing(&plain, "clock_gettime");
    cr_assert_gt(in_libc, 0, "no frame named clock_gettime (libc)");
    report(&lines, prof, "--lines");
    const char *libc_line[] = {"clock_gettime (clock_gettime.c:"};
    long with_line = count_with(&lines, libc_line, 1);
    cr_expect_gt(with_line, 0, "libc's clock_gettime has no file and line (libc6-dbg missing?)");

    /* The vDSO: named from prof's own one, or left as [vdso]+0x... */
    struct e2e_scan s;
    e2e_scan_file(&s, prof);
    const char *vdso_raw[] = {"[vdso]+0x"};
    long raw = count_with(&plain, vdso_raw, 1);
    /* Its function is __vdso_clock_gettime, alias clock_gettime: below libc's own. */
    const char *vdso_named[] = {"__vdso_clock_gettime"};
    const char *vdso_alias[] = {"clock_gettime;clock_gettime"};
    long named = count_with(&plain, vdso_named, 1) + count_with(&plain, vdso_alias, 1);
    cr_log_info("vdso frames: %ld named, %ld as [vdso]+0x", named, raw);
    cr_expect_gt(raw + named, 0, "no sample in the vDSO");
    e2e_folded_free(&plain);
    e2e_folded_free(&lines);
}
