/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The outputs of `prof diff`: a struct rep_diff (computed) as a text table, as JSON, or as
 * a Markdown table for a pull-request comment. Each has one row per function, in the
 * diff's order (largest change of self or total share first), with the self and total
 * shares of BASE and NEW in percent and their change in percentage points. A change whose
 * one-sided p-value (the larger of the count test and, with repeated runs, the run test)
 * is below 1 - confidence is marked: '*' in text, bold in Markdown, "significant": true in
 * JSON. Example (text):
 *
 *   base: 1 run, 500 samples, 2.000 s CPU a run; new: 1 run, 512 samples, 2.048 s (+2.4 %)
 *    self base   self new     change total base  total new     change  function
 *       50.00 %    40.00 %    -10.00*    50.00 %    40.00 %    -10.00*  hot_a
 *
 * The JSON document is described in docs/CI.md; its "version" changes when a field changes
 * meaning or goes away (new fields may appear without a version change). Called by the
 * diff command (reporter/cmd/diff.c); reporter thread.
 */
#ifndef PROF_REPORTER_OUTPUT_DIFF_H
#define PROF_REPORTER_OUTPUT_DIFF_H

#include <stddef.h>
#include <stdio.h>

struct rep_diff;
struct rep_names;

#define REP_OUT_DIFF_JSON_VERSION 1

enum rep_diff_format {
    REP_DIFF_TEXT, /* the table above */
    REP_DIFF_JSON,
    /* one JSON object */ REP_DIFF_MARKDOWN, /* a GitHub-flavoured Markdown table */
    REP_DIFF_SVG, /* a differential flame graph (reporter/output/diff_svg.h) */
};

struct rep_diff_out_opts {
    enum rep_diff_format format;
    size_t limit;      /* rows at most, 0 for all */
    double confidence; /* in (0, 1), for marking significant changes */
};

/* Not async-signal-safe. */
/* Writes d, named by names, to out. CMN_OK, CMN_E_NOMEM (svg), or CMN_E_IO when writing
 * failed; out is flushed, not closed. */
int rep_out_diff(FILE *out, const struct rep_diff *d, const struct rep_names *names,
                 const struct rep_diff_out_opts *o);

#endif
