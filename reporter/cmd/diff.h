/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * `prof diff`: the differential profile of two sides of profiles, function by function
 * (reporter/compare/diff.h), written as text, json, markdown or a differential flame
 * graph (reporter/output/diff.c). The sides are given as
 *
 *   prof diff [options] BASE NEW                    one profile a side
 *   prof diff [options] BASE... -- NEW...           several runs a side, pooled
 *
 * and read as `prof check` reads them (reporter/cmd/sides.h). main() hands over the
 * arguments after the command name and turns the status into the exit code; warnings
 * about the files are printed on stderr here, as `report` does. Reporter thread only.
 */
#ifndef PROF_REPORTER_CMD_DIFF_H
#define PROF_REPORTER_CMD_DIFF_H

struct cmn_err;

/* The help of prof diff (prof diff --help). */
extern const char rep_cmd_diff_help[];

/* Not async-signal-safe. */
/* Runs `prof diff` (reporter/cmd/cmd.h): with --help, *exit_status is REP_CMD_HELP, else 0.
 * CMN_E_INPUT on bad usage or input; CMN_E_NOMEM; CMN_E_IO when the output cannot be
 * written. */
int rep_cmd_diff(int argc, char **argv, int *exit_status /* out */, struct cmn_err *err);

#endif
