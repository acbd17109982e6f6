/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Diagnostic lines (see log.h). Formats into a stack buffer and writes it with one
 * write(2), so lines from several threads do not interleave and no stdio state is used. */
#include "libprof/log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "libprof/fd.h"
#include "sampler/fd_high.h"

#define LP_NOTES_WAITING 8 /* notes kept until a profile is open; later ones are dropped */

static int log_fd = 2; /* set once by lp_log_open(), before any other thread of ours */
static int has_log_file;  /* PROF_LOG was given and opened */
static int (*note_sink)(const char *text);
static char waiting[LP_NOTES_WAITING][LP_LOG_LINE_MAX];
static int n_waiting;
static pthread_mutex_t note_mu = PTHREAD_MUTEX_INITIALIZER; /* the sink and the waiting notes */

void lp_log_open(const char *path)
{
    if (!path || !path[0])
        return;
    if (strcmp(path, "/dev/null") == 0) {
        log_fd = -1; /* silence, asked for: nothing is opened */
        return;
    }
    /* A regular file of this user's, never through a link (lp_fd_create()). */
    struct stat st;
    int fd = lp_fd_create(path, O_WRONLY | O_APPEND, &st, NULL);
    if (fd >= 0 && !lp_fd_is_ours(&st)) {
        lp_fd_close(fd);
        fd = -EPERM;
    }
    if (fd >= 0)
        fd = smp_fd_move_high(fd);
    struct stat there;
    if (fd >= 0) {
        log_fd = fd;
        has_log_file = 1;
    } else if ((fd == -EPERM || fd == -EACCES) && lstat(path, &there) == 0) {
        /* Another user's log: this process changed its user (a child that dropped root
         * and exec'd inherits PROF_LOG). Not the program's stderr's business. */
        lp_note("PROF_LOG %s is another user's file: not written by this process", path);
    } else
        lp_log("cannot open PROF_LOG %s: %s; logging to stderr", path,
               fd == -ELOOP    ? "a symbolic link, not followed"
               : fd == -EINVAL ? "not a regular file"
               : fd == -EPERM  ? "another user's file"
                               : strerror(-fd));
}

/* "libprof: TEXT\n" into line; returns its length; *text points at TEXT. */
static size_t format_line(char *line, size_t cap, const char **text, const char *fmt, va_list ap)
{
    size_t len = (size_t)snprintf(line, cap, "libprof: ");
    *text = line + len;
    int n = vsnprintf(line + len, cap - len - 1, fmt, ap);
    if (n < 0)
        n = 0;
    len += (size_t)n < cap - len - 1 ? (size_t)n : cap - len - 2;
    line[len] = '\0';
    return len;
}

static void write_line(char *line, size_t len)
{
    line[len++] = '\n';
    if (log_fd >= 0)
        (void)lp_fd_write_all(log_fd, line, len);
}

/* A formatted line of ours: "libprof: " then the text (at text). */
struct line {
    char buf[LP_LOG_LINE_MAX + 16];
    const char *text;
    size_t len;
};

#define FORMAT_LINE(l, fmt)                                                                \
    do {                                                                                   \
        va_list ap_;                                                                       \
        va_start(ap_, fmt);                                                                \
        (l)->len = format_line((l)->buf, sizeof((l)->buf), &(l)->text, fmt, ap_);          \
        va_end(ap_);                                                                       \
    } while (0)

void lp_log(const char *fmt, ...)
{
    int saved = errno;
    struct line l;
    FORMAT_LINE(&l, fmt);
    write_line(l.buf, l.len);
    errno = saved;
}

void lp_note(const char *fmt, ...)
{
    int saved = errno;
    struct line l;
    FORMAT_LINE(&l, fmt);
    const char *text = l.text;
    pthread_mutex_lock(&note_mu);
    if ((!note_sink || note_sink(text) != 0) && n_waiting < LP_NOTES_WAITING)
        snprintf(waiting[n_waiting++], sizeof(waiting[0]), "%s", text);
    pthread_mutex_unlock(&note_mu);
    if (has_log_file)
        write_line(l.buf, l.len);
    errno = saved;
}

void lp_log_set_note_sink(int (*sink)(const char *text))
{
    pthread_mutex_lock(&note_mu);
    note_sink = sink;
    int kept = 0;
    for (int i = 0; i < n_waiting; i++)
        if (!sink || sink(waiting[i]) != 0)
            memmove(waiting[kept++], waiting[i], sizeof(waiting[0]));
    n_waiting = kept;
    pthread_mutex_unlock(&note_mu);
}

void lp_log_fork_prepare(void)
{
    pthread_mutex_lock(&note_mu);
}

void lp_log_fork_parent(void)
{
    pthread_mutex_unlock(&note_mu);
}

void lp_log_fork_child(void)
{
    note_sink = NULL; /* the parent's profile: the child's session sets its own */
    n_waiting = 0;
    pthread_mutex_unlock(&note_mu);
}

void lp_log_close(void)
{
    if (log_fd > 2)
        lp_fd_close(log_fd);
    log_fd = 2;
    has_log_file = 0;
}
