/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * `prof record`: runs a command with libprof.so preloaded and the PROF_* variables set
 * from the options, waits for it, and hands back its exit status, like a shell would (a
 * command killed by signal N gives 128 + N). While it waits, prof ignores SIGINT and
 * SIGQUIT, as system() does, so that Ctrl-C stops the command (whose profile is then
 * written by the library) rather than prof. With -p it samples a running process from
 * outside instead (attach/record_pid.h). Reporter thread.
 *
 * The library is found at $PROF_LIBRARY, else next to the prof executable (a build tree),
 * else in ../lib relative to it (an installed tree).
 */
#ifndef PROF_REPORTER_CMD_RECORD_H
#define PROF_REPORTER_CMD_RECORD_H

#include <stdbool.h>
#include <sys/types.h>

#include "attach/remote_walk.h"

struct cmn_err;

struct rep_record_opts {
    const char *output; /* PROF_OUTPUT for the command (%p is its pid), NULL: unchanged;
                         * with pid, the file to write (required) */
    const char *freq;   /* PROF_FREQ, NULL: unchanged */
    const char *depth;  /* PROF_DEPTH, NULL: unchanged */
    char *const *argv;  /* the command and its arguments, NULL-terminated, argv[0] set;
                         * NULL with pid */
    /* -p: sample this running process instead of running a command (attach/record_pid.h);
     * 0: run argv. The fields below apply to it only. */
    pid_t pid;
    double duration_s;        /* --duration: seconds to sample; 0: until it exits or prof
                               * is interrupted */
    bool is_kernel_callchain; /* --callchain kernel: the kernel's frame-pointer walk instead
                               * of prof's walk over a copy of the stack */
    enum att_rwalk_mode unwind; /* --callchain auto|dwarf|fp: how prof's walk steps */
    bool is_help;             /* -h, --help */
};

/* The options of `prof record`, for `prof --help`. */
extern const char rep_cmd_record_usage[];

/* Not async-signal-safe. */
/* Finds libprof.so; *path is malloc'd (free it). CMN_OK, CMN_E_INPUT (message in err) or
 * CMN_E_NOMEM. */
int rep_record_find_library(char **path /* out */, struct cmn_err *err);
/* Runs the command and waits. CMN_OK with *status its exit status as a shell reports it;
 * CMN_E_NOCMD or CMN_E_NOEXEC when it could not be started; CMN_E_INPUT when the library
 * cannot be found; CMN_E_NOMEM. Changes prof's own environment (it is about to exit). */
int rep_record_run(const struct rep_record_opts *o, int *status /* out */, struct cmn_err *err);

/* Runs `prof record` (reporter/cmd/cmd.h): parses the options, then runs the command
 * (*exit_status its status) or, with -p, samples the process. */
int rep_cmd_record(int argc, char **argv, int *exit_status /* out */, struct cmn_err *err);

#endif
