/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Tests of the in-memory profile (reporter/input/profile.c): clean-up of mappings and threads,
 * and the sampling rate it reports.
 */
#include <criterion/criterion.h>

#include "common/err.h"
#include "include/libprof/prof_format.h"
#include "reporter/input/profile.h"

Test(profile, takes_the_rate_the_timer_delivered_from_the_stats)
{
    struct rep_profile p;
    rep_profile_init(&p, "rate");
    cr_assert_eq(rep_profile_hz(&p), 0);
    p.has_process = true;
    p.process.requested_hz = 500;
    cr_assert_float_eq(rep_profile_hz(&p), 500, 1e-9);
    p.process.effective_hz = 250;
    cr_assert_float_eq(rep_profile_hz(&p), 250, 1e-9);
    p.has_stats = true;
    p.stats[PROF_STAT_SAMPLES] = 490;
    p.stats[PROF_STAT_SIGNALS] = 500; /* 10 dropped: the ticks still happened */
    p.stats[PROF_STAT_CPU_NS] = 2000000000;
    cr_assert_float_eq(rep_profile_hz(&p), 250, 1e-9);
    p.stats[PROF_STAT_SIGNALS] = 0;
    cr_assert_float_eq(rep_profile_hz(&p), 245, 1e-9);
    p.stats[PROF_STAT_CPU_NS] = 0; /* unknown CPU time: back to the record's rate */
    cr_assert_float_eq(rep_profile_hz(&p), 250, 1e-9);
    rep_profile_fini(&p);
}

Test(profile, sorts_mappings_and_drops_duplicates)
{
    struct rep_profile p;
    rep_profile_init(&p, "maps");
    struct rep_map maps[] = {
        {.time_ns = 9, .start = 0x3000, .end = 0x4000, .path = "/b"},
        {.time_ns = 5, .start = 0x1000, .end = 0x2000, .path = "/a"},
        {.time_ns = 2, .start = 0x3000, .end = 0x4000, .path = "/b"},
        {.time_ns = 7, .start = 0x1000, .end = 0x2000, .path = "/other"},
        {.time_ns = 1, .start = 0x1000, .end = 0x2000, .file_offset = 0x1000, .path = "/a"},
    };
    for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
        cr_assert_eq(rep_profile_add_map(&p, &maps[i]), CMN_OK);
    rep_profile_finish(&p);
    cr_assert_eq(p.n_maps, 4);
    cr_assert_str_eq(p.maps[0].path, "/a");
    cr_assert_eq(p.maps[0].file_offset, 0);
    cr_assert_str_eq(p.maps[1].path, "/other"); /* by start, end, offset, then path */
    cr_assert_eq(p.maps[2].file_offset, 0x1000);
    cr_assert_str_eq(p.maps[3].path, "/b");
    cr_assert_eq(p.maps[3].time_ns, 2);
    rep_profile_fini(&p);
    rep_profile_fini(NULL);
}
