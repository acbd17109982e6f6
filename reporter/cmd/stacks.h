/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * `prof stacks [options] PID | FILE`: the current stack of every thread of a running
 * process, grouped by identical stack, as pstack and eu-stack users read them; or the same
 * from a snapshot file saved earlier with --save.
 *
 * How the snapshot is taken: when the process runs under libprof (libprof.so in its maps)
 * with snapshots on, the library is asked with its snapshot signal and answers from inside
 * (attach/snap_signal.h); when it does not, when it has no handler for that signal, is
 * stopped, or does not answer in time (a warning says so), prof attaches with ptrace,
 * read-only (attach/ptrace_snap.h). Both give a snapshot profile, printed as text
 * (reporter/output/stacks.h) or as folded stacks through the report's aggregate and
 * reporter/output/folded.h. main() hands over the arguments after the command name and turns
 * the status into the exit code. Reporter thread only.
 */
#ifndef PROF_REPORTER_CMD_STACKS_H
#define PROF_REPORTER_CMD_STACKS_H

struct cmn_err;

/* The help of `prof stacks` (prof stacks --help). */
extern const char rep_cmd_stacks_help[];

/* Not async-signal-safe. */
/* Runs `prof stacks` with argv[0] the command's name. CMN_OK; CMN_E_INPUT on bad usage, a
 * process that does not exist or cannot be attached, or a bad FILE; CMN_E_NOMEM; CMN_E_IO
 * when an output cannot be written; the message in err. With --help, *exit_status is
 * REP_CMD_HELP. Warnings (a fallback to ptrace, symbolization problems) go to stderr. */
int rep_cmd_stacks(int argc, char **argv, int *exit_status /* out */, struct cmn_err *err);

#endif
