/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the shared parsers (common/parse.h): durations, whole numbers, signals. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdint.h>

#include "common/parse.h"

#define MS 1000000ull
#define S 1000000000ull

Test(parse, duration_units)
{
    static const struct {
        const char *text;
        uint64_t ns;
    } good[] = {
        {"500ms", 500 * MS}, {"10s", 10 * S},   {"5m", 300 * S},    {"2h", 7200 * S},
        {"30", 30 * S},      {"1.5", 1500 * MS}, {"0.25s", 250 * MS}, {"1.5ms", 1500000},
        {"0.1m", 6 * S},     {"1ms", MS},       {"3.1234567891s", 3123456789ull},
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        uint64_t ns = 0;
        cr_assert(cmn_parse_duration(good[i].text, CMN_DURATION_MAX_NS, &ns), "'%s' refused",
                  good[i].text);
        cr_expect_eq(ns, good[i].ns, "'%s' gave %llu ns", good[i].text, (unsigned long long)ns);
    }
}

Test(parse, duration_refuses_what_is_not_one)
{
    static const char *const bad[] = {
        "", "s", "ms", "-1s", "+1s", " 1s", "1s ", "1 s", "1.s", ".5s", "1e3", "0x10",
        "10sec", "10S", "1d", "1us", "0", "0s", "0.0000000001s", "abc", "1..2s",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        uint64_t ns = 77;
        cr_expect(!cmn_parse_duration(bad[i], CMN_DURATION_MAX_NS, &ns), "'%s' taken", bad[i]);
        cr_expect_eq(ns, 77, "'%s' changed the output", bad[i]);
    }
    uint64_t ns = 0;
    cr_expect(!cmn_parse_duration(NULL, CMN_DURATION_MAX_NS, &ns));
}

Test(parse, duration_keeps_within_the_maximum)
{
    uint64_t ns = 0;
    cr_expect(cmn_parse_duration("60s", 60 * S, &ns) && ns == 60 * S);
    cr_expect(!cmn_parse_duration("61s", 60 * S, &ns));
    cr_expect(!cmn_parse_duration("1.001m", 60 * S, &ns));
    cr_expect(!cmn_parse_duration("99999999999999999999999h", CMN_DURATION_MAX_NS, &ns));
    cr_expect(!cmn_parse_duration("18446744073709551616", UINT64_MAX, &ns));
}

Test(parse, whole_numbers_are_digits_only)
{
    unsigned long v = 0;
    cr_expect(cmn_parse_ulong("250", 1, 1000, &v) && v == 250);
    cr_expect(!cmn_parse_ulong("+250", 1, 1000, &v));
    cr_expect(!cmn_parse_ulong("0x10", 0, 1000, &v));
    cr_expect(!cmn_parse_ulong("1001", 1, 1000, &v));
}

Test(parse, signals_by_number_and_name)
{
    cr_expect_eq(cmn_parse_signal("PROF"), SIGPROF);
    cr_expect_eq(cmn_parse_signal("SIGUSR1"), SIGUSR1);
    cr_expect_eq(cmn_parse_signal("RTMAX-2"), SIGRTMAX - 2);
    cr_expect_eq(cmn_parse_signal("10"), 10);
    cr_expect_eq(cmn_parse_signal("NOSUCH"), 0);
}
