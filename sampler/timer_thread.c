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
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sampler/jitter.h"

/* The kernel's clockid for a thread's scheduler CPU clock: ~tid in the high bits, then
 * the per-thread flag (4) and CPUCLOCK_SCHED (2). */
static clockid_t thread_cpu_clock(pid_t tid)
{
    return (clockid_t)((~(unsigned)tid) << 3) | 4 | 2;
}

int smp_timer_thread_create(pid_t tid, int signo, unsigned hz, int *id_out)
{
    if (hz == 0 || hz > 1000000)
        return -EINVAL;
    struct sigevent sev;
    memset(&sev, 0, sizeof(sev));
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = signo;
    sev.sigev_value.sival_ptr = SMP_TIMER_COOKIE;
    sev._sigev_un._tid = tid;
    int id = -1;
    if (syscall(SYS_timer_create, (long)thread_cpu_clock(tid), &sev, &id) != 0)
        return -errno;
    if (id >= 0 && (unsigned)id < SMP_TIMER_ID_MAX)
        atomic_store(&smp_timer_owner[id], (uint32_t)tid);
    long ns = 1000000000L / (long)hz;
    struct itimerspec its = {
        .it_interval = { .tv_sec = ns / 1000000000L, .tv_nsec = ns % 1000000000L },
        .it_value = { .tv_sec = ns / 1000000000L, .tv_nsec = ns % 1000000000L },
    };
    if (syscall(SYS_timer_settime, (long)id, 0L, &its, NULL) != 0) {
        int err = errno;
        smp_timer_thread_delete(id);
        return -err;
    }
    *id_out = id;
    return 0;
}

void smp_timer_thread_forget(int id)
{
    if (id >= 0 && (unsigned)id < SMP_TIMER_ID_MAX)
        atomic_store(&smp_timer_owner[id], 0);
}

void smp_timer_thread_delete(int id)
{
    int saved = errno;
    smp_timer_thread_forget(id);
    syscall(SYS_timer_delete, (long)id);
    errno = saved;
}
