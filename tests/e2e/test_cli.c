/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end tests of prof's command line as a person meets it: a help per command that
 * fits 80 columns and shows its defaults, prof --help with every command and the
 * exit-status table, --version naming the build's features, every exit status, record's
 * flags reaching the library, the profiles of a run listed at its end and named by
 * `report`, and the top table on a terminal (folded stacks into a pipe).
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "include/libprof/prof_format.h"
#include "tests/e2e/support.h"

TestSuite(e2e_cli, .init = e2e_setup, .fini = e2e_teardown, .timeout = 90);

static const char *const commands[] = {"record", "report", "stacks", "diff", "check",
                                       "symbolize"};
#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

/* Options whose value has no default: a required input or a filter. */
static const char *const no_default[] = {
    "--tid",    "--thread", "--select-pid", "--from",   "--to",    "--focus",
    "--ignore", "--save",   "--pid",        "--budget", "--title", "--signal",
    "--label",  "--trace",  "--by-label",
};

static int has_no_default(const char *entry)
{
    for (size_t i = 0; i < sizeof(no_default) / sizeof(no_default[0]); i++) {
        const char *at = strstr(entry, no_default[i]);
        size_t n = strlen(no_default[i]);
        if (at != NULL && at - entry < 12 && at[n] == ' ')
            return 1;
    }
    return 0;
}

/* Whether an option's entry ("  -o, --output FILE    ...") names a value: an upper-case
 * word among the option's names, before the description. */
static int takes_value(const char *entry)
{
    for (const char *c = entry + 2; *c != '\0' && c - entry < 30; c++)
        if (*c >= 'A' && *c <= 'Z' && c[-1] == ' ')
            return 1;
    return 0;
}

/* Checks one help text: every line within 80 columns, and every option that takes a value
 * (an upper-case name after it) says its default in its entry, but those in no_default. */
static void expect_good_help(const char *what, const char *text)
{
    size_t col = 0, line = 1;
    for (const char *c = text; *c; c++, col++) {
        if (*c == '\n') {
            cr_expect(col <= 80, "%s: line %zu has %zu columns", what, line, col);
            col = (size_t)-1;
            line++;
        }
    }
    char *copy = strdup(text), *save = NULL;
    char entry[2048] = "";
    for (char *l = strtok_r(copy, "\n", &save);; l = strtok_r(NULL, "\n", &save)) {
        int is_option = l != NULL && (strncmp(l, "  -", 3) == 0 || strncmp(l, "      --", 8) == 0);
        if ((l == NULL || is_option || l[0] != ' ') && entry[0] != '\0') {
            if (takes_value(entry) && !has_no_default(entry))
                cr_expect(strcasestr(entry, "default") != NULL, "%s: no default in\n%s", what,
                          entry);
            entry[0] = '\0';
        }
        if (l == NULL)
            break;
        if (is_option || (entry[0] != '\0' && l[0] == ' '))
            snprintf(entry + strlen(entry), sizeof(entry) - strlen(entry), "%s\n", l);
    }
    free(copy);
}

Test(e2e_cli, every_command_has_its_own_help_within_80_columns_with_defaults)
{
    char *texts[N_COMMANDS];
    for (size_t i = 0; i < N_COMMANDS; i++) {
        struct e2e_proc p, h;
        e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, commands[i], "--help"));
        cr_expect_eq(p.status, 0, "prof %s --help exited %d", commands[i], p.status);
        char usage[64];
        snprintf(usage, sizeof(usage), "usage: prof %s", commands[i]);
        cr_expect(strncmp(p.out, usage, strlen(usage)) == 0, "prof %s --help:\n%s", commands[i],
                  p.out);
        expect_good_help(commands[i], p.out);
        e2e_run(&h, NULL, E2E_ARGV(E2E_PROF, "help", commands[i]));
        cr_expect_str_eq(h.out, p.out, "prof help %s is not prof %s --help", commands[i],
                         commands[i]);
        texts[i] = strdup(p.out);
        e2e_proc_free(&p);
        e2e_proc_free(&h);
    }
    for (size_t i = 0; i < N_COMMANDS; i++)
        for (size_t j = i + 1; j < N_COMMANDS; j++)
            cr_expect_str_neq(texts[i], texts[j], "%s and %s share a help", commands[i],
                              commands[j]);
    for (size_t i = 0; i < N_COMMANDS; i++)
        free(texts[i]);
    /* The defaults people ask about first. */
    struct e2e_proc p;
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "record", "-h"));
    cr_expect(strstr(p.out, "default: 250") && strstr(p.out, "default: prof.%p.prof"), "%s",
              p.out);
    e2e_proc_free(&p);
}

Test(e2e_cli, prof_help_lists_every_command_and_the_exit_statuses)
{
    struct e2e_proc p;
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "--help"));
    cr_assert_eq(p.status, 0);
    expect_good_help("prof --help", p.out);
    for (size_t i = 0; i < N_COMMANDS; i++) {
        char line[32];
        snprintf(line, sizeof(line), "\n  %s ", commands[i]);
        cr_expect(strstr(p.out, line) != NULL, "prof --help does not list %s:\n%s", commands[i],
                  p.out);
    }
    static const char *const codes[] = {"\n  0 ",   "\n  1 ",   "\n  2 ",     "\n  3 ",
                                        "\n  125 ", "\n  126 ", "\n  127 ", "\n  128+N "};
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
        cr_expect(strstr(p.out, codes[i]) != NULL, "no exit status%s", codes[i]);
    e2e_proc_free(&p);
}

Test(e2e_cli, version_names_the_features_of_the_build)
{
    struct e2e_proc p;
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "--version"));
    cr_assert_eq(p.status, 0);
    cr_expect(strncmp(p.out, "prof 0.", 7) == 0, "%s", p.out);
#if defined(__x86_64__)
    cr_expect(strstr(p.out, "architecture: x86_64\n") != NULL, "%s", p.out);
#endif
    cr_expect(strstr(p.out, "libunwind: yes") || strstr(p.out, "libunwind: no"), "%s", p.out);
    cr_expect(strstr(p.out, "library: " BUILD_DIR "/libprof.so\n") != NULL, "%s", p.out);
    e2e_proc_free(&p);
}

/* Runs prof with args and expects exit status want and, when needle is set, that it says
 * so on standard error. */
static void expect_status(int want, const char *needle, const char *const argv[])
{
    struct e2e_proc p;
    e2e_run(&p, NULL, argv);
    cr_expect_eq(p.status, want, "prof %s %s: exit %d, not %d; stderr:\n%s", argv[1],
                 argv[2] ? argv[2] : "", p.status, want, p.err);
    if (needle != NULL)
        cr_expect(strstr(p.err, needle) != NULL, "prof %s: stderr does not say '%s':\n%s",
                  argv[1], needle, p.err);
    e2e_proc_free(&p);
}

static const char *quick_profile(const char *name)
{
    const char *path = e2e_path(name);
    struct e2e_proc p;
    e2e_run(&p, NULL,
            E2E_ARGV(E2E_PROF, "record", "-q", "-o", path, "--", E2E_WORKLOAD("shares"), "0.2"));
    cr_assert_eq(p.status, 0, "prof record: %s", p.err);
    e2e_proc_free(&p);
    return path;
}

Test(e2e_cli, every_exit_status)
{
    const char *prof = quick_profile("q.prof");
    expect_status(0, NULL, E2E_ARGV(E2E_PROF, "report", prof));
    /* 1: check alone, for a regression: main is 100 % of the profile, over a 1 % budget. */
    const char *budget = e2e_path("budget.txt");
    e2e_write_file(budget, "main 1 total\n", 13);
    expect_status(1, NULL, E2E_ARGV(E2E_PROF, "check", "--budget", budget, prof));
    expect_status(2, "no-such.prof", E2E_ARGV(E2E_PROF, "report", e2e_path("no-such.prof")));
    expect_status(2, "unknown option", E2E_ARGV(E2E_PROF, "report", "--bogus", prof));
    expect_status(2, "unknown command", E2E_ARGV(E2E_PROF, "bogus"));
    expect_status(3, "write error", E2E_ARGV(E2E_PROF, "report", "-o", "/dev/full", prof));
    expect_status(125, "unknown option", E2E_ARGV(E2E_PROF, "record", "--bogus", "--", "true"));
    expect_status(125, "not a duration", E2E_ARGV(E2E_PROF, "record", "-d", "10sec", "true"));
    expect_status(126, NULL, E2E_ARGV(E2E_PROF, "record", "-q", "--", "/etc/passwd"));
    expect_status(127, "not found", E2E_ARGV(E2E_PROF, "record", "-q", "--", "/no/such/cmd"));
    expect_status(128 + SIGTERM, NULL,
                  E2E_ARGV(E2E_PROF, "record", "-q", "--", "/bin/sh", "-c", "kill -TERM $$"));
    /* The command's own statuses pass through, 2 included: prof's own would be 125. */
    expect_status(2, NULL, E2E_ARGV(E2E_PROF, "record", "-q", "--", "/bin/sh", "-c", "exit 2"));
    expect_status(5, NULL, E2E_ARGV(E2E_PROF, "record", "-q", "--", "/bin/sh", "-c", "exit 5"));
}

Test(e2e_cli, library_not_found_is_records_own_failure)
{
    struct e2e_proc p;
    struct e2e_opts o = {.env = E2E_ARGV("PROF_LIBRARY=/nonexistent/libprof.so")};
    e2e_run(&p, &o, E2E_ARGV(E2E_PROF, "record", "--", "/bin/true"));
    cr_expect_eq(p.status, 125, "exit %d: %s", p.status, p.err);
    e2e_proc_free(&p);
}

Test(e2e_cli, record_flags_set_the_librarys_variables)
{
    const char *log = e2e_path("lib.log");
    struct e2e_proc p;
    e2e_run(&p, NULL,
            E2E_ARGV(E2E_PROF, "record", "-q", "-o", e2e_path("env.prof"), "-F", "100", "-d",
                     "5m", "--depth", "64", "--timer", "thread", "-e", "cpu-clock", "--unwind",
                     "fp", "--signal", "USR1", "--snapshot-signal", "off", "--buffer", "256",
                     "--no-follow", "--start-idle", "--log", log, "--", "/bin/sh", "-c",
                     "env | grep '^PROF_' | sort"));
    cr_assert_eq(p.status, 0, "%s", p.err);
    static const char *const want[] = {
        "PROF_BUFFER_KB=256\n", "PROF_DEPTH=64\n",  "PROF_DURATION=5m\n",
        "PROF_EVENT=cpu-clock\n", "PROF_FOLLOW=0\n", "PROF_FREQ=100\n",
        "PROF_SIGNAL=USR1\n",   "PROF_SNAPSHOT_SIGNAL=off\n", "PROF_START=0\n",
        "PROF_TIMER=thread\n",  "PROF_UNWIND=fp\n",
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        cr_expect(strstr(p.out, want[i]) != NULL, "no %s in\n%s", want[i], p.out);
    cr_expect(strstr(p.out, "PROF_LOG=") != NULL, "%s", p.out);
    e2e_proc_free(&p);
}

Test(e2e_cli, record_flags_change_the_profile)
{
    const char *out = e2e_path("thread.prof");
    struct e2e_proc p;
    e2e_run(&p, NULL,
            E2E_ARGV(E2E_PROF, "record", "-q", "--timer", "thread", "--depth", "64", "-o", out,
                     "--", E2E_WORKLOAD("shares"), "0.3"));
    cr_assert_eq(p.status, 0, "%s", p.err);
    e2e_proc_free(&p);
    struct e2e_scan s;
    e2e_scan_file(&s, out);
    cr_expect_eq(s.timer_source, PROF_TIMER_THREAD, "timer source %u", s.timer_source);
    cr_expect(s.n_samples > 0);

    const char *idle = e2e_path("idle.prof");
    e2e_run(&p, NULL,
            E2E_ARGV(E2E_PROF, "record", "-q", "--start-idle", "-o", idle, "--",
                     E2E_WORKLOAD("shares"), "0.2"));
    cr_assert_eq(p.status, 0, "%s", p.err);
    e2e_proc_free(&p);
    e2e_scan_file(&s, idle);
    cr_expect(s.has_end && s.n_samples == 0, "--start-idle: %zu samples", s.n_samples);
}

Test(e2e_cli, record_lists_every_profile_and_report_names_the_family)
{
    const char *out = e2e_path("fam.prof");
    struct e2e_proc p;
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "record", "-o", out, "--", E2E_WORKLOAD("execfamily"),
                               "0.3"));
    cr_assert_eq(p.status, 0, "%s", p.err);
    size_t n_listed = 0;
    e2e_count_lines(p.err, "prof: profile ", &n_listed);
    cr_expect_eq(n_listed, 3, "the parent, its fork child and its exec'd child:\n%s", p.err);
    cr_expect(strstr(p.err, "prof report --family ") != NULL, "%s", p.err);
    e2e_proc_free(&p);

    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", out));
    cr_expect_eq(p.status, 0);
    cr_expect(strstr(p.err, "is one of 3 profiles") && strstr(p.err, "--family"), "%s", p.err);
    e2e_proc_free(&p);
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", "--family", out));
    cr_expect_eq(p.status, 0);
    cr_expect(strstr(p.err, "prof: 3 files:") != NULL, "%s", p.err);
    cr_expect(strstr(p.err, "is one of") == NULL, "%s", p.err);
    e2e_proc_free(&p);

    /* --no-follow: the children write nothing. */
    const char *alone = e2e_path("alone.prof");
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "record", "--no-follow", "-o", alone, "--",
                               E2E_WORKLOAD("execfamily"), "0.2"));
    cr_assert_eq(p.status, 0, "%s", p.err);
    e2e_count_lines(p.err, "prof: profile ", &n_listed);
    cr_expect_eq(n_listed, 1, "%s", p.err);
    e2e_proc_free(&p);
}

/* Runs argv with its standard output on a terminal (a pseudo-terminal), its standard error
 * discarded; returns what it printed (free it). */
static char *run_on_terminal(const char *const argv[])
{
    int master;
    pid_t pid = forkpty(&master, NULL, NULL, NULL);
    cr_assert(pid >= 0, "forkpty failed");
    if (pid == 0) {
        freopen("/dev/null", "w", stderr);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    size_t len = 0, cap = 1 << 16;
    char *out = calloc(1, cap);
    ssize_t n;
    while (len + 1 < cap && (n = read(master, out + len, cap - 1 - len)) > 0)
        len += (size_t)n;
    int ws;
    waitpid(pid, &ws, 0);
    close(master);
    cr_expect(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "%s on a terminal failed", argv[1]);
    return out;
}

Test(e2e_cli, report_prints_the_top_table_on_a_terminal_and_folded_into_a_pipe)
{
    const char *prof = quick_profile("t.prof");
    char *shown = run_on_terminal(E2E_ARGV(E2E_PROF, "report", prof));
    cr_expect(strstr(shown, "flat%") != NULL && strstr(shown, "hot_a") != NULL,
              "not the top table on a terminal:\n%s", shown);
    free(shown);
    shown = run_on_terminal(E2E_ARGV(E2E_PROF, "report", "-f", "folded", prof));
    cr_expect(strstr(shown, "flat%") == NULL && strstr(shown, "main;") != NULL, "%s", shown);
    free(shown);
    struct e2e_proc p;
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", prof));
    cr_expect(strstr(p.out, "flat%") == NULL && strstr(p.out, "main;stage_one;hot_a ") != NULL,
              "not folded stacks into a pipe:\n%s", p.out);
    e2e_proc_free(&p);
}
