/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of stack interning (common/intern.h, libprof/intern.c) and of what the
 * writer makes of it: one PROF_REC_STACK per distinct stack, compact batches, never two
 * stacks merged. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "common/record.h"
#include "libprof/intern.h"
#include "libprof/codemap.h"
#include "libprof/unwind.h"
#include "sampler/codemap.h"

Test(intern, same_stack_gets_the_same_id)
{
    struct cmn_intern t;
    cmn_intern_init(&t, 1000);
    uint64_t a[] = { 1, 2, 3 };
    uint32_t id1, id2;
    int new1, new2;
    cr_assert_eq(cmn_intern_stack(&t, a, 3, 0, 0, 0, &id1, &new1), 0);
    cr_assert_eq(cmn_intern_stack(&t, a, 3, 0, 0, 0, &id2, &new2), 0);
    cr_assert_eq(id1, 0);
    cr_assert_eq(id2, 0);
    cr_assert(new1 && !new2);
    cmn_intern_fini(&t);
}

/* A stack's thread labels are part of it: the same frames under another label set are
 * another stack, which names its set. */
Test(intern, the_same_frames_under_other_labels_are_another_stack)
{
    struct cmn_intern t;
    cmn_intern_init(&t, 1000);
    uint64_t a[] = {1, 2, 3};
    uint32_t id[4] = {0, 0, 0, 0};
    int is_new;
    cr_assert_eq(cmn_intern_stack_ctx(&t, a, 3, 0, 0, 0, 0, 0, &id[0], &is_new), 0);
    cr_assert_eq(cmn_intern_stack_ctx(&t, a, 3, 0, 0, 0, 0, 7, &id[1], &is_new), 0);
    cr_assert(is_new);
    cr_assert_eq(cmn_intern_stack_ctx(&t, a, 3, 0, 0, 0, 1, 7, &id[2], &is_new), 0);
    cr_assert_eq(cmn_intern_stack_ctx(&t, a, 3, 0, 0, 0, 0, 7, &id[3], &is_new), 0);
    cr_assert(!is_new);
    cr_expect(id[0] != id[1] && id[1] != id[2] && id[3] == id[1]);
    cr_expect_eq(t.stacks[id[1]].label_set, 7);
    cmn_intern_fini(&t);
}

Test(intern, stacks_differing_anywhere_get_different_ids)
{
    struct cmn_intern t;
    cmn_intern_init(&t, 1000);
    uint64_t a[] = { 1, 2, 3 }, b[] = { 1, 2, 4 }, c[] = { 1, 2 };
    uint32_t ids[6];
    int is_new;
    cr_assert_eq(cmn_intern_stack(&t, a, 3, 0, 0, 0, &ids[0], &is_new), 0);
    cr_assert_eq(cmn_intern_stack(&t, b, 3, 0, 0, 0, &ids[1], &is_new), 0);
    cr_assert_eq(cmn_intern_stack(&t, c, 2, 0, 0, 0, &ids[2], &is_new), 0);
    cr_assert_eq(cmn_intern_stack(&t, a, 3, 2, 1, 0, &ids[3], &is_new), 0);
    cr_assert_eq(cmn_intern_stack(&t, a, 3, 0, 0, 0x1234, &ids[4], &is_new), 0);
    cr_assert_eq(cmn_intern_stack(&t, a, 3, 0, 2, 0, &ids[5], &is_new), 0);
    for (int i = 0; i < 6; i++)
        for (int j = i + 1; j < 6; j++)
            cr_assert_neq(ids[i], ids[j], "stacks %d and %d merged", i, j);
    cmn_intern_fini(&t);
}

Test(intern, the_thread_state_is_part_of_a_stack)
{
    struct cmn_intern t;
    cmn_intern_init(&t, 1000);
    uint64_t a[] = { 1, 2, 3 };
    uint32_t ids[4] = {0};
    int is_new;
    uint32_t futex = PROF_STATE_MAKE(PROF_STATE_SLEEPING, 202);
    uint32_t read = PROF_STATE_MAKE(PROF_STATE_SLEEPING, 0);
    cr_assert_eq(cmn_intern_stack(&t, a, 3, 0, 0, 0, &ids[0], &is_new), 0);
    cr_assert_eq(cmn_intern_stack_state(&t, a, 3, 0, 0, 0, futex, &ids[1], &is_new), 0);
    cr_assert_eq(cmn_intern_stack_state(&t, a, 3, 0, 0, 0, read, &ids[2], &is_new), 0);
    cr_assert_eq(cmn_intern_stack_state(&t, a, 3, 0, 0, 0, 0, &ids[3], &is_new), 0);
    cr_assert(!is_new);
    cr_assert_eq(ids[3], ids[0]);
    cr_assert(ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2]);
    cmn_intern_fini(&t);
}

Test(intern, many_stacks_with_colliding_buckets_stay_distinct)
{
    struct cmn_intern t;
    cmn_intern_init(&t, 1 << 20);
    for (uint64_t i = 0; i < 50000; i++) {
        uint64_t f[2] = { i, i * 7 };
        uint32_t id;
        int is_new;
        cr_assert_eq(cmn_intern_stack(&t, f, 2, 0, 0, 0, &id, &is_new), 0);
        cr_assert_eq(id, i);
        cr_assert(is_new);
    }
    for (uint64_t i = 0; i < 50000; i += 997) {
        uint64_t f[2] = { i, i * 7 };
        uint32_t id;
        int is_new;
        cr_assert_eq(cmn_intern_stack(&t, f, 2, 0, 0, 0, &id, &is_new), 0);
        cr_assert_eq(id, i);
        cr_assert(!is_new);
    }
    cmn_intern_fini(&t);
}

Test(intern, refuses_beyond_its_frame_budget)
{
    struct cmn_intern t;
    cmn_intern_init(&t, 5);
    uint64_t a[] = { 1, 2, 3 }, b[] = { 4, 5, 6 };
    uint32_t id;
    int is_new;
    cr_assert_eq(cmn_intern_stack(&t, a, 3, 0, 0, 0, &id, &is_new), 0);
    cr_assert_eq(cmn_intern_stack(&t, b, 3, 0, 0, 0, &id, &is_new), -ENOSPC);
    cr_assert_eq(cmn_intern_stack(&t, a, 3, 0, 0, 0, &id, &is_new), 0, "known stacks still work");
    cmn_intern_fini(&t);
}

Test(intern, keeps_sp_word_only_inside_code)
{
    static const struct smp_code_range code[] = { { .start = 0x1000, .end = 0x2000 } };
    lp_codemap_publish(code, 1);
    cr_assert_eq(lp_intern_filter_sp(0x1800), 0x1800);
    cr_assert_eq(lp_intern_filter_sp(0x2000), 0);
    cr_assert_eq(lp_intern_filter_sp(0x7fff0000), 0);
}

Test(intern, batch_entries_are_compact)
{
    unsigned char e[CMN_RECORD_ENTRY_MAX];
    /* 4 ms later, a 7-digit tid, stack 300, weight 1. */
    size_t n = cmn_record_samples_entry(e, 4000000, 1234567, 300, 1);
    cr_assert_leq(n, 10, "%zu bytes", n);
    cr_assert_eq(cmn_record_samples_entry(e, -1, 0, 0, 1), 4, "a step back of 1 ns is one byte");
    cr_assert_eq(e[0], 1, "zigzag: -1 is 1");
}
