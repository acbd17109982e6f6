/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * `prof symbolize [FILE]`: turns the frame lines libprof's prof_backtrace_fd() writes
 * ("/path/to/module+0x1a2b", the offset in that file) into "function file:line", one
 * output line per frame and one more per function inlined at that address, marked
 * "(inlined)". Lines of another form (a bare "0x..." address, text around a backtrace)
 * are copied unchanged, so a whole crash log can be piped through. Reads FILE, or
 * standard input when FILE is absent or "-". Each module is opened once. main() hands over
 * the arguments after the command name. Reporter thread only.
 */
#ifndef PROF_REPORTER_CMD_SYMBOLIZE_H
#define PROF_REPORTER_CMD_SYMBOLIZE_H

struct cmn_err;

/* The help of `prof symbolize` (prof symbolize --help). */
extern const char rep_cmd_symbolize_help[];

/* Not async-signal-safe. */
/* Runs `prof symbolize` (reporter/cmd/cmd.h), writing to standard output. CMN_OK,
 * CMN_E_INPUT (bad usage, unreadable FILE), CMN_E_NOMEM or CMN_E_IO, message in err. A
 * module that cannot be opened is not an error: its lines are copied unchanged. */
int rep_cmd_symbolize(int argc, char **argv, int *exit_status /* out */, struct cmn_err *err);

#endif
