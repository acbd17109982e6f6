/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Tests of the diff outputs (reporter/output/diff.c): the text table, the JSON document and
 * the Markdown table, on a small synthetic pair, with names that need escaping.
 */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "reporter/compare/diff.h"
#include "reporter/output/diff.h"
#include "reporter/stacks/aggregate.h"
#include "reporter/symbols/names.h"

struct fixture {
    struct rep_names names;
    struct rep_diff diff;
};

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
    cr_assert_eq(rep_agg_add(a, ids, n, w), CMN_OK);
}

/* Base: main;hot 400, main;cold 600 (1 s); new: main;hot 600, main;cold 400 (1.25 s). */
static void setup(struct fixture *fx, const char *hot, const char *cold)
{
    rep_names_init(&fx->names);
    rep_diff_init(&fx->diff);
    struct rep_agg *run;
    char stack[64];
    cr_assert_eq(rep_diff_new_run(&fx->diff, REP_DIFF_BASE, &run), CMN_OK);
    snprintf(stack, sizeof(stack), "main;%s", hot);
    add_stack(fx, run, stack, 400);
    snprintf(stack, sizeof(stack), "main;%s", cold);
    add_stack(fx, run, stack, 600);
    run->seconds = 1.0;
    cr_assert_eq(rep_diff_new_run(&fx->diff, REP_DIFF_NEW, &run), CMN_OK);
    snprintf(stack, sizeof(stack), "main;%s", hot);
    add_stack(fx, run, stack, 600);
    snprintf(stack, sizeof(stack), "main;%s", cold);
    add_stack(fx, run, stack, 400);
    run->seconds = 1.25;
    cr_assert_eq(rep_diff_compute(&fx->diff, fx->names.n_names), CMN_OK);
}

static void teardown(struct fixture *fx)
{
    rep_diff_fini(&fx->diff);
    rep_names_fini(&fx->names);
}

static char *render(struct fixture *fx, enum rep_diff_format format, size_t limit)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    cr_assert_not_null(out);
    struct rep_diff_out_opts o = {.format = format, .limit = limit, .confidence = 0.99};
    cr_assert_eq(rep_out_diff(out, &fx->diff, &fx->names, &o), CMN_OK);
    fclose(out);
    return text;
}

Test(diff_out, text_marks_significant_changes)
{
    struct fixture fx;
    setup(&fx, "hot", "cold");
    char *text = render(&fx, REP_DIFF_TEXT, 0);
    cr_expect_str_eq(
        text,
        "base: 1 run, 1000 samples, 1.000 s CPU a run; new: 1 run, 1000 samples, 1.250 s CPU a "
        "run (+25.0 %)\n"
        "'*': a change that sampling noise does not explain (one-sided p < 0.01)\n"
        " self base   self new     change total base  total new     change  function\n"
        "   40.00 %    60.00 %    +20.00*    40.00 %    60.00 %    +20.00*  hot\n"
        "   60.00 %    40.00 %    -20.00*    60.00 %    40.00 %    -20.00*  cold\n"
        "    0.00 %     0.00 %     +0.00    100.00 %   100.00 %     +0.00   main\n");
    free(text);
    text = render(&fx, REP_DIFF_TEXT, 1);
    cr_expect(strstr(text, "Showing 1 of 3 functions, by size of change\n") != NULL, "%s", text);
    cr_expect(strstr(text, "cold") == NULL, "%s", text);
    free(text);
    teardown(&fx);
}

Test(diff_out, json_is_a_stable_document_with_escaped_names)
{
    struct fixture fx;
    setup(&fx, "a\"b\\c", "tab\there");
    char *text = render(&fx, REP_DIFF_JSON, 0);
    static const char head[] =
        "{\n  \"format\": \"prof-diff\", \"version\": 1, \"confidence\": 0.99,\n"
        "  \"base\": {\"runs\": 1, \"samples\": 1000, \"cpu_seconds\": [1.000000], "
        "\"cpu_seconds_mean\": 1.000000, \"cpu_seconds_sd\": 0.000000},\n";
    cr_expect(strncmp(text, head, sizeof(head) - 1) == 0, "%s", text);
    cr_expect(strstr(text, "\"cpu_time\": {\"change_percent\": 25.0000, \"p\": null},\n") != NULL,
              "%s", text);
    cr_expect(strstr(text, "{\"name\": \"a\\\"b\\\\c\", \"self_samples_base\": 400, "
                           "\"self_samples_new\": 600, \"self_base\": 40.0000, \"self_new\": "
                           "60.0000, \"self_change\": 20.0000, \"self_p\": ") != NULL,
              "%s", text);
    cr_expect(strstr(text, "\"name\": \"tab\\u0009here\"") != NULL, "%s", text);
    cr_expect(strstr(text, "\"total_significant\": true}") != NULL, "%s", text);
    cr_expect(strstr(text, "\"n_functions\": 3,") != NULL, "%s", text);
    size_t len = strlen(text);
    cr_expect(len > 6 && strcmp(text + len - 6, "  ]\n}\n") == 0, "%s", text);
    free(text);
    teardown(&fx);
}

Test(diff_out, markdown_is_a_table_with_escaped_pipes)
{
    struct fixture fx;
    setup(&fx, "op|or", "tick`name");
    char *text = render(&fx, REP_DIFF_MARKDOWN, 0);
    cr_expect(strstr(text, "**prof diff**: base 1 run, 1000 samples, 1.000 s CPU a run; new 1 run, "
                           "1000 samples, 1.250 s CPU a run (CPU time +25.0 %)\n\n") == text,
              "%s", text);
    cr_expect(strstr(text, "| function | self base | self new | self change | total base | total "
                           "new | total change |\n|:---|---:|---:|---:|---:|---:|---:|\n") != NULL,
              "%s", text);
    cr_expect(strstr(text, "| `op\\|or` | 40.00 % | 60.00 % | **+20.00** | 40.00 % | 60.00 % | "
                           "**+20.00** |\n") != NULL,
              "%s", text);
    cr_expect(strstr(text, "| `` tick`name `` | 60.00 % | 40.00 % | **-20.00** |") != NULL, "%s",
              text);
    cr_expect(
        strstr(text, "| `main` | 0.00 % | 0.00 % | +0.00 | 100.00 % | 100.00 % | +0.00 |\n") !=
            NULL,
        "%s", text);
    free(text);
    teardown(&fx);
}

/* The text of the SVG group of the frame named name (its title starts with the name). */
static const char *frame_of(const char *svg, const char *name)
{
    char key[64];
    snprintf(key, sizeof(key), "<title>%s\n", name);
    const char *at = strstr(svg, key);
    cr_assert_not_null(at, "no frame %s in:\n%s", name, svg);
    return at;
}

static bool frame_has(const char *svg, const char *name, const char *text)
{
    const char *at = frame_of(svg, name);
    const char *end = strstr(at, "</g>");
    const char *hit = strstr(at, text);
    return hit != NULL && end != NULL && hit < end;
}

Test(diff_out, svg_colours_frames_by_the_change_of_their_share)
{
    struct fixture fx;
    setup(&fx, "hot", "cold"); /* hot grew by 20 points (red, the largest change), cold shrank by 20
                                * (blue), main did not change (grey). */
    char *svg = render(&fx, REP_DIFF_SVG, 0);
    cr_expect(strncmp(svg, "<?xml", 5) == 0, "%.200s", svg);
    cr_expect(strstr(svg, "Differential flame graph") != NULL);
    cr_expect(frame_has(svg, "hot", "fill=\"#ff0000\""), "%s", frame_of(svg, "hot"));
    cr_expect(frame_has(svg, "hot", "base 40.00 % -&gt; new 60.00 % (+20.00 points)"), "%s",
              frame_of(svg, "hot"));
    cr_expect(frame_has(svg, "cold", "fill=\"#0000ff\""), "%s", frame_of(svg, "cold"));
    cr_expect(frame_has(svg, "main", "fill=\"#dcdcdc\""), "%s", frame_of(svg, "main"));
    cr_expect(frame_has(svg, "main", "(+0.00 points, within noise)"), "%s", frame_of(svg, "main"));
    free(svg);
    teardown(&fx);
}

Test(diff_out, svg_has_the_new_shape_and_greys_noise)
{
    struct fixture fx;
    rep_names_init(&fx.names);
    rep_diff_init(&fx.diff);
    struct rep_agg *run;
    cr_assert_eq(rep_diff_new_run(&fx.diff, REP_DIFF_BASE, &run), CMN_OK);
    add_stack(&fx, run, "main;a", 50);
    add_stack(&fx, run, "main;gone", 50);
    cr_assert_eq(rep_diff_new_run(&fx.diff, REP_DIFF_NEW, &run), CMN_OK);
    add_stack(&fx, run, "main;a", 52);
    add_stack(&fx, run, "main;fresh", 48);
    cr_assert_eq(rep_diff_compute(&fx.diff, fx.names.n_names), CMN_OK);
    char *svg = render(&fx, REP_DIFF_SVG, 0);
    /* gone is not drawn; fresh is new and red; a's +2 points on 100 samples is noise. */
    cr_expect(strstr(svg, "<title>gone\n") == NULL);
    cr_expect(frame_has(svg, "fresh", "fill=\"#ff0000\""), "%s", frame_of(svg, "fresh"));
    cr_expect(frame_has(svg, "a", "fill=\"#dcdcdc\""), "%s", frame_of(svg, "a"));
    cr_expect(frame_has(svg, "a", "(+2.00 points, within noise)"), "%s", frame_of(svg, "a"));
    free(svg);
    teardown(&fx);
}
