/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of reading version 2 profiles (reporter/input/read.c): stacks defined once and
 * compact batches of samples naming them, round trip with the library's encoders, and
 * corrupt batches. */
#include <criterion/criterion.h>
#include <string.h>

#include "common/err.h"
#include "common/record.h"
#include "reporter/input/profile.h"
#include "reporter/input/read.h"

static unsigned char file[4096];
static size_t len;

static void put_header(void)
{
    len = cmn_record_file_header(file, sizeof(file));
}

static void put_stack(uint32_t id, const uint64_t *frames, uint16_t n, uint64_t sp)
{
    struct prof_rec_stack st = { .id = id, .n_frames = n, .sp_word = sp };
    len += cmn_record_stack(file + len, sizeof(file) - len, &st, frames);
}

struct entry {
    int64_t step;
    uint32_t tid, id, weight;
};

static void put_batch(uint64_t base, const struct entry *e, uint32_t n)
{
    unsigned char entries[512];
    size_t elen = 0;
    for (uint32_t i = 0; i < n; i++)
        elen += cmn_record_samples_entry(entries + elen, e[i].step, e[i].tid, e[i].id,
                                        e[i].weight);
    len += cmn_record_samples(file + len, sizeof(file) - len, base, n, entries, elen);
}

Test(read_batch, round_trip_of_stacks_and_batches)
{
    uint64_t a[] = { 0x1000, 0x2000 }, b[] = { 0x3000 };
    put_header();
    put_stack(0, a, 2, 0x2000);
    put_stack(1, b, 1, 0);
    struct entry e[] = { { 0, 7, 0, 1 }, { 4000000, 8, 1, 3 }, { -5, 7, 0, 1 } };
    put_batch(1000000000, e, 3);

    struct rep_profile p;
    struct cmn_err err = { 0 };
    cr_assert_eq(rep_read_buffer(file, len, "t", &p, &err), CMN_OK, "%s", err.msg);
    cr_assert_eq(p.n_samples, 3);
    cr_assert_eq(p.samples[0].time_ns, 1000000000);
    cr_assert_eq(p.samples[1].time_ns, 1004000000);
    cr_assert_eq(p.samples[2].time_ns, 1003999995, "signed steps");
    cr_assert_eq(p.samples[1].tid, 8);
    cr_assert_eq(p.samples[1].weight, 3);
    cr_assert_eq(p.samples[0].n_frames, 2);
    cr_assert_eq(rep_sample_frame(&p.samples[0], 1), 0x2000);
    cr_assert_eq(p.samples[0].sp_word, 0x2000);
    cr_assert_eq(rep_sample_frame(&p.samples[1], 0), 0x3000);
    rep_profile_fini(&p);
}

static void expect_corrupt(const char *why)
{
    struct rep_profile p;
    struct cmn_err err = { 0 };
    cr_assert_eq(rep_read_buffer(file, len, "t", &p, &err), CMN_E_INPUT, "%s", why);
    cr_assert(strstr(err.msg, "corrupt"), "%s: %s", why, err.msg);
}

Test(read_batch, a_sample_naming_an_undefined_stack_is_corrupt)
{
    uint64_t a[] = { 0x1000 };
    put_header();
    put_stack(0, a, 1, 0);
    struct entry e[] = { { 0, 7, 1, 1 } };
    put_batch(0, e, 1);
    expect_corrupt("stack 1 was never defined");
}

Test(read_batch, stack_ids_out_of_sequence_are_corrupt)
{
    uint64_t a[] = { 0x1000 };
    put_header();
    put_stack(1, a, 1, 0);
    expect_corrupt("first stack id 1");
}

Test(read_batch, entries_past_the_record_are_corrupt)
{
    uint64_t a[] = { 0x1000 };
    put_header();
    put_stack(0, a, 1, 0);
    struct entry e[] = { { 0, 7, 0, 1 } };
    put_batch(0, e, 1);
    /* Claim more entries than the record holds. */
    size_t batch_at = len - 32;
    uint32_t n = 5;
    memcpy(file + batch_at + 16, &n, sizeof(n));
    expect_corrupt("n_samples 5 with one entry");
}
