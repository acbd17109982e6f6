/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Tests of the check's verdict (reporter/compare/check.c) and budget files (reporter/compare/budget.c) on
 * synthetic profile pairs whose shares change by known amounts: a growth above the
 * threshold and beyond noise is a regression, one below the threshold is nothing, one
 * above the threshold that the samples cannot tell from noise is "within noise".
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "reporter/compare/budget.h"
#include "reporter/compare/check.h"
#include "reporter/compare/diff.h"
#include "reporter/stacks/aggregate.h"
#include "reporter/symbols/names.h"

struct fixture {
    struct rep_names names;
    struct rep_diff diff;
    struct rep_check check;
    struct rep_check_opts opts;
};

static void setup(struct fixture *fx)
{
    rep_names_init(&fx->names);
    rep_diff_init(&fx->diff);
    memset(&fx->check, 0, sizeof(fx->check));
    rep_check_defaults(&fx->opts);
}

static void teardown(struct fixture *fx)
{
    rep_check_fini(&fx->check);
    rep_diff_fini(&fx->diff);
    rep_names_fini(&fx->names);
}

static void add_stack(struct fixture *fx, struct rep_agg *a, const char *stack, uint64_t w)
{
    uint32_t ids[8];
    size_t n = 0;
    const char *p = stack;
    while (*p) {
        size_t len = strcspn(p, ";");
        cr_assert_eq(rep_names_intern(&fx->names, p, len, &ids[n++]), CMN_OK);
        p += len + (p[len] == ';');
    }
    if (w > 0)
        cr_assert_eq(rep_agg_add(a, ids, n, w), CMN_OK);
}

/* A run of n samples, hot_share of them in main;hot, the rest in main;cold. */
static void add_run(struct fixture *fx, int side, uint64_t n, double hot_share, double seconds)
{
    struct rep_agg *run;
    cr_assert_eq(rep_diff_new_run(&fx->diff, side, &run), CMN_OK);
    uint64_t hot = (uint64_t)llround(hot_share * (double)n);
    add_stack(fx, run, "main;hot", hot);
    add_stack(fx, run, "main;cold", n - hot);
    run->seconds = seconds;
    run->timed_weight = run->total_weight;
}

static void judge(struct fixture *fx)
{
    cr_assert_eq(rep_diff_compute(&fx->diff, fx->names.n_names), CMN_OK);
    cr_assert_eq(rep_check_run(&fx->check, &fx->diff, &fx->names, &fx->opts), CMN_OK);
}

static char *report(struct fixture *fx)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    cr_assert_not_null(out);
    cr_assert_eq(rep_check_print(out, &fx->check, &fx->diff, &fx->names, &fx->opts), CMN_OK);
    fclose(out);
    return text;
}

static const char *name_of(struct fixture *fx, size_t i)
{
    return rep_names_get(&fx->names, fx->check.items[i].id);
}

Test(check, flags_a_share_growth_above_the_threshold)
{
    struct fixture fx;
    setup(&fx);
    add_run(&fx, REP_DIFF_BASE, 10000, 0.40, 1.0);
    add_run(&fx, REP_DIFF_NEW, 10000, 0.43, 1.0);
    judge(&fx);
    /* hot's self and total shares grew by 3 points: two regressions, nothing else. */
    cr_assert_eq(fx.check.n_regressions, 2);
    cr_expect_eq(fx.check.n_items, 2);
    cr_expect_eq(fx.check.items[0].what, REP_CHECK_SELF);
    cr_expect_eq(fx.check.items[1].what, REP_CHECK_TOTAL);
    cr_expect_str_eq(name_of(&fx, 0), "hot");
    cr_expect(fabs(fx.check.items[0].base - 0.40) < 1e-9 &&
              fabs(fx.check.items[0].now - 0.43) < 1e-9);
    char *text = report(&fx);
    cr_expect(strstr(text, "regression: hot: self share 40.00 % -> 43.00 % (+3.00 points; p = ") ==
                  text,
              "%s", text);
    cr_expect(strstr(text, "\nprof check: FAILED, 2 regressions (base 1 run, 10000 samples;") !=
                  NULL,
              "%s", text);
    free(text);
    teardown(&fx);
}

Test(check, ignores_a_growth_below_the_threshold)
{
    struct fixture fx;
    setup(&fx);
    /* +0.8 points on 100000 samples a side is far beyond noise, but under 1 point. */
    add_run(&fx, REP_DIFF_BASE, 100000, 0.400, 1.0);
    add_run(&fx, REP_DIFF_NEW, 100000, 0.408, 1.0);
    judge(&fx);
    cr_expect_eq(fx.check.n_items, 0);
    char *text = report(&fx);
    cr_expect_str_eq(text, "prof check: ok, nothing regressed (base 1 run, 100000 samples; new 1 "
                           "run, 100000 samples; confidence 99.9 %)\n");
    free(text);
    /* With a threshold of half a point it is a regression. */
    rep_check_fini(&fx.check);
    fx.opts.max_points = 0.5;
    judge(&fx);
    cr_expect_eq(fx.check.n_regressions, 2);
    teardown(&fx);
}

Test(check, keeps_a_growth_within_sampling_noise_apart)
{
    struct fixture fx;
    setup(&fx);
    /* +5 points on 200 samples a side: z 1.01, one-sided p 0.16. */
    add_run(&fx, REP_DIFF_BASE, 200, 0.40, 1.0);
    add_run(&fx, REP_DIFF_NEW, 200, 0.45, 1.0);
    judge(&fx);
    cr_expect_eq(fx.check.n_regressions, 0);
    cr_expect_eq(fx.check.n_items, 2);
    cr_expect(!fx.check.items[0].is_significant);
    char *text = report(&fx);
    cr_expect(strncmp(text, "within noise: hot: self share 40.00 % -> 45.00 %", 48) == 0, "%s",
              text);
    cr_expect(strstr(text, "prof check: ok, nothing regressed") != NULL, "%s", text);
    cr_expect(strstr(text, "; 2 within noise)\n") != NULL, "%s", text);
    free(text);
    teardown(&fx);
}

Test(check, a_stricter_confidence_needs_more_evidence)
{
    struct fixture fx;
    setup(&fx); /* +4 points on 2000 samples a side: z 2.56, one-sided p 0.0052: a regression at 99
                 * %, not at the default 99.9 %. */
    add_run(&fx, REP_DIFF_BASE, 2000, 0.40, 1.0);
    add_run(&fx, REP_DIFF_NEW, 2000, 0.44, 1.0);
    fx.opts.confidence = 0.99;
    judge(&fx);
    cr_expect_eq(fx.check.n_regressions, 2);
    rep_check_fini(&fx.check);
    fx.opts.confidence = 0.999;
    judge(&fx);
    cr_expect_eq(fx.check.n_regressions, 0);
    teardown(&fx);
}

Test(check, ratio_threshold_catches_a_small_function_that_tripled)
{
    struct fixture fx;
    setup(&fx);
    /* 0.5 % -> 1.5 %: under the 1-point threshold, but three times larger. */
    add_run(&fx, REP_DIFF_BASE, 100000, 0.005, 1.0);
    add_run(&fx, REP_DIFF_NEW, 100000, 0.015, 1.0);
    judge(&fx);
    cr_expect_eq(fx.check.n_items, 0);
    rep_check_fini(&fx.check);
    fx.opts.max_ratio = 2.0;
    judge(&fx);
    cr_expect_eq(fx.check.n_regressions, 2);
    cr_expect(fx.check.items[0].is_ratio);
    char *text = report(&fx);
    cr_expect(strstr(text, "(+1.00 points, x3.00; p = ") != NULL, "%s", text);
    free(text);
    /* Under the ratio test's minimum share it does not count. */
    rep_check_fini(&fx.check);
    fx.opts.min_ratio_percent = 2.0;
    judge(&fx);
    cr_expect_eq(fx.check.n_items, 0);
    teardown(&fx);
}

Test(check, cpu_time_with_one_run_a_side_uses_the_assumed_spread)
{
    struct fixture fx;
    setup(&fx);
    add_run(&fx, REP_DIFF_BASE, 1000, 0.4, 1.00);
    add_run(&fx, REP_DIFF_NEW, 1000, 0.4, 1.08);
    judge(&fx);
    /* +8 %: above the 5 % threshold, but two runs that vary by 10 % each differ by that
     * often (z 0.57). */
    cr_assert_eq(fx.check.n_items, 1);
    cr_expect_eq(fx.check.items[0].what, REP_CHECK_TIME);
    cr_expect(fx.check.items[0].is_assumed);
    cr_expect_eq(fx.check.n_regressions, 0);
    teardown(&fx);

    setup(&fx);
    add_run(&fx, REP_DIFF_BASE, 1000, 0.4, 1.00);
    add_run(&fx, REP_DIFF_NEW, 1000, 0.4, 1.50);
    judge(&fx);
    cr_expect_eq(fx.check.n_regressions, 1);
    char *text = report(&fx);
    cr_expect(strncmp(text, "regression: CPU time per run 1.000 s -> 1.500 s (+50.0 %; p = ", 62) ==
                  0,
              "%s", text);
    free(text);
    teardown(&fx);
}

Test(check, cpu_time_with_repeated_runs_uses_their_spread)
{
    struct fixture fx;
    setup(&fx);
    for (int i = 0; i < 4; i++) {
        add_run(&fx, REP_DIFF_BASE, 1000, 0.4, 1.00 + 0.005 * i);
        add_run(&fx, REP_DIFF_NEW, 1000, 0.4, 1.08 + 0.005 * i);
    }
    judge(&fx);
    cr_assert_eq(fx.check.n_regressions, 1);
    cr_expect_eq(fx.check.items[0].what, REP_CHECK_TIME);
    cr_expect(!fx.check.items[0].is_assumed);
    rep_check_fini(&fx.check);
    /* The time test can be turned off. */
    fx.opts.max_time_percent = -1;
    judge(&fx);
    cr_expect_eq(fx.check.n_items, 0);
    teardown(&fx);

    /* The same mean growth from runs that vary by 20 %: not beyond noise. */
    setup(&fx);
    const double base[] = {0.8, 1.2, 0.9, 1.1}, now[] = {1.3, 0.85, 1.25, 0.92};
    for (int i = 0; i < 4; i++) {
        add_run(&fx, REP_DIFF_BASE, 1000, 0.4, base[i]);
        add_run(&fx, REP_DIFF_NEW, 1000, 0.4, now[i]);
    }
    judge(&fx);
    cr_expect_eq(fx.check.n_items, 1);
    cr_expect_eq(fx.check.n_regressions, 0);
    teardown(&fx);
}

Test(check, budget_holds_without_a_baseline)
{
    struct fixture fx;
    struct rep_budget b;
    struct cmn_err err = {0};
    setup(&fx);
    rep_budget_init(&b);
    cr_assert_eq(rep_budget_parse(&b,
                                  "# limits\n"
                                  "h?t   30\n"
                                  "\n"
                                  "  cold 70 self extra\n",
                                  "b.txt", &err),
                 CMN_E_INPUT);
    cr_expect_str_eq(err.msg,
                     "b.txt:4: expected 'PATTERN MAX_PERCENT [self|total]', found 4 fields");
    rep_budget_fini(&b);
    rep_budget_init(&b);
    cr_assert_eq(
        rep_budget_parse(&b, "# limits\nh?t   30\n\n  co* 70% self\nmain 100\n", "b.txt", &err),
        CMN_OK);
    cr_assert_eq(b.n_rules, 3);
    cr_expect(b.rules[1].is_self && b.rules[1].max_percent == 70.0 && b.rules[1].line == 4);
    fx.opts.budget = &b;
    add_run(&fx, REP_DIFF_NEW, 1000, 0.40, 1.0);
    judge(&fx);
    /* hot: 40 % > 30 % on 1000 samples; cold 60 % <= 70 %; main 100 % <= 100 %. */
    cr_assert_eq(fx.check.n_items, 1);
    cr_expect_eq(fx.check.n_regressions, 1);
    cr_expect_eq(fx.check.items[0].what, REP_CHECK_BUDGET);
    cr_expect_str_eq(name_of(&fx, 0), "hot");
    char *text = report(&fx);
    cr_expect(strncmp(text,
                      "over budget: hot: total share 40.00 % > 30 % (budget line 2, 'h?t'; p = ",
                      71) == 0,
              "%s", text);
    cr_expect(strstr(text, "(base 0 runs, 0 samples; new 1 run, 1000 samples;") != NULL, "%s",
              text);
    free(text);
    rep_check_fini(&fx.check);
    rep_budget_fini(&b);
    rep_diff_fini(&fx.diff);
    rep_diff_init(&fx.diff);

    /* 32 % on 100 samples is not beyond noise against 30 %. */
    rep_budget_init(&b);
    cr_assert_eq(rep_budget_parse(&b, "hot 30\n", "b.txt", &err), CMN_OK);
    add_run(&fx, REP_DIFF_NEW, 100, 0.32, 1.0);
    judge(&fx);
    cr_expect_eq(fx.check.n_items, 1);
    cr_expect_eq(fx.check.n_regressions, 0);
    rep_budget_fini(&b);
    teardown(&fx);
}

Test(check, budget_rejects_malformed_lines)
{
    static const char *const bad[][2] = {
        {"hot\n", "b:1: expected 'PATTERN MAX_PERCENT [self|total]', found 1 fields"},
        {"hot 101\n", "b:1: '101' is not a percentage in 0..100"},
        {"# c\nhot ten\n", "b:2: 'ten' is not a percentage in 0..100"},
        {"hot 5 cum\n", "b:1: 'cum' is neither self nor total"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct rep_budget b;
        struct cmn_err err = {0};
        rep_budget_init(&b);
        cr_expect_eq(rep_budget_parse(&b, bad[i][0], "b", &err), CMN_E_INPUT);
        cr_expect_str_eq(err.msg, bad[i][1]);
        rep_budget_fini(&b);
    }
    struct rep_budget b;
    struct cmn_err err = {0};
    rep_budget_init(&b);
    cr_expect_eq(rep_budget_load(&b, "/nonexistent/budget", &err), CMN_E_INPUT);
    cr_expect(strstr(err.msg, "/nonexistent/budget: ") == err.msg, "%s", err.msg);
    rep_budget_fini(&b);
}

Test(check, budget_patterns_are_globs_on_whole_names)
{
    struct rep_budget_rule r = {.pattern = "std::vector<*>::push_back"};
    cr_expect(rep_budget_matches(&r, "std::vector<int>::push_back"));
    cr_expect(!rep_budget_matches(&r, "std::vector<int>::push_back_x"));
    struct rep_budget_rule q = {.pattern = "parse_[ab]"};
    cr_expect(rep_budget_matches(&q, "parse_a"));
    cr_expect(!rep_budget_matches(&q, "parse_c"));
    cr_expect(!rep_budget_matches(&q, "xparse_a"));
}
