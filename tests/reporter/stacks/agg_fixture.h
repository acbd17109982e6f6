/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The fixture the output tests share (tests/reporter/test_out_*.c): a name table and an
 * aggregate, filled with stacks written as text. Header-only, for the test files only.
 */
#ifndef PROF_TESTS_REPORTER_AGG_FIXTURE_H
#define PROF_TESTS_REPORTER_AGG_FIXTURE_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "common/err.h"
#include "reporter/stacks/aggregate.h"
#include "reporter/symbols/names.h"

struct fixture {
    struct rep_names names;
    struct rep_agg agg;
};

static inline void fixture_init(struct fixture *fx)
{
    rep_names_init(&fx->names);
    rep_agg_init(&fx->agg);
}

static inline void teardown(struct fixture *fx)
{
    rep_agg_fini(&fx->agg);
    rep_names_fini(&fx->names);
}

/* Adds the stack "root<sep>...<sep>leaf" with weight w. */
static inline void add_stack_split(struct fixture *fx, const char *stack, char sep, uint64_t w)
{
    uint32_t ids[64];
    size_t n = 0;
    const char seps[2] = {sep, '\0'};
    for (const char *p = stack; *p;) {
        size_t len = strcspn(p, seps);
        cr_assert(n < 64, "a stack of more than 64 frames");
        cr_assert_eq(rep_names_intern(&fx->names, p, len, &ids[n++]), CMN_OK);
        p += len + (p[len] == sep);
    }
    cr_assert_eq(rep_agg_add(&fx->agg, ids, n, w), CMN_OK);
}

/* Adds the stack "root|...|leaf" (split on '|', so names may hold ';') with weight w. */
static inline void add_stack(struct fixture *fx, const char *stack, uint64_t w)
{
    add_stack_split(fx, stack, '|', w);
}

#endif
