/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end test of the interrupted leaf (tests/workloads/prologue.c): hand-written
 * functions that spin inside their prologue (between `push %rbp` and `mov %rsp,%rbp`),
 * inside their epilogue (after `pop %rbp`, before `ret`), at their entry (nothing pushed),
 * and a tiny framed function called in a tight loop so that samples land on the prologue
 * and epilogue instructions. The functions carry no unwind information, so the reporter's
 * .eh_frame recovery cannot help: the caller is in the stack only if the handler found it.
 * For each function, at least 99 % of its samples must show main;caller;function.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>

#include "tests/e2e/support.h"

#define MIN_COMPLETE 0.99

TestSuite(e2e_prologue, .init = e2e_setup, .fini = e2e_teardown, .timeout = 60);

static void expect_caller(const struct e2e_folded *f, const char *fn, const char *path)
{
    long all = e2e_folded_containing(f, fn);
    long complete = e2e_folded_ending(f, path);
    cr_log_info("%ld of %ld samples in %s end with %s", complete, all, fn, path);
    cr_assert(all >= 20, "only %ld samples in %s", all, fn);
    cr_expect(complete >= MIN_COMPLETE * (double)all, "only %ld of %ld samples in %s have %s",
              complete, all, fn, path);
}

Test(e2e_prologue, prologue_and_epilogue_keep_their_caller)
{
    struct e2e_proc p;
    const char *output = e2e_env("PROF_OUTPUT", e2e_path("prologue.prof"));
    const char *freq = e2e_env("PROF_FREQ", "1000");
    struct e2e_opts o = {.preload = 1, .env = E2E_ARGV(output, freq)};
    e2e_run(&p, &o, E2E_ARGV(E2E_WORKLOAD("prologue"), "2"));
    cr_assert_eq(p.status, 0, "prologue exited %d:\n%s", p.status, p.err);
    e2e_proc_free(&p);

    struct e2e_folded f;
    e2e_report_folded(&f, e2e_path("prologue.prof"));
    for (size_t i = 0; i < f.n_stacks && i < 20; i++)
        cr_log_info("  %s %ld", f.stacks[i].frames, f.stacks[i].count);
    expect_caller(&f, "spin_in_prologue", "main;call_prologue;spin_in_prologue");
    expect_caller(&f, "spin_in_epilogue", "main;call_epilogue;spin_in_epilogue");
    expect_caller(&f, "spin_at_entry", "main;call_entry;spin_at_entry");
    expect_caller(&f, "tiny_frame", "main;call_tiny;tiny_frame");
    e2e_folded_free(&f);
}
