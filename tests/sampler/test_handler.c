/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the signal handler (sampler/handler.c): what it records, that it keeps
 * errno, that a full ring drops and counts, the leaf-only fallback for a thread whose
 * stack bounds are unknown, and how it tells its own timer's signals from the
 * application's. fire() calls the handler as the kernel would after a timer expiry, with
 * a siginfo of our source and the caller's context from getcontext(). */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "sampler/handler.h"
#include "sampler/install.h"
#include "sampler/ring.h"
#include "sampler/timer_thread.h"

static uint64_t mem[8192];
static struct smp_ring ring;

static void setup_sampler(size_t n_slots, int with_bounds)
{
    memset(&smp_sampler, 0, sizeof(smp_sampler));
    cr_assert_eq(smp_ring_init(&ring, mem, n_slots * smp_ring_slot_bytes(64), 64), 0);
    smp_sampler.ring = &ring;
    smp_sampler.max_frames = 64;
    smp_sampler.source = PROF_TIMER_THREAD;
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
    cr_assert_eq(smp_install_handler(SIGPROF, 0, NULL, sigaction), 0);
    atomic_store(&smp_sampler.active, 1);
}

static int fire_code = SI_TIMER;
static int fire_overrun;

static void fire(void)
{
    siginfo_t si;
    ucontext_t uc;
    memset(&si, 0, sizeof(si));
    si.si_signo = SIGPROF;
    si.si_code = fire_code;
    si.si_overrun = fire_overrun;
    si.si_value.sival_ptr = SMP_TIMER_COOKIE;
    getcontext(&uc);
    smp_handler(SIGPROF, &si, &uc);
}

static uint64_t counter(unsigned i)
{
    return atomic_load(&smp_sampler.counters[i]);
}

Test(handler, records_a_sample_of_the_interrupted_thread)
{
    setup_sampler(4, 1);
    fire();
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
    fire();
    cr_assert_eq(errno, 1234);
}

Test(handler, drops_and_counts_when_the_ring_is_full)
{
    setup_sampler(2, 1);
    for (int i = 0; i < 5; i++)
        fire();
    cr_assert_eq(counter(PROF_STAT_SIGNALS), 5);
    cr_assert_eq(counter(PROF_STAT_SAMPLES), 2);
    cr_assert_eq(counter(PROF_STAT_DROPPED), 3);
}

Test(handler, records_only_the_leaf_without_stack_bounds)
{
    setup_sampler(4, 0);
    fire();
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
    fire();
    cr_assert_null(smp_ring_peek(&ring));
    cr_assert_eq(counter(PROF_STAT_SIGNALS), 0);
    cr_assert_eq(atomic_load(&smp_sampler.in_flight), 0);
}

Test(handler, counts_missed_ticks_as_weight)
{
    setup_sampler(4, 1);
    fire_overrun = 3;
    fire();
    struct smp_slot *s = smp_ring_peek(&ring);
    cr_assert_not_null(s);
    cr_assert_eq(s->rec.weight, 4);
}

static int app_calls;
static int app_code;

static void app_handler(int sig, siginfo_t *info, void *uc)
{
    (void)sig;
    (void)uc;
    app_calls++;
    app_code = info->si_code;
}

Test(handler, hands_signals_it_did_not_send_to_the_application)
{
    setup_sampler(4, 1);
    struct sigaction app;
    memset(&app, 0, sizeof(app));
    app.sa_sigaction = app_handler;
    app.sa_flags = SA_SIGINFO;
    smp_sampler.app_actions[1] = app;
    atomic_store(&smp_sampler.app_action_at, 1);

    fire_code = SI_USER; /* kill() by someone: not our timer */
    fire();
    cr_assert_eq(app_calls, 1);
    cr_assert_eq(app_code, SI_USER);
    cr_assert_null(smp_ring_peek(&ring), "no sample for a signal that is not ours");

    fire_code = SI_TIMER; /* our timer: sampled, not passed on */
    fire();
    cr_assert_eq(app_calls, 1);
    cr_assert_not_null(smp_ring_peek(&ring));
}

Test(handler, a_timer_without_our_cookie_is_the_application_s)
{
    setup_sampler(4, 1);
    siginfo_t si;
    ucontext_t uc;
    memset(&si, 0, sizeof(si));
    si.si_code = SI_TIMER;
    si.si_value.sival_ptr = &si; /* the application's own POSIX timer on our signal */
    getcontext(&uc);
    smp_handler(SIGPROF, &si, &uc);
    cr_assert_null(smp_ring_peek(&ring));
    cr_assert_eq(counter(PROF_STAT_SIGNALS), 0);
}
