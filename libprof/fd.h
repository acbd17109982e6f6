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

#include <sys/stat.h>
#include <sys/types.h>

/* Not async-signal-safe. open(2) with O_CLOEXEC added, moved to 3 or above. Returns the
 * descriptor or -errno. */
int lp_fd_open(const char *path, int flags, mode_t mode);
/* The same relative to the directory dir_fd (openat(2)). */
int lp_fd_openat(int dir_fd, const char *path, int flags, mode_t mode);

struct cmn_proc;
/* This process's /proc files (common/proc.h: its threads, their names, states and system
 * calls), opened by lp_fd_open(). */
extern const struct cmn_proc lp_proc_self;

/* Not async-signal-safe. Opens the regular file at path, and nothing else: never through a
 * symbolic link in its last component (-ELOOP), never a FIFO, a device or a socket
 * (-EINVAL; the node is looked at through an O_PATH descriptor first, so nothing but a
 * regular file is ever opened for reading or writing, and no open blocks), close-on-exec,
 * numbered 3 or above. With O_CREAT in flags the file is first created afresh (O_EXCL,
 * with mode less the umask): *created (may be NULL) says whether it was. O_TRUNC is
 * refused (-EINVAL): the caller truncates what it has proven its own. The file's identity
 * and owner into *st. Returns the descriptor or -errno. */
int lp_fd_open_regular(const char *path, int flags, mode_t mode, struct stat *st /* out */,
                       int *created /* out */);

/* Not async-signal-safe. How the files libprof creates are made (its profiles, log and
 * snapshots): permission bits (less the umask) and whether they are given to the process's
 * real user and group (a set-user-ID program's invoker). Set once by the constructor,
 * before any other thread of ours; 0600 and the creator's until then. */
void lp_fd_set_policy(mode_t mode, int give_to_real);
/* Not async-signal-safe. lp_fd_open_regular() with O_CREAT for a file of ours: a file it
 * creates gets the policy's mode and owner. */
int lp_fd_create(const char *path, int flags, struct stat *st /* out */, int *created /* out */);

/* 1 when the file st describes is this process's to replace: its effective user's, or its
 * real user's when the policy gives files to them. */
int lp_fd_is_ours(const struct stat *st);

/* Writes all of buf, retrying after EINTR and short writes. 0 or -errno. */
int lp_fd_write_all(int fd, const void *buf, size_t len);

/* close(2) that keeps errno. */
void lp_fd_close(int fd);

/* Not async-signal-safe. Reads a whole file (made for /proc files, whose size stat does not
 * tell) into a malloc'd buffer with a NUL after the *len bytes (len may be NULL); free() it.
 * NULL with errno set when it cannot be read. */
char *lp_fd_slurp(const char *path, size_t *len);

/* The process's file NAME (maps, exe) under /proc/thread-self, read through the calling
 * thread: once the main thread has called pthread_exit(), /proc/self names a zombie whose
 * maps are empty and whose exe cannot be read. /proc/self on a kernel without thread-self
 * (before 3.17). */
const char *lp_fd_self_path(const char *name, char *buf, size_t size);

#endif
