/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Tests of the folded output (reporter/output/folded.c), from aggregates built by hand and
 * from a profile encoded, read and symbolized end to end.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/record.h"
#include "include/libprof/prof_format.h"
#include "reporter/input/profile.h"
#include "reporter/input/read.h"
#include "reporter/output/folded.h"
#include "reporter/stacks/aggregate.h"
#include "reporter/symbols/names.h"
#include "reporter/symbols/symbols.h"
#include "tests/reporter/stacks/agg_fixture.h"

/* Runs the output into a string (free it). */
static char *folded(struct fixture *fx)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    cr_assert_not_null(out);
    cr_assert_eq(rep_out_folded(out, &fx->agg, &fx->names), CMN_OK);
    fclose(out);
    return text;
}

Test(out_folded, prints_sorted_lines_root_first)
{
    struct fixture fx;
    fixture_init(&fx);
    add_stack(&fx, "main|work|leaf_b", 3);
    add_stack(&fx, "main|compute", 5);
    add_stack(&fx, "main|work", 2);
    add_stack(&fx, "main|work|leaf_a", 1);
    add_stack(&fx, "main|work|leaf_b", 4);
    add_stack(&fx, "_start|main", 1);
    add_stack(&fx, "Zeta", 1);
    char *text = folded(&fx);
    cr_assert_str_eq(text, "Zeta 1\n"
                           "_start;main 1\n"
                           "main;compute 5\n"
                           "main;work 2\n"
                           "main;work;leaf_a 1\n"
                           "main;work;leaf_b 7\n");
    free(text);
    teardown(&fx);
}

Test(out_folded, keeps_names_parseable_and_merges_what_then_collides)
{
    struct fixture fx;
    fixture_init(&fx);
    add_stack(&fx, "main|operator;weird", 2);
    add_stack(&fx, "main|operator:weird", 3);
    add_stack(&fx, "main|two\nlines", 1);
    add_stack(&fx, "main|std::map<int, int>::find(int const&)", 4);
    char *text = folded(&fx);
    cr_assert_str_eq(text, "main;operator:weird 5\n"
                           "main;std::map<int, int>::find(int const&) 4\n"
                           "main;two lines 1\n");
    free(text);
    teardown(&fx);
}

Test(out_folded, leaves_out_empty_and_weightless_stacks)
{
    struct fixture fx;
    fixture_init(&fx);
    cr_assert_eq(rep_agg_add(&fx.agg, NULL, 0, 9), CMN_OK);
    add_stack(&fx, "main|idle", 0);
    char *text = folded(&fx);
    cr_assert_str_eq(text, "");
    free(text);
    teardown(&fx);
}

Test(out_folded, reports_a_write_error)
{
    struct fixture fx;
    fixture_init(&fx);
    add_stack(&fx, "main", 1);
    FILE *out = fopen("/dev/full", "w");
    cr_assert_not_null(out);
    cr_assert_eq(rep_out_folded(out, &fx.agg, &fx.names), CMN_E_IO);
    fclose(out);
    teardown(&fx);
}

/* Encodes a small profile of a program "app" and a library "libz.so.1" whose files do not
 * exist here, reads it back and folds it: the names are module+offset. */
Test(out_folded, folds_a_hand_made_profile_exactly)
{
    static unsigned char buf[8192];
    size_t n = cmn_record_file_header(buf, sizeof(buf));
    struct prof_rec_process proc = {.pid = 7, .requested_hz = 100, .effective_hz = 100};
    n += cmn_record_process(buf + n, sizeof(buf) - n, &proc, "/nonexistent/app");
    struct prof_rec_map app = {.start = 0x400000, .end = 0x401000, .file_offset = 0x1000};
    n += cmn_record_map(buf + n, sizeof(buf) - n, &app, "/nonexistent/app");
    struct prof_rec_map lib = {.start = 0x7f0000, .end = 0x7f8000, .file_offset = 0};
    n += cmn_record_map(buf + n, sizeof(buf) - n, &lib, "/nonexistent/libz.so.1");
    /* leaf first: a libz frame called from app, then app alone, then an unmapped pc. */
    const uint64_t f1[] = {0x7f0010, 0x400105, 0x400201};
    const uint64_t f2[] = {0x400010, 0x400201};
    const uint64_t f3[] = {0x12};
    struct prof_rec_sample s = {.weight = 1, .n_frames = 3};
    n += cmn_record_sample(buf + n, sizeof(buf) - n, &s, f1);
    n += cmn_record_sample(buf + n, sizeof(buf) - n, &s, f1);
    s.n_frames = 2;
    s.weight = 3;
    n += cmn_record_sample(buf + n, sizeof(buf) - n, &s, f2);
    s.n_frames = 1;
    s.weight = 1;
    n += cmn_record_sample(buf + n, sizeof(buf) - n, &s, f3);
    n += cmn_record_end(buf + n, sizeof(buf) - n);

    struct rep_profile p;
    struct cmn_err err = {0};
    cr_assert_eq(rep_read_buffer(buf, n, "hand.prof", &p, &err), CMN_OK, "%s", err.msg);
    struct fixture fx;
    fixture_init(&fx);
    struct rep_sym sym;
    rep_sym_init(&sym, &fx.names);
    cr_assert_eq(rep_sym_use_profile(&sym, &p), CMN_OK);
    cr_assert_eq(rep_agg_add_profile(&fx.agg, &sym, &p), CMN_OK);
    char *text = folded(&fx);
    cr_assert_str_eq(text, "0x12 1\n"
                           "app+0x1201;app+0x1010 3\n"
                           "app+0x1201;app+0x1105;libz.so.1+0x10 2\n");
    free(text);
    cr_assert_eq(sym.n_warnings, 2); /* app and libz.so.1 are missing */
    rep_sym_fini(&sym);
    teardown(&fx);
    rep_profile_fini(&p);
}
