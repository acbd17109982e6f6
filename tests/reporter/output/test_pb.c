/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Tests of the protocol-buffers encoder (reporter/output/pb.c) against encodings worked out by
 * hand from the protobuf wire-format rules.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "reporter/output/pb.h"

static void expect_bytes(const struct rep_pb *b, const unsigned char *want, size_t n)
{
    cr_assert_eq(b->n, n, "encoded %zu bytes, expected %zu", b->n, n);
    cr_assert_eq(memcmp(b->data, want, n), 0);
}

Test(pb, encodes_varints_seven_bits_at_a_time)
{
    struct rep_pb b;
    rep_pb_init(&b);
    rep_pb_varint(&b, 1, 150); /* the protobuf documentation's example: 08 96 01 */
    expect_bytes(&b, (const unsigned char[]){0x08, 0x96, 0x01}, 3);
    rep_pb_clear(&b);
    rep_pb_varint(&b, 2, 0);
    expect_bytes(&b, (const unsigned char[]){0x10, 0x00}, 2);
    rep_pb_clear(&b);
    rep_pb_raw_varint(&b, UINT64_MAX); /* ten bytes, the last 0x01 */
    cr_assert_eq(b.n, 10);
    cr_assert_eq(b.data[9], 0x01);
    cr_assert_eq(b.data[0], 0xff);
    rep_pb_fini(&b);
}

Test(pb, encodes_strings_with_their_length)
{
    struct rep_pb b;
    rep_pb_init(&b);
    rep_pb_bytes(&b, 6, "cpu", 3); /* tag (6 << 3) | 2 = 0x32 */
    expect_bytes(&b, (const unsigned char[]){0x32, 0x03, 'c', 'p', 'u'}, 5);
    rep_pb_clear(&b);
    rep_pb_bytes(&b, 6, "", 0);
    expect_bytes(&b, (const unsigned char[]){0x32, 0x00}, 2);
    rep_pb_fini(&b);
}

Test(pb, packs_repeated_varints_in_one_field)
{
    struct rep_pb b;
    rep_pb_init(&b);
    uint64_t v[] = {3, 270, 86942}; /* the documentation's packed example */
    rep_pb_packed(&b, 4, v, 3);
    expect_bytes(&b, (const unsigned char[]){0x22, 0x06, 0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05}, 8);
    rep_pb_fini(&b);
}
