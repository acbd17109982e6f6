/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Tests of the json output (reporter/output/json.c): the exact text for hand-made
 * aggregates, hostile names, deep stacks and write errors.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "reporter/output/json.h"
#include "reporter/stacks/aggregate.h"
#include "reporter/stacks/flame.h"
#include "reporter/symbols/names.h"
#include "tests/reporter/stacks/agg_fixture.h"

/* Runs the output into a string (free it). */
static char *json(struct fixture *fx)
{
    struct rep_flame f;
    cr_assert_eq(rep_flame_build(&f, &fx->agg, &fx->names), CMN_OK);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    cr_assert_not_null(out);
    cr_assert_eq(rep_out_json(out, &f, &fx->names), CMN_OK);
    fclose(out);
    rep_flame_fini(&f);
    return text;
}

Test(out_json, writes_the_tree_with_children_by_total)
{
    struct fixture fx;
    fixture_init(&fx);
    add_stack(&fx, "main|parse|lex", 3);
    add_stack(&fx, "main|eval", 4);
    add_stack(&fx, "main|parse", 1);
    add_stack(&fx, "main|alloc", 1);
    add_stack(&fx, "main|zap", 1);
    add_stack(&fx, "_start", 2);
    cr_assert_eq(rep_agg_add(&fx.agg, NULL, 0, 1), CMN_OK);
    char *text = json(&fx);
    cr_assert_str_eq(text, "{\"total\":13,\"unit\":\"samples\",\"root\":"
                           "{\"name\":\"all\",\"self\":1,\"total\":13,\"children\":["
                           "{\"name\":\"main\",\"self\":0,\"total\":10,\"children\":["
                           "{\"name\":\"eval\",\"self\":4,\"total\":4,\"children\":[]},"
                           "{\"name\":\"parse\",\"self\":1,\"total\":4,\"children\":["
                           "{\"name\":\"lex\",\"self\":3,\"total\":3,\"children\":[]}]},"
                           "{\"name\":\"alloc\",\"self\":1,\"total\":1,\"children\":[]},"
                           "{\"name\":\"zap\",\"self\":1,\"total\":1,\"children\":[]}]},"
                           "{\"name\":\"_start\",\"self\":2,\"total\":2,\"children\":[]}]}}\n");
    free(text);
    teardown(&fx);
}

Test(out_json, writes_an_empty_profile)
{
    struct fixture fx;
    fixture_init(&fx);
    char *text = json(&fx);
    cr_assert_str_eq(text, "{\"total\":0,\"unit\":\"samples\",\"root\":"
                           "{\"name\":\"all\",\"self\":0,\"total\":0,\"children\":[]}}\n");
    free(text);
    teardown(&fx);
}

Test(out_json, escapes_hostile_names)
{
    struct fixture fx;
    fixture_init(&fx);
    add_stack(&fx, "main|say \"hi\"\\n\n<&>\x01\xff", 1);
    char *text = json(&fx);
    cr_assert_str_eq(text, "{\"total\":1,\"unit\":\"samples\",\"root\":"
                           "{\"name\":\"all\",\"self\":0,\"total\":1,\"children\":["
                           "{\"name\":\"main\",\"self\":0,\"total\":1,\"children\":["
                           "{\"name\":\"say \\\"hi\\\"\\\\n\\u000a<&>\\u0001\xef\xbf\xbd\","
                           "\"self\":1,\"total\":1,\"children\":[]}]}]}}\n");
    free(text);
    teardown(&fx);
}

Test(out_json, closes_every_object_of_a_deep_stack)
{
    struct fixture fx;
    fixture_init(&fx);
    uint32_t ids[20000];
    cr_assert_eq(rep_names_intern(&fx.names, "r", 1, &ids[0]), CMN_OK);
    for (size_t i = 1; i < 20000; i++)
        ids[i] = ids[0];
    cr_assert_eq(rep_agg_add(&fx.agg, ids, 20000, 1), CMN_OK);
    char *text = json(&fx);
    size_t opens = 0, closes = 0;
    for (const char *c = text; *c; c++) {
        opens += *c == '{';
        closes += *c == '}';
    }
    cr_expect_eq(opens, 20002);
    cr_expect_eq(closes, 20002);
    cr_expect(strstr(text, "\"children\":[]}]}") != NULL);
    free(text);
    teardown(&fx);
}

Test(out_json, reports_a_write_error)
{
    struct fixture fx;
    fixture_init(&fx);
    add_stack(&fx, "main", 1);
    struct rep_flame f;
    cr_assert_eq(rep_flame_build(&f, &fx.agg, &fx.names), CMN_OK);
    FILE *out = fopen("/dev/full", "w");
    cr_assert_not_null(out);
    cr_assert_eq(rep_out_json(out, &f, &fx.names), CMN_E_IO);
    fclose(out);
    rep_flame_fini(&f);
    teardown(&fx);
}
