/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end tests of the two steppers (PROF_UNWIND=fp|libunwind) on code the frame
 * pointer cannot follow: tests/workloads/nofp.c (built without frame pointers) and
 * tests/workloads/callbacks.c (qsort calling back into the program). libunwind must
 * reach main for at least 90 % of the samples; the frame-pointer stepper may stop early
 * but must never invent a frame (no unsymbolized address in a stack of nofp). The PROCESS
 * record names the stepper, the hostile workload (garbage frame pointers) does not crash
 * under libunwind either, and sampling inside dl_iterate_phdr() (which holds the loader's
 * lock) does not deadlock it. About 7 s of CPU in all.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/libprof/prof_format.h"
#include "tests/e2e/support.h"

#define MIN_COMPLETE 0.90

TestSuite(e2e_unwind, .init = e2e_setup, .fini = e2e_teardown, .timeout = 60);

/* Profiles argv with the stepper `unwinder` at 1000 Hz into NAME.prof; returns its path. */
static const char *profile(const char *name, const char *unwinder, const char *const argv[])
{
    char file[64];
    snprintf(file, sizeof(file), "%s.%s.prof", name, unwinder);
    const char *path = e2e_path(file);
    struct e2e_proc p;
    const char *env[] = {e2e_env("PROF_OUTPUT", path), e2e_env("PROF_FREQ", "1000"),
                         e2e_env("PROF_UNWIND", unwinder), NULL};
    struct e2e_opts o = {.preload = 1, .env = env};
    e2e_run(&p, &o, argv);
    cr_assert_eq(p.status, 0, "%s exited %d:\n%s", argv[0], p.status, p.err);
    if (strstr(p.err, "libunwind is not available") != NULL) {
        e2e_proc_free(&p);
        cr_skip_test("libunwind is not available to libprof");
    }
    cr_assert_eq(strstr(p.err, "libprof"), NULL, "unexpected message:\n%s", p.err);
    e2e_proc_free(&p);
    return path;
}

/* The unwinder field of the file's PROCESS record. */
static unsigned process_unwinder(const char *path)
{
    size_t len;
    char *data = e2e_read_file(path, &len);
    cr_assert_not_null(data);
    size_t off = sizeof(struct prof_file_header);
    struct prof_rec_process r;
    cr_assert_geq(len, off + sizeof(r));
    memcpy(&r, data + off, sizeof(r));
    free(data);
    cr_assert_eq(r.hdr.type, PROF_REC_PROCESS);
    return r.unwinder;
}

/* Share of the samples with frame `fn` whose stack also has main. */
static double share_with_main(const struct e2e_folded *f, const char *fn, long *all)
{
    long with_main = 0;
    *all = 0;
    for (size_t i = 0; i < f->n_stacks; i++) {
        const char *s = f->stacks[i].frames;
        if (!strstr(s, fn))
            continue;
        *all += f->stacks[i].count;
        with_main += strncmp(s, "main;", 5) == 0 ? f->stacks[i].count : 0;
    }
    return *all > 0 ? (double)with_main / (double)*all : 0.0;
}

Test(e2e_unwind, libunwind_follows_code_without_frame_pointers)
{
    const char *argv[] = {E2E_WORKLOAD("nofp"), "1", NULL};
    struct e2e_folded f;
    long all;

    e2e_report_folded(&f, profile("nofp", "libunwind", argv));
    long whole = e2e_folded_ending(&f, "main;nofp_outer;nofp_middle;nofp_inner");
    all = e2e_folded_containing(&f, "nofp_inner");
    cr_log_info("libunwind: %ld of %ld samples in nofp_inner have the whole stack", whole, all);
    cr_assert_gt(all, 200);
    cr_expect_geq(whole, MIN_COMPLETE * (double)all);
    e2e_folded_free(&f);

    e2e_report_folded(&f, profile("nofp", "fp", argv));
    double fp_share = share_with_main(&f, "nofp_inner", &all);
    cr_log_info("fp: %.1f %% of %ld samples in nofp_inner reach main", 100 * fp_share, all);
    for (size_t i = 0; i < f.n_stacks; i++) {
        const char *s = f.stacks[i].frames; /* a bare address is a frame in no module */
        cr_expect(strncmp(s, "0x", 2) != 0 && strstr(s, ";0x") == NULL,
                  "the fp stepper made up a frame: %s", s);
    }
    e2e_folded_free(&f);
}

Test(e2e_unwind, libunwind_follows_callbacks_from_libc)
{
    const char *argv[] = {E2E_WORKLOAD("callbacks"), "1", NULL};
    struct e2e_folded f;
    long all;
    e2e_report_folded(&f, profile("callbacks", "libunwind", argv));
    double unw = share_with_main(&f, "by_value", &all);
    cr_log_info("libunwind: %.1f %% of %ld samples in by_value reach main", 100 * unw, all);
    cr_assert_gt(all, 100);
    cr_expect_geq(unw, MIN_COMPLETE);
    e2e_folded_free(&f);

    e2e_report_folded(&f, profile("callbacks", "fp", argv));
    double fp = share_with_main(&f, "by_value", &all);
    cr_log_info("fp: %.1f %% of %ld samples in by_value reach main", 100 * fp, all);
    e2e_folded_free(&f);
}

Test(e2e_unwind, the_process_record_names_the_stepper)
{
    const char *argv[] = {E2E_WORKLOAD("leafy"), "0.2", NULL};
    cr_assert_eq(process_unwinder(profile("leafy", "libunwind", argv)), PROF_UNWIND_LIBUNWIND);
    cr_assert_eq(process_unwinder(profile("leafy", "fp", argv)), PROF_UNWIND_FP);
}

Test(e2e_unwind, garbage_frame_pointers_do_not_crash_libunwind)
{
    const char *fp_argv[] = {E2E_WORKLOAD("hostile"), "fp", "1.5", NULL};
    const char *saved_argv[] = {E2E_WORKLOAD("hostile"), "saved", "1.5", NULL};
    struct e2e_folded f;
    e2e_report_folded(&f, profile("hostile-fp", "libunwind", fp_argv));
    cr_assert_gt(f.total, 300);
    e2e_folded_free(&f);
    e2e_report_folded(&f, profile("hostile-saved", "libunwind", saved_argv));
    cr_assert_gt(f.total, 300);
    e2e_folded_free(&f);
}

Test(e2e_unwind, sampling_inside_dl_iterate_phdr_does_not_deadlock, .timeout = 30)
{
    const char *argv[] = {E2E_WORKLOAD("phdrloop"), "1", NULL};
    struct e2e_proc p;
    const char *path = e2e_path("phdrloop.prof");
    const char *env[] = {e2e_env("PROF_OUTPUT", path), e2e_env("PROF_FREQ", "1000"),
                         e2e_env("PROF_UNWIND", "libunwind"), NULL};
    struct e2e_opts o = {.preload = 1, .env = env, .timeout_s = 15};
    e2e_run(&p, &o, argv);
    cr_assert_not(p.timed_out, "phdrloop hung: the handler waited for the loader's lock");
    cr_assert_eq(p.status, 0, "phdrloop exited %d:\n%s", p.status, p.err);
    if (strstr(p.err, "libunwind is not available") != NULL) {
        e2e_proc_free(&p);
        cr_skip_test("libunwind is not available to libprof");
    }
    e2e_proc_free(&p);
    struct e2e_folded f;
    e2e_report_folded(&f, path);
    long inside = e2e_folded_containing(&f, "dl_iterate_phdr");
    long whole = e2e_folded_ending(&f, "main;walk_objects;dl_iterate_phdr;count_object");
    cr_log_info("%ld of %ld samples inside dl_iterate_phdr; %ld in its callback with the "
                "whole stack", inside, f.total, whole);
    cr_assert_gt(inside, f.total / 2, "too few samples landed inside dl_iterate_phdr");
    cr_assert_gt(whole, 0);
    e2e_folded_free(&f);
}
