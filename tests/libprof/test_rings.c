/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the per-thread ring pool (libprof/rings.c) and of the handler's choice of
 * ring: a thread's own first, the shared one when it has none or its own is full. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "libprof/rings.h"
#include "libprof/sigstacks.h"
#include "libprof/writer.h"
#include "sampler/handler.h"
#include "sampler/ring.h"
#include "sampler/timer_thread.h"

#define FRAMES 8

static void push(struct smp_ring *r, uint32_t tag)
{
    struct smp_slot *s = smp_ring_reserve(r);
    cr_assert_not_null(s);
    memset(&s->rec, 0, sizeof(s->rec));
    s->rec.tid = tag;
    s->rec.n_frames = 1;
    s->frames[0] = tag;
    smp_ring_publish(r, s);
}

static char path[64];

static void open_writer(struct lp_writer *w)
{
    snprintf(path, sizeof(path), "/tmp/libprof-rings-%d.prof", (int)getpid());
    cr_assert_eq(lp_writer_open(w, path, 0), 0);
}

Test(rings, takes_until_the_pool_is_empty)
{
    cr_assert_eq(lp_rings_init(3, 16384, FRAMES), 0);
    struct smp_ring *a = lp_rings_take(), *b = lp_rings_take(), *c = lp_rings_take();
    cr_assert(a && b && c && a != b && b != c && a != c);
    cr_assert_null(lp_rings_take(), "a fourth thread gets the shared ring");
    cr_assert_eq(lp_rings_in_use(), 3);
}

Test(rings, a_retired_ring_is_drained_then_recycled)
{
    struct lp_writer w;
    open_writer(&w);
    cr_assert_eq(lp_rings_init(1, 16384, FRAMES), 0);
    struct smp_ring *a = lp_rings_take();
    push(a, 1);
    push(a, 2);
    lp_rings_retire(a);
    cr_assert_null(lp_rings_take(), "not free before its samples are written");
    cr_assert_eq(lp_rings_drain(&w, NULL), 2, "the retired ring's samples are written");
    struct smp_ring *again = lp_rings_take();
    cr_assert_eq(again, a, "the emptied ring is recycled");
    cr_assert_null(smp_ring_peek(again), "and starts empty");
    lp_writer_close(&w);
    unlink(path);
}

Test(rings, drains_rings_in_use_without_recycling_them)
{
    struct lp_writer w;
    open_writer(&w);
    cr_assert_eq(lp_rings_init(2, 16384, FRAMES), 0);
    struct smp_ring *a = lp_rings_take();
    push(a, 7);
    cr_assert_eq(lp_rings_drain(&w, NULL), 1);
    cr_assert_eq(lp_rings_in_use(), 1);
    lp_writer_close(&w);
    unlink(path);
}

Test(rings, fork_child_keeps_only_its_own_ring_emptied)
{
    cr_assert_eq(lp_rings_init(3, 16384, FRAMES), 0);
    struct smp_ring *mine = lp_rings_take(), *other = lp_rings_take();
    push(mine, 1);
    push(other, 2);
    lp_rings_fork_prepare(); /* as around a fork: the child handler runs with it held */
    lp_rings_fork_child(mine);
    cr_assert_eq(lp_rings_in_use(), 1);
    cr_assert_null(smp_ring_peek(mine), "the parent's samples are gone");
}

/* The handler, fired as by our per-thread timer. */
static void fire(void)
{
    siginfo_t si;
    ucontext_t uc;
    memset(&si, 0, sizeof(si));
    si.si_code = SI_TIMER;
    si.si_value.sival_ptr = SMP_TIMER_COOKIE;
    getcontext(&uc);
    smp_handler(SIGPROF, &si, &uc);
}

Test(rings, handler_uses_the_thread_ring_then_the_shared_one_then_drops)
{
    static uint64_t shared_mem[4096];
    struct smp_ring shared;
    size_t two_slots = 2 * smp_ring_slot_bytes(FRAMES);
    cr_assert_eq(smp_ring_init(&shared, shared_mem, two_slots, FRAMES), 0);
    cr_assert_eq(lp_rings_init(1, two_slots, FRAMES), 0);
    memset(&smp_sampler, 0, sizeof(smp_sampler));
    smp_sampler.ring = &shared;
    smp_sampler.max_frames = FRAMES;
    smp_sampler.source = PROF_TIMER_THREAD;
    atomic_store(&smp_sampler.active, 1);
    cr_assert_eq(lp_sigstacks_init(), 0);
    cr_assert_eq(lp_sigstacks_enter(), 0, "the stack the samples are taken on");
    smp_self.ring = lp_rings_take();
    for (int i = 0; i < 5; i++)
        fire();
    cr_assert_eq(smp_ring_used(smp_self.ring), 2, "the thread's ring takes the first two");
    cr_assert_eq(smp_ring_used(&shared), 2, "the shared ring the next two");
    cr_assert_eq(atomic_load(&smp_sampler.counters[PROF_STAT_DROPPED]), 1, "the fifth is counted");
    cr_assert_eq(atomic_load(&smp_sampler.counters[PROF_STAT_SAMPLES]), 4);
}
