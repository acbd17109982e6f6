/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Per-thread CPU timers (see timer_thread.h), called by libprof/ on application threads.
 * A thread's CPU clock is named from its tid the way the kernel encodes it (what
 * pthread_getcpuclockid() returns for a pthread_t), so threads that were not started by
 * us, listed from /proc/self/task, can be armed too.
 */
#include "sampler/timer_thread.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

/* The kernel's clockid for a thread's scheduler CPU clock: ~tid in the high bits, then
 * the per-thread flag (4) and CPUCLOCK_SCHED (2). */
static clockid_t thread_cpu_clock(pid_t tid)
{
    return (clockid_t)((~(unsigned)tid) << 3) | 4 | 2;
}

int smp_timer_thread_create(pid_t tid, int signo, unsigned hz, timer_t *out)
{
    if (hz == 0 || hz > 1000000)
        return -EINVAL;
    struct sigevent sev;
    memset(&sev, 0, sizeof(sev));
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = signo;
    sev.sigev_value.sival_ptr = SMP_TIMER_COOKIE;
    sev._sigev_un._tid = tid;
    if (timer_create(thread_cpu_clock(tid), &sev, out) != 0)
        return -errno;
    long ns = 1000000000L / (long)hz;
    struct itimerspec its = {
        .it_interval = { .tv_sec = ns / 1000000000L, .tv_nsec = ns % 1000000000L },
        .it_value = { .tv_sec = ns / 1000000000L, .tv_nsec = ns % 1000000000L },
    };
    if (timer_settime(*out, 0, &its, NULL) != 0) {
        int err = errno;
        timer_delete(*out);
        return -err;
    }
    return 0;
}

void smp_timer_thread_delete(timer_t timer)
{
    int saved = errno;
    timer_delete(timer);
    errno = saved;
}
