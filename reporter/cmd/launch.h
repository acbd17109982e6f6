/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The program launcher of `prof record` (reporter/cmd/record.c): runs a command with
 * libprof.so preloaded (first in LD_PRELOAD, before what was there) and the PROF_*
 * variables given, waits for it, and hands back its exit status like a shell would (a
 * command killed by signal N gives 128 + N). While it waits, prof ignores SIGINT and
 * SIGQUIT, as system() does, so that Ctrl-C stops the command (whose profile is then
 * written by the library) rather than prof. Reporter thread.
 *
 * The library is found at $PROF_LIBRARY, else next to the prof executable (a build tree),
 * else in ../lib relative to it (an installed tree), as libprof.so or by its soname,
 * libprof.so.0 (an install without the development link).
 */
#ifndef PROF_REPORTER_CMD_LAUNCH_H
#define PROF_REPORTER_CMD_LAUNCH_H

#include <stddef.h>
#include <sys/types.h>

struct cmn_err;

/* One variable of the command's environment. */
struct rep_launch_var {
    const char *name;
    const char *value; /* NULL: left as it is */
};

/* Not async-signal-safe. */
/* Finds libprof.so; *path is malloc'd (free it). CMN_OK, CMN_E_INPUT (message in err) or
 * CMN_E_NOMEM. */
int rep_launch_find_library(char **path /* out */, struct cmn_err *err);
/* Runs the command argv (argv[0] looked for in PATH; NULL-terminated) with the library and
 * the n_vars variables vars set, and waits. CMN_OK with *status its exit status as a shell
 * reports it; CMN_E_NOCMD or CMN_E_NOEXEC when it could not be started; CMN_E_INPUT when
 * the library cannot be found; CMN_E_NOMEM. *child (when not NULL) is the command's
 * process id once it was forked. Changes prof's own environment (it is about to exit). */
int rep_launch_run(char *const *argv, const struct rep_launch_var *vars, size_t n_vars,
                   int *status /* out */, pid_t *child /* out */, struct cmn_err *err);

#endif
