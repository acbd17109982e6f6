/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Diagnostics. The library is silent in normal operation: these are for things that went
 * wrong (a bad PROF_* value, an unwritable output). Lines start with "libprof: " and go to
 * the PROF_LOG file when one was given, else to stderr. Never called from a signal handler.
 */
#ifndef PROF_LIBPROF_LOG_H
#define PROF_LIBPROF_LOG_H

/* Not async-signal-safe. Opens PROF_LOG (path may be "" for stderr). */
void lp_log_open(const char *path);
/* Not async-signal-safe. One line, printf-style, newline added. Keeps errno. */
void lp_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Closes the log file, if any (after fork in the child). */
void lp_log_close(void);

#endif
