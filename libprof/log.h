/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Diagnostics. The library is silent in normal operation: the program's stderr is its
 * output, which its tests compare. Two kinds:
 *  - lp_log(): what makes libprof unable to profile at all (an unusable output path, no
 *    working timer) and bad values of libprof's own variables. Lines start with "libprof: "
 *    and go to the PROF_LOG file when one was given, else to stderr.
 *  - lp_note(): what libprof adapted to (an unknown PROF_ name, an event or source not
 *    available here, the application's handler on our signal). Recorded in the profile as a
 *    PROF_REC_NOTE, which `prof report` shows, and written to PROF_LOG when one was given;
 *    never to stderr. Notes made before the profile is open wait (a few) until it is.
 * Never called from a signal handler.
 */
#ifndef PROF_LIBPROF_LOG_H
#define PROF_LIBPROF_LOG_H

#define LP_LOG_LINE_MAX 496 /* bytes of a line's text, the prefix apart */

/* Not async-signal-safe. Opens PROF_LOG (path may be "" for stderr). */
void lp_log_open(const char *path);
/* Not async-signal-safe. One line, printf-style, newline added. Keeps errno. */
void lp_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Not async-signal-safe. A note (see above), printf-style. Keeps errno. */
void lp_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Where notes are recorded: sink returns 0 when it recorded the text, else nonzero (no
 * profile open now), and the note waits. Setting a sink hands it the notes that wait. */
void lp_log_set_note_sink(int (*sink)(const char *text));
/* pthread_atfork() handlers (libprof/session.c calls them from its own): the notes' lock
 * is held across the fork; the child forgets the parent's sink. */
void lp_log_fork_prepare(void);
void lp_log_fork_parent(void);
void lp_log_fork_child(void);
/* Closes the log file, if any (after fork in the child). */
void lp_log_close(void);

#endif
