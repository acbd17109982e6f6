/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Programs that change what a thread may do, for the end-to-end tests that the profiler's
 * own thread never makes them fail.
 *
 *   privdrop caps    as setpriv and capng do (root only): keep capabilities across a uid
 *                    change (PR_SET_KEEPCAPS), become uid 65534, raise CAP_SETGID again in
 *                    this thread (capabilities are per thread), then setresgid(), which
 *                    glibc runs on every thread and aborts the process if one fails
 *   privdrop notsc   turns the TSC off for this thread (prctl PR_SET_TSC, PR_TSC_SIGSEGV:
 *                    rdtsc then faults) and works 0.3 s of CPU time in busy_no_tsc()
 *   privdrop child PROGRAM [ARG...]
 *                    as Python's subprocess.run(..., user="nobody") (root only): forks a
 *                    child that becomes uid and gid 65534 (setregid, setreuid) and execs
 *                    PROGRAM; exits with its status
 *
 * Prints "privdrop ok" and exits 0; exits 77 when `caps` is not run as root.
 */
#define _GNU_SOURCE /* setresuid, setresgid */
#include <linux/capability.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

void busy_no_tsc(void);

static int run_caps(void)
{
    if (geteuid() != 0)
        return 77;
    if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0 || setresuid(65534, 65534, 65534) != 0)
        return 1;
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];
    if (syscall(SYS_capget, &h, d) != 0)
        return 1;
    d[0].effective = d[0].permitted; /* this thread only, by system call as capng may */
    if (syscall(SYS_capset, &h, d) != 0 || setresgid(65534, 65534, 65534) != 0)
        return 1;
    puts("privdrop ok");
    return 0;
}

__attribute__((noipa)) void busy_no_tsc(void)
{
    /* No clock here: reading one through the vDSO would fault too (rdtsc). */
    for (uint64_t i = 0; i < 300000000u; i++)
        sink += i;
}

static int run_child(char **argv)
{
    if (geteuid() != 0)
        return 77;
    pid_t pid = fork();
    if (pid == 0) {
        if (setregid(65534, 65534) == 0 && setreuid(65534, 65534) == 0)
            execv(argv[0], argv);
        _exit(127);
    }
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return 1;
    if (WEXITSTATUS(status) == 0)
        puts("privdrop ok");
    return WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "caps") == 0)
        return run_caps();
    if (argc > 2 && strcmp(argv[1], "child") == 0)
        return run_child(argv + 2);
    if (argc > 1 && strcmp(argv[1], "notsc") == 0) {
        if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0) != 0)
            return 77;
        busy_no_tsc();
        prctl(PR_SET_TSC, PR_TSC_ENABLE, 0, 0, 0);
        puts("privdrop ok");
        return 0;
    }
    fprintf(stderr, "usage: privdrop caps|notsc|child PROGRAM [ARG...]\n");
    return 2;
}
