/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A parent that keeps burning CPU while children come and go, for the end-to-end tests
 * of fork and exec under the profiler. The parent works in parent_work() throughout and
 * starts three children:
 *
 *   child 1   forks, works in child_work(), leaves buffered stdio output, calls exit(11)
 *   child 2   forks, works in child_work(), calls _exit(12)
 *   child 3   forks, drops LD_PRELOAD and execs EXEC_PROG with its arguments (if given),
 *             which must exit 0
 *
 * It prints "forker pid N" first, then one line per child, then "forker ok", and exits 0
 * only when every child ended as planned.
 *
 *   forker [EXEC_PROG [ARG...]]
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

uint64_t parent_work(double cpu_s);
uint64_t child_work(double cpu_s);

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t burn(double cpu_s, uint64_t x)
{
    double until = thread_cpu_s() + cpu_s;
    while (thread_cpu_s() < until) {
        for (int i = 0; i < 100000; i++) {
            x ^= x << 7;
            x ^= x >> 9;
            __asm__ volatile("" : "+r"(x));
        }
    }
    return x;
}

__attribute__((noipa)) uint64_t parent_work(double cpu_s)
{
    return burn(cpu_s, 0x1234567u) + 1;
}

__attribute__((noipa)) uint64_t child_work(double cpu_s)
{
    return burn(cpu_s, 0x7654321u) + 2;
}

static pid_t start_child(int which, char **exec_argv)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    switch (which) {
    case 1:
        sink = child_work(0.1);
        printf("child 1 leaves this in its stdio buffer\n");
        exit(11);
    case 2:
        sink = child_work(0.1);
        _exit(12);
    default:
        if (!exec_argv[0])
            _exit(0);
        unsetenv("LD_PRELOAD");
        execv(exec_argv[0], exec_argv);
        _exit(127);
    }
}

static int wait_for(pid_t pid, int want, int which)
{
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            printf("child %d: waitpid failed\n", which);
            return 0;
        }
    }
    if (WIFEXITED(status))
        printf("child %d exit %d\n", which, WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        printf("child %d killed by signal %d\n", which, WTERMSIG(status));
    return WIFEXITED(status) && WEXITSTATUS(status) == want;
}

int main(int argc, char **argv)
{
    (void)argc;
    printf("forker pid %d\n", (int)getpid());
    sink = parent_work(0.1);
    pid_t c1 = start_child(1, argv + 1);
    sink = parent_work(0.05);
    pid_t c2 = start_child(2, argv + 1);
    sink = parent_work(0.05);
    pid_t c3 = start_child(3, argv + 1);
    sink = parent_work(0.15);
    int ok = c1 > 0 && c2 > 0 && c3 > 0;
    ok = wait_for(c1, 11, 1) && ok;
    ok = wait_for(c2, 12, 2) && ok;
    ok = wait_for(c3, 0, 3) && ok;
    sink = parent_work(0.1);
    printf(ok ? "forker ok\n" : "forker FAILED\n");
    return ok ? 0 : 1;
}
