/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The `prof` command: parses the command line, runs `report` (read every file, print its
 * stats, symbolize, aggregate, write one output) or `record` (reporter/cmd/record.c), and
 * is the only place that prints an error or picks the exit status:
 *   0 success; 1 internal failure (out of memory, an output that cannot be written);
 *   2 bad usage or bad input (one line on stderr); for `record`, the command's own status,
 *   127 when it does not exist and 126 when it cannot be run.
 * Single-threaded.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "reporter/cmd/cmd.h"
#include "reporter/cmd/diff.h"
#include "reporter/cmd/record.h"
#include "reporter/cmd/report.h"
#include "reporter/cmd/stacks.h"
#include "reporter/cmd/symbolize.h"

#define PROF_VERSION_STRING "0.1.0"

#define EXIT_INTERNAL 1
#define EXIT_USAGE 2

static const struct {
    const char *name;
    rep_cmd_fn *run;
} commands[] = {
    {"report", rep_cmd_report},       {"record", rep_cmd_record}, {"stacks", rep_cmd_stacks},
    {"symbolize", rep_cmd_symbolize}, {"diff", rep_cmd_diff},     {"check", rep_cmd_check},
};

static const char usage_head[] =
    "usage: prof report [options] FILE...   print a profile (several files are merged)\n"
    "       prof record [options] [--] COMMAND [ARG]...   run COMMAND under libprof\n"
    "       prof record -p PID [-F HZ] [-d SECS] -o FILE   sample a running process\n"
    "       prof stacks [options] PID | FILE   every thread's stack now, grouped\n"
    "       prof --help | --version\n"
    "\n";

static const char usage_exit[] =
    "exit status: 0 success; 1 internal failure (out of memory, output write error);\n"
    "  2 bad usage or bad input; record: the command's status (128+N if killed by\n"
    "  signal N), 127 if it was not found, 126 if it could not be run; record -p: 0, or 2\n"
    "  when the process does not exist or cannot be sampled (the line says why).\n";

static void print_help(void)
{
    fputs(usage_head, stdout);
    fputs(rep_cmd_report_usage, stdout);
    fputs(rep_cmd_record_usage, stdout);
    fputs(usage_exit, stdout);
    fputs(rep_cmd_diff_usage, stdout);
    fputs(rep_cmd_symbolize_usage, stdout);
    fputs(rep_cmd_stacks_usage, stdout);
}

static void errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void errorf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("prof: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static int exit_status_of(int rc)
{
    switch (rc) {
    case CMN_OK:
        return 0;
    case CMN_E_INPUT:
        return EXIT_USAGE;
    case CMN_E_NOCMD:
        return 127;
    case CMN_E_NOEXEC:
        return 126;
    default:
        return EXIT_INTERNAL;
    }
}

int main(int argc, char **argv)
{
    struct cmn_err err = {0};
    const char *cmd = argc > 1 ? argv[1] : NULL;
    if (cmd == NULL) {
        errorf("no command given: prof report FILE..., prof record CMD... (see prof --help)");
        return EXIT_USAGE;
    }
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        print_help();
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        puts("prof " PROF_VERSION_STRING);
        return 0;
    }
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        if (strcmp(cmd, commands[i].name) != 0)
            continue;
        int status = 0;
        int rc = commands[i].run(argc - 1, argv + 1, &status, &err);
        if (rc != CMN_OK) {
            errorf("%s", err.msg);
            return exit_status_of(rc);
        }
        if (status == REP_CMD_HELP) {
            print_help();
            return 0;
        }
        return status;
    }
    errorf("unknown command '%s' (see prof --help)", cmd);
    return EXIT_USAGE;
}
