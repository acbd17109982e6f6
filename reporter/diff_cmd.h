/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * `prof diff` and `prof check`: their command lines, and the run that reads the profiles of
 * both sides into a struct rep_diff (reporter/diff.h) and writes the diff
 * (reporter/out_diff.c) or the check's verdict (reporter/check.c). The files of the two
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
#ifndef PROF_REPORTER_DIFF_CMD_H
#define PROF_REPORTER_DIFF_CMD_H

#include <stdbool.h>

struct cmn_err;

/* The options of both commands, for `prof --help`. */
extern const char rep_diff_cmd_usage[];

/* Not async-signal-safe. */
/* Runs `prof diff` (is_check false) or `prof check` with argv[0] the command's name and
 * argv[1..argc) its arguments. Returns CMN_OK with *regressed set (check: something
 * regressed or broke the budget; diff: false), CMN_E_INPUT on bad usage or input,
 * CMN_E_NOMEM or CMN_E_IO, with the message in err. `--help` prints the usage and exits 0. */
int rep_diff_cmd_run(int argc, char **argv, bool is_check, bool *regressed /* out */,
                     struct cmn_err *err);

#endif
