/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The publishing half of the code map (sampler/codemap.h holds the handlers' half): a new
 * table of executable ranges is written into the copy no walk is inside, then made
 * current. Called by libprof/unwind.c (with its map lock) and by unit tests; never from a
 * handler. Its own file, below the rest of libprof/, so that the steppers' unit tests for
 * other architectures can link it alone.
 */
#ifndef PROF_LIBPROF_CODEMAP_H
#define PROF_LIBPROF_CODEMAP_H

#include <stddef.h>

struct smp_code_range;

/* Not async-signal-safe; one caller at a time. Publishes n executable ranges (sorted, not
 * overlapping; SMP_CODEMAP_MAX at most are kept) as the code map the handlers read;
 * waits while a walk is inside the table it replaces. */
void lp_codemap_publish(const struct smp_code_range *ranges, size_t n);
/* The same; annotate(range, i, ctx), when not NULL, fills in range i's unwind-table
 * fields in the copy being published. */
void lp_codemap_publish_with(const struct smp_code_range *ranges, size_t n,
                             void (*annotate)(struct smp_code_range *r, size_t i, void *ctx),
                             void *ctx);

#endif
