/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The `speedscope` output: speedscope's own JSON file format
 * (https://www.speedscope.app/file-format-schema.json), one "sampled" profile per thread
 * (reporter/stacks/per_thread.h), named "NAME (tid T)", with "pid P, " added when the files come
 * from several processes. Function names are the shared frames; each distinct stack of a
 * thread is one sample (frame indices, root first) whose weight is its summed sample
 * count, in the "none" unit, stacks sorted by their names so that the time-order view
 * groups alike stacks. Samples without frames are left out, and so are threads left
 * with no stack (by a selection, say). With no stack at all the file holds one empty
 * profile, "all threads". Called by main(); reporter thread.
 */
#ifndef PROF_REPORTER_OUTPUT_SPEEDSCOPE_H
#define PROF_REPORTER_OUTPUT_SPEEDSCOPE_H

#include <stdio.h>

struct rep_names;
struct rep_per_thread;

/* Not async-signal-safe; not re-entrant (qsort's comparison uses a static context). */
/* Writes the threads of t, named by names, to out; name (may be NULL) names the whole
 * file. CMN_OK, CMN_E_NOMEM, or CMN_E_IO when writing failed (errno says why); out is
 * flushed, not closed. */
int rep_out_speedscope(FILE *out, const struct rep_per_thread *t, const struct rep_names *names,
                       const char *name);

#endif
