/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The `prof` command: finds the command named by argv[1] in its table and runs it, prints
 * prof's or a command's help and the version, and is the only place that prints an error
 * or picks the exit status (the table below; README.md and prof(1) show the same one).
 * Single-threaded.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/ptrace_unwind.h"
#include "common/err.h"
#include "reporter/cmd/check.h"
#include "reporter/cmd/cmd.h"
#include "reporter/cmd/diff.h"
#include "reporter/cmd/launch.h"
#include "reporter/cmd/record.h"
#include "reporter/cmd/report.h"
#include "reporter/cmd/stacks.h"
#include "reporter/cmd/symbolize.h"

#ifndef PROF_VERSION_STRING /* the Makefile's VERSION */
#define PROF_VERSION_STRING "unknown"
#endif

/* The exit statuses of prof (see the help's table; check's 1 is REP_CMD_REGRESSED). */
#define EXIT_USAGE 2
#define EXIT_INTERNAL 3
#define EXIT_RECORD_FAILED 125
#define EXIT_CANNOT_RUN 126
#define EXIT_NOT_FOUND 127

#if defined(__x86_64__)
#define ARCH_NAME "x86_64"
#elif defined(__aarch64__)
#define ARCH_NAME "aarch64"
#else
#define ARCH_NAME "unknown"
#endif

struct command {
    const char *name;
    rep_cmd_fn *run;
    const char *help;    /* its --help */
    const char *summary; /* its line in prof --help */
    bool is_wrapper;     /* record: its own failures exit EXIT_RECORD_FAILED, apart from
                          * the statuses of the command it runs */
};

static const struct command commands[] = {
    {"record", rep_cmd_record, rep_cmd_record_help,
     "run a command under libprof, or sample a running process (-p)", true},
    {"report", rep_cmd_report, rep_cmd_report_help,
     "print profiles: top table, folded stacks, flame graph, pprof...", false},
    {"stacks", rep_cmd_stacks, rep_cmd_stacks_help,
     "every thread's stack of a running process, now", false},
    {"diff", rep_cmd_diff, rep_cmd_diff_help,
     "compare two sides of profiles, function by function", false},
    {"check", rep_cmd_check, rep_cmd_check_help,
     "exit 1 when profiles regressed against a baseline or a budget", false},
    {"symbolize", rep_cmd_symbolize, rep_cmd_symbolize_help,
     "name the module+0xOFFSET lines of prof_backtrace_fd()", false},
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static const char help_head[] =
    "usage: prof COMMAND [options] [ARG]...\n"
    "\n"
    "A sampling CPU profiler: libprof.so samples the stacks of a program's threads,\n"
    "prof records, reads and compares the profiles.\n"
    "\n"
    "commands:\n";

static const char help_tail[] =
    "  help       prof help COMMAND: the options of COMMAND (as COMMAND --help)\n"
    "\n"
    "  prof --version    the version and the build's features\n"
    "\n"
    "exit status:\n"
    "  0      success\n"
    "  1      check: something regressed (no other failure of prof exits 1)\n"
    "  2      bad usage or bad input (one line on standard error says why)\n"
    "  3      internal failure: out of memory, an output that cannot be written\n"
    "  125    record: prof record itself failed (usage, library, -p target)\n"
    "  126    record: the command was found but cannot be run\n"
    "  127    record: the command was not found\n"
    "  128+N  record: the command was killed by signal N\n"
    "  other  record: the command's own exit status\n"
    "\n"
    "See prof(1), libprof(7) and README.md.\n";

static void print_help(void)
{
    fputs(help_head, stdout);
    for (size_t i = 0; i < N_COMMANDS; i++)
        printf("  %-9s  %s\n", commands[i].name, commands[i].summary);
    fputs(help_tail, stdout);
}

/* The version, the architecture, whether libunwind is in, and the library record uses. */
static void print_version(void)
{
    printf("prof %s\n", PROF_VERSION_STRING);
    printf("architecture: %s\n", ARCH_NAME);
    printf("libunwind: %s\n",
           att_punw_is_built() ? "yes (PROF_UNWIND=libunwind, prof stacks --unwind libunwind)"
                               : "no (built without libunwind's header)");
    char *lib = NULL;
    if (rep_launch_find_library(&lib, NULL) == CMN_OK)
        printf("library: %s\n", lib);
    else
        printf("library: not found (set PROF_LIBRARY)\n");
    free(lib);
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

static int exit_status_of(const struct command *c, int rc)
{
    if (rc == CMN_E_NOCMD)
        return EXIT_NOT_FOUND;
    if (rc == CMN_E_NOEXEC)
        return EXIT_CANNOT_RUN;
    if (c->is_wrapper)
        return EXIT_RECORD_FAILED;
    return rc == CMN_E_INPUT ? EXIT_USAGE : EXIT_INTERNAL;
}

static const struct command *find_command(const char *name)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(name, commands[i].name) == 0)
            return &commands[i];
    return NULL;
}

/* `prof help [COMMAND]`. */
static int help_command(int argc, char **argv)
{
    if (argc < 3) {
        print_help();
        return 0;
    }
    const struct command *c = find_command(argv[2]);
    if (c == NULL) {
        errorf("help: unknown command '%s' (see prof --help)", argv[2]);
        return EXIT_USAGE;
    }
    fputs(c->help, stdout);
    return 0;
}

static int run_command(const struct command *c, int argc, char **argv)
{
    struct cmn_err err = {0};
    int status = 0;
    int rc = c->run(argc, argv, &status, &err);
    if (rc != CMN_OK) {
        errorf("%s", err.msg);
        return exit_status_of(c, rc);
    }
    if (status == REP_CMD_HELP) {
        fputs(c->help, stdout);
        return 0;
    }
    return status;
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : NULL;
    if (cmd == NULL) {
        errorf("no command given: prof record CMD..., prof report FILE... (see prof --help)");
        return EXIT_USAGE;
    }
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0)
        return help_command(1, argv);
    if (strcmp(cmd, "help") == 0)
        return help_command(argc, argv);
    if (strcmp(cmd, "--version") == 0) {
        print_version();
        return 0;
    }
    const struct command *c = find_command(cmd);
    if (c == NULL) {
        errorf("unknown command '%s' (see prof --help)", cmd);
        return EXIT_USAGE;
    }
    return run_command(c, argc - 1, argv + 1);
}
