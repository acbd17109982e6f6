/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of thread states as the reporter shows and selects them
 * (reporter/stacks/states.c). */
#include <criterion/criterion.h>
#include <string.h>
#include <sys/syscall.h>

#include "common/err.h"
#include "include/libprof/prof_format.h"
#include "reporter/stacks/states.h"

Test(states, an_off_cpu_state_is_a_leaf_frame_with_its_call)
{
    char buf[64];
    cr_assert_eq(rep_state_frame(0, buf, sizeof(buf)), 0);
    cr_assert_eq(rep_state_frame(PROF_STATE_RUNNING, buf, sizeof(buf)), 0);
    rep_state_frame(PROF_STATE_MAKE(PROF_STATE_SLEEPING, SYS_futex), buf, sizeof(buf));
    cr_expect_str_eq(buf, "[sleep: futex]");
    rep_state_frame(PROF_STATE_MAKE(PROF_STATE_DISK, SYS_read), buf, sizeof(buf));
    cr_expect_str_eq(buf, "[disk: read]");
    rep_state_frame(PROF_STATE_MAKE(PROF_STATE_RUNNABLE, -1), buf, sizeof(buf));
    cr_expect_str_eq(buf, "[runnable]");
    rep_state_frame(PROF_STATE_MAKE(PROF_STATE_WAITING, -1), buf, sizeof(buf));
    cr_expect_str_eq(buf, "[wait]");
    rep_state_frame(PROF_STATE_MAKE(PROF_STATE_SLEEPING, 4000), buf, sizeof(buf));
    cr_expect_str_eq(buf, "[sleep: syscall 4000]");
    rep_state_frame(PROF_STATE_MAKE(9, -1), buf, sizeof(buf));
    cr_expect_str_eq(buf, "[off-cpu]");
}

Test(states, selects_by_kind_group_and_call)
{
    struct rep_state_sel sel = {0};
    struct cmn_err err = {0};
    uint32_t futex = PROF_STATE_MAKE(PROF_STATE_SLEEPING, SYS_futex);
    uint32_t rd = PROF_STATE_MAKE(PROF_STATE_SLEEPING, SYS_read);
    uint32_t runnable = PROF_STATE_MAKE(PROF_STATE_RUNNABLE, -1);
    cr_expect(rep_state_sel_keeps(&sel, futex), "an empty selection keeps all");
    cr_assert_eq(rep_state_sel_parse(&sel, "running", &err), CMN_OK);
    cr_expect(rep_state_sel_keeps(&sel, 0), "a CPU profile's samples are on CPU");
    cr_expect(rep_state_sel_keeps(&sel, PROF_STATE_RUNNING));
    cr_expect(!rep_state_sel_keeps(&sel, futex));
    struct rep_state_sel waiting = {0};
    cr_assert_eq(rep_state_sel_parse(&waiting, "waiting", &err), CMN_OK);
    cr_expect(rep_state_sel_keeps(&waiting, futex));
    cr_expect(!rep_state_sel_keeps(&waiting, runnable));
    cr_expect(!rep_state_sel_keeps(&waiting, PROF_STATE_RUNNING));
    struct rep_state_sel off = {0};
    cr_assert_eq(rep_state_sel_parse(&off, "off-cpu", &err), CMN_OK);
    cr_expect(rep_state_sel_keeps(&off, runnable) && rep_state_sel_keeps(&off, futex));
    cr_expect(!rep_state_sel_keeps(&off, 0));
    struct rep_state_sel call = {0};
    cr_assert_eq(rep_state_sel_parse(&call, "futex,runnable", &err), CMN_OK);
    cr_expect(rep_state_sel_keeps(&call, futex) && rep_state_sel_keeps(&call, runnable));
    cr_expect(!rep_state_sel_keeps(&call, rd));
    struct rep_state_sel bad = {0};
    cr_assert_eq(rep_state_sel_parse(&bad, "sleeping,napping", &err), CMN_E_INPUT);
    cr_expect(strstr(err.msg, "'napping'") != NULL, "%s", err.msg);
}
