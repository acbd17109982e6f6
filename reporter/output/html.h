/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The `html` output: a flame graph in one standalone HTML page, drawn by its script from the
 * aggregate's stacks embedded in it, so that it can be drawn again for a time range chosen
 * on a strip of the run over time, and for a value of the first --by-label key. Frames as
 * in out_svg.c (colours, tooltips, a search box that highlights as one types, zoom, Esc),
 * all of them down to a tenth of a pixel, narrower ones together in a hatched box per
 * caller; the page opens with the root in view. No external resources. Called by main();
 * reporter thread.
 */
#ifndef PROF_REPORTER_OUTPUT_HTML_H
#define PROF_REPORTER_OUTPUT_HTML_H

#include <stdio.h>

struct rep_agg;
struct rep_flame_opts;
struct rep_names;

/* Not async-signal-safe. */
/* Writes the page for a (its stacks, and its timeline when it kept one: is_timeline),
 * named by names, titled and oriented as o says (its min_width is not used: every frame
 * is drawn), label_key the first --by-label key or NULL, to out. CMN_OK, CMN_E_NOMEM, or
 * CMN_E_IO when writing failed (errno says why); out is flushed, not closed. */
int rep_out_html(FILE *out, const struct rep_agg *a, const struct rep_names *names,
                 const struct rep_flame_opts *o, const char *label_key);

#endif
