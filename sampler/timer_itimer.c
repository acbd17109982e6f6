/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * setitimer(ITIMER_PROF) arming, called by libprof/ from the application's threads (start,
 * stop, around exec). See timer_itimer.h.
 */
#include "sampler/timer_itimer.h"

#include <errno.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

static int set_interval_us(long us)
{
    struct itimerval it = {
        .it_interval = { .tv_sec = us / 1000000, .tv_usec = us % 1000000 },
        .it_value = { .tv_sec = us / 1000000, .tv_usec = us % 1000000 },
    };
    /* The raw system call: libprof/ interposes setitimer() to see the application's. */
    return syscall(SYS_setitimer, ITIMER_PROF, &it, NULL) == 0 ? 0 : -errno;
}

int smp_timer_itimer_arm(unsigned hz)
{
    if (hz == 0 || hz > 1000000)
        return -EINVAL;
    long us = 1000000L / (long)hz;
    return set_interval_us(us > 0 ? us : 1);
}

int smp_timer_itimer_disarm(void)
{
    return set_interval_us(0);
}
