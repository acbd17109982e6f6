/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Descriptor helpers for the library's files (see fd.h). Application threads and the
 * writer thread call them; never a signal handler. */
#include "libprof/fd.h"

#include "sampler/fd_high.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#define LP_FD_MIN 3

int lp_fd_open(const char *path, int flags, mode_t mode)
{
    int fd = open(path, flags | O_CLOEXEC, mode);
    if (fd < 0)
        return -errno;
    if (fd >= LP_FD_MIN)
        return fd;
    int high = fcntl(fd, F_DUPFD_CLOEXEC, LP_FD_MIN);
    int err = errno;
    lp_fd_close(fd);
    return high >= 0 ? high : -err;
}

int lp_fd_write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (n == 0)
            return -EIO;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int lp_fd_open_kept(const char *path, int flags, mode_t mode)
{
    int fd = lp_fd_open(path, flags, mode);
    return fd < 0 ? fd : smp_fd_move_high(fd);
}

void lp_fd_close(int fd)
{
    int saved = errno;
    if (fd >= 0)
        close(fd);
    errno = saved;
}

char *lp_fd_slurp(const char *path, size_t *len_out)
{
    int fd = lp_fd_open(path, O_RDONLY, 0);
    if (fd < 0) {
        errno = -fd;
        return NULL;
    }
    size_t cap = 16384, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (cap - len < 4096) {
            char *bigger = realloc(buf, cap * 2);
            if (!bigger) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
        ssize_t n = read(fd, buf + len, cap - len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    lp_fd_close(fd);
    if (!buf) {
        errno = ENOMEM;
        return NULL;
    }
    buf[len] = '\0';
    if (len_out)
        *len_out = len;
    return buf;
}
