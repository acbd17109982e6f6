/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end tests of code loaded with dlopen (tests/workloads/dlhot.c burns its CPU in
 * zlib's adler32_z, loaded at run time): the samples must be named after the function
 * whether the library is still mapped when profiling ends or was dlclosed before, since
 * the profile has to carry every mapping that was ever sampled.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/e2e/support.h"

#define MIN_NAMED 0.80 /* of all samples: the rest is main, use_zlib, start-up */

TestSuite(e2e_dlopen, .init = e2e_setup, .fini = e2e_teardown, .timeout = 60);

/* Sum of the counts of stacks whose leaf starts with prefix. */
static long leaf_starting_with(const struct e2e_folded *f, const char *prefix)
{
    long sum = 0;
    for (size_t i = 0; i < f->n_stacks; i++) {
        const char *leaf = strrchr(f->stacks[i].frames, ';');
        leaf = leaf ? leaf + 1 : f->stacks[i].frames;
        if (strncmp(leaf, prefix, strlen(prefix)) == 0)
            sum += f->stacks[i].count;
    }
    return sum;
}

static void check_dlhot(const char *mode)
{
    struct e2e_proc p;
    const char *output = e2e_env("PROF_OUTPUT", e2e_path("dlhot.prof"));
    struct e2e_opts o = {.preload = 1, .env = E2E_ARGV(output)};
    e2e_run(&p, &o, E2E_ARGV(E2E_WORKLOAD("dlhot"), mode, "0.5"));
    cr_assert_eq(p.status, 0, "dlhot %s exited %d:\n%s", mode, p.status, p.err);
    e2e_proc_free(&p);

    struct e2e_folded f;
    e2e_report_folded(&f, e2e_path("dlhot.prof"));
    long named = leaf_starting_with(&f, "adler32");
    cr_log_info("dlhot %s: %ld of %ld samples have a leaf named adler32*", mode, named, f.total);
    for (size_t i = 0; i < f.n_stacks && i < 10; i++)
        cr_log_info("  %s %ld", f.stacks[i].frames, f.stacks[i].count);
    cr_expect(named >= MIN_NAMED * (double)f.total,
              "dlhot %s: only %ld of %ld samples are named after zlib's adler32_z", mode, named,
              f.total);
    e2e_folded_free(&f);
}

Test(e2e_dlopen, library_still_loaded_at_exit)
{
    check_dlhot("open");
}

Test(e2e_dlopen, library_dlclosed_before_exit)
{
    check_dlhot("close");
}

/* A library's constructor runs inside dlopen(), before the call returns to libprof's
 * wrapper, which reads the maps again: its first samples meet code the code map does not
 * know. Their stacks are kept and walked again by the writer once it has read the maps
 * (built with -fomit-frame-pointer, the library cannot be crossed by frame pointer).
 * Six copies, each a module of its own, each its constructor's 60 ms: the stacks in a
 * constructor reach main (5 to 9 of about 720 did not before, the first of each library;
 * a run first fills the unwind-table cache, so that no table of libc's is still being
 * built, and at most two may miss it under a loaded machine). */
Test(e2e_dlopen, samples_in_a_constructor_run_by_dlopen_are_whole)
{
    static const char lib_src[] =
        "#include <time.h>\n"
        "static double cpu(void) { struct timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, "
        "&t); return t.tv_sec + t.tv_nsec / 1e9; }\n"
        "__attribute__((noinline)) void ctor_spin(double s) { volatile unsigned long x = 0; "
        "double end = cpu() + s; while (cpu() < end) for (int i = 0; i < 20000; i++) x += i; }\n"
        "__attribute__((constructor)) static void ctor(void) { ctor_spin(0.06); }\n";
    static const char main_src[] =
        "#include <dlfcn.h>\n#include <stdio.h>\n"
        "int main(int argc, char **argv) { for (int i = 1; i < argc; i++) if (!dlopen(argv[i], "
        "RTLD_NOW)) { fprintf(stderr, \"%s\\n\", dlerror()); return 1; } return 0; }\n";
    e2e_write_file(e2e_path("ctorlib.c"), lib_src, sizeof(lib_src) - 1);
    e2e_write_file(e2e_path("opener.c"), main_src, sizeof(main_src) - 1);
    struct e2e_proc cc;
    e2e_run(&cc, NULL, E2E_ARGV("/usr/bin/gcc", "-O2", "-fomit-frame-pointer", "-shared", "-fPIC",
                                "-o", e2e_path("ctorlib0.so"), e2e_path("ctorlib.c")));
    cr_assert_eq(cc.status, 0, "gcc: %s", cc.err);
    e2e_proc_free(&cc);
    e2e_run(&cc, NULL, E2E_ARGV("/usr/bin/gcc", "-O2", "-o", e2e_path("opener"),
                                e2e_path("opener.c"), "-ldl"));
    cr_assert_eq(cc.status, 0, "gcc: %s", cc.err);
    e2e_proc_free(&cc);
    const char *libs[6];
    size_t len = 0;
    char *bytes = e2e_read_file(e2e_path("ctorlib0.so"), &len);
    for (int i = 0; i < 6; i++) {
        char name[32];
        snprintf(name, sizeof(name), "ctorlib%d.so", i + 1);
        libs[i] = e2e_path(name);
        e2e_write_file(libs[i], bytes, len);
    }
    free(bytes);

    struct e2e_proc p;
    struct e2e_opts o = {.preload = 1,
                         .env = E2E_ARGV(e2e_env("PROF_OUTPUT", e2e_path("warm.prof")))};
    e2e_run(&p, &o, E2E_ARGV(e2e_path("opener"), libs[0]));
    cr_assert_eq(p.status, 0, "opener exited %d: %s", p.status, p.err);
    e2e_proc_free(&p);
    o.env = E2E_ARGV(e2e_env("PROF_OUTPUT", e2e_path("ctor.prof")), "PROF_FREQ=2000");
    e2e_run(&p, &o, E2E_ARGV(e2e_path("opener"), libs[0], libs[1], libs[2], libs[3], libs[4],
                             libs[5]));
    cr_assert_eq(p.status, 0, "opener exited %d: %s", p.status, p.err);
    e2e_proc_free(&p);
    struct e2e_folded f;
    e2e_report_folded(&f, e2e_path("ctor.prof"));
    long in_ctor = e2e_folded_containing(&f, "ctor_spin");
    long whole = e2e_folded_containing_from(&f, "ctor_spin", "main");
    cr_log_info("%ld samples in the constructors, %ld reaching main", in_ctor, whole);
    cr_expect_gt(in_ctor, 300, "6 x 60 ms at 2000 Hz: %ld samples", in_ctor);
    cr_expect_geq(whole, in_ctor - 2, "%ld of %ld stacks in a constructor reach main", whole,
                  in_ctor);
    e2e_folded_free(&f);
}
