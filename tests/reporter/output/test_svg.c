/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Tests of the SVG and HTML flame graphs (reporter/output/svg.c, reporter/output/html.c): frame
 * geometry, escaping of hostile names, labels cut to fit, left-out narrow frames, the
 * icicle layout, colours and the drawing hooks. The script itself is exercised in a real
 * browser by tests/e2e/test_browser.c.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "reporter/output/html.h"
#include "reporter/output/svg.h"
#include "reporter/stacks/aggregate.h"
#include "reporter/stacks/flame.h"
#include "reporter/symbols/names.h"
#include "tests/reporter/stacks/agg_fixture.h"

/* Draws the aggregate (as an HTML page when is_html) into a string (free it). */
static char *draw(struct fixture *fx, const struct rep_flame_opts *o, bool is_html)
{
    struct rep_flame f;
    cr_assert_eq(rep_flame_build(&f, &fx->agg, &fx->names), CMN_OK);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    cr_assert_not_null(out);
    int rc = is_html ? rep_out_html(out, &fx->agg, &fx->names, o, NULL)
                     : rep_out_svg(out, &f, &fx->names, o);
    cr_assert_eq(rc, CMN_OK);
    fclose(out);
    rep_flame_fini(&f);
    return text;
}

/* The frame whose tooltip starts with escaped_name: a pointer to its <g>, or NULL. */
static const char *find_frame(const char *svg, const char *escaped_name)
{
    char key[512];
    snprintf(key, sizeof(key), "<title>%s\n", escaped_name);
    const char *t = strstr(svg, key);
    if (t == NULL)
        return NULL;
    while (t > svg && strncmp(t, "<g class=\"f\"", 12) != 0)
        t--;
    return t;
}

/* The value of attribute attr of the first element named elem inside frame g. */
static double frame_num(const char *g, const char *elem, const char *attr)
{
    char key[64];
    const char *e = strstr(g, elem);
    cr_assert_not_null(e);
    snprintf(key, sizeof(key), " %s=\"", attr);
    const char *a = strstr(e, key);
    cr_assert_not_null(a, "no %s in %s", attr, elem);
    return strtod(a + strlen(key), NULL);
}

/* The text of the label of frame g, into buf. */
static const char *frame_label(const char *g, char *buf, size_t cap)
{
    const char *t = strstr(strstr(g, "<text"), ">") + 1;
    size_t n = (size_t)(strstr(t, "</text>") - t);
    cr_assert_lt(n, cap);
    memcpy(buf, t, n);
    buf[n] = '\0';
    return buf;
}

Test(out_svg, draws_frames_as_wide_as_their_total)
{
    struct fixture fx;
    fixture_init(&fx);
    add_stack(&fx, "main|hot_a", 6);
    add_stack(&fx, "main|hot_b", 3);
    add_stack(&fx, "main", 1);
    struct rep_flame_opts o = {.title = "My graph"};
    char *svg = draw(&fx, &o, false);
    cr_expect(strncmp(svg, "<?xml ", 6) == 0);
    cr_expect(strstr(svg, ">My graph</text>") != NULL);
    cr_expect(strstr(svg, ">10 samples</text>") != NULL, "the subtitle gives the total");
    const char *all = find_frame(svg, "all"), *main_g = find_frame(svg, "main");
    const char *a = find_frame(svg, "hot_a"), *b = find_frame(svg, "hot_b");
    cr_assert(all && main_g && a && b);
    cr_expect_float_eq(frame_num(main_g, "<rect", "width"), 1180.0, 0.01);
    cr_expect_float_eq(frame_num(a, "<rect", "x"), 10.0, 0.01);
    cr_expect_float_eq(frame_num(a, "<rect", "width"), 708.0, 0.01);
    cr_expect_float_eq(frame_num(b, "<rect", "x"), 718.0, 0.01);
    cr_expect_float_eq(frame_num(b, "<rect", "width"), 354.0, 0.01);
    /* The root is at the bottom, each callee one row up. */
    double y_all = frame_num(all, "<rect", "y"), y_main = frame_num(main_g, "<rect", "y");
    cr_expect_float_eq(y_all - y_main, 16.0, 0.01);
    cr_expect_float_eq(y_main - frame_num(a, "<rect", "y"), 16.0, 0.01);
    cr_expect(strstr(a, "data-s=\"0\" data-t=\"6\" data-d=\"2\"") != NULL);
    cr_expect(strstr(main_g, "<title>main\n10 samples, 100.00 % (self 1)</title>") != NULL);
    cr_expect(strstr(svg, "<![CDATA[") != NULL && strstr(svg, "]]></script>\n</svg>\n") != NULL);
    cr_expect(strstr(svg, "http://") == strstr(svg, "http://www.w3.org/2000/svg\""),
              "the only URL is the SVG namespace");
    free(svg);
    teardown(&fx);
}

Test(out_svg, escapes_hostile_names)
{
    struct fixture fx;
    fixture_init(&fx);
    add_stack(&fx, "main|operator<<(std::ostream&, \"x\")|a'b\x01\xff", 1);
    struct rep_flame_opts o = {.title = "</text><script>alert(1)</script>"};
    char *svg = draw(&fx, &o, false);
    cr_expect(find_frame(svg, "operator&lt;&lt;(std::ostream&amp;, &quot;x&quot;)") != NULL);
    cr_expect(find_frame(svg, "a&apos;b\xef\xbf\xbd\xef\xbf\xbd") != NULL);
    cr_expect(strstr(svg, "&lt;/text&gt;&lt;script&gt;alert(1)&lt;/script&gt;") != NULL);
    cr_expect(strstr(svg, "operator<<") == NULL);
    cr_expect(strstr(svg, "<script>") == NULL);
    cr_expect(strchr(svg, '\x01') == NULL && strchr(svg, '\xff') == NULL);
    free(svg);
    teardown(&fx);
}

Test(out_svg, cuts_labels_to_fit_and_keeps_full_names_in_tooltips)
{
    struct fixture fx;
    fixture_init(&fx);
    const char *name = "a_function_name_far_too_long_for_its_frame";
    char stack[128];
    snprintf(stack, sizeof(stack), "main|%s", name);
    add_stack(&fx, stack, 10); /* 10 % of 1180: 118 units, 15 characters */
    add_stack(&fx, "main|rest", 90);
    add_stack(&fx, "main|x", 1); /* 11.7 units: too narrow for any label */
    struct rep_flame_opts o = {0};
    char *svg = draw(&fx, &o, false);
    char label[256];
    const char *g = find_frame(svg, name);
    cr_assert_not_null(g);
    cr_expect_str_eq(frame_label(g, label, sizeof(label)), "a_function_na..");
    cr_expect_str_eq(frame_label(find_frame(svg, "x"), label, sizeof(label)), "");
    cr_expect_str_eq(frame_label(find_frame(svg, "rest"), label, sizeof(label)), "rest");
    free(svg);
    teardown(&fx);
}

Test(out_svg, leaves_out_narrow_frames_and_says_so)
{
    struct fixture fx;
    fixture_init(&fx);
    add_stack(&fx, "main|big", 9995);
    add_stack(&fx, "main|tiny|tinier", 5); /* 0.05 %: under the default 0.1 % */
    struct rep_flame_opts o = {0};
    char *svg = draw(&fx, &o, false);
    cr_expect(find_frame(svg, "big") != NULL);
    cr_expect(find_frame(svg, "tiny") == NULL);
    cr_expect(find_frame(svg, "tinier") == NULL);
    cr_expect(strstr(svg, "; 1 frames under 0.1 % of the total not drawn (0.05 % of the "
                          "samples)") != NULL);
    free(svg);
    o.min_width = -1; /* everything */
    svg = draw(&fx, &o, false);
    cr_expect(find_frame(svg, "tiny") != NULL && find_frame(svg, "tinier") != NULL);
    cr_expect(strstr(svg, "not drawn") == NULL);
    free(svg);
    teardown(&fx);
}

Test(out_svg, draws_an_icicle_with_the_root_on_top)
{
    struct fixture fx;
    fixture_init(&fx);
    add_stack(&fx, "main|work", 2);
    struct rep_flame_opts o = {.is_icicle = true};
    char *svg = draw(&fx, &o, false);
    double y_all = frame_num(find_frame(svg, "all"), "<rect", "y");
    double y_work = frame_num(find_frame(svg, "work"), "<rect", "y");
    cr_expect_float_eq(y_work - y_all, 32.0, 0.01);
    free(svg);
    teardown(&fx);
}

/* 0xRRGGBB of the fill of frame g. */
static unsigned long frame_fill(const char *g)
{
    const char *f = strstr(g, "fill=\"#");
    cr_assert_not_null(f);
    return strtoul(f + 7, NULL, 16);
}

Test(out_svg, colours_by_name_in_warm_tones_the_same_in_every_graph)
{
    struct fixture fx;
    fixture_init(&fx);
    add_stack(&fx, "main|alpha|beta|gamma", 2);
    add_stack(&fx, "main|delta", 1);
    struct rep_flame_opts o = {0};
    char *svg = draw(&fx, &o, false);
    const char *names[] = {"main", "alpha", "beta", "gamma", "delta"};
    unsigned long fills[5];
    for (size_t i = 0; i < 5; i++) {
        fills[i] = frame_fill(find_frame(svg, names[i]));
        unsigned long r = fills[i] >> 16, g = (fills[i] >> 8) & 0xff, b = fills[i] & 0xff;
        cr_expect(r >= 200 && r >= g && g >= b, "%s is #%06lx, not warm", names[i], fills[i]);
    }
    free(svg);
    add_stack(&fx, "other|gamma", 50);
    svg = draw(&fx, &o, false);
    cr_expect_eq(frame_fill(find_frame(svg, "gamma")), fills[3]);
    free(svg);
    teardown(&fx);
}

static void paint(void *ctx, const struct rep_flame *f, uint32_t node, uint32_t *rgb)
{
    (void)ctx;
    *rgb = f->nodes[node].depth == 2 ? 0x123456 : 0xabcdef;
}

static size_t annotate(void *ctx, const struct rep_flame *f, uint32_t node, char *buf, size_t cap)
{
    return (size_t)snprintf(buf, cap, "%s %u <d>", (const char *)ctx, f->nodes[node].depth);
}

Test(out_svg, draws_through_the_colour_and_note_hooks)
{
    struct fixture fx;
    fixture_init(&fx);
    add_stack(&fx, "main|work", 2);
    struct rep_flame_opts o = {.color = paint, .note = annotate, .hook_ctx = "depth"};
    char *svg = draw(&fx, &o, false);
    const char *work = find_frame(svg, "work");
    cr_expect_eq(frame_fill(work), 0x123456);
    cr_expect_eq(frame_fill(find_frame(svg, "main")), 0xabcdef);
    cr_expect(strstr(work, "(self 2)") == NULL && strstr(work, "2 samples, 100.00 %\ndepth 2 "
                                                               "&lt;d&gt;</title>") != NULL);
    free(svg);
    teardown(&fx);
}

/* The page holds the graph's place, a search box and the data its script draws from: the
 * names (a name that could end the script element escaped), the stacks, their weights. */
Test(out_svg, html_page_holds_the_graph_its_data_and_a_search_box)
{
    struct fixture fx;
    fixture_init(&fx);
    add_stack(&fx, "main|work", 2);
    add_stack(&fx, "main|</script><b>", 1);
    struct rep_flame_opts o = {.title = "A & B"};
    char *html = draw(&fx, &o, true);
    cr_expect(strncmp(html, "<!DOCTYPE html>\n", 16) == 0);
    cr_expect(strstr(html, "<title>A &amp; B</title>") != NULL);
    cr_expect(strstr(html, "id=\"pf-search-input\"") != NULL);
    cr_expect(strstr(html, "<svg id=\"pf-svg\"") != NULL);
    cr_expect(strstr(html, "<?xml") == NULL);
    cr_expect(strstr(html, "\"names\":[\"main\",\"work\",\"\\u003c/script\\u003e\\u003cb\\u003e\"]") !=
              NULL);
    cr_expect(strstr(html, "\"stacks\":[[0,1],[0,2]],\"weights\":[2,1]") != NULL);
    cr_expect(strstr(html, "</script><b>") == NULL);
    cr_expect(strstr(html, "</script>\n</body>\n</html>\n") != NULL);
    free(html);
    teardown(&fx);
}

Test(out_svg, reports_a_write_error)
{
    struct fixture fx;
    fixture_init(&fx);
    add_stack(&fx, "main", 1);
    struct rep_flame f;
    struct rep_flame_opts o = {0};
    cr_assert_eq(rep_flame_build(&f, &fx.agg, &fx.names), CMN_OK);
    FILE *out = fopen("/dev/full", "w");
    cr_assert_not_null(out);
    cr_expect_eq(rep_out_svg(out, &f, &fx.names, &o), CMN_E_IO);
    fclose(out);
    out = fopen("/dev/full", "w");
    cr_expect_eq(rep_out_html(out, &fx.agg, &fx.names, &o, NULL), CMN_E_IO);
    fclose(out);
    rep_flame_fini(&f);
    teardown(&fx);
}
