/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the signal handler (sampler/handler.c) driven by raise(): what it records,
 * that it keeps errno, that a full ring drops and counts, and the leaf-only fallback for a
 * thread whose stack bounds are unknown. */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sampler/handler.h"
#include "sampler/install.h"
#include "sampler/ring.h"

static uint64_t mem[8192];
static struct smp_ring ring;

static void setup_sampler(size_t n_slots, int with_bounds)
{
    memset(&smp_sampler, 0, sizeof(smp_sampler));
    cr_assert_eq(smp_ring_init(&ring, mem, n_slots * smp_ring_slot_bytes(64), 64), 0);
    smp_sampler.ring = &ring;
    smp_sampler.max_frames = 64;
    memset(&smp_self, 0, sizeof(smp_self));
    if (with_bounds) {
        pthread_attr_t attr;
        void *addr;
        size_t size;
        pthread_getattr_np(pthread_self(), &attr);
        pthread_attr_getstack(&attr, &addr, &size);
        pthread_attr_destroy(&attr);
        smp_self.stack_lo = (uintptr_t)addr;
        smp_self.stack_hi = (uintptr_t)addr + size;
    }
    cr_assert_eq(smp_install_handler(SIGPROF, NULL), 0);
    atomic_store(&smp_sampler.active, 1);
}

static uint64_t counter(unsigned i)
{
    return atomic_load(&smp_sampler.counters[i]);
}

Test(handler, records_a_sample_of_the_interrupted_thread)
{
    setup_sampler(4, 1);
    raise(SIGPROF);
    struct smp_slot *s = smp_ring_peek(&ring);
    cr_assert_not_null(s);
    cr_assert_eq(s->rec.tid, (uint32_t)syscall(SYS_gettid));
    cr_assert_eq(s->rec.weight, 1);
    cr_assert_geq(s->rec.n_frames, 1);
    cr_assert_neq(s->rec.time_ns, 0);
    cr_assert_eq(counter(PROF_STAT_SIGNALS), 1);
    cr_assert_eq(counter(PROF_STAT_SAMPLES), 1);
    cr_assert_eq(counter(PROF_STAT_DROPPED), 0);
}

Test(handler, keeps_errno)
{
    setup_sampler(4, 1);
    errno = 1234;
    raise(SIGPROF);
    cr_assert_eq(errno, 1234);
}

Test(handler, drops_and_counts_when_the_ring_is_full)
{
    setup_sampler(2, 1);
    for (int i = 0; i < 5; i++)
        raise(SIGPROF);
    cr_assert_eq(counter(PROF_STAT_SIGNALS), 5);
    cr_assert_eq(counter(PROF_STAT_SAMPLES), 2);
    cr_assert_eq(counter(PROF_STAT_DROPPED), 3);
}

Test(handler, records_only_the_leaf_without_stack_bounds)
{
    setup_sampler(4, 0);
    raise(SIGPROF);
    struct smp_slot *s = smp_ring_peek(&ring);
    cr_assert_not_null(s);
    cr_assert_eq(s->rec.n_frames, 1);
    cr_assert_eq(s->rec.stop_reason, PROF_STOP_NO_STACK);
    cr_assert_eq(s->rec.flags & PROF_SAMPLE_TRUNCATED, PROF_SAMPLE_TRUNCATED);
    cr_assert_eq(counter(PROF_STAT_TRUNCATED), 1);
    cr_assert_eq(counter(PROF_STAT_STOP_NO_STACK), 1);
}

Test(handler, does_nothing_while_inactive)
{
    setup_sampler(4, 1);
    atomic_store(&smp_sampler.active, 0);
    raise(SIGPROF);
    cr_assert_null(smp_ring_peek(&ring));
    cr_assert_eq(counter(PROF_STAT_SIGNALS), 0);
    cr_assert_eq(atomic_load(&smp_sampler.in_flight), 0);
}
