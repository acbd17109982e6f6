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
