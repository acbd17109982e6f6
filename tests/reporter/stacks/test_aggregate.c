/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Tests of stack aggregation (reporter/stacks/aggregate.c): samples of this very binary,
 * symbolized for real, so that addresses in one function merge.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "reporter/input/profile.h"
#include "reporter/stacks/aggregate.h"
#include "reporter/symbols/names.h"
#include "reporter/symbols/symbols.h"

__attribute__((noinline)) int agg_test_leaf(int x);
__attribute__((noinline)) int agg_test_leaf(int x)
{
    return x * 5 + 1;
}

__attribute__((noinline)) int agg_test_root(int x);
__attribute__((noinline)) int agg_test_root(int x)
{
    return agg_test_leaf(x) + agg_test_leaf(x + 1);
}

/* A leaf without a frame and its caller: an older library kept the word at the leaf's
 * stack pointer (sp_word), its return address into agg_test_caller. */
static volatile uint64_t agg_ra_into_caller;

__attribute__((noipa)) uint64_t agg_test_frameless(uint64_t x);
__attribute__((noipa)) uint64_t agg_test_frameless(uint64_t x)
{
    agg_ra_into_caller = (uint64_t)(uintptr_t)__builtin_return_address(0);
    return x ^ (x << 13);
}

__attribute__((noipa)) uint64_t agg_test_caller(uint64_t x);
__attribute__((noipa)) uint64_t agg_test_caller(uint64_t x)
{
    return agg_test_frameless(x) + 1;
}

/* A copy of s that lives as long as the test process, so that mappings can point to it. */
static const char *keep_path(const char *s)
{
    static char pool[1 << 17];
    static size_t used;
    size_t n = strlen(s) + 1;
    cr_assert_leq(used + n, sizeof(pool));
    char *copy = memcpy(pool + used, s, n);
    used += n;
    return copy;
}

static void add_self_maps(struct rep_profile *p)
{
    FILE *f = fopen("/proc/self/maps", "r");
    cr_assert_not_null(f);
    char line[PATH_MAX + 256];
    while (fgets(line, sizeof(line), f) != NULL) {
        unsigned long start, end, off;
        char path[PATH_MAX] = "";
        if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %4095[^\n]", &start, &end, &off, path) < 3 ||
            path[0] != '/')
            continue;
        struct rep_map m = {
            .start = start, .end = end, .file_offset = off, .path = keep_path(path)};
        cr_assert_eq(rep_profile_add_map(p, &m), CMN_OK);
    }
    fclose(f);
}

static void add_sample(struct rep_profile *p, const uint64_t *frames, uint16_t n, uint32_t w)
{
    struct rep_sample s = {.weight = w, .n_frames = n, .frames = (const void *)frames};
    cr_assert_eq(rep_profile_add_sample(p, &s), CMN_OK);
}

/* Spells stack i as "root;...;leaf". */
static const char *spell(const struct rep_agg *a, const struct rep_names *names, size_t i)
{
    static char buf[1024];
    buf[0] = '\0';
    const uint32_t *ids = rep_agg_stack_ids(a, i);
    for (uint32_t f = 0; f < a->stacks[i].n_ids; f++) {
        if (f > 0)
            strcat(buf, ";");
        strcat(buf, rep_names_get(names, ids[f]));
    }
    return buf;
}

Test(aggregate, merges_addresses_of_one_function_and_keeps_recursion)
{
    uint64_t leaf = (uint64_t)(uintptr_t)&agg_test_leaf;
    uint64_t root = (uint64_t)(uintptr_t)&agg_test_root;
    /* Leaf first, as recorded; callers are return addresses inside agg_test_root. */
    static uint64_t s1[2], s2[2], s3[3], s4[1];
    s1[0] = leaf + 1, s1[1] = root + 5;
    s2[0] = leaf + 3, s2[1] = root + 9;
    s3[0] = leaf + 1, s3[1] = root + 5, s3[2] = root + 9;
    s4[0] = root + 2;

    struct rep_profile p;
    rep_profile_init(&p, "self");
    p.has_process = true;
    p.process.requested_hz = 100;
    p.process.effective_hz = 50;
    add_self_maps(&p);
    add_sample(&p, s1, 2, 1);
    add_sample(&p, s2, 2, 2);
    add_sample(&p, s3, 3, 4);
    add_sample(&p, s4, 1, 8);
    add_sample(&p, s4, 0, 16); /* no frames: counted, no stack */
    rep_profile_finish(&p);

    struct rep_names names;
    struct rep_sym sym;
    struct rep_agg agg;
    rep_names_init(&names);
    rep_sym_init(&sym, &names);
    rep_agg_init(&agg);
    cr_assert_eq(rep_sym_use_profile(&sym, &p), CMN_OK);
    cr_assert_eq(rep_agg_add_profile(&agg, &sym, &p), CMN_OK);

    cr_assert_eq(agg.n_stacks, 3);
    cr_assert_str_eq(spell(&agg, &names, 0), "agg_test_root;agg_test_leaf");
    cr_assert_eq(agg.stacks[0].weight, 3);
    cr_assert_str_eq(spell(&agg, &names, 1), "agg_test_root;agg_test_root;agg_test_leaf");
    cr_assert_eq(agg.stacks[1].weight, 4);
    cr_assert_str_eq(spell(&agg, &names, 2), "agg_test_root");
    cr_assert_eq(agg.stacks[2].weight, 8);
    cr_assert_eq(agg.total_weight, 31);
    cr_assert_eq(agg.n_samples, 5);
    cr_assert_eq(agg.n_empty, 1);
    cr_assert_float_eq(agg.seconds, 31.0 / 50, 1e-9); /* the effective rate wins */
    cr_assert_eq(agg.timed_weight, 31);
    cr_assert_eq(agg.requested_hz, 100);

    rep_agg_fini(&agg);
    rep_sym_fini(&sym);
    rep_names_fini(&names);
    rep_profile_fini(&p);
}

Test(aggregate, sums_equal_stacks_and_tracks_rates)
{
    struct rep_agg agg;
    rep_agg_init(&agg);
    const uint32_t a[] = {1, 2, 3}, b[] = {1, 2}, c[] = {1, 2, 3, 3};
    cr_assert_eq(rep_agg_add(&agg, a, 3, 5), CMN_OK);
    cr_assert_eq(rep_agg_add(&agg, b, 2, 1), CMN_OK);
    cr_assert_eq(rep_agg_add(&agg, a, 3, 2), CMN_OK);
    cr_assert_eq(rep_agg_add(&agg, c, 4, 1), CMN_OK);
    cr_assert_eq(agg.n_stacks, 3);
    cr_assert_eq(agg.stacks[0].weight, 7);
    cr_assert_eq(agg.total_weight, 9);
    rep_agg_fini(&agg);
    rep_agg_fini(NULL);
}

Test(aggregate, grows_to_many_stacks)
{
    struct rep_agg agg;
    rep_agg_init(&agg);
    for (uint32_t i = 0; i < 50000; i++) {
        uint32_t ids[3] = {0, i % 1000, i};
        cr_assert_eq(rep_agg_add(&agg, ids, 3, 1), CMN_OK);
        cr_assert_eq(rep_agg_add(&agg, ids, 2, 1), CMN_OK);
    }
    cr_assert_eq(agg.n_stacks, 51000);
    cr_assert_eq(agg.total_weight, 100000);
    uint32_t probe[2] = {0, 999};
    cr_assert_eq(rep_agg_add(&agg, probe, 2, 1), CMN_OK);
    cr_assert_eq(agg.n_stacks, 51000);
    rep_agg_fini(&agg);
}

/* Aggregates samples of frames (leaf first) with the given sp_words into a; returns the
 * spelled stacks joined by '|'. */
static const char *aggregate_with_sp(const uint64_t (*frames)[2], const uint64_t *sp_words,
                                     size_t n)
{
    static char out[4096];
    struct rep_profile p;
    rep_profile_init(&p, "self");
    add_self_maps(&p);
    for (size_t i = 0; i < n; i++) {
        struct rep_sample s = {
            .weight = 1, .n_frames = 2, .sp_word = sp_words[i], .frames = (const void *)frames[i]};
        cr_assert_eq(rep_profile_add_sample(&p, &s), CMN_OK);
    }
    rep_profile_finish(&p);
    struct rep_names names;
    struct rep_sym sym;
    struct rep_agg agg;
    rep_names_init(&names);
    rep_sym_init(&sym, &names);
    rep_agg_init(&agg);
    cr_assert_eq(rep_sym_use_profile(&sym, &p), CMN_OK);
    cr_assert_eq(rep_agg_add_profile(&agg, &sym, &p), CMN_OK);
    out[0] = '\0';
    for (size_t i = 0; i < agg.n_stacks; i++) {
        if (i > 0)
            strcat(out, "|");
        strcat(out, spell(&agg, &names, i));
    }
    rep_agg_fini(&agg);
    rep_sym_fini(&sym);
    rep_names_fini(&names);
    rep_profile_fini(&p);
    return out;
}

/* The walks prove a leaf's caller themselves: the sp_word of an old profile adds nothing. */
Test(aggregate, an_old_profiles_sp_word_adds_no_frame)
{
    agg_test_caller(7);
    uint64_t leaf = (uint64_t)(uintptr_t)&agg_test_frameless;
    uint64_t root = (uint64_t)(uintptr_t)&agg_test_root;
    /* As an old frame-pointer walk recorded it: the leaf, then the return address found
     * through the caller's frame pointer, which leads into the caller's caller. */
    static uint64_t f[1][2];
    f[0][0] = leaf, f[0][1] = root + 5;
    const uint64_t sp[1] = {agg_ra_into_caller};
    cr_assert_str_eq(aggregate_with_sp((const uint64_t(*)[2])f, sp, 1),
                     "agg_test_root;agg_test_frameless");
}
