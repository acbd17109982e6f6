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
 *   privdrop fdreuse FILE
 *                    as a daemon does (root only): closes every descriptor from 3 up, opens
 *                    FILE (its own: it gets the lowest number, where a library's may have
 *                    been), drops to uid and gid 65534 with setgid() and setuid(), works
 *                    0.3 s of CPU time in busy_as_nobody(), then prints FILE's owner
 *                    ("file uid N") and the kernel thread id of the profiler's writer thread
 *                    before and after ("writer T1 T2", 0 when there is none)
 *   privdrop child PROGRAM [ARG...]
 *                    as Python's subprocess.run(..., user="nobody") (root only): forks a
 *                    child that becomes uid and gid 65534 (setregid, setreuid) and execs
 *                    PROGRAM; exits with its status
 *
 * Prints "privdrop ok" and exits 0; exits 77 when `caps` is not run as root.
 */
#define _GNU_SOURCE /* setresuid, setresgid */
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

void busy_no_tsc(void);
void busy_as_nobody(void);

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

__attribute__((noipa)) void busy_as_nobody(void)
{
    struct timespec t;
    do {
        for (uint64_t i = 0; i < 1000000u; i++)
            sink += i;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    } while (t.tv_sec == 0 && t.tv_nsec < 300000000L);
}

/* The thread named libprof-writer, by /proc/self/task; 0 when there is none. */
static long writer_tid(void)
{
    DIR *d = opendir("/proc/self/task");
    long found = 0;
    for (struct dirent *e; d && !found && (e = readdir(d)) != NULL;) {
        char path[300], comm[32] = "";
        snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f && fgets(comm, sizeof(comm), f) && strncmp(comm, "libprof-writer", 14) == 0)
            found = strtol(e->d_name, NULL, 10);
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    return found;
}

static int run_fdreuse(const char *file)
{
    if (geteuid() != 0)
        return 77;
    long before = writer_tid();
    for (int fd = 3; fd < 1024; fd++)
        close(fd);
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, "application data\n", 17) != 17)
        return 1;
    if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0)
        return 1;
    busy_as_nobody();
    struct stat st;
    if (fstat(fd, &st) != 0)
        return 1;
    printf("file uid %d\nwriter %ld %ld\n", (int)st.st_uid, before, writer_tid());
    puts("privdrop ok");
    return 0;
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
    if (argc > 2 && strcmp(argv[1], "fdreuse") == 0)
        return run_fdreuse(argv[2]);
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
    fprintf(stderr, "usage: privdrop caps|notsc|fdreuse FILE|child PROGRAM [ARG...]\n");
    return 2;
}
