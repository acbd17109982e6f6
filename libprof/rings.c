/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The pool of per-thread sample rings (see rings.h). */
#include "libprof/rings.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "libprof/writer.h"
#include "sampler/ring.h"

enum entry_state { FREE, IN_USE, RETIRED };

struct entry {
    struct smp_ring ring; /* first: a ring pointer is its entry's */
    void *mem;            /* mapped at first take, never unmapped */
    enum entry_state state;
};

static struct {
    pthread_mutex_t mu;
    struct entry *entries;
    size_t n;
    size_t ring_bytes;
    unsigned max_frames;
} pool = { .mu = PTHREAD_MUTEX_INITIALIZER };

int lp_rings_init(size_t n, size_t ring_bytes, unsigned max_frames)
{
    pthread_mutex_lock(&pool.mu);
    free(pool.entries);
    pool.entries = calloc(n ? n : 1, sizeof(*pool.entries));
    pool.n = pool.entries ? n : 0;
    pool.ring_bytes = ring_bytes;
    pool.max_frames = max_frames;
    pthread_mutex_unlock(&pool.mu);
    return pool.entries ? 0 : -ENOMEM;
}

void lp_rings_zero(void *mem, size_t bytes)
{
    /* Anonymous private memory handed back reads as zeros; its pages come back one by one
     * as samples fill them. A fork child's copy is not copied page by page (a memset
     * faulted every page of the parent's ring in, copy on write, in every child). */
    if (madvise(mem, bytes, MADV_DONTNEED) != 0)
        memset(mem, 0, bytes);
}

/* Empties a ring (zeroed memory is an empty ring). With pool.mu held. */
static int reset(struct entry *e)
{
    if (!e->mem) {
        void *m = mmap(NULL, pool.ring_bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return -ENOMEM;
        e->mem = m;
    } else {
        lp_rings_zero(e->mem, pool.ring_bytes);
    }
    return smp_ring_init(&e->ring, e->mem, pool.ring_bytes, pool.max_frames);
}

struct smp_ring *lp_rings_take(void)
{
    struct smp_ring *r = NULL;
    pthread_mutex_lock(&pool.mu);
    for (size_t i = 0; i < pool.n && !r; i++) {
        struct entry *e = &pool.entries[i];
        if (e->state == FREE && reset(e) == 0) {
            e->state = IN_USE;
            r = &e->ring;
        }
    }
    pthread_mutex_unlock(&pool.mu);
    return r;
}

void lp_rings_retire(struct smp_ring *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&pool.mu);
    ((struct entry *)r)->state = RETIRED;
    pthread_mutex_unlock(&pool.mu);
}

size_t lp_rings_drain(struct lp_writer *w, int *busy)
{
    size_t moved = 0;
    pthread_mutex_lock(&pool.mu);
    for (size_t i = 0; i < pool.n; i++) {
        struct entry *e = &pool.entries[i];
        if (e->state == FREE)
            continue;
        size_t n = lp_writer_drain(w, &e->ring);
        if (busy && n * 4 > smp_ring_capacity(&e->ring))
            *busy = 1;
        moved += n;
        /* A retired ring's thread has left its handler for good: once it is empty it can
         * serve another thread. */
        if (e->state == RETIRED && smp_ring_used(&e->ring) == 0)
            e->state = FREE;
    }
    pthread_mutex_unlock(&pool.mu);
    return moved;
}

void lp_rings_fork_prepare(void)
{
    pthread_mutex_lock(&pool.mu);
}

void lp_rings_fork_parent(void)
{
    pthread_mutex_unlock(&pool.mu);
}

void lp_rings_fork_child(struct smp_ring *keep)
{
    pthread_mutex_unlock(&pool.mu); /* held by prepare: the pool is whole */
    for (size_t i = 0; i < pool.n; i++) {
        struct entry *e = &pool.entries[i];
        if (e->state == FREE)
            continue;
        if (&e->ring == keep)
            reset(e);
        else
            e->state = FREE;
    }
}

size_t lp_rings_in_use(void)
{
    size_t n = 0;
    pthread_mutex_lock(&pool.mu);
    for (size_t i = 0; i < pool.n; i++)
        n += pool.entries[i].state != FREE;
    pthread_mutex_unlock(&pool.mu);
    return n;
}
