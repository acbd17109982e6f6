/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A process family for the end-to-end tests of profile paths: the parent forks one child
 * that works in fork_work() and leaves by _exit(), and another that execs this program
 * again (mode "exec"), which works in exec_work(); the parent works in parent_work()
 * meanwhile and waits for both. Run with a PROF_OUTPUT without %p, every process must
 * still write a profile of its own, and the parent's must stay whole.
 *
 *   execfamily [SECONDS]    the parent's CPU seconds (0.6 by default); children half
 *   execfamily exec SECONDS (the exec'd child)
 *   execfamily failexec SECONDS
 *                           works SECONDS/2 in parent_work(), calls execv() on a path that
 *                           does not exist (it fails, as a launcher's first try may), then
 *                           works SECONDS/2 in after_failed_exec() and forks a child that
 *                           works in fork_work(); prints "failed exec PID child PID"
 *
 * Prints "parent PID fork PID exec PID", exits 0 when both children exited 0.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

uint64_t parent_work(double cpu_s);
uint64_t fork_work(double cpu_s);
uint64_t exec_work(double cpu_s);
uint64_t after_failed_exec(double cpu_s);

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t burn(double seconds)
{
    double until = cpu_s() + seconds;
    while (cpu_s() < until)
        for (int i = 0; i < 10000; i++)
            sink++;
    return sink;
}

__attribute__((noipa)) uint64_t parent_work(double s)
{
    return burn(s);
}

__attribute__((noipa)) uint64_t fork_work(double s)
{
    return burn(s);
}

__attribute__((noipa)) uint64_t exec_work(double s)
{
    return burn(s);
}

__attribute__((noipa)) uint64_t after_failed_exec(double s)
{
    return burn(s);
}

static int run_failexec(double seconds)
{
    parent_work(seconds / 2);
    char *argv[] = {"/nonexistent/program", NULL};
    execv(argv[0], argv);
    after_failed_exec(seconds / 2);
    pid_t c = fork();
    if (c == 0) {
        fork_work(seconds / 4);
        _exit(0);
    }
    int sc = 0;
    waitpid(c, &sc, 0);
    printf("failed exec %d child %d\n", (int)getpid(), (int)c);
    return WIFEXITED(sc) && WEXITSTATUS(sc) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], "failexec") == 0)
        return run_failexec(atof(argv[2]));
    if (argc > 2 && strcmp(argv[1], "exec") == 0) {
        exec_work(atof(argv[2]));
        return 0;
    }
    double seconds = argc > 1 ? atof(argv[1]) : 0.6;
    char half[32];
    snprintf(half, sizeof(half), "%.3f", seconds / 2);
    pid_t a = fork();
    if (a == 0) {
        fork_work(seconds / 2);
        _exit(0);
    }
    pid_t b = fork();
    if (b == 0) {
        execl("/proc/self/exe", argv[0], "exec", half, (char *)NULL);
        _exit(127);
    }
    printf("parent %d fork %d exec %d\n", (int)getpid(), (int)a, (int)b);
    fflush(stdout);
    parent_work(seconds);
    int sa = 0, sb = 0;
    waitpid(a, &sa, 0);
    waitpid(b, &sb, 0);
    return WIFEXITED(sa) && WEXITSTATUS(sa) == 0 && WIFEXITED(sb) && WEXITSTATUS(sb) == 0 ? 0 : 1;
}
