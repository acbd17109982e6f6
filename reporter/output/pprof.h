/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The pprof output: a gzipped profile.proto message (github.com/google/pprof,
 * proto/profile.proto), readable by `go tool pprof` and `pprof`. Two sample types,
 * samples/count and cpu/nanoseconds (the weight, and the weight times the sampling period);
 * period_type cpu/nanoseconds with the period the profiles were taken at; time_nanos the
 * earliest profile's wall-clock start and duration_nanos the longest profile's duration.
 *
 * Every distinct frame name of the aggregate is one function. A location is a function
 * with the functions inlined into it at one address (frames named "func [inlined]" right
 * leafward of it): one line per function, innermost first, the last one the function they
 * were inlined into, so that `go tool pprof` shows the inlined ones as "(inline)". It
 * carries the first address that was named as its outermost function (with is_locs) and
 * its mapping (start, limit, file offset, file name, build-id in hex). A `--lines` name
 * "func (file.c:12)" becomes function "func" in file "file.c" at line 12. Called by
 * main(); reporter thread.
 */
#ifndef PROF_REPORTER_OUTPUT_PPROF_H
#define PROF_REPORTER_OUTPUT_PPROF_H

#include <stdio.h>

struct rep_agg;
struct rep_names;

/* Not async-signal-safe. */
/* Writes the profile of a, named by names, to out. CMN_OK, CMN_E_NOMEM, or CMN_E_IO when
 * writing failed (errno says why); out is flushed, not closed. */
int rep_out_pprof(FILE *out, const struct rep_agg *a, const struct rep_names *names);

#endif
