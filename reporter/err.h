/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Status codes and error messages of the reporter. Every reporter function that can fail
 * returns one of the REP_* codes below and, when it fails, writes a one-line message
 * (without the "prof: " prefix or a newline) into a caller-owned struct rep_err. Only
 * main() prints that line and turns the code into an exit status, so the functions stay
 * testable and the command says one thing per failure. Single-threaded, like all of the
 * reporter.
 */
#ifndef PROF_REPORTER_ERR_H
#define PROF_REPORTER_ERR_H

#define REP_OK 0
#define REP_E_INPUT (-1)    /* bad input or usage: the user can fix it; exit status 2 */
#define REP_E_NOMEM (-2)    /* out of memory: exit status 1 */
#define REP_E_IO (-3)       /* writing an output failed: exit status 1 */
#define REP_E_NOTFOUND (-4) /* a lookup found nothing; not an error by itself */
#define REP_E_NOCMD (-5)    /* `prof record`: the command does not exist; exit status 127 */
#define REP_E_NOEXEC (-6)   /* `prof record`: the command cannot be run; exit status 126 */

#define REP_ERR_MSG_MAX 512

struct rep_err {
    int status;                /* the last REP_E_* set, REP_OK if none; written by rep_err_set */
    char msg[REP_ERR_MSG_MAX]; /* the message, NUL-terminated; cut short if it is too long */
};

/* Not async-signal-safe. */
/* Stores status and the printf-style message in e (which may be NULL) and returns status,
 * so that a failing function can end with `return rep_err_set(err, REP_E_INPUT, ...)`.
 * Keeps errno. */
int rep_err_set(struct rep_err *e, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The usual message for REP_E_NOMEM. */
int rep_err_nomem(struct rep_err *e);
/* A warning: one line "prof: warning: ..." on stderr, for what does not stop a command. */
void rep_warnf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
