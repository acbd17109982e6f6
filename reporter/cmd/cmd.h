/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What every command of prof is (reporter/cmd/main.c holds their table): a function run
 * with the command's own arguments, argv[0] its name, that returns CMN_OK or a CMN_E_*
 * code with its message in err, and says on success which exit status the process ends
 * with. Only main() prints an error or turns a code into an exit status. Reporter thread
 * only.
 */
#ifndef PROF_REPORTER_CMD_CMD_H
#define PROF_REPORTER_CMD_CMD_H

#include <stdio.h>

struct cmn_err;

/* *exit_status on success: 0, the command's own (record: the command's status; check:
 * REP_CMD_REGRESSED when something regressed), or REP_CMD_HELP: print the command's help
 * and exit 0. */
#define REP_CMD_HELP (-1)
#define REP_CMD_REGRESSED 1 /* the one command that exits 1 is check, for a regression */

typedef int rep_cmd_fn(int argc, char **argv, int *exit_status /* out */, struct cmn_err *err);

/* Not async-signal-safe. */
/* The error for getopt_long's '?' in command cmd: optopt names a short option, else
 * argv[optind - 1] is the long one. Returns CMN_E_INPUT. */
int rep_cmd_unknown_option(struct cmn_err *err, const char *cmd, char **argv);
/* Opens a command's output (-o path), standard output when path is NULL. CMN_OK, or
 * CMN_E_INPUT with the message. */
int rep_cmd_open_output(const char *path, FILE **out /* out */, struct cmn_err *err);
/* Closes out (unless it is standard output) and gives the command's status: rc, the
 * writers' own, turned into a message (CMN_E_NOMEM; CMN_E_IO naming the output, also
 * when only the close failed). */
int rep_cmd_close_output(const char *path, FILE *out, int rc, struct cmn_err *err);

#endif
