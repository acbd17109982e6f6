/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Status codes and error messages of the prof command's code: the reporter and the
 * out-of-process producer (attach/). Every such function that can fail returns one of the
 * CMN_* codes below and, when it fails, writes a one-line message
 * (without the "prof: " prefix or a newline) into a caller-owned struct cmn_err. Only
 * main() prints that line and turns the code into an exit status, so the functions stay
 * testable and the command says one thing per failure. Single-threaded, like all of the
 * reporter.
 *
 * Signal handler's path: not allowed (vsnprintf).
 */
#ifndef PROF_COMMON_ERR_H
#define PROF_COMMON_ERR_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#define CMN_OK 0
#define CMN_E_INPUT (-1)    /* bad input or usage: the user can fix it; exit status 2 */
#define CMN_E_NOMEM (-2)    /* out of memory: exit status 1 */
#define CMN_E_IO (-3)       /* writing an output failed: exit status 1 */
#define CMN_E_NOTFOUND (-4) /* a lookup found nothing; not an error by itself */
#define CMN_E_NOCMD (-5)    /* `prof record`: the command does not exist; exit status 127 */
#define CMN_E_NOEXEC (-6)   /* `prof record`: the command cannot be run; exit status 126 */

#define CMN_ERR_MSG_MAX 512

struct cmn_err {
    int status;                /* the last CMN_E_* set, CMN_OK if none; written by cmn_err_set */
    char msg[CMN_ERR_MSG_MAX]; /* the message, NUL-terminated; cut short if it is too long */
};

/* Not async-signal-safe. */
/* Stores status and the printf-style message in e (which may be NULL) and returns status,
 * so that a failure path reads `return cmn_err_set(err, CMN_E_INPUT, "...", ...)`. errno
 * is kept. */
__attribute__((format(printf, 3, 4))) static inline int cmn_err_set(struct cmn_err *e,
                                                                    int status,
                                                                    const char *fmt, ...)
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

/* The usual message for CMN_E_NOMEM. */
static inline int cmn_err_nomem(struct cmn_err *e)
{
    return cmn_err_set(e, CMN_E_NOMEM, "out of memory");
}

#endif
