/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end tests of inline frames, `prof report --lines` and of symbolization through
 * separate debug files and the vDSO. tests/workloads/inlined.c burns its time in mix_step,
 * an always_inline function that has no symbol of its own at -O2: by default it must show
 * as a frame "mix_step [inlined]" under "outer_work", with --lines as
 * "mix_step (inlined.c:N) [inlined]" under "outer_work (inlined.c:M)", with --no-inline
 * not at all, and in the pprof output as an inlined line that `go tool pprof -top` shows
 * as "mix_step (inline)".
 * tests/workloads/vdsoloop.c calls clock_gettime in a loop: the C library's frame must be
 * named (from the stripped libc's dynamic symbols or libc6-dbg's debug file) and, with
 * --lines, get its file and line from libc6-dbg; frames in the vDSO are named from prof's
 * own vDSO when the profile recorded the vDSO's build-id, else "[vdso]+0xOFFSET".
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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
    struct e2e_folded plain, folded, lines;
    report(&plain, prof, "--format=folded");
    cr_assert_gt(plain.total, 0);
    const char *inl_path[] = {"main;outer_work;mix_step [inlined]"};
    long inl_plain = count_with(&plain, inl_path, 1);
    cr_expect_geq(inl_plain, 0.8 * (double)plain.total,
                  "only %ld of %ld samples show 'main;outer_work;mix_step [inlined]'", inl_plain,
                  plain.total);
    report(&folded, prof, "--no-inline");
    cr_assert_eq(folded.total, plain.total, "--no-inline changed the total");
    cr_expect_eq(e2e_folded_containing(&folded, "mix_step"), 0,
                 "with --no-inline an inlined function has no frame");
    const char *outer_leaf[] = {"main;outer_work"};
    cr_expect_geq(count_with(&folded, outer_leaf, 1), 0.8 * (double)folded.total,
                  "--no-inline did not fold mix_step into outer_work");
    e2e_folded_free(&folded);
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

/* Whether table (go tool pprof -top) has a row whose name ends with name. */
static int has_row(const char *table, const char *name)
{
    for (const char *p = strstr(table, name); p != NULL; p = strstr(p + 1, name)) {
        if (p[strlen(name)] == '\n' || p[strlen(name)] == '\0')
            return 1;
    }
    return 0;
}

Test(e2e_lines, pprof_carries_an_inlined_function_as_a_line_of_its_location)
{
    cr_assert(access("/usr/bin/go", X_OK) == 0, "go is missing: scripts/setup.sh installs it");
    const char *prof = profile("inlined", E2E_WORKLOAD("inlined"));
    const char *pb = e2e_path("inlined.pb.gz");
    struct e2e_proc conv, go;
    e2e_run(&conv, NULL, E2E_ARGV(E2E_PROF, "report", "--format", "pprof", "-o", pb, prof));
    cr_assert_eq(conv.status, 0, "%s", conv.err);
    struct e2e_opts go_env = {.env = E2E_ARGV(e2e_env("HOME", e2e_dir()),
                                              e2e_env("PPROF_TMPDIR", e2e_dir()))};
    e2e_run(&go, &go_env, E2E_ARGV("/usr/bin/go", "tool", "pprof", "-top", pb));
    cr_assert_eq(go.status, 0, "go tool pprof exited %d:\n%s", go.status, go.err);
    cr_log_info("go tool pprof -top:\n%s", go.out);
    cr_expect(has_row(go.out, " mix_step (inline)"), "no 'mix_step (inline)' row:\n%s", go.out);
    cr_expect(has_row(go.out, " outer_work"), "no 'outer_work' row:\n%s", go.out);
    cr_expect(!has_row(go.out, " mix_step [inlined]"), "the mark stayed in the name:\n%s",
              go.out);
    e2e_proc_free(&conv);
    e2e_proc_free(&go);
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
