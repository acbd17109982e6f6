/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Tests of the differential profile (reporter/compare/diff.c): the statistics against reference
 * values (Student's t tail computed independently by numerical integration of its
 * density), and the per-function table of synthetic runs: pooling, shares, recursion,
 * order, per-run tests and CPU time.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "reporter/compare/diff.h"
#include "reporter/stacks/aggregate.h"
#include "reporter/symbols/names.h"

struct fixture {
    struct rep_names names;
    struct rep_diff diff;
};

static void setup(struct fixture *fx)
{
    rep_names_init(&fx->names);
    rep_diff_init(&fx->diff);
}

static void teardown(struct fixture *fx)
{
    rep_diff_fini(&fx->diff);
    rep_names_fini(&fx->names);
}

static uint32_t id_of(struct fixture *fx, const char *name)
{
    uint32_t id;
    cr_assert_eq(rep_names_intern(&fx->names, name, strlen(name), &id), CMN_OK);
    return id;
}

static void add_stack(struct fixture *fx, struct rep_agg *a, const char *stack, uint64_t w)
{
    uint32_t ids[64];
    size_t n = 0;
    const char *p = stack;
    while (*p) {
        size_t len = strcspn(p, ";");
        cr_assert_eq(rep_names_intern(&fx->names, p, len, &ids[n++]), CMN_OK);
        p += len + (p[len] == ';');
    }
    cr_assert_eq(rep_agg_add(a, ids, n, w), CMN_OK);
}

/* A run of side with weight a_w in main;a, b_w in main;b and seconds of CPU time. */
static void add_run(struct fixture *fx, int side, uint64_t a_w, uint64_t b_w, double seconds)
{
    struct rep_agg *run;
    cr_assert_eq(rep_diff_new_run(&fx->diff, side, &run), CMN_OK);
    add_stack(fx, run, "main;a", a_w);
    add_stack(fx, run, "main;b", b_w);
    run->seconds = seconds;
    run->timed_weight = run->total_weight;
}

static const struct rep_diff_fn *find_fn(struct fixture *fx, const char *name)
{
    uint32_t id = id_of(fx, name);
    for (size_t i = 0; i < fx->diff.n_fns; i++)
        if (fx->diff.fns[i].id == id)
            return &fx->diff.fns[i];
    cr_assert_fail("no row for %s", name);
    return NULL;
}

Test(diff, student_t_tail_matches_reference_values)
{
    cr_expect(fabs(rep_diff_t_sf(2.776445, 4) - 0.025) < 1e-6);
    cr_expect(fabs(rep_diff_t_sf(3.674235, 4) - 0.0106558) < 1e-6);
    cr_expect(fabs(rep_diff_t_sf(12.7062, 1) - 0.025) < 1e-6);
    cr_expect(fabs(rep_diff_t_sf(1.5, 7.3) - 0.0877815) < 1e-6, "%.7f", rep_diff_t_sf(1.5, 7.3));
    cr_expect(fabs(rep_diff_t_sf(0.0, 5) - 0.5) < 1e-12);
    cr_expect(fabs(rep_diff_t_sf(-2.776445, 4) - 0.975) < 1e-6);
    /* Many degrees of freedom: the normal tail. */
    cr_expect(fabs(rep_diff_t_sf(1.959964, 1e7) - 0.025) < 1e-5);
}

Test(diff, two_proportion_test_is_one_sided_in_the_direction_of_change)
{
    /* 50/100 against 60/100: pooled 0.55, se 0.070356, z 1.42134, tail 0.077607. */
    double p = rep_diff_p_counts(50, 100, 60, 100);
    cr_expect(fabs(p - 0.077607) < 1e-5, "%.6f", p);
    cr_expect(fabs(rep_diff_p_counts(60, 100, 50, 100) - p) < 1e-12);
    cr_expect_eq(rep_diff_p_counts(30, 100, 30, 100), 1.0);
    cr_expect_eq(rep_diff_p_counts(0, 0, 30, 100), 1.0);
    /* The same shares with 100 times the samples are far beyond noise. */
    cr_expect(rep_diff_p_counts(5000, 10000, 6000, 10000) < 1e-40);
}

Test(diff, share_above_a_limit_is_tested_against_the_limit)
{
    /* 40 of 100 against 30 %: se 0.045826, z 2.18218, tail 0.014548. */
    double p = rep_diff_p_above(40, 100, 0.30);
    cr_expect(fabs(p - 0.014548) < 1e-5, "%.6f", p);
    cr_expect_eq(rep_diff_p_above(30, 100, 0.30), 1.0);
    cr_expect_eq(rep_diff_p_above(1, 100, 0.0), 0.0);
}

Test(diff, welch_test_uses_the_spread_of_runs)
{
    /* Means 2 and 5, both sd 1: t 3.674235 with 4 degrees of freedom. */
    const double a[] = {1, 2, 3}, b[] = {4, 5, 6};
    cr_expect(fabs(rep_diff_p_welch(a, 3, b, 3) - 0.0106558) < 1e-6);
    cr_expect(fabs(rep_diff_p_welch(b, 3, a, 3) - 0.0106558) < 1e-6);
    cr_expect_eq(rep_diff_p_welch(a, 1, b, 3), REP_DIFF_NO_P);
    const double same[] = {2, 2}, other[] = {3, 3};
    cr_expect_eq(rep_diff_p_welch(same, 2, same, 2), 1.0);
    cr_expect_eq(rep_diff_p_welch(same, 2, other, 2), 0.0);
}

Test(diff, pools_runs_and_orders_by_size_of_change)
{
    struct fixture fx;
    setup(&fx);
    add_run(&fx, REP_DIFF_BASE, 30, 70, 1.0);
    add_run(&fx, REP_DIFF_BASE, 50, 50, 1.0);
    add_run(&fx, REP_DIFF_NEW, 60, 40, 1.0);
    cr_assert_eq(rep_diff_compute(&fx.diff, fx.names.n_names), CMN_OK);
    cr_assert_eq(fx.diff.n_fns, 3);
    cr_expect_eq(fx.diff.sides[REP_DIFF_BASE].total_weight, 200);
    cr_expect_eq(fx.diff.sides[REP_DIFF_NEW].total_weight, 100);
    /* a: 80/200 = 40 % -> 60 %; b: 60 % -> 40 %; main unchanged at 100 % total. */
    const struct rep_diff_fn *a = find_fn(&fx, "a");
    cr_expect_eq(a->self[0], 80);
    cr_expect_eq(a->self[1], 60);
    cr_expect(fabs(a->self_share[0] - 0.4) < 1e-12 && fabs(a->self_share[1] - 0.6) < 1e-12);
    cr_expect(fabs(a->total_share[1] - 0.6) < 1e-12);
    cr_expect(fabs(a->self_p_count - rep_diff_p_counts(80, 200, 60, 100)) < 1e-15);
    cr_expect_eq(a->self_p_runs, REP_DIFF_NO_P, "one new run: no run test");
    const struct rep_diff_fn *m = find_fn(&fx, "main");
    cr_expect_eq(m->self[0] + m->self[1], 0);
    cr_expect(fabs(m->total_share[0] - 1.0) < 1e-12 && fabs(m->total_share[1] - 1.0) < 1e-12);
    cr_expect_eq(m->total_p_count, 1.0);
    cr_expect_eq(fx.diff.fns[2].id, id_of(&fx, "main"), "the unchanged function comes last");
    teardown(&fx);
}

Test(diff, counts_a_recursive_function_once_per_stack)
{
    struct fixture fx;
    setup(&fx);
    struct rep_agg *run;
    cr_assert_eq(rep_diff_new_run(&fx.diff, REP_DIFF_BASE, &run), CMN_OK);
    add_stack(&fx, run, "main;r;r;r", 10);
    add_stack(&fx, run, "main;x", 10);
    cr_assert_eq(rep_diff_new_run(&fx.diff, REP_DIFF_NEW, &run), CMN_OK);
    add_stack(&fx, run, "main;r;r", 5);
    add_stack(&fx, run, "main;x", 15);
    cr_assert_eq(rep_diff_compute(&fx.diff, fx.names.n_names), CMN_OK);
    const struct rep_diff_fn *r = find_fn(&fx, "r");
    cr_expect_eq(r->total[0], 10);
    cr_expect_eq(r->self[0], 10);
    cr_expect_eq(r->total[1], 5);
    cr_expect(fabs(r->total_share[0] - 0.5) < 1e-12 && fabs(r->total_share[1] - 0.25) < 1e-12);
    teardown(&fx);
}

Test(diff, a_function_on_one_side_only_gets_a_row)
{
    struct fixture fx;
    setup(&fx);
    struct rep_agg *run;
    cr_assert_eq(rep_diff_new_run(&fx.diff, REP_DIFF_BASE, &run), CMN_OK);
    add_stack(&fx, run, "main;old", 10);
    cr_assert_eq(rep_diff_new_run(&fx.diff, REP_DIFF_NEW, &run), CMN_OK);
    add_stack(&fx, run, "main;fresh", 10);
    cr_assert_eq(rep_diff_compute(&fx.diff, fx.names.n_names), CMN_OK);
    cr_expect_eq(fx.diff.n_fns, 3);
    cr_expect(fabs(find_fn(&fx, "fresh")->self_share[0]) < 1e-12);
    cr_expect(fabs(find_fn(&fx, "fresh")->self_share[1] - 1.0) < 1e-12);
    cr_expect(fabs(find_fn(&fx, "old")->self_share[1]) < 1e-12);
    teardown(&fx);
}

Test(diff, run_test_sees_consistent_and_erratic_changes)
{
    struct fixture fx;
    setup(&fx);
    /* a is 40 % in every base run and 44 % in every new run: consistent. */
    for (int i = 0; i < 3; i++) {
        add_run(&fx, REP_DIFF_BASE, 400 + i, 600 - i, 1.0 + 0.01 * i);
        add_run(&fx, REP_DIFF_NEW, 440 + i, 560 - i, 1.2 + 0.01 * i);
    }
    cr_assert_eq(rep_diff_compute(&fx.diff, fx.names.n_names), CMN_OK);
    const struct rep_diff_fn *a = find_fn(&fx, "a");
    cr_expect(a->self_p_runs >= 0 && a->self_p_runs < 1e-4, "%g", a->self_p_runs);
    cr_expect(a->self_sd_runs[0] > 0 && a->self_sd_runs[0] < 0.002);
    /* CPU time: 1.01 s -> 1.21 s a run, with a spread of 0.01 s. */
    cr_expect(fx.diff.time.is_known);
    cr_expect(fabs(fx.diff.time.mean[0] - 1.01) < 1e-9 && fabs(fx.diff.time.mean[1] - 1.21) < 1e-9);
    cr_expect(fabs(fx.diff.time.change - (1.21 / 1.01 - 1)) < 1e-9);
    cr_expect(fx.diff.time.p >= 0 && fx.diff.time.p < 1e-4, "%g", fx.diff.time.p);
    teardown(&fx);

    /* The same pooled change made of one wild new run: the run test doubts it. */
    setup(&fx);
    for (int i = 0; i < 3; i++)
        add_run(&fx, REP_DIFF_BASE, 400, 600, 1.0);
    add_run(&fx, REP_DIFF_NEW, 520, 480, 1.0);
    add_run(&fx, REP_DIFF_NEW, 400, 600, 1.0);
    add_run(&fx, REP_DIFF_NEW, 400, 600, 1.0);
    cr_assert_eq(rep_diff_compute(&fx.diff, fx.names.n_names), CMN_OK);
    a = find_fn(&fx, "a");
    cr_expect(a->self_p_count < 0.01, "%g", a->self_p_count);
    cr_expect(a->self_p_runs > 0.1, "%g", a->self_p_runs);
    teardown(&fx);
}

Test(diff, time_is_unknown_when_a_run_has_no_rate)
{
    struct fixture fx;
    setup(&fx);
    add_run(&fx, REP_DIFF_BASE, 10, 10, 1.0);
    add_run(&fx, REP_DIFF_NEW, 10, 10, 1.0);
    fx.diff.sides[REP_DIFF_NEW].runs[0].is_time_partial = true;
    cr_assert_eq(rep_diff_compute(&fx.diff, fx.names.n_names), CMN_OK);
    cr_expect(!fx.diff.time.is_known);
    cr_expect(!fx.diff.sides[REP_DIFF_NEW].is_time_known);
    cr_expect(fx.diff.sides[REP_DIFF_BASE].is_time_known);
    teardown(&fx);
}
