/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * `prof check`: the verdict on two sides of profiles (reporter/compare/check.c), against
 * the thresholds and a budget of shares (reporter/compare/budget.c). The sides are given as
 *
 *   prof check [options] BASE NEW                   one profile a side
 *   prof check [options] BASE... -- NEW...          several runs a side, pooled
 *   prof check [options] --budget FILE NEW          (or "-- NEW...") the budget alone
 *
 * and read as `prof diff` reads them (reporter/cmd/sides.h). main() hands over the
 * arguments after the command name and turns the status into the exit code; warnings
 * about the files are printed on stderr here, as `report` does. Reporter thread only.
 */
#ifndef PROF_REPORTER_CMD_CHECK_H
#define PROF_REPORTER_CMD_CHECK_H

struct cmn_err;

/* The help of prof check (prof check --help). */
extern const char rep_cmd_check_help[];

/* Not async-signal-safe. */
/* Runs `prof check` (reporter/cmd/cmd.h): *exit_status is REP_CMD_REGRESSED when
 * something regressed, REP_CMD_HELP with --help, else 0. CMN_E_INPUT on bad usage or
 * input; CMN_E_NOMEM; CMN_E_IO when the verdict cannot be written. */
int rep_cmd_check(int argc, char **argv, int *exit_status /* out */, struct cmn_err *err);

#endif
