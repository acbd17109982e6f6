/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * `prof diff` and `prof check`: their command lines, and the run that reads the profiles of
 * both sides into a struct rep_diff (reporter/compare/diff.h) and writes the diff
 * (reporter/output/diff.c) or the check's verdict (reporter/compare/check.c). The files of the two
 * sides are given as
 *
 *   prof diff [options] BASE NEW                    one profile a side
 *   prof diff [options] BASE... -- NEW...           several runs a side, pooled
 *   prof check [options] --budget FILE NEW          (or "-- NEW...") the budget alone
 *
 * main() hands over the arguments after the command name and turns the status into the
 * exit code; warnings about the files are printed on stderr here, as `report` does.
 * Reporter thread only.
 */
#ifndef PROF_REPORTER_CMD_DIFF_H
#define PROF_REPORTER_CMD_DIFF_H

struct cmn_err;

/* The help of each command (prof diff --help, prof check --help). */
extern const char rep_cmd_diff_help[];
extern const char rep_cmd_check_help[];

/* Not async-signal-safe. */
/* Run `prof diff` and `prof check` (reporter/cmd/cmd.h). check's *exit_status is REP_CMD_REGRESSED
 * when something regressed; with --help, *exit_status is REP_CMD_HELP. CMN_E_INPUT on bad usage or input; CMN_E_NOMEM; CMN_E_IO when the
 * output cannot be written. */
int rep_cmd_diff(int argc, char **argv, int *exit_status /* out */, struct cmn_err *err);
int rep_cmd_check(int argc, char **argv, int *exit_status /* out */, struct cmn_err *err);

#endif
