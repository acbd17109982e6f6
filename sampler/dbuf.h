/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A double buffer whose readers are counted, for tables that signal handlers read while an
 * ordinary thread replaces them (the code map, the module table, the snapshot of loaded
 * objects, the application's actions for our signals). The data lives in the caller's two
 * copies; this struct says which copy is current and how many readers are inside each.
 *
 * A reader enters the current copy (count it, then check that it is still current; else
 * leave and retry), reads, and leaves. A writer fills the spare copy only once no reader
 * is inside it, then makes it current. With every operation sequentially consistent this
 * is safe however long a reader stays inside: a reader counted in copy i before the writer
 * looked at copy i's count makes the writer wait; a reader counted after it finds i no
 * longer current, because the writer made the other copy current before it could ever
 * pick i as the spare again. A reader that keeps losing the race (three publishes during
 * its two loads) gives up and treats the table as absent.
 *
 *   readers:  i = current; readers[i]++; current == i ? read copy i : readers[i]--, retry
 *   writer:   j = !current; wait for readers[j] == 0; fill copy j; current = j
 *
 * Writers are serialized by the caller. A reader never blocks; a writer waits while a
 * reader is inside the spare copy, which for a signal handler is microseconds (longer only
 * while that thread is stopped by a debugger). After fork, the child's counts may include
 * readers on threads that do not exist in it: smp_dbuf_reset().
 */
#ifndef PROF_SAMPLER_DBUF_H
#define PROF_SAMPLER_DBUF_H

#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include "sampler/check.h"

#define SMP_DBUF_TRIES 3 /* attempts of a reader to enter before it gives up */

struct smp_dbuf {
    _Atomic int current;         /* the copy readers enter: 0 or 1; the writer */
    _Atomic unsigned readers[2]; /* readers inside copy i now; readers */
};

/* Async-signal-safe, re-entrant, never blocks. The index of the copy entered (0 or 1), or
 * -1 when the reader gave up; a copy entered must be left with smp_dbuf_leave(). */
static inline int smp_dbuf_enter(struct smp_dbuf *d)
{
    for (int tries = 0; tries < SMP_DBUF_TRIES; tries++) {
        int i = atomic_load(&d->current) & 1;
        atomic_fetch_add(&d->readers[i], 1);
        if (atomic_load(&d->current) == i)
            return i;
        atomic_fetch_sub(&d->readers[i], 1);
    }
    return -1;
}

/* Async-signal-safe. Leaves copy i (a value smp_dbuf_enter() returned; -1 is ignored). */
static inline void smp_dbuf_leave(struct smp_dbuf *d, int i)
{
    if (i >= 0) {
        unsigned was = atomic_fetch_sub(&d->readers[i & 1], 1);
        SMP_RAW_CHECK(was > 0, "dbuf: a reader left a copy it had not entered");
        (void)was;
    }
}

/* Not async-signal-safe; writers serialized by the caller. The spare copy's index, once
 * no reader is inside it: fill it, then smp_dbuf_publish(). Waits while a reader is. */
static inline int smp_dbuf_spare(struct smp_dbuf *d)
{
    int j = (atomic_load(&d->current) & 1) ^ 1;
    for (unsigned spins = 0; atomic_load(&d->readers[j]) != 0; spins++) {
        if (spins < 64) {
            sched_yield();
        } else {
            struct timespec ts = {0, 50000};
            nanosleep(&ts, NULL);
        }
    }
    return j;
}

/* Not async-signal-safe; the writer. Makes copy j current. */
static inline void smp_dbuf_publish(struct smp_dbuf *d, int j)
{
    atomic_store(&d->current, j & 1);
}

/* Not async-signal-safe. In a fork child (one thread, in no handler): no reader is inside
 * either copy. */
static inline void smp_dbuf_reset(struct smp_dbuf *d)
{
    atomic_store(&d->readers[0], 0);
    atomic_store(&d->readers[1], 0);
}

#endif
