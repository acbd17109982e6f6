/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Random sampling intervals. A timer with a fixed period samples a program whose work
 * repeats at that period (or a multiple) at the same few phases of each round, and shares
 * its functions out wrong by as much as those phases are off. So every interval is drawn
 * afresh, uniformly between half and one and a half times the mean period: the phase of
 * each sample in any round is then uniform, the expected share of every function is its
 * true share whatever the program's period, and the mean rate stays the one asked for
 * (a sample weighs one period, or the CPU time since its thread's last sample where that
 * is measured: sampler/handler.c; either way the weights add up to the time in
 * expectation, within a spread like that of the sample count).
 *
 * Each source is re-armed from the handler, on the thread that took the sample:
 *  - perf: PERF_EVENT_IOC_PERIOD on the thread's own counter (the descriptor
 *    smp_signal_origin() proved), before the PERF_EVENT_IOC_REFRESH that re-enables it.
 *    The period starts afresh then, but the kernel stops the counter some time after its
 *    overflow (from a deferred interrupt, and it counts meanwhile): the counter is read
 *    and what it counted past the planned overflow comes off the next interval;
 *  - thread: timer_settime() of the thread's own CPU timer, by the kernel's timer id the
 *    signal carries, when smp_timer_owner says that id is this thread's timer (an id the
 *    application got back after ours was deleted is never touched); its period stays the
 *    mean, a backstop should a re-arm not happen;
 *  - itimer: setitimer(ITIMER_PROF) with the next value drawn and the mean as interval,
 *    while libprof owns ITIMER_PROF (smp_sampler.itimer_owned), which libprof/ clears and
 *    waits out the handlers in flight before the application gets the timer.
 * The CPU-time timers (thread, itimer) expire on scheduler ticks: their intervals are
 * drawn in time, but the samples still fall on ticks.
 *
 * The generator is a xorshift whose state the caller keeps (the handler: per thread, in
 * smp_self), seeded from the clock and the state's address the first time. Everything here
 * is async-signal-safe and lock-free, on the handler's path (`make lint`).
 */
#ifndef PROF_SAMPLER_JITTER_H
#define PROF_SAMPLER_JITTER_H

#include <stdatomic.h>
#include <stdint.h>

#define SMP_TIMER_ID_MAX 4096u  /* kernel timer ids smp_timer_owner covers */
#define SMP_JITTER_MIN_NS 10000u /* the kernel's shortest software clock period */
#define SMP_JITTER_WINDOW_SPREAD 0.2 /* smp_jitter_window(): the rate drawn within 20 % */
#define SMP_JITTER_WINDOW_GAIN 2.0    /* and moved by twice the skew's share of a window */
#define SMP_JITTER_WINDOW_STEER 0.75 /* to within 75 % of the mean at most */

/* Where a thread's perf counter should next overflow, in its own count (nanoseconds of
 * counted time), so that the time it counted between its overflow and the handler is
 * taken off the next interval. Per thread (smp_self); the handler's. */
struct smp_jitter_plan {
    int fd;          /* the counter the plan is for */
    uint64_t at;     /* its count at the planned overflow, 0 none */
    uint64_t period; /* the period it was armed with */
    int64_t debt_ns; /* counted time an interval could not take off (shorter than the
                      * shortest period), for the next */
};

/* smp_timer_owner[id]: the tid of the thread whose CPU timer has kernel id `id`, set by
 * sampler/timer_thread.c before the timer is armed and cleared before it is deleted; 0
 * for an id that is not a timer of ours. */
extern _Atomic uint32_t smp_timer_owner[SMP_TIMER_ID_MAX];

/* Async-signal-safe; rng is the caller's generator state (0: not seeded yet), one per
 * thread. */
/* The next interval around mean_ns: uniform in [mean/2, 3 mean/2). */
uint64_t smp_jitter_next(uint64_t *rng, uint64_t mean_ns);
/* Sets the period of this thread's perf counter fd (stopped at its overflow) to the next
 * interval, less what it counted since the overflow (plan); it takes effect when the
 * counter is enabled again. */
void smp_jitter_perf(uint64_t *rng, struct smp_jitter_plan *plan, int fd, uint64_t mean_ns);
/* Re-arms the CPU timer of thread tid (the caller's), kernel id timer_id, with the next
 * interval and returns it; nothing and 0 when the id is not that thread's timer. */
uint64_t smp_jitter_thread_timer(uint64_t *rng, int timer_id, uint32_t tid, uint64_t mean_ns);
/* Re-arms ITIMER_PROF with the next interval and returns it, 0 when it failed (the caller
 * checked that libprof owns the timer). */
uint64_t smp_jitter_itimer(uint64_t *rng, uint64_t mean_ns);
/* The ring source's next interval (libprof/timers.c draws one per thread and writer
 * period): its rate uniform within SMP_JITTER_WINDOW_SPREAD of the mean's, moved by the
 * skew the thread's draws have left so far (skew_ns: the drawn intervals less the mean,
 * summed; n_window: the samples a period of the writer takes at the mean rate) so that
 * the samples of every thread keep pace with its time, within SMP_JITTER_WINDOW_STEER.
 * The spread is small: each sample weighs one period whatever its window's rate, so a
 * window drawn fast over-weighs the code it runs; at 75 % the shares of a server's
 * request kinds (e2e_labels, 18 000 samples at 4000 Hz) were 1-1.6 points off where a
 * fixed rate gives 0.2; at 20 % a window's new rate still moves every window's phases,
 * which is what keeps a program periodic at the sampling period shared right
 * (e2e_aliasing). Pure arithmetic; not called by the handler. */
uint64_t smp_jitter_window(uint64_t *rng, uint64_t mean_ns, int64_t skew_ns, double n_window);

#endif
