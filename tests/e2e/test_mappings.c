/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end test of a position-dependent executable: tests/workloads/inlined.c built here
 * with -no-pie (the workloads are PIE, Debian's default), so that its code is mapped at
 * its link-time addresses. Its frames must be named exactly as a PIE build's are, with
 * --lines too.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/e2e/support.h"

TestSuite(e2e_mappings, .init = e2e_setup, .fini = e2e_teardown, .timeout = 60);

/* The repository's root: the first parent of the build directory holding the workload
 * sources. */
static const char *source_of(const char *file)
{
    static char path[PATH_MAX + 64];
    char dir[PATH_MAX];
    cr_assert_not_null(realpath(BUILD_DIR, dir));
    for (int up = 0; up < 4; up++) {
        snprintf(path, sizeof(path), "%s/tests/workloads/%s", dir, file);
        if (access(path, R_OK) == 0)
            return path;
        char *slash = strrchr(dir, '/');
        if (slash == NULL || slash == dir)
            break;
        *slash = '\0';
    }
    cr_assert_fail("tests/workloads/%s not found above " BUILD_DIR, file);
    return NULL;
}

Test(e2e_mappings, non_pie_executable_is_symbolized)
{
    const char *exe = e2e_path("inlined-nopie");
    struct e2e_proc cc;
    e2e_run(&cc, NULL,
            E2E_ARGV("/usr/bin/gcc", "-O2", "-g", "-fno-omit-frame-pointer", "-no-pie", "-o",
                     exe, source_of("inlined.c")));
    cr_assert_eq(cc.status, 0, "gcc -no-pie failed:\n%s", cc.err);
    e2e_proc_free(&cc);
    struct e2e_proc elf;
    e2e_run(&elf, NULL, E2E_ARGV("/usr/bin/readelf", "-h", exe));
    cr_assert(strstr(elf.out, "EXEC (Executable file)") != NULL, "not position-dependent:\n%s",
              elf.out);
    e2e_proc_free(&elf);

    const char *prof = e2e_path("nopie.prof");
    struct e2e_proc p;
    struct e2e_opts o = {.preload = 1, .env = E2E_ARGV(e2e_env("PROF_OUTPUT", prof))};
    e2e_run(&p, &o, E2E_ARGV(exe, "0.3"));
    cr_assert_eq(p.status, 0, "%s", p.err);
    e2e_proc_free(&p);

    struct e2e_folded f;
    e2e_report_folded(&f, prof);
    for (size_t i = 0; i < f.n_stacks && i < 20; i++)
        cr_log_info("  %s %ld", f.stacks[i].frames, f.stacks[i].count);
    /* mix_step is inlined into outer_work: a frame of its own by default. */
    long named = e2e_folded_ending(&f, "main;outer_work;mix_step [inlined]");
    cr_expect_geq(named, 0.8 * (double)f.total,
                  "only %ld of %ld samples in main;outer_work;mix_step [inlined]", named, f.total);
    e2e_folded_free(&f);

    struct e2e_proc lines;
    e2e_run(&lines, NULL, E2E_ARGV(E2E_PROF, "report", "--lines", prof));
    cr_assert_eq(lines.status, 0, "%s", lines.err);
    cr_expect(strstr(lines.out, "mix_step (inlined.c:") != NULL, "%s", lines.out);
    e2e_proc_free(&lines);
}

/* A file's mappings and thread names are for its samples: a short process that took none
 * (most of those a build or a script starts) writes none, and reads /proc/self/maps only
 * for its code map; a file with samples names them with its first samples and again at
 * its end, where the libraries loaded since are. */
Test(e2e_mappings, the_mappings_come_with_samples_only)
{
    int without = 0;
    for (int run = 0; run < 5 && !without; run++) {
        const char *prof = e2e_path("true.prof");
        struct e2e_proc p;
        struct e2e_opts o = {.preload = 1, .env = E2E_ARGV(e2e_env("PROF_OUTPUT", prof))};
        e2e_run(&p, &o, E2E_ARGV("/bin/true"));
        cr_assert_eq(p.status, 0, "%s", p.err);
        cr_assert_str_empty(p.err);
        e2e_proc_free(&p);
        struct e2e_scan s;
        e2e_scan_file(&s, prof);
        cr_assert(s.header_ok && s.has_process && s.has_stats && s.has_end);
        if (s.stat_samples == 0) {
            without = 1;
            cr_expect_eq(s.n_maps, 0, "%zu mappings in a file without samples", s.n_maps);
            cr_expect_eq(s.n_names, 0, "%zu thread names in a file without samples", s.n_names);
            struct e2e_proc r;
            e2e_run(&r, NULL, E2E_ARGV(E2E_PROF, "report", prof));
            cr_expect_eq(r.status, 0, "a file without samples reads: %s", r.err);
            e2e_proc_free(&r);
        } else {
            cr_expect_gt(s.n_maps, 2, "the program, libc, the loader at least");
        }
    }
    cr_expect(without, "five runs of /bin/true each took a sample");

    const char *prof = e2e_path("shares.prof");
    struct e2e_proc p;
    struct e2e_opts o = {.preload = 1, .env = E2E_ARGV(e2e_env("PROF_OUTPUT", prof))};
    e2e_run(&p, &o, E2E_ARGV(E2E_WORKLOAD("shares"), "0.2"));
    cr_assert_eq(p.status, 0, "%s", p.err);
    e2e_proc_free(&p);
    struct e2e_scan s;
    e2e_scan_file(&s, prof);
    cr_assert(s.has_end && s.stat_samples > 0);
    cr_expect_gt(s.n_maps, 2, "the program, libc, the loader at least");
    cr_expect_geq(s.n_maps_again * 2, s.n_maps - 1, "%zu of %zu mappings at the end",
                  s.n_maps_again, s.n_maps);
    cr_expect_gt(s.n_names, 0, "no thread names with samples");
}
