/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The code map: the address ranges of the process's executable mappings, for the steppers
 * to tell a return address from garbage without touching memory. A frame-pointer chain
 * that went through code built without frame pointers (or through a corrupt stack) yields
 * "return addresses" that are arbitrary words; one that lies in no executable mapping ends
 * the walk as a truncation instead of becoming a wrong frame.
 *
 * libprof/ publishes a new map (read from /proc/self/maps outside any handler) at start
 * and after dlopen()/dlclose(); handlers look addresses up without locks. Two tables
 * alternate: a publish fills the one handlers do not read, then switches with one atomic
 * store. A stale map after dlclose() is harmless (a range that is no longer code lets a
 * number through, nothing is read there); before the first publish every address passes.
 */
#ifndef PROF_SAMPLER_CODEMAP_H
#define PROF_SAMPLER_CODEMAP_H

#include <stddef.h>
#include <stdint.h>

#define SMP_CODEMAP_MAX 4096u /* executable ranges a map can hold; the rest are dropped */

struct smp_code_range {
    uintptr_t start; /* first address */
    uintptr_t end;   /* one past the last */
    int readable;    /* mapped readable as well as executable (r-x) */
};

/* Async-signal-safe, re-entrant. 1 when pc lies in a published executable range, or when
 * no map was published yet; 0 otherwise. */
int smp_codemap_contains(uintptr_t pc);

/* Async-signal-safe, re-entrant. 1 when [addr, addr + len) lies in one published range
 * mapped readable: the bytes of code a thread was just running there can be loaded
 * directly, without the fault-proof probe. 0 otherwise, or before the first publish. */
int smp_codemap_readable(uintptr_t addr, size_t len);

/* Not async-signal-safe; one thread at a time (libprof/ serializes). Publishes n ranges
 * sorted by start and not overlapping (at most SMP_CODEMAP_MAX are kept). */
void smp_codemap_publish(const struct smp_code_range *ranges, size_t n);

#endif
