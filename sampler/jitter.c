/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Random sampling intervals (see jitter.h). On the handler's path: `make lint` checks what
 * this file calls.
 */
#include "sampler/jitter.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

_Atomic uint32_t smp_timer_owner[SMP_TIMER_ID_MAX];

/* xorshift64*; a state of 0 is seeded from the clock. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t x = *state;
    if (x == 0) {
        struct timespec ts = {0, 0};
        syscall(SYS_clock_gettime, (long)CLOCK_MONOTONIC, &ts);
        x = ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) ^ (uintptr_t)state;
        x |= 1u;
    }
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1dull;
}

uint64_t smp_jitter_next(uint64_t *rng, uint64_t mean_ns)
{
    /* mean/2 + mean * u, u uniform in [0, 1) from the top 32 bits. */
    uint64_t u = next_random(rng) >> 32;
    uint64_t spread = (uint64_t)(((unsigned __int128)mean_ns * u) >> 32);
    uint64_t next = mean_ns / 2 + spread;
    return next > 0 ? next : 1;
}

void smp_jitter_perf(uint64_t *rng, struct smp_jitter_plan *plan, int fd, uint64_t mean_ns)
{
    /* The counter stopped some time after its overflow (the kernel disables it from a
     * deferred interrupt): what it counted since is taken off the next interval, so that
     * the intervals between overflows, in counted time, are the ones drawn. An expiry that
     * met the thread in the kernel (exclude_kernel) was skipped, the clock going on for
     * another period: the overflow was a whole number of periods past the plan. */
    uint64_t count = 0;
    int64_t late = 0;
    if (syscall(SYS_read, (long)fd, &count, sizeof(count)) == (long)sizeof(count) &&
        plan->fd == fd && plan->at != 0 && plan->period != 0 && count >= plan->at)
        late = (int64_t)((count - plan->at) % plan->period);
    int64_t period = (int64_t)smp_jitter_next(rng, mean_ns) - late - plan->debt_ns;
    int64_t min = (int64_t)(mean_ns / 8 > SMP_JITTER_MIN_NS ? mean_ns / 8 : SMP_JITTER_MIN_NS);
    plan->debt_ns = period < min ? min - period : 0;
    if (period < min)
        period = min;
    uint64_t p = (uint64_t)period;
    ioctl(fd, PERF_EVENT_IOC_PERIOD, &p);
    plan->fd = fd;
    plan->at = count != 0 ? count + p : 0;
    plan->period = p;
}

static void to_timespec(uint64_t ns, struct timespec *ts)
{
    ts->tv_sec = (time_t)(ns / 1000000000u);
    ts->tv_nsec = (long)(ns % 1000000000u);
}

uint64_t smp_jitter_thread_timer(uint64_t *rng, int timer_id, uint32_t tid, uint64_t mean_ns)
{
    if (timer_id < 0 || (unsigned)timer_id >= SMP_TIMER_ID_MAX ||
        atomic_load_explicit(&smp_timer_owner[timer_id], memory_order_acquire) != tid)
        return 0;
    uint64_t next = smp_jitter_next(rng, mean_ns);
    struct itimerspec its;
    to_timespec(next, &its.it_value);
    to_timespec(mean_ns, &its.it_interval);
    return syscall(SYS_timer_settime, (long)timer_id, 0L, &its, NULL) == 0 ? next : 0;
}

static void to_timeval(uint64_t ns, struct timeval *tv)
{
    tv->tv_sec = (time_t)(ns / 1000000000u);
    tv->tv_usec = (suseconds_t)(ns % 1000000000u / 1000u);
}

uint64_t smp_jitter_itimer(uint64_t *rng, uint64_t mean_ns)
{
    uint64_t next = smp_jitter_next(rng, mean_ns);
    struct itimerval it;
    to_timeval(mean_ns, &it.it_interval);
    to_timeval(next, &it.it_value);
    if (it.it_value.tv_sec == 0 && it.it_value.tv_usec == 0)
        it.it_value.tv_usec = 1;
    /* The raw system call: libprof/ interposes setitimer() to see the application's. */
    return syscall(SYS_setitimer, ITIMER_PROF, &it, NULL) == 0 ? next : 0;
}

uint64_t smp_jitter_window(uint64_t *rng, uint64_t mean_ns, int64_t skew_ns, double n_window)
{
    /* Intervals drawn once per writer period, not per sample, take their samples at evenly
     * spaced phases within it: the rate is drawn, not the interval, so that the mean rate
     * is the one asked (a uniform interval would give more samples than asked), and each
     * period's first sample comes at a phase of its own (the new period counts from the
     * draw). */
    double u = (double)(next_random(rng) >> 11) / 9007199254740992.0; /* [0, 1) */
    double rate = 1 - SMP_JITTER_WINDOW_SPREAD + 2 * SMP_JITTER_WINDOW_SPREAD * u;
    if (n_window > 0)
        rate += SMP_JITTER_WINDOW_GAIN * (double)skew_ns / (double)mean_ns / n_window;
    if (rate < 1 - SMP_JITTER_WINDOW_STEER)
        rate = 1 - SMP_JITTER_WINDOW_STEER;
    if (rate > 1 + SMP_JITTER_WINDOW_STEER)
        rate = 1 + SMP_JITTER_WINDOW_STEER;
    uint64_t next = (uint64_t)((double)mean_ns / rate);
    return next > SMP_JITTER_MIN_NS ? next : SMP_JITTER_MIN_NS;
}
