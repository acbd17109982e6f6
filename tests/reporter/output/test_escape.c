/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Tests of the XML and JSON escaping of hostile function names (reporter/output/escape.c): markup
 * characters, quotes, control characters and bytes that are not UTF-8.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reporter/output/escape.h"

/* A name with everything that can go wrong: markup, both quotes, a backslash, a tab, a
 * newline, a control character, DEL, a lone continuation byte, an overlong '/', a
 * surrogate, a sequence cut short, then valid two-, three- and four-byte characters. */
static const char hostile[] = "a<b>&\"c'\\\t\n\x01\x7f|\x80|\xc0\xaf|\xed\xa0\x80|\xe2\x82|"
                              "\xc3\xa9\xe2\x82\xac\xf0\x9f\x94\xa5";

static char *xml(const char *s, size_t max_cps, size_t *n_cps)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    cr_assert_not_null(out);
    *n_cps = rep_escape_xml(out, s, max_cps);
    fclose(out);
    return text;
}

static char *json(const char *s)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    cr_assert_not_null(out);
    rep_escape_json(out, s);
    fclose(out);
    return text;
}

#define BAD "\xef\xbf\xbd" /* U+FFFD in UTF-8 */

Test(escape, decodes_valid_utf8_and_replaces_each_bad_byte)
{
    uint32_t cp;
    cr_expect_eq(rep_utf8_decode("\xc3\xa9", 2, &cp), 2);
    cr_expect_eq(cp, 0xe9);
    cr_expect_eq(rep_utf8_decode("\xf0\x9f\x94\xa5", 4, &cp), 4);
    cr_expect_eq(cp, 0x1f525);
    cr_expect_eq(rep_utf8_decode("\xc0\xaf", 2, &cp), 1, "overlong");
    cr_expect_eq(cp, REP_UTF8_BAD);
    cr_expect_eq(rep_utf8_decode("\xed\xa0\x80", 3, &cp), 1, "surrogate");
    cr_expect_eq(cp, REP_UTF8_BAD);
    cr_expect_eq(rep_utf8_decode("\xf4\x90\x80\x80", 4, &cp), 1, "past U+10FFFF");
    cr_expect_eq(rep_utf8_decode("\xe2\x82", 2, &cp), 1, "cut short");
    cr_expect_eq(rep_utf8_decode("\xe2\x82\xac", 2, &cp), 1, "past the end given");
    cr_expect_eq(rep_utf8_count(hostile), 29);
}

Test(escape, xml_escapes_markup_and_replaces_what_xml_cannot_hold)
{
    size_t n;
    char *text = xml(hostile, SIZE_MAX, &n);
    cr_expect_str_eq(text, "a&lt;b&gt;&amp;&quot;c&apos;\\\t" BAD BAD BAD "|" BAD "|" BAD BAD
                           "|" BAD BAD BAD "|" BAD BAD "|\xc3\xa9\xe2\x82\xac\xf0\x9f\x94\xa5");
    cr_expect_eq(n, 29);
    free(text);
}

Test(escape, xml_cuts_at_whole_characters)
{
    size_t n;
    char *text = xml("\xc3\xa9t\xc3\xa9<x>", 4, &n);
    cr_expect_str_eq(text, "\xc3\xa9t\xc3\xa9&lt;");
    cr_expect_eq(n, 4);
    free(text);
    text = xml("ab", 5, &n);
    cr_expect_str_eq(text, "ab");
    cr_expect_eq(n, 2);
    free(text);
}

Test(escape, json_escapes_quotes_backslashes_and_control_characters)
{
    char *text = json(hostile);
    cr_expect_str_eq(text, "\"a<b>&\\\"c'\\\\\\u0009\\u000a\\u0001\\u007f|" BAD "|" BAD BAD
                           "|" BAD BAD BAD "|" BAD BAD "|\xc3\xa9\xe2\x82\xac\xf0\x9f\x94\xa5\"");
    free(text);
    text = json("");
    cr_expect_str_eq(text, "\"\"");
    free(text);
}
