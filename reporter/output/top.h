/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The `top` output: a flat table of functions in the manner of `pprof -top`. flat is the
 * weight of the samples where the function is the leaf (running itself), cum the weight
 * of the samples where it is anywhere on the stack, counted once per stack even when
 * recursion puts it there several times. Percentages are of the total weight; sum% adds
 * up flat% down the table. Example:
 *
 *   Total: 1250 samples (5.02 s at 249 Hz)
 *       flat  flat%   sum%      cum   cum%
 *        625 50.00% 50.00%      625 50.00%  hot_a
 *
 * Called by main(); reporter thread.
 */
#ifndef PROF_REPORTER_OUTPUT_TOP_H
#define PROF_REPORTER_OUTPUT_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct rep_agg;
struct rep_names;

struct rep_top_opts {
    size_t limit;   /* rows at most, 0 for all */
    bool is_by_cum; /* sort by cum (then flat), not by flat (then cum); then by name */
};

/* Not async-signal-safe; not re-entrant (qsort's comparison uses a static context). */
/* Writes the table for a, named by names, to out. CMN_OK, CMN_E_NOMEM, or CMN_E_IO when
 * writing failed (errno says why); out is flushed, not closed. */
int rep_out_top(FILE *out, const struct rep_agg *a, const struct rep_names *names,
                const struct rep_top_opts *opts);

#endif
