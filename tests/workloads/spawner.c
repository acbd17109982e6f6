/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Children started without going through the exec functions of the program itself:
 *
 *   spawner DIR
 *
 * changes to DIR, then runs /bin/true four ways, each of which has libc's own code exec
 * the program: posix_spawn(), posix_spawnp(), system() and popen(). Prints "spawned 4" and
 * exits 0 when every child exited 0. (make runs its recipes' shells with posix_spawn, after
 * `-C dir` moved it; Rust's Command spawns so.)
 *
 *   spawner --vfork N
 *
 * vforks N children that leave at once by _exit(0), in vfork_loop(), and waits for each, as
 * Python's subprocess starts its programs; the time is the kernel's, in vfork(). Prints
 * "vforked N" and exits 0 when every child exited 0.
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int waited(pid_t pid)
{
    int status;
    return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* One child that leaves at once; its pid, or -1. */
__attribute__((noinline)) static pid_t one_vfork(void)
{
    pid_t pid = vfork();
    if (pid == 0)
        _exit(0);
    return pid;
}

__attribute__((noinline)) static int vfork_loop(int n)
{
    int ok = 0;
    for (int i = 0; i < n; i++) {
        pid_t pid = one_vfork();
        ok += pid > 0 && waited(pid);
    }
    return ok;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--vfork") == 0) {
        int n = atoi(argv[2]), ok = vfork_loop(n);
        printf("vforked %d\n", ok);
        return ok == n ? 0 : 1;
    }
    if (argc != 2 || chdir(argv[1]) != 0) {
        fprintf(stderr, "usage: spawner DIR (an existing directory)\n");
        return 2;
    }
    int ok = 0;
    pid_t pid;
    char *true_argv[] = {"true", NULL};
    if (posix_spawn(&pid, "/bin/true", NULL, NULL, true_argv, environ) == 0)
        ok += waited(pid);
    if (posix_spawnp(&pid, "true", NULL, NULL, true_argv, environ) == 0)
        ok += waited(pid);
    ok += system("/bin/true") == 0;
    FILE *f = popen("/bin/true", "r");
    if (f)
        ok += pclose(f) == 0;
    printf("spawned %d\n", ok);
    return ok == 4 ? 0 : 1;
}
