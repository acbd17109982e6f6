/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Text escaping for the XML and JSON outputs (out_svg.c, out_html.c, out_json.c,
 * out_speedscope.c). Function names come from binaries and can hold anything, so every
 * byte string is first read as UTF-8: a byte that does not start a valid, shortest-form
 * sequence (or that would make a surrogate or a code point past U+10FFFF) stands for
 * U+FFFD and is skipped alone. XML gets &amp; &lt; &gt; &quot; &apos; and, for the
 * characters XML 1.0 cannot carry at all (control characters but tab, U+FFFE, U+FFFF),
 * U+FFFD. JSON gets \" \\ and \u00XX for control characters. Output is always valid
 * UTF-8. Pure functions writing to a caller's FILE; reporter thread.
 */
#ifndef PROF_REPORTER_OUTPUT_ESCAPE_H
#define PROF_REPORTER_OUTPUT_ESCAPE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define REP_UTF8_BAD 0xfffdu /* the replacement character */

/* Not async-signal-safe. */
/* Decodes the code point at s (n bytes left, n > 0) into *cp; returns the bytes it used
 * (1 for an invalid byte, *cp REP_UTF8_BAD then). */
size_t rep_utf8_decode(const char *s, size_t n, uint32_t *cp /* out */);
/* The number of code points in the NUL-terminated s, as rep_utf8_decode counts them. */
size_t rep_utf8_count(const char *s);
/* Writes at most max_cps code points of s, XML-escaped; returns how many it wrote.
 * Write errors are left in out's error flag. */
size_t rep_escape_xml(FILE *out, const char *s, size_t max_cps);
/* Writes s as a JSON string, quotes included. Write errors are left in out's error
 * flag. */
void rep_escape_json(FILE *out, const char *s);
/* The same for a JSON text inside an HTML <script> element: '<', '>' and '&' as \u escapes
 * too, so that no name can end the element. */
void rep_escape_json_script(FILE *out, const char *s);

#endif
