/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The `svg` output: a flame graph of a call tree (reporter/stacks/flame.h) as one self-contained
 * SVG file, no external resources, that works opened straight from disk. Each frame is a
 * box as wide as its total weight, over its caller (or under it, as an icicle), coloured
 * from a hash of its name in warm tones (or by the rep_flame_opts colour hook), labelled
 * with its name cut to fit, with a tooltip (name, samples, share of the total, the note
 * hook's line). Frames narrower than rep_flame_opts.min_width of the total are left out,
 * and the graph says how many and how much weight. The embedded script zooms into a
 * clicked frame (it becomes full width; its callers stay, dimmed; click the bottom frame,
 * "Reset zoom" or press Esc to go back), and searches: "Search" (or Ctrl-F or '/') asks
 * for a regular expression (or, when it is not one, plain text), highlights the matching
 * frames and shows their share of the total, each sample counted once. Without the
 * script (an <img>, an image viewer) the graph is still drawn. Called by main() and
 * out_html.c; reporter thread.
 */
#ifndef PROF_REPORTER_OUTPUT_SVG_H
#define PROF_REPORTER_OUTPUT_SVG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct rep_flame;
struct rep_flame_opts;
struct rep_names;

/* Not async-signal-safe. */
/* Writes the flame graph of f (ordered: rep_flame_order), named by names, drawn as o says,
 * to out as an SVG document. CMN_OK, or CMN_E_IO when writing failed (errno says why);
 * out is flushed, not closed. */
int rep_out_svg(FILE *out, const struct rep_flame *f, const struct rep_names *names,
                const struct rep_flame_opts *o);
/* Writes the same <svg> element without the XML declaration; is_inline (for an HTML page)
 * makes it as wide as the page. Write errors are left in out's error flag. */
void rep_out_svg_element(FILE *out, const struct rep_flame *f, const struct rep_names *names,
                         const struct rep_flame_opts *o, bool is_inline);

/* The fill of a frame named name, 0xRRGGBB: warm (red to yellow), or cool (blue to teal)
 * for a frame whose time is all off CPU; the same for a name in every graph. */
uint32_t rep_svg_warm_color(const char *name);
uint32_t rep_svg_cool_color(const char *name);

#endif
