/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * `prof record`: environment set-up, fork, exec and wait. An exec failure in the child is
 * sent back as its errno through a close-on-exec pipe: the parent reads 0 bytes when exec
 * succeeded (the pipe closed with the old image) and the errno otherwise, so "command not
 * found" is told apart from a command that ran and exited 127. Reporter thread only;
 * prof has no other threads, so the child may run ordinary code between fork and exec.
 */
#include "reporter/record_cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
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

int rep_record_find_library(char **path /* out */, struct cmn_err *err)
{
    const char *env = getenv("PROF_LIBRARY");
    if (env != NULL && env[0] != '\0') {
        *path = realpath(env, NULL);
        if (*path == NULL)
            return cmn_err_set(err, CMN_E_INPUT, "PROF_LIBRARY=%s: %s", env, strerror(errno));
        return CMN_OK;
    }
    char *self = realpath("/proc/self/exe", NULL);
    if (self != NULL) {
        const char *dir = dirname(self);
        *path = existing(dir, "libprof.so");
        if (*path == NULL)
            *path = existing(dir, "../lib/libprof.so");
        free(self);
        if (*path != NULL)
            return CMN_OK;
    }
    return cmn_err_set(err, CMN_E_INPUT, "cannot find libprof.so (set PROF_LIBRARY)");
}

/* Puts the library first in LD_PRELOAD, keeping what was there after it, and the options'
 * PROF_* variables. */
static int set_environment(const struct rep_record_opts *o, const char *lib)
{
    const char *old = getenv("LD_PRELOAD");
    char *preload;
    int n = old != NULL && old[0] != '\0' ? asprintf(&preload, "%s:%s", lib, old)
                                          : asprintf(&preload, "%s", lib);
    if (n < 0)
        return CMN_E_NOMEM;
    int rc = setenv("LD_PRELOAD", preload, 1);
    free(preload);
    if (rc == 0 && o->output != NULL)
        rc = setenv("PROF_OUTPUT", o->output, 1);
    if (rc == 0 && o->freq != NULL)
        rc = setenv("PROF_FREQ", o->freq, 1);
    if (rc == 0 && o->depth != NULL)
        rc = setenv("PROF_DEPTH", o->depth, 1);
    return rc == 0 ? CMN_OK : CMN_E_NOMEM;
}

static void run_child(const struct rep_record_opts *o, int report_fd,
                      const struct sigaction *old_int, const struct sigaction *old_quit)
{
    sigaction(SIGINT, old_int, NULL);
    sigaction(SIGQUIT, old_quit, NULL);
    execvp(o->argv[0], o->argv);
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

int rep_record_run(const struct rep_record_opts *o, int *status /* out */, struct cmn_err *err)
{
    char *lib;
    int rc = rep_record_find_library(&lib, err);
    if (rc != CMN_OK)
        return rc;
    rc = set_environment(o, lib);
    free(lib);
    if (rc != CMN_OK)
        return cmn_err_nomem(err);
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return cmn_err_set(err, CMN_E_NOEXEC, "%s: %s", o->argv[0], strerror(errno));
    struct sigaction ign = {.sa_handler = SIG_IGN}, old_int, old_quit;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);
    pid_t pid = fork();
    if (pid == 0)
        run_child(o, fds[1], &old_int, &old_quit);
    close(fds[1]);
    if (pid < 0) {
        rc = cmn_err_set(err, CMN_E_NOEXEC, "%s: fork: %s", o->argv[0], strerror(errno));
    } else {
        int e = exec_errno(fds[0]);
        if (wait_child(pid, status) != CMN_OK)
            rc = cmn_err_set(err, CMN_E_NOEXEC, "%s: waitpid: %s", o->argv[0], strerror(errno));
        else if (e == ENOENT)
            rc = cmn_err_set(err, CMN_E_NOCMD, "%s: command not found", o->argv[0]);
        else if (e != 0)
            rc = cmn_err_set(err, CMN_E_NOEXEC, "%s: %s", o->argv[0], strerror(e));
    }
    close(fds[0]);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    return rc;
}
