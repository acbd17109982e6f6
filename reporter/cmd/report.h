/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * `prof report` (reporter/cmd/report.c).
 */
#ifndef PROF_REPORTER_CMD_REPORT_H
#define PROF_REPORTER_CMD_REPORT_H

struct cmn_err;

/* The help of `prof report` (prof report --help). */
extern const char rep_cmd_report_help[];

/* Not async-signal-safe. */
/* Runs `prof report` (reporter/cmd/cmd.h). CMN_E_INPUT on bad usage or a bad profile;
 * CMN_E_NOMEM; CMN_E_IO when the output cannot be written. */
int rep_cmd_report(int argc, char **argv, int *exit_status /* out */, struct cmn_err *err);

#endif
