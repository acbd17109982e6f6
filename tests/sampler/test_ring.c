/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the sample ring (sampler/ring.c): order, wrap-around, full, empty, and
 * concurrent producers against one consumer. */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sampler/ring.h"

#define FRAMES 4

static uint64_t mem[4096];

static struct smp_ring make_ring(size_t n_slots)
{
    struct smp_ring r;
    size_t bytes = n_slots * smp_ring_slot_bytes(FRAMES);
    cr_assert(bytes <= sizeof(mem));
    memset(mem, 0, sizeof(mem));
    cr_assert_eq(smp_ring_init(&r, mem, bytes, FRAMES), 0);
    return r;
}

static int push(struct smp_ring *r, uint32_t tag)
{
    struct smp_slot *s = smp_ring_reserve(r);
    if (!s)
        return -1;
    s->rec.tid = tag;
    s->rec.n_frames = 1;
    s->frames[0] = tag;
    smp_ring_publish(r, s);
    return 0;
}

static int pop(struct smp_ring *r, uint32_t *tag)
{
    struct smp_slot *s = smp_ring_peek(r);
    if (!s)
        return -1;
    *tag = s->rec.tid;
    cr_assert_eq(s->frames[0], s->rec.tid);
    smp_ring_release(r, s);
    return 0;
}

Test(ring, rounds_capacity_down_to_a_power_of_two)
{
    struct smp_ring r;
    cr_assert_eq(smp_ring_init(&r, mem, 5 * smp_ring_slot_bytes(FRAMES) + 7, FRAMES), 0);
    cr_assert_eq(smp_ring_capacity(&r), 4);
}

Test(ring, rejects_memory_for_fewer_than_two_slots)
{
    struct smp_ring r;
    cr_assert_eq(smp_ring_init(&r, mem, smp_ring_slot_bytes(FRAMES), FRAMES), -EINVAL);
    cr_assert_eq(smp_ring_init(&r, (char *)mem + 1, sizeof(mem) - 8, FRAMES), -EINVAL);
    cr_assert_eq(smp_ring_init(&r, mem, sizeof(mem), 0), -EINVAL);
}

Test(ring, empty_ring_has_nothing_to_peek)
{
    struct smp_ring r = make_ring(4);
    cr_assert_null(smp_ring_peek(&r));
    cr_assert_eq(smp_ring_used(&r), 0);
}

Test(ring, delivers_in_order)
{
    struct smp_ring r = make_ring(8);
    for (uint32_t i = 1; i <= 5; i++)
        cr_assert_eq(push(&r, i), 0);
    for (uint32_t i = 1; i <= 5; i++) {
        uint32_t tag;
        cr_assert_eq(pop(&r, &tag), 0);
        cr_assert_eq(tag, i);
    }
    cr_assert_null(smp_ring_peek(&r));
}

Test(ring, drops_when_full_and_recovers_after_release)
{
    struct smp_ring r = make_ring(4);
    for (uint32_t i = 0; i < 4; i++)
        cr_assert_eq(push(&r, i + 1), 0);
    cr_assert_null(smp_ring_reserve(&r), "a full ring must refuse at once");
    cr_assert_eq(smp_ring_used(&r), 4);
    uint32_t tag;
    cr_assert_eq(pop(&r, &tag), 0);
    cr_assert_eq(tag, 1);
    cr_assert_eq(push(&r, 5), 0);
    cr_assert_null(smp_ring_reserve(&r));
}

Test(ring, wraps_around_many_times)
{
    struct smp_ring r = make_ring(4);
    uint32_t next_out = 1;
    for (uint32_t i = 1; i <= 1000; i++) {
        cr_assert_eq(push(&r, i), 0);
        if (i % 3 == 0) {
            uint32_t tag;
            while (pop(&r, &tag) == 0)
                cr_assert_eq(tag, next_out++);
        }
    }
    uint32_t tag;
    while (pop(&r, &tag) == 0)
        cr_assert_eq(tag, next_out++);
    cr_assert_eq(next_out, 1001);
}

Test(ring, unpublished_slot_holds_back_the_consumer)
{
    struct smp_ring r = make_ring(4);
    struct smp_slot *a = smp_ring_reserve(&r);
    cr_assert_eq(push(&r, 2), 0);
    cr_assert_null(smp_ring_peek(&r), "slot 0 is reserved but not published");
    a->rec.tid = 1;
    a->frames[0] = 1;
    smp_ring_publish(&r, a);
    uint32_t tag;
    cr_assert_eq(pop(&r, &tag), 0);
    cr_assert_eq(tag, 1);
    cr_assert_eq(pop(&r, &tag), 0);
    cr_assert_eq(tag, 2);
}

#define PER_PRODUCER 200000u

struct producer {
    struct smp_ring *r;
    uint32_t id;
    uint32_t dropped;
    _Atomic int finished;
};

static void *produce(void *p)
{
    struct producer *pr = p;
    for (uint32_t i = 0; i < PER_PRODUCER; i++)
        if (push(pr->r, (pr->id << 24) | i) != 0)
            pr->dropped++;
    atomic_store(&pr->finished, 1);
    return NULL;
}

Test(ring, concurrent_producers_lose_nothing_uncounted)
{
    static uint64_t big[1 << 14];
    struct smp_ring r;
    cr_assert_eq(smp_ring_init(&r, big, sizeof(big), FRAMES), 0);
    struct producer pr[2] = { { .r = &r, .id = 1 }, { .r = &r, .id = 2 } };
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, produce, &pr[i]);
    uint64_t got[3] = { 0 };
    uint32_t last[3] = { 0 };
    for (;;) {
        int both_done = atomic_load(&pr[0].finished) && atomic_load(&pr[1].finished);
        uint32_t tag;
        int n = 0;
        while (pop(&r, &tag) == 0) {
            uint32_t id = tag >> 24, seq = tag & 0xffffff;
            cr_assert(id == 1 || id == 2);
            cr_assert(got[id] == 0 || seq > last[id], "per-producer order kept");
            last[id] = seq;
            got[id]++;
            n++;
        }
        if (both_done && n == 0)
            break;
    }
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    cr_assert_eq(got[1] + pr[0].dropped, PER_PRODUCER);
    cr_assert_eq(got[2] + pr[1].dropped, PER_PRODUCER);
    cr_assert_eq(smp_ring_used(&r), 0);
}
