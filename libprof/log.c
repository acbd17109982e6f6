/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Diagnostic lines (see log.h). Formats into a stack buffer and writes it with one
 * write(2), so lines from several threads do not interleave and no stdio state is used. */
#include "libprof/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "libprof/fd.h"

static int log_fd = 2; /* set once by lp_log_open(), before any other thread of ours */

void lp_log_open(const char *path)
{
    if (!path || !path[0])
        return;
    int fd = lp_fd_open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0)
        log_fd = fd;
    else
        lp_log("cannot open PROF_LOG %s: %s; logging to stderr", path, strerror(-fd));
}

void lp_log(const char *fmt, ...)
{
    int saved = errno;
    char line[512];
    size_t len = (size_t)snprintf(line, sizeof(line), "libprof: ");
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line + len, sizeof(line) - len - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    len += (size_t)n < sizeof(line) - len - 1 ? (size_t)n : sizeof(line) - len - 2;
    line[len++] = '\n';
    (void)lp_fd_write_all(log_fd, line, len);
    errno = saved;
}

void lp_log_close(void)
{
    if (log_fd != 2)
        lp_fd_close(log_fd);
    log_fd = 2;
}
