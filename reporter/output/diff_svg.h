/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The differential flame graph of `prof diff --format svg`: the flame graph of the NEW
 * side (its runs pooled), drawn by out_svg.c, with each frame coloured by how its share
 * of the samples changed from BASE, the same call path in BASE's pooled tree: red where
 * it grew, blue where it shrank, the deeper the colour the larger the change against the
 * largest change in the graph. A frame whose change the two-proportion test on its
 * sample counts cannot tell from noise (diff.h, at the diff's confidence) is grey, like
 * an unchanged one; a path that is new is red. The tooltip of each frame adds its shares
 * in BASE and NEW and the change in points. Call paths found only in BASE have no frame
 * (the graph has NEW's shape). Called through rep_out_diff(); reporter thread.
 */
#ifndef PROF_REPORTER_OUTPUT_DIFF_SVG_H
#define PROF_REPORTER_OUTPUT_DIFF_SVG_H

#include <stdio.h>

struct rep_diff;
struct rep_names;

/* Not async-signal-safe; not re-entrant (the flame tree's order uses a static context). */
/* Writes the differential flame graph of d (computed) to out; confidence in (0, 1).
 * CMN_OK, CMN_E_NOMEM, or CMN_E_IO when writing failed; out is flushed, not closed. */
int rep_out_diff_svg(FILE *out, const struct rep_diff *d, const struct rep_names *names,
                     double confidence);

#endif
