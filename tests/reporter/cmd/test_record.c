/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Tests of `prof record` (reporter/cmd/record.c): the child's environment, its exit
 * status passed through, and the failures to start it. The preloaded "library" here is
 * the system's zlib, which any process can load without effect; Criterion runs every test
 * in its own process, so the environment changes stay there.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "reporter/cmd/record.h"

#define HARMLESS_LIB "/lib/x86_64-linux-gnu/libz.so.1"

static int run(char *const *argv, const char *output, const char *freq, int *status,
               struct cmn_err *err)
{
    struct rep_record_opts o = {.output = output, .freq = freq, .argv = argv};
    return rep_record_run(&o, status, NULL, err);
}

Test(record, passes_the_exit_status_through)
{
    setenv("PROF_LIBRARY", HARMLESS_LIB, 1);
    char *const argv[] = {"sh", "-c", "exit 3", NULL};
    int status = -1;
    struct cmn_err err = {0};
    cr_assert_eq(run(argv, NULL, NULL, &status, &err), CMN_OK, "%s", err.msg);
    cr_assert_eq(status, 3);
}

Test(record, reports_a_killed_command_as_128_plus_the_signal)
{
    setenv("PROF_LIBRARY", HARMLESS_LIB, 1);
    char *const argv[] = {"sh", "-c", "kill -TERM $$", NULL};
    int status = -1;
    struct cmn_err err = {0};
    cr_assert_eq(run(argv, NULL, NULL, &status, &err), CMN_OK, "%s", err.msg);
    cr_assert_eq(status, 128 + 15);
}

Test(record, sets_the_environment_of_the_command)
{
    char *lib = realpath(HARMLESS_LIB, NULL);
    cr_assert_not_null(lib);
    setenv("PROF_LIBRARY", HARMLESS_LIB, 1);
    setenv("LD_PRELOAD", "/lib/x86_64-linux-gnu/libm.so.6", 1);
    setenv("PROF_FREQ", "1", 1);
    char script[1024];
    snprintf(script, sizeof(script),
             "test \"$LD_PRELOAD\" = '%s:/lib/x86_64-linux-gnu/libm.so.6' || exit 10; "
             "test \"$PROF_OUTPUT\" = '/tmp/x.%%p.prof' || exit 11; "
             "test \"$PROF_FREQ\" = 997 || exit 12",
             lib);
    char *const argv[] = {"sh", "-c", script, NULL};
    int status = -1;
    struct cmn_err err = {0};
    cr_assert_eq(run(argv, "/tmp/x.%p.prof", "997", &status, &err), CMN_OK, "%s", err.msg);
    cr_assert_eq(status, 0);
    free(lib);
}

Test(record, leaves_unset_options_to_the_environment)
{
    setenv("PROF_LIBRARY", HARMLESS_LIB, 1);
    unsetenv("LD_PRELOAD");
    setenv("PROF_OUTPUT", "/tmp/mine.prof", 1);
    char *const argv[] = {"sh", "-c",
                          "test \"$PROF_OUTPUT\" = /tmp/mine.prof || exit 20; "
                          "case \"$LD_PRELOAD\" in *:*) exit 21;; esac",
                          NULL};
    int status = -1;
    struct cmn_err err = {0};
    cr_assert_eq(run(argv, NULL, NULL, &status, &err), CMN_OK, "%s", err.msg);
    cr_assert_eq(status, 0);
}

Test(record, says_when_the_command_does_not_exist)
{
    setenv("PROF_LIBRARY", HARMLESS_LIB, 1);
    char *const argv[] = {"no-such-command-for-prof", NULL};
    int status = -1;
    struct cmn_err err = {0};
    cr_assert_eq(run(argv, NULL, NULL, &status, &err), CMN_E_NOCMD);
    cr_assert_str_eq(err.msg, "no-such-command-for-prof: command not found");
}

Test(record, says_when_the_command_cannot_run)
{
    setenv("PROF_LIBRARY", HARMLESS_LIB, 1);
    char *const argv[] = {"/etc/passwd", NULL};
    int status = -1;
    struct cmn_err err = {0};
    cr_assert_eq(run(argv, NULL, NULL, &status, &err), CMN_E_NOEXEC);
    cr_assert_str_eq(err.msg, "/etc/passwd: Permission denied");
}

Test(record, fails_without_the_library)
{
    setenv("PROF_LIBRARY", "/nonexistent/libprof.so", 1);
    char *const argv[] = {"true", NULL};
    int status = -1;
    struct cmn_err err = {0};
    cr_assert_eq(run(argv, NULL, NULL, &status, &err), CMN_E_INPUT);
    cr_assert(strstr(err.msg, "PROF_LIBRARY=/nonexistent/libprof.so") != NULL, "%s", err.msg);
}
