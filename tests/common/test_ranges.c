/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the shared binary searches (common/ranges.h): the last element at or below
 * a key, and the range holding an address, on structs with 4- and 8-byte keys. */
#include <criterion/criterion.h>
#include <stdint.h>

#include "common/ranges.h"

struct range {
    uint64_t start, end;
    const char *name;
};

struct by_tid {
    uint8_t pad; /* the key is wherever the struct puts it */
    uint32_t tid;
};

Test(ranges, counts_the_keys_at_or_below)
{
    static const struct range r[] = {{10, 20, "a"}, {20, 25, "b"}, {20, 30, "c"}, {40, 50, "d"}};
    cr_assert_eq(CMN_RANGE_UPPER(r, 4, start, 0), 0);
    cr_assert_eq(CMN_RANGE_UPPER(r, 4, start, 9), 0);
    cr_assert_eq(CMN_RANGE_UPPER(r, 4, start, 10), 1);
    cr_assert_eq(CMN_RANGE_UPPER(r, 4, start, 19), 1);
    cr_assert_eq(CMN_RANGE_UPPER(r, 4, start, 20), 3, "repeats count");
    cr_assert_eq(CMN_RANGE_UPPER(r, 4, start, 39), 3);
    cr_assert_eq(CMN_RANGE_UPPER(r, 4, start, UINT64_MAX), 4);
    cr_assert_eq(CMN_RANGE_UPPER(r, 0, start, 30), 0);
}

Test(ranges, finds_the_range_holding_an_address)
{
    static const struct range r[] = {
        {0x1000, 0x2000, "a"}, {0x2000, 0x2800, "b"}, {0x4000, 0x5000, "c"}};
    static const struct {
        uint64_t addr;
        size_t want;
    } cases[] = {{0, 3},      {0xfff, 3},  {0x1000, 0}, {0x1fff, 0}, {0x2000, 1}, {0x27ff, 1},
                 {0x2800, 3}, {0x3fff, 3}, {0x4000, 2}, {0x4fff, 2}, {0x5000, 3}, {UINT64_MAX, 3}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        cr_expect_eq(CMN_RANGE_FIND(r, 3, start, end, cases[i].addr), cases[i].want, "0x%llx",
                     (unsigned long long)cases[i].addr);
    cr_assert_eq(CMN_RANGE_FIND(r, 0, start, end, 0x1000), 0);
}

Test(ranges, reads_four_byte_keys)
{
    static const struct by_tid t[] = {{0, 5}, {0, 7}, {0, 7}, {0, 4000000000u}};
    cr_assert_eq(CMN_RANGE_UPPER(t, 4, tid, 6), 1);
    cr_assert_eq(CMN_RANGE_UPPER(t, 4, tid, 7), 3);
    cr_assert_eq(CMN_RANGE_UPPER(t, 4, tid, 3999999999u), 3);
    cr_assert_eq(CMN_RANGE_UPPER(t, 4, tid, 4000000000u), 4);
    /* A plain array of 32-bit keys, as an unwind table's row starts. */
    static const uint32_t pc[] = {0, 4, 9, 16, 100};
    cr_assert_eq(cmn_range_upper(pc, 5, sizeof(*pc), 0, sizeof(*pc), 15), 3);
    cr_assert_eq(cmn_range_upper(pc + 2, 3, sizeof(*pc), 0, sizeof(*pc), 99), 2);
}
