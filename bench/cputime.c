/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The CPU time of a command's whole process tree, to the microsecond (/usr/bin/time says
 * it to the hundredth of a second): bench/cost.py runs each workload through it, plain,
 * under libprof and under `perf record`, whose own process it thus leaves out.
 *
 *   cputime OUTFILE COMMAND [ARG...]
 *
 * Writes "USER_S SYSTEM_S" of COMMAND and the children it waited for into OUTFILE, and
 * exits with COMMAND's status (127 when it could not run, 2 on bad usage).
 */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: cputime OUTFILE COMMAND [ARG...]\n");
        return 2;
    }
    pid_t pid = fork();
    if (pid == 0) {
        execvp(argv[2], argv + 2);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &status, 0, &ru) != pid)
        return 127;
    FILE *f = fopen(argv[1], "w");
    if (!f)
        return 127;
    fprintf(f, "%ld.%06ld %ld.%06ld\n", (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec,
            (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec);
    fclose(f);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
