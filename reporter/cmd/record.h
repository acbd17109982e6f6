/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * `prof record`: runs a command with libprof.so preloaded and the PROF_* variables set
 * from the options (reporter/cmd/launch.h), waits for it, and hands back its exit status,
 * like a shell would; then lists the profiles its processes wrote. With -p it samples a
 * running process from outside instead (attach/record_pid.h). Reporter thread.
 */
#ifndef PROF_REPORTER_CMD_RECORD_H
#define PROF_REPORTER_CMD_RECORD_H

#include <stdbool.h>
#include <sys/types.h>

#include "attach/remote_walk.h"

struct cmn_err;

struct rep_record_opts {
    /* The PROF_* variables of the command, NULL (or false): left as they are. */
    const char *output;          /* PROF_OUTPUT (%p is the pid); with pid, the file to
                                  * write (required) */
    const char *freq;            /* PROF_FREQ */
    const char *depth;           /* PROF_DEPTH */
    const char *duration;        /* PROF_DURATION, as typed (common/parse.h) */
    const char *timer;           /* PROF_TIMER */
    const char *event;           /* PROF_EVENT */
    const char *unwind;          /* PROF_UNWIND, verbatim: the library checks it */
    const char *signal;          /* PROF_SIGNAL */
    const char *snapshot_signal; /* PROF_SNAPSHOT_SIGNAL */
    const char *buffer_kb;       /* PROF_BUFFER_KB */
    const char *log;             /* PROF_LOG */
    const char *mode;            /* PROF_MODE: cpu or wall */
    const char *interval;        /* PROF_INTERVAL, as typed (common/parse.h) */
    const char *keep;            /* PROF_KEEP */
    const char *toggle_signal;   /* PROF_TOGGLE_SIGNAL */
    const char *labels;          /* PROF_LABELS, verbatim: the library checks it */
    bool is_no_follow;           /* --no-follow: PROF_FOLLOW=0 */
    bool is_start_idle;          /* --start-idle: PROF_START=0 */
    bool is_quiet;               /* -q: no list of the profiles written */
    char *const *argv;           /* the command and its arguments, NULL-terminated, argv[0]
                                  * set; NULL with pid */
    /* -p: sample this running process instead of running a command (attach/record_pid.h);
     * 0: run argv. The fields below apply to it only. */
    pid_t pid;
    double duration_s;        /* -d: seconds to sample; 0: until it exits or prof is
                               * interrupted */
    bool is_kernel_callchain; /* --unwind kernel: the kernel's frame-pointer walk instead
                               * of prof's walk over a copy of the stack */
    enum att_rwalk_mode pid_unwind; /* --unwind auto|dwarf|fp: how prof's walk steps */
    bool is_help;             /* -h, --help */
};

/* The help of `prof record` (prof record --help). */
extern const char rep_cmd_record_help[];

#define REP_RECORD_N_VARS 18u /* the PROF_* variables the options may set */

/* Not async-signal-safe. */
/* Runs the command with the options' variables (rep_launch_run()) and waits. CMN_OK with *status
 * its exit status as a shell reports it; CMN_E_NOCMD or CMN_E_NOEXEC when it could not be started;
 * CMN_E_INPUT when the library cannot be found; CMN_E_NOMEM. *child (when not NULL) is the
 * command's process id once it was forked. Changes prof's own environment (it is about to exit). */
int rep_record_run(const struct rep_record_opts *o, int *status /* out */, pid_t *child /* out */,
                   struct cmn_err *err);

/* Runs `prof record` (reporter/cmd/cmd.h): parses the options, then runs the command
 * (*exit_status its status) and lists the profiles its processes wrote or, with -p,
 * samples the process. */
int rep_cmd_record(int argc, char **argv, int *exit_status /* out */, struct cmn_err *err);

#endif
