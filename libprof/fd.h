/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The library's own file descriptors. Every descriptor it keeps is close-on-exec and
 * numbered 3 or above, so that it never becomes the application's stdin, stdout or stderr
 * (even when the application started with those closed) and is never inherited by a
 * program it executes; those it keeps for the whole run live high in the table
 * (sampler/fd_high.h).
 */
#ifndef PROF_LIBPROF_FD_H
#define PROF_LIBPROF_FD_H

#include <sys/types.h>

/* Not async-signal-safe. open(2) with O_CLOEXEC added, moved to 3 or above. Returns the
 * descriptor or -errno. */
int lp_fd_open(const char *path, int flags, mode_t mode);

/* Not async-signal-safe. The same for a descriptor kept for the run (the profile, the
 * log): moved high in the table (sampler/fd_high.h). */
int lp_fd_open_kept(const char *path, int flags, mode_t mode);

/* Writes all of buf, retrying after EINTR and short writes. 0 or -errno. */
int lp_fd_write_all(int fd, const void *buf, size_t len);

/* close(2) that keeps errno. */
void lp_fd_close(int fd);

/* Not async-signal-safe. Reads a whole file (made for /proc files, whose size stat does not
 * tell) into a malloc'd buffer with a NUL after the *len bytes (len may be NULL); free() it.
 * NULL with errno set when it cannot be read. */
char *lp_fd_slurp(const char *path, size_t *len);

#endif
