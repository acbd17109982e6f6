/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * perf_event counters as a timer source (see timer_perf.h). Opened by libprof/ on
 * application threads. glibc has no wrapper for perf_event_open, hence syscall().
 */
#include "sampler/timer_perf.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static void fill_attr(struct perf_event_attr *a, unsigned hz, unsigned event)
{
    memset(a, 0, sizeof(*a));
    a->size = sizeof(*a);
    a->disabled = 1;
    a->exclude_hv = 1;
    switch (event) {
    case SMP_PERF_CYCLES:
    case SMP_PERF_INSTRUCTIONS:
        a->type = PERF_TYPE_HARDWARE;
        a->config = event == SMP_PERF_CYCLES ? PERF_COUNT_HW_CPU_CYCLES
                                             : PERF_COUNT_HW_INSTRUCTIONS;
        a->freq = 1; /* the kernel adapts the period to reach about hz samples a second */
        a->sample_freq = hz;
        break;
    default:
        a->type = PERF_TYPE_SOFTWARE;
        a->config = event == SMP_PERF_CPU_CLOCK ? PERF_COUNT_SW_CPU_CLOCK
                                                : PERF_COUNT_SW_TASK_CLOCK;
        a->sample_period = 1000000000ull / hz; /* the clocks count nanoseconds */
        break;
    }
}

/* Moves fd to 3 or above, close-on-exec. Returns the descriptor or -errno. */
static int move_high(int fd)
{
    if (fd >= 3)
        return fd;
    int high = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    int err = errno;
    close(fd);
    return high >= 0 ? high : -err;
}

int smp_timer_perf_open(pid_t tid, int signo, unsigned hz, unsigned event)
{
    if (hz == 0 || hz > 1000000)
        return -EINVAL;
    struct perf_event_attr attr;
    fill_attr(&attr, hz, event);
    long fd = syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0 && errno == EACCES && !attr.exclude_kernel) {
        /* perf_event_paranoid >= 2 allows user-space counting only. */
        attr.exclude_kernel = 1;
        fd = syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    }
    if (fd < 0)
        return -errno;
    int rc = move_high((int)fd);
    if (rc < 0)
        return rc;
    fd = rc;
    struct f_owner_ex owner = { .type = F_OWNER_TID, .pid = tid };
    if (fcntl((int)fd, F_SETFL, O_ASYNC) != 0 || fcntl((int)fd, F_SETSIG, signo) != 0 ||
        fcntl((int)fd, F_SETOWN_EX, &owner) != 0 ||
        ioctl((int)fd, PERF_EVENT_IOC_RESET, 0) != 0 ||
        ioctl((int)fd, PERF_EVENT_IOC_REFRESH, 1) != 0) {
        int err = errno;
        close((int)fd);
        return -err;
    }
    return (int)fd;
}

void smp_timer_perf_close(int fd)
{
    int saved = errno;
    if (fd >= 0) {
        ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
        close(fd);
    }
    errno = saved;
}
