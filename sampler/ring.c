/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The sample ring (see ring.h for the protocol). On the signal handler's path: producers
 * run inside the profiling signal handler, so this file calls nothing but atomics and
 * memset, and never loops without bound: a reserve retries only when another producer
 * won the same position, which moves the head forward each time.
 */
#include "sampler/ring.h"

#include <errno.h>
#include <string.h>

#include "sampler/check.h"

static struct smp_slot *slot_at(const struct smp_ring *r, uint64_t pos)
{
    return (struct smp_slot *)(r->slots + (pos & r->mask) * r->slot_bytes);
}

/* The slot's sequence number: what it stores plus its index. */
static uint64_t load_seq(const struct smp_ring *r, struct smp_slot *s, uint64_t pos)
{
    return atomic_load_explicit(&s->seq, memory_order_acquire) + (pos & r->mask);
}

static void store_seq(const struct smp_ring *r, struct smp_slot *s, uint64_t pos,
                      uint64_t seq)
{
    atomic_store_explicit(&s->seq, seq - (pos & r->mask), memory_order_release);
}

struct smp_slot *smp_ring_reserve(struct smp_ring *r)
{
    uint64_t pos = atomic_load_explicit(&r->head, memory_order_relaxed);
    for (;;) {
        struct smp_slot *s = slot_at(r, pos);
        uint64_t seq = load_seq(r, s, pos);
        int64_t dif = (int64_t)(seq - pos);
        if (dif == 0) {
            if (atomic_compare_exchange_weak_explicit(&r->head, &pos, pos + 1,
                                                      memory_order_relaxed,
                                                      memory_order_relaxed)) {
                s->pos = pos;
                s->deferred = 0;
                return s;
            }
            /* Lost the race; pos now holds the current head. */
        } else if (dif < 0) {
            return NULL; /* the slot a lap behind is not consumed yet: full */
        } else {
            pos = atomic_load_explicit(&r->head, memory_order_relaxed);
        }
    }
}

void smp_ring_publish(struct smp_ring *r, struct smp_slot *s)
{
    SMP_RAW_CHECK(load_seq(r, s, s->pos) == s->pos, "ring: publish of a slot not reserved");
    store_seq(r, s, s->pos, s->pos + 1);
}

struct smp_slot *smp_ring_peek(struct smp_ring *r)
{
    struct smp_slot *s = slot_at(r, r->tail);
    return load_seq(r, s, r->tail) == r->tail + 1 ? s : NULL;
}

void smp_ring_release(struct smp_ring *r, struct smp_slot *s)
{
    SMP_RAW_CHECK(s == slot_at(r, r->tail) && load_seq(r, s, r->tail) == r->tail + 1,
                  "ring: release of a slot that is not the published tail");
    store_seq(r, s, r->tail, r->tail + r->mask + 1);
    r->tail++;
}

uint64_t smp_ring_used(const struct smp_ring *r)
{
    return atomic_load_explicit(&r->head, memory_order_acquire) - r->tail;
}

size_t smp_ring_slot_bytes(unsigned max_frames)
{
    return sizeof(struct smp_slot) + (size_t)max_frames * sizeof(uint64_t);
}

int smp_ring_init(struct smp_ring *r, void *mem, size_t size_bytes, unsigned max_frames)
{
    size_t slot_bytes = smp_ring_slot_bytes(max_frames);
    size_t fit = size_bytes / slot_bytes;
    if (max_frames == 0 || fit < SMP_RING_MIN_SLOTS || ((uintptr_t)mem & 7u))
        return -EINVAL;
    size_t n = 1;
    while (n * 2 <= fit)
        n *= 2;
    memset(r, 0, sizeof(*r));
    r->mask = n - 1;
    r->slot_bytes = slot_bytes;
    r->max_frames = max_frames;
    r->slots = mem;
    atomic_store_explicit(&r->head, 0, memory_order_release);
    return 0;
}

uint64_t smp_ring_capacity(const struct smp_ring *r)
{
    return r->mask + 1;
}
