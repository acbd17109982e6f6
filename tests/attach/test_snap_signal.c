/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Tests of how `prof stacks` finds libprof's snapshot signal (attach/snap_signal.c):
 * the spelling of a signal, as libprof/config.c reads it; the choice libprof makes from
 * its environment, read back from a child started with that environment; and whether a
 * process catches the signal.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attach/procstat.h"
#include "attach/snap_signal.h"
#include "common/err.h"

static int parsed(const char *s)
{
    int sig = -1;
    struct cmn_err err = {0};
    cr_assert_eq(att_snap_signal_parse(s, &sig, &err), CMN_OK, "'%s': %s", s, err.msg);
    return sig;
}

static void refused(const char *s)
{
    int sig = -1;
    struct cmn_err err = {0};
    cr_expect_eq(att_snap_signal_parse(s, &sig, &err), CMN_E_INPUT, "'%s' was taken", s);
    cr_expect(strstr(err.msg, s) != NULL, "the message does not name '%s': %s", s, err.msg);
}

Test(snap_signal, parses_numbers_and_names_as_libprof_does)
{
    cr_expect_eq(parsed("10"), 10);
    cr_expect_eq(parsed("USR1"), SIGUSR1);
    cr_expect_eq(parsed("SIGUSR2"), SIGUSR2);
    cr_expect_eq(parsed("PROF"), SIGPROF);
    cr_expect_eq(parsed("RTMIN"), SIGRTMIN);
    cr_expect_eq(parsed("RTMIN+2"), SIGRTMIN + 2);
    cr_expect_eq(parsed("SIGRTMAX-3"), SIGRTMAX - 3);
    cr_expect_eq(parsed("off"), 0);
    cr_expect_eq(parsed("0"), 0);
}

Test(snap_signal, refuses_what_is_no_usable_signal)
{
    refused("KILL");
    refused("9");
    refused("SIGSEGV");
    refused("RTMAX+1");
    refused("RTMIN-1");
    refused("HUP");
    refused("12x");
    refused("");
}

/* The signal att_snap_signal_of() finds in a child started with the environment env
 * (NULL-terminated), whose last entry is "READY=1". */
static int signal_in_child(char *const *env)
{
    char *argv[] = {"sleep", "10", NULL};
    pid_t pid;
    cr_assert_eq(posix_spawn(&pid, "/bin/sleep", NULL, NULL, argv, env), 0);
    /* posix_spawn returns once the child has let go of our memory, which is before the
     * kernel has set up its new environment: wait for its last entry. */
    char path[64], buf[4096];
    snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
    for (int i = 0; i < 2000; i++) {
        long n = att_proc_read(path, buf, sizeof(buf));
        if (n >= 8 && memcmp(buf + n - 8, "READY=1", 8) == 0)
            break;
        usleep(1000);
    }
    int sig = att_snap_signal_of(pid);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return sig;
}

Test(snap_signal, takes_the_signal_from_the_environment_as_libprof_does)
{
    cr_expect_eq(signal_in_child((char *[]){"READY=1", NULL}), SIGRTMAX - 3);
    cr_expect_eq(signal_in_child((char *[]){"PROF_SNAPSHOT_SIGNAL=USR2", "READY=1", NULL}),
                 SIGUSR2);
    cr_expect_eq(signal_in_child((char *[]){"PROF_SNAPSHOT_SIGNAL=off", "READY=1", NULL}), 0);
    cr_expect_eq(signal_in_child((char *[]){"PROF_SNAPSHOT_SIGNAL=KILL", "READY=1", NULL}),
                 SIGRTMAX - 3, "an unusable value falls back to the default");
    cr_expect_eq(signal_in_child((char *[]){"PROF_SIGNAL=RTMAX-3", "READY=1", NULL}), SIGRTMAX - 4,
                 "the default steps aside for PROF_SIGNAL");
    cr_expect_eq(signal_in_child((char *[]){"PROF_SIGNAL=USR1", "PROF_SNAPSHOT_SIGNAL=SIGUSR1",
                                            "READY=1", NULL}),
                 0, "the same signal for both turns snapshots off");
}

static void on_usr1(int sig)
{
    (void)sig;
}

Test(snap_signal, tells_a_caught_signal_from_one_that_is_not)
{
    signal(SIGUSR1, on_usr1);
    signal(SIGUSR2, SIG_DFL);
    cr_expect(att_snap_signal_is_caught(getpid(), SIGUSR1));
    cr_expect(!att_snap_signal_is_caught(getpid(), SIGUSR2));
    cr_expect(!att_snap_signal_has_libprof(getpid()));
}
