/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Tests of sample selection (reporter/stacks/filter.c, reporter/stacks/select.c) through the aggregate,
 * on hand-made profiles without mappings: every frame is named by its address ("0x1000"),
 * so stacks are known in advance. Each selection option is checked to keep what it should
 * and only that.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "reporter/input/profile.h"
#include "reporter/stacks/aggregate.h"
#include "reporter/stacks/filter.h"
#include "reporter/stacks/select.h"
#include "reporter/symbols/names.h"
#include "reporter/symbols/symbols.h"

#define START_NS 1000000000ull

/* Frames, leaf first, of the three stacks the profile uses. */
static const uint64_t stack_a[] = {0xa1, 0xa0, 0x100}; /* main(0x100) -> 0xa0 -> 0xa1 */
static const uint64_t stack_b[] = {0xb1, 0xb0, 0x100};
static const uint64_t stack_c[] = {0xc1, 0x100};

struct fixture {
    struct rep_profile prof;
    struct rep_names names;
    struct rep_sym sym;
    struct rep_agg agg;
    struct rep_sel sel;
};

static void add(struct rep_profile *p, const uint64_t *frames, uint16_t n, uint32_t tid,
                double t_s, uint32_t weight)
{
    struct rep_sample s = {.time_ns = START_NS + (uint64_t)(t_s * 1e9),
                           .tid = tid,
                           .weight = weight,
                           .n_frames = n,
                           .frames = (const void *)frames};
    cr_assert_eq(rep_profile_add_sample(p, &s), CMN_OK);
}

/* Process 42 "/usr/bin/app": tid 42 "app" runs stack a for 2 s at weight 1 per 0.1 s,
 * tid 43 "worker" runs stack b for 1 s from 1 s on, tid 44 "worker" runs stack c once at
 * 3.5 s with weight 5. */
static void setup(struct fixture *fx)
{
    rep_profile_init(&fx->prof, "hand-made");
    fx->prof.has_process = true;
    fx->prof.process = (struct rep_process){.pid = 42, .start_mono_ns = START_NS,
                                            .requested_hz = 10, .exe = "/usr/bin/app"};
    struct rep_thread t[] = {{.tid = 42, .name = "app"},
                             {.tid = 43, .name = "worker"},
                             {.tid = 44, .name = "worker"}};
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(rep_profile_add_thread(&fx->prof, &t[i]), CMN_OK);
    for (int i = 0; i < 20; i++)
        add(&fx->prof, stack_a, 3, 42, i * 0.1, 1);
    for (int i = 0; i < 10; i++)
        add(&fx->prof, stack_b, 3, 43, 1.0 + i * 0.1, 1);
    add(&fx->prof, stack_c, 2, 44, 3.5, 5);
    rep_profile_finish(&fx->prof);
    rep_names_init(&fx->names);
    rep_sym_init(&fx->sym, &fx->names);
    fx->sym.is_offline = true;
    rep_agg_init(&fx->agg);
    rep_sel_init(&fx->sel);
}

/* Passes option opt=arg, aggregates, returns the total weight kept. */
static uint64_t run(struct fixture *fx)
{
    rep_sel_apply(&fx->sel, &fx->sym, &fx->agg, false);
    cr_assert_eq(rep_sym_use_profile(&fx->sym, &fx->prof), CMN_OK);
    cr_assert_eq(rep_agg_add_profile(&fx->agg, &fx->sym, &fx->prof), CMN_OK);
    cr_assert_eq(rep_sel_finish(&fx->sel, &fx->names, &fx->agg), CMN_OK);
    return fx->agg.total_weight;
}

static void opt(struct fixture *fx, int o, const char *arg)
{
    struct cmn_err err = {0};
    cr_assert_eq(rep_sel_option(&fx->sel, o, arg, &err), CMN_OK, "%s", err.msg);
}

static void teardown(struct fixture *fx)
{
    rep_agg_fini(&fx->agg);
    rep_sym_fini(&fx->sym);
    rep_names_fini(&fx->names);
    rep_sel_fini(&fx->sel);
    rep_profile_fini(&fx->prof);
}

/* The weight of the stack spelled "f1;f2;..." root first, 0 if absent. */
static uint64_t weight_of(const struct fixture *fx, const char *spelled)
{
    for (size_t s = 0; s < fx->agg.n_stacks; s++) {
        char buf[512] = "";
        const uint32_t *ids = rep_agg_stack_ids(&fx->agg, s);
        for (size_t i = 0; i < fx->agg.stacks[s].n_ids; i++) {
            if (i > 0)
                strcat(buf, ";");
            strcat(buf, rep_names_get(&fx->names, ids[i]));
        }
        if (strcmp(buf, spelled) == 0)
            return fx->agg.stacks[s].weight;
    }
    return 0;
}

Test(filter, keeps_everything_without_options)
{
    struct fixture fx;
    setup(&fx);
    cr_assert_eq(run(&fx), 35);
    cr_assert_eq(weight_of(&fx, "0x100;0xa0;0xa1"), 20);
    cr_assert_eq(fx.agg.n_filtered, 0);
    teardown(&fx);
}

Test(filter, tid_keeps_only_the_threads_given)
{
    struct fixture fx;
    setup(&fx);
    opt(&fx, REP_SEL_TID, "43");
    opt(&fx, REP_SEL_TID, "44");
    cr_assert_eq(run(&fx), 15);
    cr_assert_eq(weight_of(&fx, "0x100;0xa0;0xa1"), 0);
    cr_assert_eq(weight_of(&fx, "0x100;0xc1"), 5);
    cr_assert_eq(fx.agg.n_filtered, 20);
    teardown(&fx);
}

Test(filter, thread_keeps_every_thread_of_that_name)
{
    struct fixture fx;
    setup(&fx);
    opt(&fx, REP_SEL_THREAD, "worker");
    cr_assert_eq(run(&fx), 15);
    teardown(&fx);
}

Test(filter, thread_with_an_unknown_name_keeps_nothing)
{
    struct fixture fx;
    setup(&fx);
    opt(&fx, REP_SEL_THREAD, "work"); /* whole names only */
    cr_assert_eq(run(&fx), 0);
    teardown(&fx);
}

Test(filter, pid_keeps_or_drops_whole_profiles)
{
    struct fixture fx;
    setup(&fx);
    opt(&fx, REP_SEL_PID, "7");
    cr_assert_eq(run(&fx), 0);
    teardown(&fx);
    setup(&fx);
    opt(&fx, REP_SEL_PID, "7");
    opt(&fx, REP_SEL_PID, "42");
    cr_assert_eq(run(&fx), 35);
    teardown(&fx);
}

Test(filter, from_and_to_keep_a_half_open_window)
{
    struct fixture fx;
    setup(&fx);
    opt(&fx, REP_SEL_FROM, "1.5");
    opt(&fx, REP_SEL_TO, "3.5");
    /* a: 1.5..1.9 (5 samples); b: 1.5..1.9 (5); c at 3.5 is out. */
    cr_assert_eq(run(&fx), 10);
    cr_assert_eq(weight_of(&fx, "0x100;0xc1"), 0);
    teardown(&fx);
    setup(&fx);
    opt(&fx, REP_SEL_FROM, "3.5");
    cr_assert_eq(run(&fx), 5);
    teardown(&fx);
}

Test(filter, focus_keeps_stacks_with_a_matching_frame)
{
    struct fixture fx;
    setup(&fx);
    opt(&fx, REP_SEL_FOCUS, "^0x(b0|c1)$");
    cr_assert_eq(run(&fx), 15);
    cr_assert_eq(weight_of(&fx, "0x100;0xb0;0xb1"), 10);
    teardown(&fx);
}

Test(filter, ignore_drops_stacks_with_a_matching_frame_even_when_focused)
{
    struct fixture fx;
    setup(&fx);
    opt(&fx, REP_SEL_FOCUS, "0x100");
    opt(&fx, REP_SEL_IGNORE, "^0xa");
    cr_assert_eq(run(&fx), 15);
    cr_assert_eq(weight_of(&fx, "0x100;0xa0;0xa1"), 0);
    teardown(&fx);
}

Test(filter, rejects_a_bad_regular_expression)
{
    struct fixture fx;
    setup(&fx);
    struct cmn_err err = {0};
    cr_assert_eq(rep_sel_option(&fx.sel, REP_SEL_FOCUS, "(", &err), CMN_E_INPUT);
    cr_assert(strstr(err.msg, "--focus") != NULL, "%s", err.msg);
    cr_assert_eq(rep_sel_option(&fx.sel, REP_SEL_TID, "x1", &err), CMN_E_INPUT);
    cr_assert_eq(rep_sel_option(&fx.sel, REP_SEL_PRUNE, "101", &err), CMN_E_INPUT);
    cr_assert_eq(rep_sel_option(&fx.sel, REP_SEL_FROM, "-1", &err), CMN_E_INPUT);
    teardown(&fx);
}

Test(filter, threads_puts_the_thread_at_the_root)
{
    struct fixture fx;
    setup(&fx);
    opt(&fx, REP_SEL_THREADS, NULL);
    cr_assert_eq(run(&fx), 35);
    cr_assert_eq(weight_of(&fx, "app (42);0x100;0xa0;0xa1"), 20);
    cr_assert_eq(weight_of(&fx, "worker (43);0x100;0xb0;0xb1"), 10);
    cr_assert_eq(weight_of(&fx, "worker (44);0x100;0xc1"), 5);
    teardown(&fx);
}

Test(filter, processes_puts_the_process_above_the_thread)
{
    struct fixture fx;
    setup(&fx);
    opt(&fx, REP_SEL_PROCESSES, NULL);
    opt(&fx, REP_SEL_THREADS, NULL);
    run(&fx);
    cr_assert_eq(weight_of(&fx, "app (42);worker (44);0x100;0xc1"), 5);
    teardown(&fx);
}

Test(filter, min_percent_moves_small_subtrees_to_their_parent)
{
    struct fixture fx;
    setup(&fx);
    /* Nodes: 0x100 35; a-branch 20; b-branch 10 (28.6 %); c 5 (14.3 %). At 20 %, c is cut
     * into 0x100, b stays. */
    opt(&fx, REP_SEL_PRUNE, "20");
    cr_assert_eq(run(&fx), 35);
    cr_assert_eq(weight_of(&fx, "0x100;0xc1"), 0);
    cr_assert_eq(weight_of(&fx, "0x100"), 5);
    cr_assert_eq(weight_of(&fx, "0x100;0xb0;0xb1"), 10);
    teardown(&fx);
}

Test(filter, min_percent_folds_small_roots_into_pruned)
{
    struct fixture fx;
    setup(&fx);
    opt(&fx, REP_SEL_THREADS, NULL);
    /* Roots: app (42) 20, worker (43) 10, worker (44) 5; at 50 % only app stays. */
    opt(&fx, REP_SEL_PRUNE, "50");
    cr_assert_eq(run(&fx), 35);
    cr_assert_eq(weight_of(&fx, "[pruned]"), 15);
    cr_assert_eq(weight_of(&fx, "app (42);0x100;0xa0;0xa1"), 20);
    teardown(&fx);
}

/* Labels on the fixture's samples: the process's PROF_LABELS service=app,tenant=all; tid
 * 42's samples set 1 {endpoint=/a, tenant=t1}, tid 43's set 2 {endpoint=/b}, tid 44's
 * none; tid 43's samples have trace 1 (0x1234...). */
static void label(struct fixture *fx)
{
    static struct rep_label process[] = {{"service", "app"}, {"tenant", "all"}};
    fx->prof.labels = malloc(sizeof(process));
    memcpy(fx->prof.labels, process, sizeof(process));
    fx->prof.n_labels = 2;
    struct rep_label *one = malloc(2 * sizeof(*one)), *two = malloc(sizeof(*two));
    one[0] = (struct rep_label){"endpoint", "/a"};
    one[1] = (struct rep_label){"tenant", "t1"};
    two[0] = (struct rep_label){"endpoint", "/b"};
    cr_assert_eq(rep_profile_add_label_set(&fx->prof, 1, one, 2), CMN_OK);
    cr_assert_eq(rep_profile_add_label_set(&fx->prof, 2, two, 1), CMN_OK);
    struct rep_trace t = {.trace_id = {0x12, 0x34, 0x56}};
    cr_assert_eq(rep_profile_add_trace(&fx->prof, &t), CMN_OK);
    for (size_t i = 0; i < fx->prof.n_samples; i++) {
        struct rep_sample *s = &fx->prof.samples[i];
        s->label_set = s->tid == 42 ? 1 : s->tid == 43 ? 2 : 0;
        s->trace = s->tid == 43 ? 1 : 0;
    }
}

Test(filter, label_keeps_the_samples_of_a_value_a_thread_or_its_process_had)
{
    struct fixture fx;
    setup(&fx);
    label(&fx);
    opt(&fx, REP_SEL_LABEL, "endpoint=/b");
    cr_assert_eq(run(&fx), 10);
    teardown(&fx);

    setup(&fx);
    label(&fx);
    opt(&fx, REP_SEL_LABEL, "tenant=all"); /* the process's, where the thread set none */
    cr_assert_eq(run(&fx), 15);
    teardown(&fx);
}

Test(filter, label_values_of_a_key_are_alternatives_and_keys_all_apply)
{
    struct fixture fx;
    setup(&fx);
    label(&fx);
    opt(&fx, REP_SEL_LABEL, "endpoint=/a");
    opt(&fx, REP_SEL_LABEL, "endpoint=/b");
    cr_assert_eq(run(&fx), 30);
    teardown(&fx);

    setup(&fx);
    label(&fx);
    opt(&fx, REP_SEL_LABEL, "endpoint=/a");
    opt(&fx, REP_SEL_LABEL, "endpoint=/b");
    opt(&fx, REP_SEL_LABEL, "tenant=all");
    cr_assert_eq(run(&fx), 10, "only /b's samples have tenant=all");
    teardown(&fx);
}

Test(filter, label_without_a_value_keeps_those_with_the_key_and_an_empty_one_those_without)
{
    struct fixture fx;
    setup(&fx);
    label(&fx);
    opt(&fx, REP_SEL_LABEL, "endpoint");
    cr_assert_eq(run(&fx), 30);
    teardown(&fx);

    setup(&fx);
    label(&fx);
    opt(&fx, REP_SEL_LABEL, "endpoint=");
    cr_assert_eq(run(&fx), 5);
    teardown(&fx);

    setup(&fx);
    struct cmn_err err = {0};
    cr_expect_eq(rep_sel_option(&fx.sel, REP_SEL_LABEL, "=x", &err), CMN_E_INPUT);
    teardown(&fx);
}

Test(filter, trace_keeps_the_samples_of_a_trace_or_its_start)
{
    struct fixture fx;
    setup(&fx);
    label(&fx);
    opt(&fx, REP_SEL_TRACE, "1234");
    cr_assert_eq(run(&fx), 10);
    teardown(&fx);

    setup(&fx);
    label(&fx);
    opt(&fx, REP_SEL_TRACE, "12340000000000000000000000000000");
    cr_assert_eq(run(&fx), 0);
    teardown(&fx);

    setup(&fx);
    struct cmn_err err = {0};
    cr_expect_eq(rep_sel_option(&fx.sel, REP_SEL_TRACE, "123", &err), CMN_E_INPUT);
    cr_expect_eq(rep_sel_option(&fx.sel, REP_SEL_TRACE, "zz", &err), CMN_E_INPUT);
    teardown(&fx);
}

Test(filter, by_label_gives_each_value_a_root_frame)
{
    struct fixture fx;
    setup(&fx);
    label(&fx);
    opt(&fx, REP_SEL_BY_LABEL, "endpoint");
    opt(&fx, REP_SEL_BY_LABEL, "tenant");
    cr_assert_eq(run(&fx), 35);
    cr_expect_eq(weight_of(&fx, "endpoint=/a;tenant=t1;0x100;0xa0;0xa1"), 20);
    cr_expect_eq(weight_of(&fx, "endpoint=/b;tenant=all;0x100;0xb0;0xb1"), 10);
    cr_expect_eq(weight_of(&fx, "endpoint=(none);tenant=all;0x100;0xc1"), 5);
    teardown(&fx);
}
