/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The code map: the address ranges of the process's executable mappings, for the steppers
 * to tell a return address from garbage without touching memory. A frame-pointer chain
 * that went through code built without frame pointers (or through a corrupt stack) yields
 * "return addresses" that are arbitrary words; one that lies in no executable mapping ends
 * the walk as a truncation instead of becoming a wrong frame. The map says what is code;
 * it is never taken as proof that memory is readable (a mapping may have gone since it was
 * read): code bytes are read through the fault-proof probe.
 *
 * libprof/ publishes a new map (read from /proc/self/maps outside any handler) at start
 * and when mappings change (libprof/unwind.h, lp_codemap_publish()); handlers look addresses up without locks. The two tables are a
 * reader-counted double buffer (sampler/dbuf.h): a walk enters the current table once
 * (smp_codemap_enter), looks up every frame in it, and leaves; a publish fills the table
 * no walk is inside. Before the first publish every address passes.
 */
#ifndef PROF_SAMPLER_CODEMAP_H
#define PROF_SAMPLER_CODEMAP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "sampler/dbuf.h"

#define SMP_CODEMAP_MAX 4096u /* executable ranges a map can hold; the rest are dropped */

struct smp_code_range {
    uintptr_t start; /* first address */
    uintptr_t end;   /* one past the last */
};

struct smp_codemap_table {
    size_t n;                                      /* ranges in use */
    struct smp_code_range ranges[SMP_CODEMAP_MAX]; /* sorted by start, not overlapping */
};

/* The map's state. libprof/ fills the spare table and publishes it (lp_codemap_publish());
 * handlers only read. */
struct smp_codemap {
    struct smp_dbuf dbuf;                /* which table is current, and its readers */
    struct smp_codemap_table tables[2];  /* the spare one written by the publisher only */
    _Atomic int published;               /* 0 until the first publish */
};

extern struct smp_codemap smp_codemap;

/* A walk's hold on one table: what smp_codemap_enter() filled in. */
struct smp_codemap_view {
    const void *table; /* the table entered; NULL: nothing published, every address passes */
    int slot;          /* which copy was entered, -1 none */
    int gave_up;       /* the reader lost every race (sampler/dbuf.h): nothing passes */
};

/* Async-signal-safe, re-entrant. */
/* Enters the current map for a walk; leave it with smp_codemap_leave(). */
void smp_codemap_enter(struct smp_codemap_view *v);
void smp_codemap_leave(struct smp_codemap_view *v);
/* 1 when pc lies in an executable range of the view's map, or when nothing was published
 * yet; 0 otherwise, or when the view could not enter a map. */
int smp_codemap_view_contains(const struct smp_codemap_view *v, uintptr_t pc);
/* The same for one address: enters, looks up, leaves. */
int smp_codemap_contains(uintptr_t pc);

#endif
