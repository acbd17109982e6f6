/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The folded-stacks output, the input format of flamegraph.pl, inferno and speedscope:
 * one line per distinct stack, frames root first joined by ';', a space, the summed
 * weight:
 *
 *   main;parse;lex 42
 *
 * Lines are sorted bytewise (as `LC_ALL=C sort` would). A ';' inside a function name
 * becomes ':' and a control character (a newline, say) a space, so that every line still
 * parses; stacks that become equal that way are merged. Called by main(); reporter thread.
 */
#ifndef PROF_REPORTER_OUTPUT_FOLDED_H
#define PROF_REPORTER_OUTPUT_FOLDED_H

#include <stdio.h>

struct rep_agg;
struct rep_names;

/* Not async-signal-safe; not re-entrant (qsort's comparison uses a static context). */
/* Writes the stacks of a, named by names, to out. CMN_OK, CMN_E_NOMEM, or CMN_E_IO when
 * writing failed (errno says why); out is flushed, not closed. */
int rep_out_folded(FILE *out, const struct rep_agg *a, const struct rep_names *names);

#endif
