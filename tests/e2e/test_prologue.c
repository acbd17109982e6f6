/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end test of the interrupted leaf (tests/workloads/prologue.c): hand-written
 * functions that spin inside their prologue (between `push %rbp` and `mov %rsp,%rbp`),
 * inside their epilogue (after `pop %rbp`, before `ret`), at their entry (nothing pushed),
 * and a tiny framed function called in a tight loop so that samples land on the prologue
 * and epilogue instructions. Nothing is guessed: the caller is added where the instruction
 * bytes at the pc prove it (tiny_frame's push, mov, pop and ret), or where the function's
 * call frame information says the return address is the word at the stack pointer (the
 * reporter's fix-up from the sample's sp_word: at entry, after pop). Those keep their
 * caller in at least 99 % of their samples. In the loop between push and mov the return
 * address is the word above the stack pointer, which neither proves in this version: there
 * no sample may hold any frame that is not on the true path (a stale word taken for the
 * caller would be one).
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <string.h>

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

/* 1 when the frame of `stack` at *at (up to ';' or the end) is the frame of `path` at some
 * position at or after *in_path; both cursors move past the match. */
static int next_frame_on_path(const char **at, const char **in_path)
{
    size_t len = strcspn(*at, ";");
    for (const char *p = *in_path; *p;) {
        size_t plen = strcspn(p, ";");
        if (plen == len && strncmp(p, *at, len) == 0) {
            *in_path = p + plen + (p[plen] == ';');
            *at += len + ((*at)[len] == ';');
            return 1;
        }
        p += plen + (p[plen] == ';');
    }
    return 0;
}

/* Every stack holding fn consists only of frames of the true path `path`, in its order
 * (some may be missing). */
static void expect_only_true_frames(const struct e2e_folded *f, const char *fn, const char *path)
{
    long all = e2e_folded_containing(f, fn);
    cr_assert(all >= 20, "only %ld samples in %s", all, fn);
    long with_caller = e2e_folded_ending(f, path);
    cr_log_info("%ld of %ld samples in %s end with %s", with_caller, all, fn, path);
    for (size_t i = 0; i < f->n_stacks; i++) {
        const char *at = f->stacks[i].frames, *in_path = path;
        if (!strstr(at, fn))
            continue;
        while (*at)
            if (!next_frame_on_path(&at, &in_path)) {
                cr_expect_fail("%s: the stack %s holds a frame that is not on %s", fn,
                               f->stacks[i].frames, path);
                break;
            }
    }
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
    expect_only_true_frames(&f, "spin_in_prologue", "main;call_prologue;spin_in_prologue");
    expect_caller(&f, "spin_in_epilogue", "main;call_epilogue;spin_in_epilogue");
    expect_caller(&f, "spin_at_entry", "main;call_entry;spin_at_entry");
    expect_caller(&f, "tiny_frame", "main;call_tiny;tiny_frame");
    e2e_folded_free(&f);
}
