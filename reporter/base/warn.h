/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Warnings of the prof command (reporter/base/warn.c). Errors go through struct cmn_err
 * (common/err.h) to main(), which prints them; a warning is printed where it arises.
 */
#ifndef PROF_REPORTER_BASE_WARN_H
#define PROF_REPORTER_BASE_WARN_H

/* Not async-signal-safe. */
/* A warning: one line "prof: warning: ..." on stderr, for what does not stop a command. */
void rep_warnf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
