/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A fork child that waits, for the end-to-end test that the fork child of a wall-clock
 * profile measures its own time off CPU (tests/e2e/test_fork_exec.c): the parent forks a
 * child that blocks in read() on a pipe, in child_wait(), until the parent writes a byte
 * SECONDS later; the child then leaves by exit() (so that its profile is finished) and the
 * parent waits for it.
 *
 *   forkwait [SECONDS]     0.4 by default
 *
 * Prints "parent PID child PID" and exits 0 when the child read its byte and exited 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int child_wait(int fd);

__attribute__((noinline)) int child_wait(int fd)
{
    char c;
    return read(fd, &c, 1) == 1 ? 0 : 1;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? strtod(argv[1], NULL) : 0.4;
    int fds[2];
    if (pipe(fds) != 0)
        return 2;
    fflush(stdout);
    pid_t child = fork();
    if (child < 0)
        return 2;
    if (child == 0) {
        close(fds[1]);
        exit(child_wait(fds[0]));
    }
    close(fds[0]);
    printf("parent %d child %d\n", (int)getpid(), (int)child);
    fflush(stdout);
    struct timespec ts = {.tv_sec = (time_t)seconds,
                          .tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9)};
    nanosleep(&ts, NULL);
    int status = 0;
    if (write(fds[1], "x", 1) != 1 || waitpid(child, &status, 0) != child)
        return 2;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
