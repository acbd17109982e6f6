/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Descriptor helpers for the library's files (see fd.h). Application threads and the
 * writer thread call them; never a signal handler. */
#include "libprof/fd.h"

#include "common/proc.h"
#include "sampler/fd_high.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define LP_FD_MIN 3

const struct cmn_proc lp_proc_self = {.pid = 0, .open_fn = lp_fd_open};

static mode_t create_mode = 0600; /* the policy (lp_fd_set_policy()); set once at start */
static int give_to_real;

int lp_fd_open(const char *path, int flags, mode_t mode)
{
    return lp_fd_openat(AT_FDCWD, path, flags, mode);
}

int lp_fd_openat(int dir_fd, const char *path, int flags, mode_t mode)
{
    int fd = openat(dir_fd, path, flags | O_CLOEXEC, mode);
    if (fd < 0)
        return -errno;
    if (fd >= LP_FD_MIN)
        return fd;
    int high = fcntl(fd, F_DUPFD_CLOEXEC, LP_FD_MIN);
    int err = errno;
    lp_fd_close(fd);
    return high >= 0 ? high : -err;
}

/* Reopens the node an O_PATH descriptor holds with flags, through /proc/self/fd (the same
 * inode, whatever the path names now); where /proc is not mounted, opens path again
 * without following a link and checks that it is still that inode. */
static int reopen_node(int path_fd, const char *path, int flags, const struct stat *was)
{
    char via[64];
    snprintf(via, sizeof(via), "/proc/self/fd/%d", path_fd);
    /* The /proc entry is a link by design: it is followed, to the node itself. */
    int fd = lp_fd_open(via, flags & ~O_NOFOLLOW, 0);
    if (fd == -ENOENT && access("/proc/self/fd", F_OK) != 0)
        fd = lp_fd_open(path, flags, 0);
    if (fd < 0)
        return fd;
    struct stat now;
    if (fstat(fd, &now) != 0 || now.st_dev != was->st_dev || now.st_ino != was->st_ino ||
        !S_ISREG(now.st_mode)) {
        lp_fd_close(fd);
        return -ESTALE;
    }
    return fd;
}

int lp_fd_open_regular(const char *path, int flags, mode_t mode, struct stat *st, int *created)
{
    if (created)
        *created = 0;
    if (flags & (O_TRUNC | O_PATH))
        return -EINVAL;
    int open_flags = (flags & ~(O_CREAT | O_EXCL)) | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK;
    /* A file that vanishes between the two steps is looked for again, a few times. */
    for (unsigned tries = 0; tries < 4; tries++) {
        if (flags & O_CREAT) {
            int fd = lp_fd_open(path, open_flags | O_CREAT | O_EXCL, mode);
            if (fd >= 0 && fstat(fd, st) == 0) {
                if (created)
                    *created = 1;
                return fd;
            }
            if (fd >= 0) {
                int err = -errno;
                lp_fd_close(fd);
                return err;
            }
            if (fd != -EEXIST || (flags & O_EXCL))
                return fd;
        }
        int node = lp_fd_open(path, O_PATH | O_NOFOLLOW, 0);
        if (node == -ENOENT && (flags & O_CREAT))
            continue;
        if (node < 0)
            return node;
        int rc = fstat(node, st) == 0 ? 0 : -errno;
        if (rc == 0 && S_ISLNK(st->st_mode))
            rc = -ELOOP;
        else if (rc == 0 && !S_ISREG(st->st_mode))
            rc = -EINVAL;
        if (rc == 0)
            rc = reopen_node(node, path, open_flags, st);
        lp_fd_close(node);
        if (rc != -ESTALE)
            return rc;
    }
    return -ESTALE;
}

void lp_fd_set_policy(mode_t mode, int to_real)
{
    create_mode = mode;
    give_to_real = to_real;
}

int lp_fd_create(const char *path, int flags, struct stat *st, int *created)
{
    int made = 0;
    int fd = lp_fd_open_regular(path, flags | O_CREAT, create_mode, st, &made);
    /* Only a file we just made changes hands; a privileged process may fail to (then it
     * stays the creator's). */
    if (fd >= 0 && made && give_to_real && (getuid() != geteuid() || getgid() != getegid()) &&
        fchown(fd, getuid(), getgid()) == 0) {
        st->st_uid = getuid();
        st->st_gid = getgid();
    }
    if (created)
        *created = made;
    return fd;
}

int lp_fd_is_ours(const struct stat *st)
{
    return st->st_uid == geteuid() || (give_to_real && st->st_uid == getuid());
}

int lp_fd_write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (n == 0)
            return -EIO;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

void lp_fd_close(int fd)
{
    int saved = errno;
    if (fd >= 0)
        close(fd);
    errno = saved;
}

const char *lp_fd_self_path(const char *name, char *buf, size_t size)
{
    static _Atomic int no_thread_self;
    if (!atomic_load_explicit(&no_thread_self, memory_order_relaxed)) {
        snprintf(buf, size, "/proc/thread-self/%s", name);
        if (access("/proc/thread-self", F_OK) == 0)
            return buf;
        atomic_store_explicit(&no_thread_self, 1, memory_order_relaxed);
    }
    snprintf(buf, size, "/proc/self/%s", name);
    return buf;
}

char *lp_fd_slurp(const char *path, size_t *len_out)
{
    int fd = lp_fd_open(path, O_RDONLY, 0);
    if (fd < 0) {
        errno = -fd;
        return NULL;
    }
    size_t cap = 16384, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (cap - len < 4096) {
            char *bigger = realloc(buf, cap * 2);
            if (!bigger) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
        ssize_t n = read(fd, buf + len, cap - len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    lp_fd_close(fd);
    if (!buf) {
        errno = ENOMEM;
        return NULL;
    }
    buf[len] = '\0';
    if (len_out)
        *len_out = len;
    return buf;
}
