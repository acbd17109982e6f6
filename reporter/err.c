/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Filling a struct rep_err. Called by every reporter module on its failure paths, in the
 * reporter's only thread; the struct belongs to the caller, usually main().
 */
#include "reporter/err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

int rep_err_set(struct rep_err *e, int status, const char *fmt, ...)
{
    if (e == NULL)
        return status;
    int saved_errno = errno;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
    va_end(ap);
    e->status = status;
    errno = saved_errno;
    return status;
}

int rep_err_nomem(struct rep_err *e)
{
    return rep_err_set(e, REP_E_NOMEM, "out of memory");
}

void rep_warnf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("prof: warning: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}
