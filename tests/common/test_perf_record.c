/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the perf record decoder (common/perf_record.h) in the layouts of libprof's
 * rings (tests/attach/test_perf_ring.c has prof record -p's): a kernel-time sample with its
 * chain, registers and stack copy, a side-band trailer without an identifier, and a layout
 * the decoder does not read. */
#include <criterion/criterion.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <string.h>

#include "common/perf_record.h"

/* libprof/ksamples.c's layout, and libprof/wall.c's without stacks. */
#define KSAMPLE_TYPE                                                                               \
    (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |          \
     PERF_SAMPLE_STACK_USER)
#define WALL_TYPE (PERF_SAMPLE_TID | PERF_SAMPLE_TIME)

/* A body being built. */
struct body {
    uint64_t w[64];
    size_t n; /* words */
};

static void put(struct body *b, uint64_t v)
{
    cr_assert_lt(b->n, 64);
    b->w[b->n++] = v;
}

Test(perf_record, decodes_a_kernel_time_sample_with_its_chain_registers_and_stack)
{
    struct body b = {.n = 0};
    put(&b, (uint64_t)7 << 32 | 7); /* pid, tid */
    put(&b, 1000);                  /* time */
    put(&b, 2);                     /* nr */
    put(&b, (uint64_t)PERF_CONTEXT_USER);
    put(&b, 0x401000);
    put(&b, PERF_SAMPLE_REGS_ABI_64);
    for (unsigned i = 0; i < ARCH_PERF_N_REGS; i++)
        put(&b, 0x100 + i);
    put(&b, 16); /* the copy's size */
    put(&b, 0xaa);
    put(&b, 0xbb);
    put(&b, 16); /* dyn_size */
    struct cmn_perf_sample d;
    cr_assert(cmn_perf_decode_sample((const unsigned char *)b.w, b.n * 8, KSAMPLE_TYPE, &d));
    cr_assert(d.is_whole);
    cr_expect_eq(d.tid, 7);
    cr_expect_eq(d.time_ns, 1000);
    cr_expect_eq(d.id, 0);
    cr_expect_eq(d.n_ips, 2);
    cr_expect_eq(d.ips, (const unsigned char *)&b.w[3]);
    cr_expect_eq(d.stack, (const unsigned char *)&b.w[7 + ARCH_PERF_N_REGS]);
    cr_expect_eq(d.stack_len, 16);

    /* Without the stack's last word, the sample has its fixed fields but is not whole. */
    cr_assert(cmn_perf_decode_sample((const unsigned char *)b.w, (b.n - 1) * 8, KSAMPLE_TYPE, &d));
    cr_expect_not(d.is_whole);
    cr_expect_eq(d.tid, 7);
}

Test(perf_record, reads_the_time_in_a_trailer_without_an_identifier)
{
    /* An EXIT record as a wall-clock ring has it: its body, then pid tid and time. */
    struct body b = {.n = 0};
    put(&b, (uint64_t)1 << 32 | 7); /* pid, ppid */
    put(&b, (uint64_t)1 << 32 | 9); /* tid, ptid */
    put(&b, 500);                   /* time */
    put(&b, (uint64_t)9 << 32 | 7); /* trailer: pid, tid */
    put(&b, 600);                   /* trailer: time */
    struct perf_event_header h = {.type = PERF_RECORD_EXIT, .size = (uint16_t)(8 + b.n * 8)};
    struct cmn_perf_task t;
    cr_assert(cmn_perf_decode_task(&h, (const unsigned char *)b.w, &t));
    cr_expect(t.pid == 7 && t.ppid == 1 && t.tid == 9 && t.ptid == 1 && t.time_ns == 500);
    cr_expect_eq(cmn_perf_trailer_time((const unsigned char *)b.w, b.n * 8, WALL_TYPE), 600);
    cr_expect_eq(cmn_perf_trailer_time((const unsigned char *)b.w, 8, WALL_TYPE), 0, "cut");
}

Test(perf_record, refuses_a_layout_it_does_not_read)
{
    uint64_t w[8] = {0};
    struct cmn_perf_sample d;
    cr_expect_not(cmn_perf_decode_sample((const unsigned char *)w, sizeof(w),
                                         WALL_TYPE | PERF_SAMPLE_READ, &d));
    cr_expect(cmn_perf_decode_sample((const unsigned char *)w, sizeof(w), WALL_TYPE, &d));
    cr_expect(d.is_whole, "nothing past the fixed fields was asked for");
}
