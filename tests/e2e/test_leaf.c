/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end test of a hot function without a frame of its own (tests/workloads/leafy.c):
 * gcc 12 gives a leaf function that needs no stack no frame pointer setup, whatever the
 * flags, so the caller of such a leaf is found only through the return address at the
 * interrupted stack pointer (the sample's sp_word). The profile must still show the whole
 * 9-deep path main;level_a;...;level_f;leaf_caller;leaf_spin.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>

#include "tests/e2e/support.h"

#define PATH "main;level_a;level_b;level_c;level_d;level_e;level_f;leaf_caller;leaf_spin"
#define MIN_COMPLETE 0.90

TestSuite(e2e_leaf, .init = e2e_setup, .fini = e2e_teardown, .timeout = 60);

Test(e2e_leaf, frameless_leaf_keeps_its_caller)
{
    struct e2e_proc p;
    const char *output = e2e_env("PROF_OUTPUT", e2e_path("leafy.prof"));
    struct e2e_opts o = {.preload = 1, .env = E2E_ARGV(output)};
    e2e_run(&p, &o, E2E_ARGV(E2E_WORKLOAD("leafy")));
    cr_assert_eq(p.status, 0, "leafy exited %d:\n%s", p.status, p.err);
    e2e_proc_free(&p);

    struct e2e_folded f;
    e2e_report_folded(&f, e2e_path("leafy.prof"));
    long all = e2e_folded_containing(&f, "leaf_spin");
    long complete = e2e_folded_ending(&f, PATH);
    cr_log_info("%ld of %ld samples in leaf_spin end with " PATH, complete, all);
    for (size_t i = 0; i < f.n_stacks && i < 20; i++)
        cr_log_info("  %s %ld", f.stacks[i].frames, f.stacks[i].count);
    cr_assert(all > 0, "no sample in leaf_spin");
    cr_expect(complete >= MIN_COMPLETE * (double)all,
              "only %ld of %ld samples in leaf_spin have the full path " PATH, complete, all);
    e2e_folded_free(&f);
}
