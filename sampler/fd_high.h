/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Where libprof keeps the descriptors it holds for a whole run (the profile, the log, the
 * perf counters): high in the table, from three quarters of the soft RLIMIT_NOFILE (768
 * with the usual 1024) up, never 0, 1 or 2, close-on-exec. A program sees the low
 * numbers it expects to get or to find closed (a test that checks that descriptor 6 was
 * not passed to a child, a daemon that closes 3..N and opens its own); where the high range
 * is full, the lowest free number from 3 is taken. A process whose soft limit is below
 * SMP_FD_HIGH_MIN_LIMIT gets the lowest free numbers from 3 instead: it lowered its limit
 * under descriptors it had opened high (Python's test_close_fds_when_max_fd_is_lowered
 * does), and those are the numbers it checks its children for. Header-only: both libprof/
 * and sampler/ open descriptors. Not async-signal-safe.
 */
#ifndef PROF_SAMPLER_FD_HIGH_H
#define PROF_SAMPLER_FD_HIGH_H

#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#define SMP_FD_TOP 1024 /* the high range ends here at most, so that the table stays small */
#define SMP_FD_HIGH_MIN_LIMIT 256 /* below this soft limit, no high range */

/* Moves fd to the high range (see above), closing the old number. Returns the new
 * descriptor, or -errno (fd is closed then). */
static inline int smp_fd_move_high(int fd)
{
    struct rlimit lim;
    long top = SMP_FD_TOP;
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < (rlim_t)top)
        top = (long)lim.rlim_cur;
    long base = top >= SMP_FD_HIGH_MIN_LIMIT ? top * 3 / 4 : 3;
    if (fd >= base)
        return fd;
    int high = fcntl(fd, F_DUPFD_CLOEXEC, (int)base);
    if (high < 0 && fd < 3)
        high = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (high < 0 && fd >= 3)
        return fd; /* the high range is full: keep the number it has */
    int err = errno;
    close(fd);
    return high >= 0 ? high : -err;
}

#endif
