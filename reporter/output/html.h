/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The `html` output: the flame graph of out_svg.c as one standalone HTML page, with the
 * <svg> inline (as wide as the window) and a search box above it that highlights as one
 * types (a regular expression or, when it is not one, plain text). Zoom, tooltips, the
 * matched share and Esc work as in the SVG; no external resources. Called by main();
 * reporter thread.
 */
#ifndef PROF_REPORTER_OUTPUT_HTML_H
#define PROF_REPORTER_OUTPUT_HTML_H

#include <stdio.h>

struct rep_flame;
struct rep_flame_opts;
struct rep_names;

/* Not async-signal-safe. */
/* Writes the page for f (ordered: rep_flame_order), named by names, drawn as o says, to
 * out. CMN_OK, or CMN_E_IO when writing failed (errno says why); out is flushed, not
 * closed. */
int rep_out_html(FILE *out, const struct rep_flame *f, const struct rep_names *names,
                 const struct rep_flame_opts *o);

#endif
