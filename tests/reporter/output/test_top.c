/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Tests of the top table (reporter/output/top.c): order, percentages, limits and recursion.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "reporter/output/top.h"
#include "reporter/stacks/aggregate.h"
#include "reporter/symbols/names.h"
#include "tests/reporter/stacks/agg_fixture.h"

/* total 20: flat r 10, b 6, a 2, c 2, main 0; cum main 20, r 10, a 8, b 6, c 2. */
static void setup(struct fixture *fx)
{
    fixture_init(fx);
    add_stack_split(fx, "main;a;b", ';', 6);
    add_stack_split(fx, "main;a", ';', 2);
    add_stack_split(fx, "main;c", ';', 2);
    add_stack_split(fx, "main;r;r;r", ';', 10);
}

static char *top(struct fixture *fx, size_t limit, bool is_by_cum)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    cr_assert_not_null(out);
    struct rep_top_opts opts = {.limit = limit, .is_by_cum = is_by_cum};
    cr_assert_eq(rep_out_top(out, &fx->agg, &fx->names, &opts), CMN_OK);
    fclose(out);
    return text;
}

Test(out_top, sorts_by_flat_then_cum_then_name)
{
    struct fixture fx;
    setup(&fx);
    char *text = top(&fx, 0, false);
    cr_assert_str_eq(text, "Total: 20 samples\n"
                           "    flat   flat%    sum%      cum    cum%\n"
                           "      10  50.00%  50.00%       10  50.00%  r\n"
                           "       6  30.00%  80.00%        6  30.00%  b\n"
                           "       2  10.00%  90.00%        8  40.00%  a\n"
                           "       2  10.00% 100.00%        2  10.00%  c\n"
                           "       0   0.00% 100.00%       20 100.00%  main\n");
    free(text);
    teardown(&fx);
}

Test(out_top, sorts_by_cum_and_limits_rows)
{
    struct fixture fx;
    setup(&fx);
    char *text = top(&fx, 3, true);
    cr_assert_str_eq(text, "Total: 20 samples\n"
                           "Showing 3 of 5 functions, by cum\n"
                           "    flat   flat%    sum%      cum    cum%\n"
                           "       0   0.00%   0.00%       20 100.00%  main\n"
                           "      10  50.00%  50.00%       10  50.00%  r\n"
                           "       2  10.00%  60.00%        8  40.00%  a\n");
    free(text);
    teardown(&fx);
}

Test(out_top, prints_the_time_at_the_sampling_rate)
{
    struct fixture fx;
    setup(&fx);
    fx.agg.seconds = 20.0 / 250;
    fx.agg.timed_weight = 20;
    fx.agg.requested_hz = 250;
    char *text = top(&fx, 1, false);
    cr_assert(strncmp(text, "Total: 20 samples (0.08 s at 250 Hz)\n", 37) == 0, "%s", text);
    free(text);
    /* Half the rate asked for was delivered. */
    fx.agg.requested_hz = 500;
    text = top(&fx, 1, false);
    cr_assert(strncmp(text, "Total: 20 samples (0.08 s at 250 Hz, 500 Hz requested)\n", 55) == 0,
              "%s", text);
    free(text);
    /* A profile without a rate makes the time unknown. */
    fx.agg.is_time_partial = true;
    text = top(&fx, 1, false);
    cr_assert(strncmp(text, "Total: 20 samples\n", 18) == 0, "%s", text);
    free(text);
    teardown(&fx);
}

Test(out_top, prints_an_empty_profile)
{
    struct fixture fx;
    rep_names_init(&fx.names);
    rep_agg_init(&fx.agg);
    char *text = top(&fx, 0, false);
    cr_assert_str_eq(text, "Total: 0 samples\n"
                           "    flat   flat%    sum%      cum    cum%\n");
    free(text);
    teardown(&fx);
}

/* A wall profile: cum split into on-CPU and off-CPU columns. */
Test(out_top, splits_a_wall_profile_into_on_and_off_cpu)
{
    struct fixture fx;
    fixture_init(&fx);
    uint32_t main_id, lock_id, work_id, state_id;
    rep_names_intern(&fx.names, "main", 4, &main_id);
    rep_names_intern(&fx.names, "lock", 4, &lock_id);
    rep_names_intern(&fx.names, "work", 4, &work_id);
    rep_names_intern(&fx.names, "[sleep: futex]", 14, &state_id);
    cr_assert_eq(rep_agg_add_split(&fx.agg, (uint32_t[]){main_id, work_id}, 2, 6, 0), CMN_OK);
    cr_assert_eq(rep_agg_add_split(&fx.agg, (uint32_t[]){main_id, lock_id, state_id}, 3, 4, 4),
                 CMN_OK);
    char *text = top(&fx, 0, false);
    cr_assert_str_eq(text, "Total: 10 samples, 40.00% off CPU\n"
                           "    flat   flat%    sum%      cum    cum%   on-cpu  off-cpu\n"
                           "       6  60.00%  60.00%        6  60.00%        6        0  work\n"
                           "       4  40.00% 100.00%        4  40.00%        0        4  "
                           "[sleep: futex]\n"
                           "       0   0.00% 100.00%       10 100.00%        6        4  main\n"
                           "       0   0.00% 100.00%        4  40.00%        0        4  lock\n");
    free(text);
    teardown(&fx);
}
