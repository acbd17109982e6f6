/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Tests of the grouping of a snapshot's threads by stack (reporter/stacks/snap_groups.c) and of
 * its text output (reporter/output/stacks.c). Snapshot profiles are built in memory with the
 * record encoders and read back; frames are named offline, so an address in the anonymous
 * mapping is "[anon]" wherever it is (two threads at different addresses there have the
 * same stack after symbolization) and any other address is named by itself.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/record.h"
#include "include/libprof/prof_format.h"
#include "reporter/input/profile.h"
#include "reporter/input/read.h"
#include "reporter/output/stacks.h"
#include "reporter/stacks/snap_groups.h"
#include "reporter/symbols/names.h"
#include "reporter/symbols/symbols.h"

#define ANON_START 0x10000u /* an anonymous executable mapping: every address is "[anon]" */
#define ANON_END 0x20000u

struct snap {
    unsigned char data[1 << 16];
    size_t n;
    struct rep_profile prof;
    struct rep_names names;
    struct rep_sym sym;
    struct rep_snap_groups groups;
};

static void start(struct snap *s)
{
    memset(s, 0, sizeof(*s));
    s->n += cmn_record_file_header(s->data, sizeof(s->data));
    struct prof_rec_process p = {.pid = 4242, .timer_source = PROF_TIMER_NONE};
    s->n += cmn_record_process(s->data + s->n, sizeof(s->data) - s->n, &p, "/usr/bin/server");
    struct prof_rec_map m = {
        .start = ANON_START, .end = ANON_END, .prot = PROF_MAP_READ | PROF_MAP_EXEC};
    s->n += cmn_record_map(s->data + s->n, sizeof(s->data) - s->n, &m, "");
}

static void thread(struct snap *s, uint32_t tid, const char *name)
{
    s->n += cmn_record_thread(s->data + s->n, sizeof(s->data) - s->n, 0, tid, name);
}

static void listed(struct snap *s, uint32_t tid, uint8_t status, char state)
{
    s->n += cmn_record_snapshot(s->data + s->n, sizeof(s->data) - s->n, 0, tid, status, state, 0);
}

/* A sample of tid with frames given leaf first, ending with 0. */
static void stack(struct snap *s, uint32_t tid, uint8_t stop_reason, ...)
{
    uint64_t frames[16];
    uint16_t n = 0;
    va_list ap;
    va_start(ap, stop_reason);
    for (uint64_t f; (f = va_arg(ap, uint64_t)) != 0;)
        frames[n++] = f;
    va_end(ap);
    struct prof_rec_sample r = {.tid = tid, .weight = 1, .n_frames = n, .stop_reason = stop_reason};
    s->n += cmn_record_sample(s->data + s->n, sizeof(s->data) - s->n, &r, frames);
}

/* Ends the file, reads it and groups it. */
static void group(struct snap *s)
{
    s->n += cmn_record_end(s->data + s->n, sizeof(s->data) - s->n);
    struct cmn_err err = {0};
    cr_assert_eq(rep_read_buffer(s->data, s->n, "snap", &s->prof, &err), CMN_OK, "%s", err.msg);
    rep_names_init(&s->names);
    rep_sym_init(&s->sym, &s->names);
    s->sym.is_offline = true;
    cr_assert_eq(rep_sym_use_profile(&s->sym, &s->prof), CMN_OK);
    cr_assert_eq(rep_snap_groups_build(&s->groups, &s->sym, &s->prof), CMN_OK);
}

static void finish(struct snap *s)
{
    rep_snap_groups_fini(&s->groups);
    rep_sym_fini(&s->sym);
    rep_names_fini(&s->names);
    rep_profile_fini(&s->prof);
}

/* The tid of thread i of group gi. */
static uint32_t tid_of(const struct snap *s, size_t gi, size_t i)
{
    cr_assert_lt(gi, s->groups.n_groups);
    const struct rep_snap_group *g = &s->groups.groups[gi];
    cr_assert_lt(i, g->n_members);
    return s->groups.members[g->first + i].tid;
}

/* The name of frame f of group gi's first thread. */
static const char *frame_of(const struct snap *s, size_t gi, size_t f)
{
    const struct rep_snap_member *m = &s->groups.members[s->groups.groups[gi].first];
    cr_assert_lt(f, m->n_frames);
    return rep_names_get(&s->names, rep_snap_member_frames(&s->groups, m)[f].id);
}

static char *text_of(struct snap *s, const char *how)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    cr_assert_not_null(out);
    cr_assert_eq(rep_out_stacks(out, &s->prof, &s->groups, &s->names, how), CMN_OK);
    fclose(out);
    return text;
}

Test(snap_groups, groups_equal_stacks_largest_first_then_by_lowest_tid)
{
    struct snap s;
    start(&s);
    for (uint32_t tid = 10; tid <= 15; tid++)
        listed(&s, tid, PROF_SNAP_OK, 'S');
    /* Listed out of order on purpose: 14 and 11 share a stack, so do 13, 10 and 12. */
    stack(&s, 14, PROF_STOP_END, 0x500ull, 0x600ull, 0ull);
    stack(&s, 13, PROF_STOP_END, 0x700ull, 0x800ull, 0ull);
    stack(&s, 11, PROF_STOP_END, 0x500ull, 0x600ull, 0ull);
    stack(&s, 15, PROF_STOP_END, 0x900ull, 0ull);
    stack(&s, 10, PROF_STOP_END, 0x700ull, 0x800ull, 0ull);
    stack(&s, 12, PROF_STOP_END, 0x700ull, 0x800ull, 0ull);
    group(&s);
    cr_assert_eq(s.groups.n_members, 6);
    cr_assert_eq(s.groups.n_stacked, 6);
    cr_assert_eq(s.groups.n_groups, 3);
    cr_assert_eq(s.groups.groups[0].n_members, 3);
    cr_expect_eq(tid_of(&s, 0, 0), 10);
    cr_expect_eq(tid_of(&s, 0, 1), 12);
    cr_expect_eq(tid_of(&s, 0, 2), 13);
    cr_expect_str_eq(frame_of(&s, 0, 0), "0x700");
    cr_assert_eq(s.groups.groups[1].n_members, 2);
    cr_expect_eq(tid_of(&s, 1, 0), 11);
    cr_expect_eq(tid_of(&s, 1, 1), 14);
    cr_assert_eq(s.groups.groups[2].n_members, 1);
    cr_expect_eq(tid_of(&s, 2, 0), 15);
    finish(&s);
}

Test(snap_groups, equal_groups_are_ordered_by_their_lowest_tid)
{
    struct snap s;
    start(&s);
    stack(&s, 30, PROF_STOP_END, 0x100ull, 0ull);
    stack(&s, 20, PROF_STOP_END, 0x200ull, 0ull);
    stack(&s, 25, PROF_STOP_END, 0x300ull, 0ull);
    group(&s);
    cr_assert_eq(s.groups.n_groups, 3);
    cr_expect_eq(tid_of(&s, 0, 0), 20);
    cr_expect_eq(tid_of(&s, 1, 0), 25);
    cr_expect_eq(tid_of(&s, 2, 0), 30);
    finish(&s);
}

Test(snap_groups, groups_by_names_not_addresses)
{
    struct snap s;
    start(&s);
    /* Different addresses, all in the anonymous mapping: the same frames once named. */
    stack(&s, 1, PROF_STOP_END, ANON_START + 0x10ull, 0x42ull, 0ull);
    stack(&s, 2, PROF_STOP_END, ANON_START + 0x80ull, 0x42ull, 0ull);
    group(&s);
    cr_assert_eq(s.groups.n_groups, 1);
    cr_assert_eq(s.groups.groups[0].n_members, 2);
    cr_expect_str_eq(frame_of(&s, 0, 0), "[anon]");
    /* The group shows its first thread's addresses. */
    const struct rep_snap_member *m = &s.groups.members[0];
    cr_expect_eq(rep_snap_member_frames(&s.groups, m)[0].addr, ANON_START + 0x10ull);
    finish(&s);
}

Test(snap_groups, a_truncated_walk_is_a_stack_of_its_own)
{
    struct snap s;
    start(&s);
    stack(&s, 1, PROF_STOP_END, 0x500ull, 0x600ull, 0ull);
    stack(&s, 2, PROF_STOP_BOUNDS, 0x500ull, 0x600ull, 0ull);
    stack(&s, 3, PROF_STOP_END, 0x500ull, 0ull);
    group(&s);
    cr_expect_eq(s.groups.n_groups, 3);
    finish(&s);
}

Test(snap_groups, lists_threads_without_a_stack_after_the_others_by_tid)
{
    struct snap s;
    start(&s);
    listed(&s, 9, PROF_SNAP_GONE, 'Z');
    listed(&s, 5, PROF_SNAP_OK, 'R');
    listed(&s, 7, PROF_SNAP_NO_ANSWER, 'S');
    listed(&s, 6, PROF_SNAP_OK, 'S'); /* answered, but its sample is missing */
    listed(&s, 8, PROF_SNAP_FAILED, 'S');
    stack(&s, 5, PROF_STOP_END, 0x500ull, 0ull);
    group(&s);
    cr_assert_eq(s.groups.n_members, 5);
    cr_assert_eq(s.groups.n_stacked, 1);
    const struct rep_snap_member *m = s.groups.members;
    cr_expect_eq(m[0].tid, 5);
    cr_expect_eq(m[1].tid, 6);
    cr_expect_eq(m[1].status, PROF_SNAP_FAILED);
    cr_expect_eq(m[2].tid, 7);
    cr_expect_eq(m[2].status, PROF_SNAP_NO_ANSWER);
    cr_expect_eq(m[3].tid, 8);
    cr_expect_eq(m[4].tid, 9);
    cr_expect_eq(m[4].status, PROF_SNAP_GONE);
    cr_expect_eq(m[4].run_state, 'Z');
    finish(&s);
}

Test(snap_groups, a_sample_of_an_unlisted_thread_counts_once)
{
    struct snap s;
    start(&s);
    listed(&s, 1, PROF_SNAP_OK, 'S');
    stack(&s, 1, PROF_STOP_END, 0x500ull, 0ull);
    stack(&s, 2, PROF_STOP_END, 0x500ull, 0ull);
    stack(&s, 2, PROF_STOP_END, 0x600ull, 0ull);
    group(&s);
    cr_assert_eq(s.groups.n_members, 2);
    cr_expect_eq(s.groups.members[1].run_state, 0);
    finish(&s);
}

Test(out_stacks, prints_groups_frames_truncation_and_threads_without_a_stack)
{
    struct snap s;
    start(&s);
    thread(&s, 11, "worker");
    thread(&s, 12, "worker");
    thread(&s, 13, "loader");
    thread(&s, 14, "blocked");
    listed(&s, 11, PROF_SNAP_OK, 'S');
    listed(&s, 12, PROF_SNAP_OK, 'R');
    listed(&s, 13, PROF_SNAP_OK, 'R');
    listed(&s, 14, PROF_SNAP_NO_ANSWER, 'S');
    listed(&s, 15, PROF_SNAP_GONE, 0);
    stack(&s, 12, PROF_STOP_END, 0x500ull, 0x600ull, 0ull);
    stack(&s, 11, PROF_STOP_END, 0x500ull, 0x600ull, 0ull);
    stack(&s, 13, PROF_STOP_BOUNDS, 0x700ull, 0ull);
    group(&s);
    char *text = text_of(&s, "ptrace");
    cr_expect_str_eq(text,
                     "process 4242 (server): 5 threads, 2 distinct stacks (ptrace)\n"
                     "\n"
                     "2 threads: 11 worker, 12 worker  [S sleeping, R running]\n"
                     "  #0  0x0000000000000500 0x500\n"
                     "  #1  0x0000000000000600 0x600\n"
                     "\n"
                     "1 thread: 13 loader  [R running]\n"
                     "  #0  0x0000000000000700 0x700\n"
                     "  ... truncated: a frame pointer left the stack or a return address is in "
                     "no code (code built without frame pointers? try PROF_UNWIND=auto, "
                     "or prof stacks --unwind auto)\n"
                     "\n"
                     "threads without a stack (2):\n"
                     "  14 blocked  [S sleeping]  did not answer in time (the signal blocked, or "
                     "the thread could not stop)\n"
                     "  15  [?]  exited before its stack was read\n");
    free(text);
    finish(&s);
}

Test(out_stacks, an_empty_snapshot_prints_its_first_line)
{
    struct snap s;
    start(&s);
    group(&s);
    char *text = text_of(&s, "from x.snap");
    cr_expect_str_eq(text, "process 4242 (server): 0 threads, 0 distinct stacks (from x.snap)\n");
    free(text);
    finish(&s);
}

Test(out_stacks, names_the_kernel_states)
{
    cr_expect_str_eq(rep_out_stacks_state_word('D'), "disk sleep");
    cr_expect_str_eq(rep_out_stacks_state_word('t'), "tracing stop");
    cr_expect_null(rep_out_stacks_state_word('?'));
}

Test(out_stacks, a_large_group_names_its_first_threads_only)
{
    struct snap s;
    start(&s);
    for (uint32_t tid = 100; tid < 120; tid++) {
        thread(&s, tid, "pool");
        listed(&s, tid, PROF_SNAP_OK, 'S');
        stack(&s, tid, PROF_STOP_END, 0x500ull, 0ull);
    }
    group(&s);
    char *text = text_of(&s, "ptrace");
    cr_expect_str_eq(text,
                     "process 4242 (server): 20 threads, 1 distinct stack (ptrace)\n"
                     "\n"
                     "20 threads: 100 pool, 101 pool, 102 pool, 103 pool, 104 pool, 105 pool, "
                     "106 pool, 107 pool, 108 pool, 109 pool, 110 pool, 111 pool, ... (8 more)"
                     "  [S sleeping]\n"
                     "  #0  0x0000000000000500 0x500\n");
    free(text);
    finish(&s);
}
