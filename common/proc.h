/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Reading a process's /proc files: the list of its threads (/proc/PID/task), a thread's
 * name (comm), its state letter and other fields of its stat line, the system call it
 * waits in (syscall), and any small file or the lines of a larger one (maps, read whole
 * first: its size is unknown until read). Used outside the process by the prof command
 * (attach/procstat.c, procmaps.c, snap_signal.c, record_pid.c) and written for the
 * preloaded library's own threads too (pid 0 reads /proc/self): a struct cmn_proc names the
 * process and how its files are opened, so that libprof can pass lp_fd_open(), which keeps
 * its descriptors at 3 or above. A file that cannot be read (the thread is gone, or
 * belongs to another user) is reported as such, never guessed. Every descriptor is closed
 * before a function returns, but the thread iterator's, closed by cmn_proc_tasks_close().
 * Header-only, never installed.
 *
 * The stat line is "PID (COMM) STATE PPID ...": COMM may hold spaces and parentheses, so
 * the fields after it are counted from the last ')'; fields are numbered from 1 as in
 * proc(5) (3 the state, 4 the parent, 28 the start of the stack).
 *
 * Signal handler's path: not allowed (it opens files, allocates and parses with libc).
 */
#ifndef PROF_COMMON_PROC_H
#define PROF_COMMON_PROC_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "common/grow.h"
#include "include/libprof/prof_format.h"

#define CMN_PROC_PATH_MAX 64u     /* "/proc/PID/task/TID/FILE" for the files named here */
#define CMN_PROC_STAT_BYTES 1024u /* a stat line read for its first fields */

/* Opens path with flags (O_CLOEXEC among them) and mode, as open(2): the descriptor, or
 * -errno. */
typedef int cmn_proc_open_fn(const char *path, int flags, mode_t mode);

/* A process whose files are read, and how. */
struct cmn_proc {
    pid_t pid;                 /* the process; 0 for the caller's own (/proc/self) */
    cmn_proc_open_fn *open_fn; /* NULL: cmn_proc_open() */
};

/* What /proc/PID/task/TID/syscall says: "NR ARG1 ... ARG6 SP PC" in a call, "-1 SP PC"
 * blocked outside one, "running" on a CPU. */
struct cmn_proc_syscall {
    bool is_running; /* "running": no call, no registers */
    long nr;         /* the call's number, -1 when in none (or running) */
    uint64_t sp, pc; /* the user stack pointer and pc where it entered the kernel; 0 when
                      * running */
};

/* The threads of a process, one by one (cmn_proc_tasks_open, _next, _close). */
struct cmn_proc_tasks {
    DIR *dir; /* /proc/PID/task; NULL when it could not be opened */
};

/* The lines of a file read whole (cmn_proc_lines_open, _next, _close). */
struct cmn_proc_lines {
    char *text;     /* the file, NUL-terminated; malloc'd, owned */
    char *at;       /* the next line */
    char *end;      /* the end of what was read */
    int read_errno; /* a read that failed after the file was opened, 0 when none did: what
                     * was read before it is there */
};

/* Not async-signal-safe. */
/* The default opener: open(2), close-on-exec. The descriptor or -errno. */
static inline int cmn_proc_open(const char *path, int flags, mode_t mode)
{
    int fd = open(path, flags | O_CLOEXEC, mode);
    return fd >= 0 ? fd : -errno;
}

static inline int cmn_proc_open_with(cmn_proc_open_fn *open_fn, const char *path, int flags)
{
    return (open_fn != NULL ? open_fn : cmn_proc_open)(path, flags | O_CLOEXEC, 0);
}

/* Reads fd into buf (cap bytes, one kept for a NUL) after the *n bytes already there,
 * until buf is full or the file ends; reads again after EINTR. 0, or the errno of a read
 * that failed (what was read before it is counted in *n). */
static inline int cmn_proc_read_fd(int fd, char *buf, size_t cap, size_t *n)
{
    while (*n + 1 < cap) {
        ssize_t got = read(fd, buf + *n, cap - 1 - *n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return errno;
        if (got == 0)
            break;
        *n += (size_t)got;
    }
    return 0;
}

/* Reads the file at path (opened by open_fn, NULL for cmn_proc_open()), at most cap - 1
 * bytes, into buf, NUL-terminated. The bytes read, or -errno. */
static inline long cmn_proc_read(cmn_proc_open_fn *open_fn, const char *path, char *buf, size_t cap)
{
    int fd = cmn_proc_open_with(open_fn, path, O_RDONLY);
    if (fd < 0)
        return fd;
    size_t n = 0;
    int e = cmn_proc_read_fd(fd, buf, cap, &n);
    close(fd);
    buf[n] = '\0';
    return e != 0 ? -e : (long)n;
}

/* The path of file `file` of process p, of its thread tid when tid is not 0:
 * "/proc/PID/FILE", "/proc/PID/task/TID/FILE" (PID "self" for pid 0), into path (cap
 * bytes). */
static inline void cmn_proc_path(const struct cmn_proc *p, pid_t tid, const char *file, char *path,
                                 size_t cap)
{
    char pid[24] = "self";
    if (p->pid != 0)
        snprintf(pid, sizeof(pid), "%d", (int)p->pid);
    if (tid != 0)
        snprintf(path, cap, "/proc/%s/task/%d/%s", pid, (int)tid, file);
    else
        snprintf(path, cap, "/proc/%s/%s", pid, file);
}

/* cmn_proc_read() of file `file` of p (of its thread tid when not 0). */
static inline long cmn_proc_read_file(const struct cmn_proc *p, pid_t tid, const char *file,
                                      char *buf, size_t cap)
{
    char path[CMN_PROC_PATH_MAX];
    cmn_proc_path(p, tid, file, path, sizeof(path));
    return cmn_proc_read(p->open_fn, path, buf, cap);
}

/* Reads the whole file at path into a malloc'd buffer (free it), NUL-terminated after
 * *len bytes (len may be NULL). A read that fails after the file was opened ends it there,
 * its errno in *read_errno (may be NULL; 0 when none failed). NULL with errno set when the
 * file cannot be opened or memory runs out (ENOMEM). */
static inline char *cmn_proc_slurp(cmn_proc_open_fn *open_fn, const char *path, size_t *len,
                                   int *read_errno)
{
    int fd = cmn_proc_open_with(open_fn, path, O_RDONLY);
    if (fd < 0) {
        errno = -fd;
        return NULL;
    }
    char *buf = NULL;
    size_t cap = 0, n = 0;
    int e = 0;
    do {
        if (!CMN_GROW(buf, cap, n + 4096, 16384)) {
            free(buf);
            close(fd);
            errno = ENOMEM;
            return NULL;
        }
        e = cmn_proc_read_fd(fd, buf, cap, &n);
    } while (e == 0 && n + 1 == cap); /* full: there may be more */
    close(fd);
    buf[n] = '\0';
    if (len != NULL)
        *len = n;
    if (read_errno != NULL)
        *read_errno = e;
    return buf;
}

/* The next line of the text at *at, up to end: cut with a NUL (its newline's place), *at
 * moved past it. NULL at the end. */
static inline char *cmn_proc_next_line(char **at, char *end)
{
    if (*at >= end)
        return NULL;
    char *line = *at, *nl = memchr(line, '\n', (size_t)(end - line));
    if (nl != NULL) {
        *nl = '\0';
        *at = nl + 1;
    } else {
        *at = end;
    }
    return line;
}

/* Reads file `file` of p ("maps") whole for its lines. 0, or -errno (ENOENT: no such
 * process, or file; ENOMEM). */
static inline int cmn_proc_lines_open(const struct cmn_proc *p, const char *file,
                                      struct cmn_proc_lines *it)
{
    char path[CMN_PROC_PATH_MAX];
    size_t n = 0;
    int read_errno = 0;
    cmn_proc_path(p, 0, file, path, sizeof(path));
    char *text = cmn_proc_slurp(p->open_fn, path, &n, &read_errno);
    if (text == NULL) {
        int e = errno;
        *it = (struct cmn_proc_lines){0};
        return -e;
    }
    *it = (struct cmn_proc_lines){
        .text = text, .at = text, .end = text + n, .read_errno = read_errno};
    return 0;
}

/* The next line, without its newline (writable, valid until cmn_proc_lines_close()), or
 * NULL after the last. */
static inline char *cmn_proc_lines_next(struct cmn_proc_lines *it)
{
    return it->text != NULL ? cmn_proc_next_line(&it->at, it->end) : NULL;
}

/* Frees what the lines of it were read into. Accepts a zeroed it. */
static inline void cmn_proc_lines_close(struct cmn_proc_lines *it)
{
    free(it->text);
    *it = (struct cmn_proc_lines){0};
}

/* The fields of a stat line after "(COMM) ", the state letter first; NULL when the line
 * has no such part. */
static inline const char *cmn_proc_stat_rest(const char *stat)
{
    const char *paren = strrchr(stat, ')');
    return paren != NULL && paren[1] == ' ' ? paren + 2 : NULL;
}

/* Field n (3 or more) of a stat line, where it starts; NULL when the line is shorter. */
static inline const char *cmn_proc_stat_field(const char *stat, unsigned n)
{
    const char *at = cmn_proc_stat_rest(stat);
    for (unsigned field = 3; at != NULL && field < n; field++) {
        at = strchr(at, ' ');
        at = at != NULL ? at + 1 : NULL;
    }
    return at;
}

/* The name in a stat line, between its first '(' and its last ')', into name (cap bytes,
 * cut there); false when the line has none. */
static inline bool cmn_proc_stat_name(const char *stat, char *name, size_t cap)
{
    const char *open = strchr(stat, '('), *close = strrchr(stat, ')');
    if (cap == 0 || open == NULL || close == NULL || close < open)
        return false;
    size_t len = (size_t)(close - open - 1);
    if (len >= cap)
        len = cap - 1;
    memcpy(name, open + 1, len);
    name[len] = '\0';
    return true;
}

/* The kernel's state letter of thread tid of p (R, S, D, T, t, Z, X, I, ...), from its
 * stat line; 0 when it cannot be read (the thread is gone). */
static inline char cmn_proc_task_state(const struct cmn_proc *p, pid_t tid)
{
    char buf[CMN_PROC_STAT_BYTES];
    const char *rest =
        cmn_proc_read_file(p, tid, "stat", buf, sizeof(buf)) > 0 ? cmn_proc_stat_rest(buf) : NULL;
    return rest != NULL ? rest[0] : 0;
}

/* The name of thread tid of p (its comm, without the newline; the kernel keeps 15 bytes at
 * most, and a longer line is cut so) into name; "" when it cannot be read. */
static inline void cmn_proc_task_name(const struct cmn_proc *p, pid_t tid,
                                      char name[PROF_THREAD_NAME_MAX])
{
    char buf[64];
    name[0] = '\0';
    if (cmn_proc_read_file(p, tid, "comm", buf, sizeof(buf)) <= 0)
        return;
    buf[strcspn(buf, "\n")] = '\0';
    snprintf(name, PROF_THREAD_NAME_MAX, "%.15s", buf);
}

/* Parses the text of a syscall file into *out; false when it is none of its forms. */
static inline bool cmn_proc_syscall_parse(const char *text, struct cmn_proc_syscall *out)
{
    *out = (struct cmn_proc_syscall){.nr = -1};
    if (strncmp(text, "running", 7) == 0) {
        out->is_running = true;
        return true;
    }
    char *end;
    long nr = strtol(text, &end, 10);
    if (end == text || *end != ' ')
        return false;
    /* The stack pointer and the pc are the last two fields. */
    const char *last = strrchr(text, ' ');
    const char *before = last;
    while (before > text && before[-1] != ' ')
        before--;
    if (before <= text)
        return false;
    out->nr = nr >= 0 ? nr : -1;
    out->sp = strtoull(before, NULL, 16);
    out->pc = strtoull(last + 1, NULL, 16);
    return true;
}

/* What thread tid of p waits in, from its syscall file; false when it cannot be read (the
 * thread is gone, or the file is another user's) or parsed. */
static inline bool cmn_proc_task_syscall(const struct cmn_proc *p, pid_t tid,
                                         struct cmn_proc_syscall *out)
{
    char buf[256];
    *out = (struct cmn_proc_syscall){.nr = -1};
    return cmn_proc_read_file(p, tid, "syscall", buf, sizeof(buf)) > 0 &&
           cmn_proc_syscall_parse(buf, out);
}

/* Starts listing the threads of p. 0, or -errno (ENOENT: no such process); call
 * cmn_proc_tasks_close() in either case. */
static inline int cmn_proc_tasks_open(const struct cmn_proc *p, struct cmn_proc_tasks *it)
{
    char path[CMN_PROC_PATH_MAX];
    cmn_proc_path(p, 0, "task", path, sizeof(path));
    it->dir = NULL;
    int fd = cmn_proc_open_with(p->open_fn, path, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return fd;
    it->dir = fdopendir(fd);
    if (it->dir == NULL) {
        int e = errno;
        close(fd);
        return -e;
    }
    return 0;
}

/* The next thread id, in the directory's order; 0 after the last. Threads that start or
 * end meanwhile may or may not be seen. */
static inline pid_t cmn_proc_tasks_next(struct cmn_proc_tasks *it)
{
    struct dirent *e;
    while (it->dir != NULL && (e = readdir(it->dir)) != NULL) {
        long tid = strtol(e->d_name, NULL, 10);
        if (tid > 0)
            return (pid_t)tid;
    }
    return 0;
}

/* Closes the listing. Accepts one whose open failed. */
static inline void cmn_proc_tasks_close(struct cmn_proc_tasks *it)
{
    if (it->dir != NULL)
        closedir(it->dir);
    it->dir = NULL;
}

#endif
