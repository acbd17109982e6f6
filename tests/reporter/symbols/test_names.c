/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Tests of name interning (reporter/symbols/names.c).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "reporter/symbols/names.h"

Test(names, gives_one_id_per_distinct_string)
{
    struct rep_names t;
    rep_names_init(&t);
    uint32_t a, b, c;
    cr_assert_eq(rep_names_intern(&t, "main", 4, &a), CMN_OK);
    cr_assert_eq(rep_names_intern(&t, "mainly", 4, &b), CMN_OK); /* only "main" counts */
    cr_assert_eq(rep_names_intern(&t, "work", 4, &c), CMN_OK);
    cr_assert_eq(a, b);
    cr_assert_neq(a, c);
    cr_assert_str_eq(rep_names_get(&t, a), "main");
    cr_assert_str_eq(rep_names_get(&t, c), "work");
    cr_assert_eq(t.n_names, 2);
    rep_names_fini(&t);
    rep_names_fini(NULL);
}

Test(names, keeps_strings_in_place_while_growing)
{
    struct rep_names t;
    rep_names_init(&t);
    uint32_t first;
    cr_assert_eq(rep_names_intern(&t, "first", 5, &first), CMN_OK);
    const char *p = rep_names_get(&t, first);
    char buf[32];
    for (int i = 0; i < 100000; i++) {
        int n = snprintf(buf, sizeof(buf), "function_%d", i);
        uint32_t id;
        cr_assert_eq(rep_names_intern(&t, buf, (size_t)n, &id), CMN_OK);
        cr_assert_eq(id, (uint32_t)i + 1);
    }
    cr_assert_eq(rep_names_get(&t, first), p);
    uint32_t id;
    cr_assert_eq(rep_names_intern(&t, "function_777", 12, &id), CMN_OK);
    cr_assert_eq(id, 778);
    cr_assert_eq(rep_names_intern(&t, "first", 5, &id), CMN_OK);
    cr_assert_eq(id, first);
    rep_names_fini(&t);
}

Test(names, cuts_a_string_at_an_embedded_nul)
{
    struct rep_names t;
    rep_names_init(&t);
    uint32_t a, b;
    cr_assert_eq(rep_names_intern(&t, "ab\0cd", 5, &a), CMN_OK);
    cr_assert_eq(rep_names_intern(&t, "ab", 2, &b), CMN_OK);
    cr_assert_eq(a, b);
    rep_names_fini(&t);
}
