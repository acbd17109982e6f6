/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The launcher of `prof record` (see launch.h): the library found, the environment set,
 * fork, exec and wait. An exec failure in the child is sent back as its errno through a
 * close-on-exec pipe: the parent reads 0 bytes when exec succeeded (the pipe closed with
 * the old image) and the errno otherwise, so "command not found" is told apart from a
 * command that ran and exited 127. Reporter thread only; prof has no other threads, so the
 * child may run ordinary code between fork and exec.
 */
#include "reporter/cmd/launch.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/err.h"

/* realpath of dir/rel when it names a readable file, else NULL. */
static char *existing(const char *dir, const char *rel)
{
    char *joined;
    if (asprintf(&joined, "%s/%s", dir, rel) < 0)
        return NULL;
    char *real = access(joined, R_OK) == 0 ? realpath(joined, NULL) : NULL;
    free(joined);
    return real;
}

int rep_launch_find_library(char **path /* out */, struct cmn_err *err)
{
    static const char *const near_prof[] = {
        "libprof.so",
        "libprof.so.0", /* a build tree */
        "../lib/libprof.so",
        "../lib/libprof.so.0", /* an installed tree */
        "../lib64/libprof.so.0",
    };
    const char *env = getenv("PROF_LIBRARY");
    if (env != NULL && env[0] != '\0') {
        *path = realpath(env, NULL);
        if (*path == NULL)
            return cmn_err_set(err, CMN_E_INPUT, "PROF_LIBRARY=%s: %s", env, strerror(errno));
        return CMN_OK;
    }
    *path = NULL;
    char *self = realpath("/proc/self/exe", NULL);
    if (self != NULL) {
        const char *dir = dirname(self);
        for (size_t i = 0; i < sizeof(near_prof) / sizeof(near_prof[0]) && *path == NULL; i++)
            *path = existing(dir, near_prof[i]);
        free(self);
        if (*path != NULL)
            return CMN_OK;
    }
    return cmn_err_set(err, CMN_E_INPUT, "cannot find libprof.so (set PROF_LIBRARY)");
}

/* Puts the library first in LD_PRELOAD, keeping what was there after it, and the
 * variables that have a value. */
static int set_environment(const char *lib, const struct rep_launch_var *vars, size_t n_vars)
{
    const char *old = getenv("LD_PRELOAD");
    char *preload;
    int n = old != NULL && old[0] != '\0' ? asprintf(&preload, "%s:%s", lib, old)
                                          : asprintf(&preload, "%s", lib);
    if (n < 0)
        return CMN_E_NOMEM;
    int rc = setenv("LD_PRELOAD", preload, 1);
    free(preload);
    for (size_t i = 0; rc == 0 && i < n_vars; i++)
        if (vars[i].value != NULL)
            rc = setenv(vars[i].name, vars[i].value, 1);
    return rc == 0 ? CMN_OK : CMN_E_NOMEM;
}

static void run_child(char *const *argv, int report_fd, const struct sigaction *old_int,
                      const struct sigaction *old_quit)
{
    sigaction(SIGINT, old_int, NULL);
    sigaction(SIGQUIT, old_quit, NULL);
    execvp(argv[0], argv);
    int e = errno;
    ssize_t unused = write(report_fd, &e, sizeof(e));
    (void)unused;
    _exit(127);
}

static int wait_child(pid_t pid, int *status /* out */)
{
    int ws;
    while (waitpid(pid, &ws, 0) < 0) {
        if (errno != EINTR)
            return CMN_E_IO;
    }
    *status = WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : WEXITSTATUS(ws);
    return CMN_OK;
}

/* Reads the child's exec errno: 0 when exec succeeded. */
static int exec_errno(int fd)
{
    int e = 0;
    ssize_t got;
    do
        got = read(fd, &e, sizeof(e));
    while (got < 0 && errno == EINTR);
    return got == (ssize_t)sizeof(e) ? e : 0;
}

/* Waits for the child and tells why it did not run, if it did not. */
static int wait_command(const char *cmd, pid_t pid, int report_fd, int *status, struct cmn_err *err)
{
    int e = exec_errno(report_fd);
    if (wait_child(pid, status) != CMN_OK)
        return cmn_err_set(err, CMN_E_NOEXEC, "%s: waitpid: %s", cmd, strerror(errno));
    if (e == ENOENT)
        return cmn_err_set(err, CMN_E_NOCMD, "%s: command not found", cmd);
    if (e != 0)
        return cmn_err_set(err, CMN_E_NOEXEC, "%s: %s", cmd, strerror(e));
    return CMN_OK;
}

int rep_launch_run(char *const *argv, const struct rep_launch_var *vars, size_t n_vars,
                   int *status /* out */, pid_t *child /* out */, struct cmn_err *err)
{
    char *lib;
    int rc = rep_launch_find_library(&lib, err);
    if (rc != CMN_OK)
        return rc;
    rc = set_environment(lib, vars, n_vars);
    free(lib);
    if (rc != CMN_OK)
        return cmn_err_nomem(err);
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return cmn_err_set(err, CMN_E_NOEXEC, "%s: %s", argv[0], strerror(errno));
    struct sigaction ign = {.sa_handler = SIG_IGN}, old_int, old_quit;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);
    pid_t pid = fork();
    if (pid == 0)
        run_child(argv, fds[1], &old_int, &old_quit);
    close(fds[1]);
    if (child != NULL)
        *child = pid;
    if (pid < 0)
        rc = cmn_err_set(err, CMN_E_NOEXEC, "%s: fork: %s", argv[0], strerror(errno));
    else
        rc = wait_command(argv[0], pid, fds[0], status, err);
    close(fds[0]);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    return rc;
}
