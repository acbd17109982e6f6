/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * UTF-8 decoding and XML and JSON escaping, one code point at a time, written with
 * stdio (the outputs write through a buffered FILE anyway). Reporter thread.
 */
#include "reporter/output/escape.h"

#include <stdbool.h>

#include <string.h>

size_t rep_utf8_decode(const char *s, size_t n, uint32_t *cp)
{
    const unsigned char *b = (const unsigned char *)s;
    size_t len;
    uint32_t v, min;
    if (b[0] < 0x80) {
        *cp = b[0];
        return 1;
    } else if (b[0] >= 0xc2 && b[0] <= 0xdf) {
        len = 2, v = b[0] & 0x1f, min = 0x80;
    } else if (b[0] >= 0xe0 && b[0] <= 0xef) {
        len = 3, v = b[0] & 0x0f, min = 0x800;
    } else if (b[0] >= 0xf0 && b[0] <= 0xf4) {
        len = 4, v = b[0] & 0x07, min = 0x10000;
    } else {
        *cp = REP_UTF8_BAD;
        return 1;
    }
    if (len > n)
        len = 0;
    for (size_t i = 1; i < len; i++) {
        if ((b[i] & 0xc0) != 0x80) {
            len = 0;
            break;
        }
        v = (v << 6) | (b[i] & 0x3f);
    }
    /* Overlong forms, surrogates and values past U+10FFFF are not UTF-8. */
    if (len == 0 || v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) {
        *cp = REP_UTF8_BAD;
        return 1;
    }
    *cp = v;
    return len;
}

size_t rep_utf8_count(const char *s)
{
    size_t n = strlen(s), count = 0;
    uint32_t cp;
    for (size_t i = 0; i < n; count++)
        i += rep_utf8_decode(s + i, n - i, &cp);
    return count;
}

static void put_utf8(FILE *out, uint32_t cp)
{
    if (cp < 0x80) {
        fputc((int)cp, out);
    } else if (cp < 0x800) {
        fputc((int)(0xc0 | (cp >> 6)), out);
        fputc((int)(0x80 | (cp & 0x3f)), out);
    } else if (cp < 0x10000) {
        fputc((int)(0xe0 | (cp >> 12)), out);
        fputc((int)(0x80 | ((cp >> 6) & 0x3f)), out);
        fputc((int)(0x80 | (cp & 0x3f)), out);
    } else {
        fputc((int)(0xf0 | (cp >> 18)), out);
        fputc((int)(0x80 | ((cp >> 12) & 0x3f)), out);
        fputc((int)(0x80 | ((cp >> 6) & 0x3f)), out);
        fputc((int)(0x80 | (cp & 0x3f)), out);
    }
}

size_t rep_escape_xml(FILE *out, const char *s, size_t max_cps)
{
    size_t n = strlen(s), count = 0;
    for (size_t i = 0; i < n && count < max_cps; count++) {
        uint32_t cp;
        i += rep_utf8_decode(s + i, n - i, &cp);
        switch (cp) {
        case '&':
            fputs("&amp;", out);
            break;
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        case '\'':
            fputs("&apos;", out);
            break;
        default:
            /* XML 1.0 has no way to write these, not even as references. */
            if ((cp < 0x20 && cp != '\t') || cp == 0x7f || cp == 0xfffe || cp == 0xffff)
                cp = REP_UTF8_BAD;
            put_utf8(out, cp);
        }
    }
    return count;
}

static void escape_json(FILE *out, const char *s, bool is_script)
{
    size_t n = strlen(s);
    fputc('"', out);
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        i += rep_utf8_decode(s + i, n - i, &cp);
        if (cp == '"' || cp == '\\')
            fprintf(out, "\\%c", (char)cp);
        else if (cp < 0x20 || cp == 0x7f || (is_script && (cp == '<' || cp == '>' || cp == '&')))
            fprintf(out, "\\u%04x", (unsigned)cp);
        else
            put_utf8(out, cp);
    }
    fputc('"', out);
}

void rep_escape_json(FILE *out, const char *s)
{
    escape_json(out, s, false);
}

void rep_escape_json_script(FILE *out, const char *s)
{
    escape_json(out, s, true);
}
