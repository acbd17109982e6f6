/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The environment the programs a profiled process starts get (PROF_FOLLOW). With
 * PROF_FOLLOW=0 a program it runs must not load us: its environment has our library taken
 * out of LD_PRELOAD. With PROF_FOLLOW=1 a relative PROF_OUTPUT becomes absolute from the
 * directory the first process started in, so that every process of the tree writes where
 * it does (a program that starts in another directory would look for the output's folder
 * there). The exec and posix_spawn wrappers (libprof/interpose.c) build such an environment
 * on the caller's stack, since a vfork child may call them: nothing here allocates but
 * lp_env_parent_unfollowed(), which the constructor calls.
 */
#ifndef PROF_LIBPROF_ENVIRON_H
#define PROF_LIBPROF_ENVIRON_H

#include <stddef.h>

/* The entries of envp (NULL: none). */
size_t lp_env_count(char *const *envp);

/* The LD_PRELOAD=... entry of envp, or NULL. */
const char *lp_env_preload(char *const *envp);

/* envp without this library in its LD_PRELOAD entry (dropped when nothing else is left),
 * in arr (lp_env_count() + 1 slots) with the new entry in buf (as long as the old one). */
char *const *lp_env_without_us(char *const *envp, char **arr, char *buf);

/* The PROF_OUTPUT=... entry of envp when its path is relative, else NULL. */
const char *lp_env_relative_output(char *const *envp);

/* envp with its PROF_OUTPUT path taken from cwd, in arr (lp_env_count() + 1 slots) with the
 * new entry in buf (cap bytes; the entry is kept as it is when it does not fit). */
char *const *lp_env_with_output(char *const *envp, const char *cwd, char **arr, char *buf,
                                size_t cap);

/* Not async-signal-safe; the constructor's, before main(). Makes a relative PROF_OUTPUT
 * entry of env (the process's environ) absolute from cwd, in place: the children started
 * without our wrappers inherit it (system(), popen(), a raw execve system call; `make -C
 * dir`'s shells looked for the profile's folder in dir). The slot of the array is rewritten,
 * so main()'s envp, the same array, agrees. */
void lp_env_fix_output(char **env, const char *cwd);

/* Not async-signal-safe; the constructor's, when PROF_FOLLOW is 0. 1 when the parent
 * process was started with this library in LD_PRELOAD and the same PROF_FOLLOW entry as
 * this process's, as /proc/PPID/environ tells: this process was started by a program profiled without
 * PROF_FOLLOW, through a path our wrappers do not see (system(), popen()). A first
 * process's parent (a shell, `prof record`) has neither entry. */
int lp_env_parent_unfollowed(void);

#endif
