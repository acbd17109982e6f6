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
 *
 * Each range also says how to unwind through its code: the unwind table of its module
 * (common/uw_table.h) and the range's load bias, once libprof/ has built the table. A
 * range whose table is not built yet names its module: the first walk that needs it asks
 * for it (smp_codemap_want()), and libprof's writer thread, woken at once, builds it and
 * publishes a map that has it. A pc in no range asks for the map to be read again
 * (smp_codemap_want_rescan()): the program or glibc itself mapped code since.
 */
#ifndef PROF_SAMPLER_CODEMAP_H
#define PROF_SAMPLER_CODEMAP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "sampler/dbuf.h"

#define SMP_CODEMAP_MAX 4096u /* executable ranges a map can hold; the rest are dropped */
#define SMP_MODULES_MAX 4096u /* modules whose unwind tables can be asked for */

struct cmn_uw_table;

struct smp_code_range {
    uintptr_t start; /* first address */
    uintptr_t end;   /* one past the last */
    const struct cmn_uw_table *table; /* its module's unwind table; NULL: none (yet) */
    uintptr_t bias;  /* run-time minus link-time address, for the table */
    uint32_t module; /* with table NULL: the module whose table a walk may ask for
                      * (1..SMP_MODULES_MAX-1); 0: none will come */
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
/* The range holding pc in the view's map, or NULL (also before the first publish). */
const struct smp_code_range *smp_codemap_view_find(const struct smp_codemap_view *v,
                                                   uintptr_t pc);
/* The same for one address: enters, looks up, leaves. */
int smp_codemap_contains(uintptr_t pc);

/* Asks for module's unwind table (once: later calls for it are no-ops until libprof/
 * clears the request) and wakes the writer thread. */
void smp_codemap_want(uint32_t module);
/* Asks for the map to be read again, and wakes the writer thread. */
void smp_codemap_want_rescan(void);

/* What walks asked for; libprof/'s writer thread takes the requests. */
extern _Atomic uint8_t smp_codemap_wanted[SMP_MODULES_MAX]; /* 1: table asked for */
extern _Atomic uint32_t smp_codemap_n_wanted; /* requests made: bumped with each */
extern _Atomic int smp_codemap_rescan;        /* 1: a pc outside the map was seen */

/* The word the writer thread sleeps on (futex); handlers bump it to wake it. */
extern _Atomic uint32_t smp_writer_wake;
void smp_writer_wake_up(void);

#endif
