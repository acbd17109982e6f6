/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * No wrong frame: on workloads whose code is known, every caller in every stack calls
 * that frame's function. tests/e2e/check_callers.py reads the call instructions of the
 * workload's code (objdump) and checks each pair of adjacent frames of `prof report
 * --no-inline` against them: a caller in the program calls its callee directly, or calls
 * indirectly one whose address is taken; the C library calls back into the program only
 * functions whose address the program took. The workloads: a framed leaf over a stale
 * return address (staleslot), a call tree with known shares (shares), code built without
 * frame pointers (nofp), callbacks through qsort (callbacks), hand-written prologues and
 * epilogues (prologue), a frameless leaf at the end of a 9-deep path (leafy).
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <string.h>

#include "tests/e2e/support.h"

TestSuite(e2e_callers, .init = e2e_setup, .fini = e2e_teardown, .timeout = 60);

static void check(const char *workload, const char *seconds)
{
    char binary[512];
    snprintf(binary, sizeof(binary), "%s%s", E2E_WORKLOAD(""), workload);
    struct e2e_proc p;
    e2e_run_profiled(&p, "w.prof", E2E_ARGV("PROF_FREQ=1000"), 0, E2E_ARGV(binary, seconds));
    cr_assert_eq(p.status, 0, "%s exited %d:\n%s", workload, p.status, p.err);
    e2e_proc_free(&p);
    e2e_run(&p, NULL,
            E2E_ARGV(E2E_PROF, "report", "-f", "folded", "--no-inline", "-o",
                     e2e_path("w.folded"), e2e_path("w.prof")));
    cr_assert_eq(p.status, 0, "prof report: %s", p.err);
    e2e_proc_free(&p);
    e2e_run(&p, NULL,
            E2E_ARGV("/usr/bin/python3", SRC_DIR "/tests/e2e/check_callers.py", binary,
                     e2e_path("w.folded")));
    cr_log_info("%s: %s", workload, p.out);
    cr_expect_eq(p.status, 0, "%s: wrong callers:\n%s%s", workload, p.out, p.err);
    e2e_proc_free(&p);
}

Test(e2e_callers, a_framed_leaf_over_a_stale_return_address)
{
    check("staleslot", "0.8");
}

Test(e2e_callers, a_call_tree_with_known_shares)
{
    check("shares", "0.8");
}

Test(e2e_callers, code_without_frame_pointers)
{
    check("nofp", "0.8");
}

Test(e2e_callers, callbacks_through_qsort)
{
    check("callbacks", "0.8");
}

Test(e2e_callers, prologues_and_epilogues)
{
    check("prologue", "0.8");
}

Test(e2e_callers, a_frameless_leaf_deep_in_a_known_path)
{
    check("leafy", "0.8");
}
