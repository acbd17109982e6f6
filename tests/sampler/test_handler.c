/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the signal handler (sampler/handler.c, sampler/app_action.c): what it
 * records, that it keeps errno, that a full ring drops and counts, the leaf-only fallback
 * for a thread whose stack bounds are unknown, how it tells its own timers' signals from the
 * application's, and how it delivers the application's as the kernel would (mask,
 * SA_NODEFER, SA_RESETHAND, the default action, a handler that never returns). fire()
 * calls the handler as the kernel would after a timer expiry, with a siginfo of our source
 * and the caller's context from getcontext(). */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "sampler/handler.h"
#include "sampler/install.h"
#include "sampler/ring.h"
#include "sampler/sigstack.h"
#include "sampler/timer_perf.h"
#include "sampler/timer_thread.h"

static uint64_t mem[8192];
static struct smp_ring ring;
/* The stack of libprof's the samples run on (sampler/sigstack.h). */
static _Alignas(16) uint8_t own_stack[SMP_SIGSTACK_BYTES];

static void setup_sampler(size_t n_slots, int with_bounds)
{
    memset(&smp_sampler, 0, sizeof(smp_sampler));
    cr_assert_eq(smp_ring_init(&ring, mem, n_slots * smp_ring_slot_bytes(64), 64), 0);
    smp_sampler.ring = &ring;
    smp_sampler.max_frames = 64;
    smp_sampler.source = PROF_TIMER_THREAD;
    memset(&smp_self, 0, sizeof(smp_self));
    smp_sigstack_self = (struct smp_sigstack){(uintptr_t)own_stack,
                                              (uintptr_t)own_stack + sizeof(own_stack)};
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
    cr_assert_eq(smp_install_handler(SIGPROF, NULL, sigaction), 0);
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
    smp_app_action_store(&smp_sampler.app, &app);

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
    struct sigaction ign;
    memset(&ign, 0, sizeof(ign));
    ign.sa_handler = SIG_IGN;
    smp_app_action_store(&smp_sampler.app, &ign);
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

Test(handler, runs_with_every_asynchronous_signal_blocked)
{
    setup_sampler(4, 1);
    struct sigaction now;
    cr_assert_eq(sigaction(SIGPROF, NULL, &now), 0);
    cr_assert(sigismember(&now.sa_mask, SIGALRM), "an application's SIGALRM could interrupt us");
    cr_assert(sigismember(&now.sa_mask, SIGRTMIN + 1));
    cr_assert(sigismember(&now.sa_mask, SIGINT));
    cr_assert_not(sigismember(&now.sa_mask, SIGSEGV), "synchronous signals are never blocked");
}

/* A signal delivered by our handler to the application's action, from inside our handler,
 * with the interrupted context's mask as uc_sigmask. */
static sigset_t mask_seen;
static int deliveries;

static void record_mask(int sig)
{
    (void)sig;
    deliveries++;
    pthread_sigmask(SIG_SETMASK, NULL, &mask_seen);
}

static void deliver_kill(int flags, const sigset_t *app_mask)
{
    struct sigaction app;
    memset(&app, 0, sizeof(app));
    app.sa_handler = record_mask;
    app.sa_flags = flags;
    if (app_mask)
        app.sa_mask = *app_mask;
    smp_app_action_store(&smp_sampler.app, &app);
    siginfo_t si;
    ucontext_t uc;
    memset(&si, 0, sizeof(si));
    si.si_code = SI_USER;
    getcontext(&uc);
    sigemptyset(&uc.uc_sigmask);
    sigaddset(&uc.uc_sigmask, SIGUSR1); /* what the interrupted code had blocked */
    smp_handler(SIGPROF, &si, &uc);
}

Test(handler, the_application_handler_gets_the_mask_it_asked_for)
{
    setup_sampler(4, 1);
    sigset_t extra;
    sigemptyset(&extra);
    sigaddset(&extra, SIGUSR2);
    deliver_kill(0, &extra);
    cr_assert_eq(deliveries, 1);
    cr_assert(sigismember(&mask_seen, SIGUSR1), "the interrupted mask");
    cr_assert(sigismember(&mask_seen, SIGUSR2), "its sa_mask");
    cr_assert(sigismember(&mask_seen, SIGPROF), "the signal itself");
    cr_assert_not(sigismember(&mask_seen, SIGALRM), "not our handler's mask");
    deliver_kill(SA_NODEFER, NULL);
    cr_assert_not(sigismember(&mask_seen, SIGPROF), "SA_NODEFER");
}

/* SA_RESETHAND: the first delivery runs the handler, the second meets the default action,
 * which for SIGPROF terminates the process, as without libprof. */
Test(handler, sa_resethand_runs_once_then_the_default_action, .signal = SIGPROF)
{
    setup_sampler(4, 1);
    deliver_kill(SA_RESETHAND, NULL);
    cr_assert_eq(deliveries, 1);
    struct sigaction seen;
    smp_app_action_load(&smp_sampler.app, &seen);
    cr_assert_eq(seen.sa_handler, SIG_DFL, "sigaction() shows the reset");
    deliver_kill(SA_RESETHAND, NULL); /* the store clears the reset: runs again */
    cr_assert_eq(deliveries, 2);
    siginfo_t si;
    ucontext_t uc;
    memset(&si, 0, sizeof(si));
    si.si_code = SI_USER;
    getcontext(&uc);
    sigemptyset(&uc.uc_sigmask);
    smp_handler(SIGPROF, &si, &uc); /* default: re-raised, pending until unblocked */
    sigset_t prof;
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    pthread_sigmask(SIG_UNBLOCK, &prof, NULL);
    cr_assert_fail("the default action did not terminate");
}

Test(handler, a_signal_with_the_default_action_terminates_as_without_us, .signal = SIGPROF)
{
    setup_sampler(4, 1);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    smp_app_action_store(&smp_sampler.app, &dfl);
    siginfo_t si;
    ucontext_t uc;
    memset(&si, 0, sizeof(si));
    si.si_code = SI_USER;
    getcontext(&uc);
    smp_handler(SIGPROF, &si, &uc);
    sigset_t prof;
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    pthread_sigmask(SIG_UNBLOCK, &prof, NULL);
    cr_assert_fail("the default action did not terminate");
}

static sigjmp_buf out;

static void jump_out(int sig)
{
    (void)sig;
    siglongjmp(out, 1);
}

/* The application's handler leaves ours by siglongjmp: nothing of ours is left half done,
 * and the next tick is sampled. */
Test(handler, an_application_handler_that_never_returns_leaves_sampling_intact)
{
    setup_sampler(4, 1);
    struct sigaction app;
    memset(&app, 0, sizeof(app));
    app.sa_handler = jump_out;
    smp_app_action_store(&smp_sampler.app, &app);
    if (sigsetjmp(out, 1) == 0) {
        fire_code = SI_USER;
        fire();
        cr_assert_fail("the application's handler returned");
    }
    cr_assert_eq(atomic_load(&smp_sampler.in_flight), 0);
    fire_code = SI_TIMER;
    fire();
    fire();
    cr_assert_eq(counter(PROF_STAT_SAMPLES), 2);
    cr_assert_not_null(smp_ring_peek(&ring));
}

/* The perf source's signals name a descriptor: one of this thread's counters is a sample;
 * a counter of ours that was closed is late and dropped; any other is the application's. */
static void fire_poll(int fd)
{
    siginfo_t si;
    ucontext_t uc;
    memset(&si, 0, sizeof(si));
    si.si_code = POLL_HUP;
    si.si_fd = fd;
    getcontext(&uc);
    smp_handler(SIGPROF, &si, &uc);
}

Test(handler, perf_signals_are_ours_only_for_this_threads_counter)
{
    setup_sampler(4, 1);
    smp_sampler.source = PROF_TIMER_PERF;
    int fds[2];
    cr_assert_eq(pipe(fds), 0); /* stand-ins: the re-arming ioctl fails on a pipe */
    struct sigaction app;
    memset(&app, 0, sizeof(app));
    app.sa_sigaction = app_handler;
    app.sa_flags = SA_SIGINFO;
    smp_app_action_store(&smp_sampler.app, &app);

    atomic_store(&smp_perf_fds[fds[0]], (uint32_t)syscall(SYS_gettid));
    fire_poll(fds[0]);
    cr_assert_eq(counter(PROF_STAT_SAMPLES), 1);
    atomic_store(&smp_perf_fds[fds[0]], SMP_PERF_FD_LATE);
    fire_poll(fds[0]);
    cr_assert_eq(counter(PROF_STAT_SAMPLES), 1);
    cr_assert_eq(counter(PROF_STAT_LATE_SIGNALS), 1);
    cr_assert_eq(app_calls, 0, "a late signal of ours went to the application");
    fire_poll(fds[1]); /* never ours */
    cr_assert_eq(app_calls, 1);
    cr_assert_eq(counter(PROF_STAT_APP_SIGNALS), 1);
    atomic_store(&smp_perf_fds[fds[0]], 0);
}

static void burn_cpu_ns(uint64_t ns)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    do {
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    } while ((uint64_t)(t.tv_sec - t0.tv_sec) * 1000000000u + (uint64_t)t.tv_nsec -
                 (uint64_t)t0.tv_nsec < ns);
}

/* A perf clock sample weighs the thread's CPU time since its last one, in periods: the
 * time a system call took (which the user-only counter does not sample) is not lost. */
Test(handler, perf_samples_weigh_the_cpu_time_since_the_last_one)
{
    setup_sampler(8, 1);
    smp_sampler.source = PROF_TIMER_PERF;
    smp_sampler.period_ns = 1000000; /* 1 ms */
    atomic_store(&smp_sampler.epoch, 7);
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    atomic_store(&smp_perf_fds[fds[0]], (uint32_t)syscall(SYS_gettid));
    fire_poll(fds[0]); /* the first of an epoch: weight 1, a mark to measure from */
    burn_cpu_ns(20000000);
    fire_poll(fds[0]);
    struct smp_slot *s = smp_ring_peek(&ring);
    cr_assert_eq(s->rec.weight, 1);
    smp_ring_release(&ring, s);
    s = smp_ring_peek(&ring);
    cr_assert_not_null(s);
    cr_assert(s->rec.weight >= 19 && s->rec.weight <= 23, "weight %u for 20 ms", s->rec.weight);
    atomic_store(&smp_perf_fds[fds[0]], 0);
}
