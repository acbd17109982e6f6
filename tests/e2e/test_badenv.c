/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end tests of bad configuration: a PROF_* variable with a bad value makes the
 * library print exactly one line on stderr, starting with "libprof: ", and nothing else
 * changes for the application (its stdout, the rest of its stderr, its exit status). An
 * output path that cannot be created costs at most that one line too. An unknown PROF_
 * name costs none: the profile tells it.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/e2e/support.h"

#define LIBPROF_PREFIX "libprof: "

TestSuite(e2e_badenv, .init = e2e_setup, .fini = e2e_teardown, .timeout = 60);

/* Returns a copy of text without its lines that start with prefix. */
static char *drop_lines(const char *text, const char *prefix)
{
    size_t lp = strlen(prefix);
    char *out = calloc(1, strlen(text) + 1), *o = out;
    cr_assert(out != NULL, "out of memory");
    for (const char *line = text; *line;) {
        size_t len = strcspn(line, "\n");
        size_t with_nl = len + (line[len] == '\n');
        if (!(len >= lp && strncmp(line, prefix, lp) == 0)) {
            memcpy(o, line, with_nl);
            o += with_nl;
        }
        line += with_nl;
    }
    return out;
}

/* Runs chatty without the library and with it plus `setting`; checks that the library
 * printed between min_lines and 1 lines and changed nothing else. */
static void check_setting(const char *setting, size_t min_lines)
{
    struct e2e_proc plain, lib;
    e2e_run(&plain, NULL, E2E_ARGV(E2E_WORKLOAD("chatty")));
    /* The profile goes to the test directory unless the setting is about the output. */
    const char *output = e2e_env("PROF_OUTPUT", e2e_path("bad.%p.prof"));
    if (strncmp(setting, "PROF_OUTPUT=", 12) == 0)
        output = setting;
    struct e2e_opts o = {.preload = 1, .env = E2E_ARGV(setting, output)};
    e2e_run(&lib, &o, E2E_ARGV(E2E_WORKLOAD("chatty")));

    cr_expect_eq(lib.status, plain.status, "with %s: exit status %d, not %d", setting, lib.status,
                 plain.status);
    cr_expect(lib.out_len == plain.out_len && memcmp(lib.out, plain.out, lib.out_len) == 0,
              "with %s: stdout changed", setting);
    size_t n_lib;
    e2e_count_lines(lib.err, LIBPROF_PREFIX, &n_lib);
    cr_expect(n_lib >= min_lines && n_lib <= 1,
              "with %s: %zu lines start with \"" LIBPROF_PREFIX "\" on stderr:\n%s", setting, n_lib,
              lib.err);
    char *rest = drop_lines(lib.err, LIBPROF_PREFIX);
    cr_expect_str_eq(rest, plain.err, "with %s: the application's stderr changed", setting);
    cr_log_info("with %s: %s", setting, n_lib ? "stderr has the expected line" : "silent");
    free(rest);
    e2e_proc_free(&plain);
    e2e_proc_free(&lib);
}

Test(e2e_badenv, frequency_not_a_number)
{
    check_setting("PROF_FREQ=abc", 1);
}

Test(e2e_badenv, frequency_zero)
{
    check_setting("PROF_FREQ=0", 1);
}

Test(e2e_badenv, depth_not_a_number)
{
    check_setting("PROF_DEPTH=deep", 1);
}

Test(e2e_badenv, buffer_size_negative)
{
    check_setting("PROF_BUFFER_KB=-4", 1);
}

Test(e2e_badenv, output_directory_missing)
{
    check_setting("PROF_OUTPUT=/nonexistent-libprof-dir/x.%p.prof", 0);
}

/* A PROF_ name the library does not know may be anyone's (a build system's, a user's own):
 * the program's stderr stays its own, and the profile says it. */
Test(e2e_badenv, an_unknown_prof_variable_is_told_in_the_profile_not_on_stderr)
{
    struct e2e_proc plain, lib, rep;
    e2e_run(&plain, NULL, E2E_ARGV(E2E_WORKLOAD("chatty")));
    const char *profile = e2e_path("unknown.prof");
    struct e2e_opts o = {.preload = 1,
                         .env = E2E_ARGV("PROF_X=1", e2e_env("PROF_OUTPUT", profile))};
    e2e_run(&lib, &o, E2E_ARGV(E2E_WORKLOAD("chatty")));
    cr_expect_eq(lib.status, plain.status);
    cr_expect_str_eq(lib.err, plain.err, "the program's stderr changed:\n%s", lib.err);
    e2e_run(&rep, NULL, E2E_ARGV(E2E_PROF, "report", profile));
    cr_expect_eq(rep.status, 0, "%s", rep.err);
    cr_expect(strstr(rep.err, "libprof: unknown variable PROF_X ignored") != NULL,
              "prof report does not tell the note:\n%s", rep.err);
    e2e_proc_free(&plain);
    e2e_proc_free(&lib);
    e2e_proc_free(&rep);
}
