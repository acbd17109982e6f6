/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The snapshot request by signal (see snap_signal.h). The signal's name is parsed here
 * again rather than shared with libprof/config.c, which the reporter may not link; the
 * rules are the same, and so is the choice of the default (tests/attach/test_snap_signal.c
 * holds both to them).
 *
 * A file being written is read as it is: the reader keeps what it could read and says
 * whether the END record was there, so "complete" is exactly "has_end and not cut short".
 */
#include "attach/snap_signal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "attach/procstat.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/parse.h"
#include "common/proc.h"

#define ENVIRON_MAX (1u << 20) /* bytes of /proc/PID/environ looked at */

int att_snap_signal_parse(const char *s, int *sig /* out */, struct cmn_err *err)
{
    if (strcmp(s, "0") == 0 || strcmp(s, "off") == 0) {
        *sig = 0;
        return CMN_OK;
    }
    int v = cmn_parse_signal(s);
    if (v == 0 || cmn_signal_is_refused(v))
        return cmn_err_set(err, CMN_E_INPUT,
                           "--signal: '%s' is not a usable signal (a number, PROF, USR1, USR2, "
                           "RTMIN+N, RTMAX-N, or off)",
                           s);
    *sig = v;
    return CMN_OK;
}

bool att_snap_signal_has_libprof(pid_t pid)
{
    struct cmn_proc_lines lines;
    if (cmn_proc_lines_open(&(struct cmn_proc){.pid = pid}, "maps", &lines) != 0)
        return false;
    bool found = false;
    for (char *line; !found && (line = cmn_proc_lines_next(&lines)) != NULL;) {
        const char *slash = strrchr(line, '/');
        found = slash != NULL && (strcmp(slash + 1, "libprof.so") == 0 ||
                                  strcmp(slash + 1, "libprof.so (deleted)") == 0);
    }
    cmn_proc_lines_close(&lines);
    return found;
}

/* The value of NAME in the n bytes of NUL-separated entries at env, or NULL. */
static const char *env_value(const char *env, size_t n, const char *name)
{
    size_t len = strlen(name);
    for (const char *e = env; e < env + n; e += strlen(e) + 1)
        if (strncmp(e, name, len) == 0 && e[len] == '=')
            return e + len + 1;
    return NULL;
}

/* A signal variable's value as libprof takes it: 0 when unusable, -1 for "0" and "off". */
static int env_signal(const char *v)
{
    if (v == NULL)
        return 0;
    if (strcmp(v, "0") == 0 || strcmp(v, "off") == 0)
        return -1;
    int sig = cmn_parse_signal(v);
    return cmn_signal_is_refused(sig) ? 0 : sig;
}

int att_snap_signal_of(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
    char *env = malloc(ENVIRON_MAX);
    long n = env != NULL ? att_proc_read(path, env, ENVIRON_MAX) : -ENOMEM;
    int snap = 0, prof = 0;
    if (n > 0) {
        snap = env_signal(env_value(env, (size_t)n, "PROF_SNAPSHOT_SIGNAL"));
        prof = env_signal(env_value(env, (size_t)n, "PROF_SIGNAL"));
    }
    free(env);
    if (snap < 0)
        return 0;
    if (snap == 0) {
        /* The default, or one below it when PROF_SIGNAL took it. */
        snap = SIGRTMAX - ATT_SNAP_SIGNAL_RT_OFFSET;
        if (snap == prof)
            snap--;
    }
    return snap == prof ? 0 : snap;
}

bool att_snap_signal_is_caught(pid_t pid, int sig)
{
    char mask[32];
    if (sig <= 0 || sig > 64 || !att_proc_status_field(pid, "SigCgt", mask, sizeof(mask)))
        return false;
    return (strtoull(mask, NULL, 16) >> (sig - 1) & 1) != 0;
}

/* Creates the answer file; *nonce and path get its name. */
static int create_answer(pid_t pid, uint32_t *nonce, char *path, size_t cap, struct cmn_err *err)
{
    for (int tries = 0; tries < 8; tries++) {
        if (getrandom(nonce, sizeof(*nonce), 0) != (ssize_t)sizeof(*nonce))
            *nonce = (uint32_t)getpid() ^ (uint32_t)time(NULL) ^ (uint32_t)tries << 24;
        snprintf(path, cap, "/tmp/prof-stacks.%d.%u", (int)pid, *nonce);
        int fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
        if (fd < 0 && errno == EEXIST)
            continue;
        if (fd < 0)
            return cmn_err_set(err, CMN_E_INPUT, "%s: %s", path, strerror(errno));
        /* The library runs as the process's effective uid: the file must be its own. */
        char uids[128];
        unsigned ruid, euid;
        if (geteuid() == 0 && att_proc_status_field(pid, "Uid", uids, sizeof(uids)) &&
            sscanf(uids, "%u %u", &ruid, &euid) == 2 && euid != 0 && fchown(fd, euid, -1) != 0) {
            int e = errno;
            close(fd);
            unlink(path);
            return cmn_err_set(err, CMN_E_INPUT, "%s: chown: %s", path, strerror(e));
        }
        close(fd);
        return CMN_OK;
    }
    return cmn_err_set(err, CMN_E_INPUT, "cannot create an answer file in /tmp");
}

/* The thread of libprof's writer in process pid (its name says it), 0 when there is none. */
static pid_t writer_tid(pid_t pid)
{
    const struct cmn_proc proc = {.pid = pid};
    struct cmn_proc_tasks it;
    pid_t found = 0;
    if (cmn_proc_tasks_open(&proc, &it) == 0) {
        for (pid_t tid; found == 0 && (tid = cmn_proc_tasks_next(&it)) > 0;) {
            char name[PROF_THREAD_NAME_MAX];
            cmn_proc_task_name(&proc, tid, name);
            if (strcmp(name, ATT_SNAP_SIGNAL_WRITER) == 0)
                found = tid;
        }
    }
    cmn_proc_tasks_close(&it);
    return found;
}

/* Sends the request to libprof's writer thread, which takes it without waking any thread
 * of the application (a signal to the process goes to one of them, and cuts short a sleep
 * it may be in); to the process when that thread cannot be found. 0 or -1 (errno). */
static int send_request(pid_t pid, int sig, union sigval value)
{
    pid_t tid = writer_tid(pid);
    if (tid == 0)
        return sigqueue(pid, sig, value);
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    si.si_signo = sig;
    si.si_code = SI_QUEUE;
    si.si_pid = getpid();
    si.si_uid = getuid();
    si.si_value = value;
    if (syscall(SYS_rt_tgsigqueueinfo, pid, tid, sig, &si) == 0)
        return 0;
    return errno == ESRCH ? sigqueue(pid, sig, value) : -1;
}

/* Hands the answer file to is_whole when it has grown since *seen bytes. */
static bool read_answer(const char *path, off_t *seen, att_snap_answer_fn *is_whole, void *ctx)
{
    struct stat st;
    if (stat(path, &st) != 0 || st.st_size == 0 || st.st_size == *seen)
        return false;
    *seen = st.st_size;
    return is_whole(path, ctx);
}

int att_snap_signal_ask(pid_t pid, int sig, double timeout_s, att_snap_answer_fn *is_whole,
                        void *ctx, struct cmn_err *err)
{
    char path[64];
    uint32_t nonce;
    /* Without its writer thread libprof takes no requests (its profile was finished, by
     * PROF_DURATION for one): a signal to the process would only wake a thread of it. */
    if (writer_tid(pid) == 0)
        return cmn_err_set(err, CMN_E_INPUT,
                           "process %d has no libprof writer thread: its profile is finished",
                           (int)pid);
    int rc = create_answer(pid, &nonce, path, sizeof(path), err);
    if (rc != CMN_OK)
        return rc;
    union sigval value = {.sival_ptr =
                              (void *)(uintptr_t)((uint64_t)ATT_SNAP_SIGNAL_MAGIC << 32 | nonce)};
    if (send_request(pid, sig, value) != 0) {
        rc = cmn_err_set(err, CMN_E_INPUT, "cannot signal process %d: %s", (int)pid,
                         strerror(errno));
        unlink(path);
        return rc;
    }
    double deadline = cmn_clock_s() + timeout_s;
    struct timespec tick = {0, ATT_SNAP_SIGNAL_POLL_NS};
    off_t seen = 0;
    rc = CMN_E_NOTFOUND;
    for (;;) {
        if (read_answer(path, &seen, is_whole, ctx)) {
            rc = CMN_OK;
            break;
        }
        if (cmn_clock_s() > deadline)
            break;
        nanosleep(&tick, NULL);
    }
    unlink(path);
    return rc;
}
