/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Warnings of the prof command: what does not stop a command is said on stderr, one line
 * each. Reporter thread only.
 */
#include "reporter/base/warn.h"

#include <stdarg.h>
#include <stdio.h>

void rep_warnf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("prof: warning: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}
