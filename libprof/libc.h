/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The real libc functions behind the ones libprof.so interposes (libprof/interpose.c), found
 * with dlsym(RTLD_NEXT) once, by the first caller: our constructor, or an interposer that
 * runs before it (another library's constructor). The bottom of libprof/: the session and
 * the writer call libc through here to get past our own wrappers (our handler must be
 * installed with libc's sigaction, not the application's virtual one; the writer thread
 * must not start through our pthread_create trampoline). Not async-signal-safe until
 * lp_libc_init() has run; the pointers never change afterwards.
 */
#ifndef PROF_LIBPROF_LIBC_H
#define PROF_LIBPROF_LIBC_H

#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <unistd.h>

typedef int lp_main_fn(int, char **, char **);
typedef int lp_libc_start_main_fn(lp_main_fn *, int, char **, void (*)(void), void (*)(void),
                                  void (*)(void), void *);
typedef int lp_phdr_cb_fn(struct dl_phdr_info *, size_t, void *);

struct lp_libc {
    lp_libc_start_main_fn *libc_start_main;
    int (*pthread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
    int (*pthread_setname_np)(pthread_t, const char *);
    int (*sigaction)(int, const struct sigaction *, struct sigaction *);
    int (*setitimer)(__itimer_which_t, const struct itimerval *, struct itimerval *);
    void *(*dlopen)(const char *, int);
    int (*dlclose)(void *);
    int (*dl_iterate_phdr)(lp_phdr_cb_fn *, void *);
    int (*execve)(const char *, char *const[], char *const[]);
    int (*execvpe)(const char *, char *const[], char *const[]);
    int (*fexecve)(int, char *const[], char *const[]);
    int (*execveat)(int, const char *, char *const[], char *const[], int);
    int (*posix_spawn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                       const posix_spawnattr_t *, char *const[], char *const[]);
    int (*posix_spawnp)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                        const posix_spawnattr_t *, char *const[], char *const[]);
    int (*system)(const char *);
    FILE *(*popen)(const char *, const char *);
    int (*setuid)(uid_t);
    int (*setgid)(gid_t);
    int (*seteuid)(uid_t);
    int (*setegid)(gid_t);
    int (*setreuid)(uid_t, uid_t);
    int (*setregid)(gid_t, gid_t);
    int (*setresuid)(uid_t, uid_t, uid_t);
    int (*setresgid)(gid_t, gid_t, gid_t);
    int (*setgroups)(size_t, const gid_t *);
    int (*pthread_sigmask)(int, const sigset_t *, sigset_t *);
    int (*sigprocmask)(int, const sigset_t *, sigset_t *);
};

/* The real functions; filled by lp_libc_init(). */
extern struct lp_libc lp_libc;

/* Not async-signal-safe. Resolves lp_libc (idempotent; cheap after the first call). */
void lp_libc_init(void);

/* libprof's code that runs on the application's threads outside our handlers (thread start
 * and exit, dlopen and dlclose, sigaction, set*id, exec, the API) takes locks and
 * allocates: an application handler run in its middle could leave it by siglongjmp() or
 * pthread_exit() and leave a lock held for good. It runs with every signal blocked (glibc
 * never blocks its own two), so such a signal waits until our code is done, as it would
 * wait for a critical section of the program's own. */
/* The thread's signal mask as the kernel has it: libprof's own code never goes through
 * the application's view (libprof/interpose.c, pthread_sigmask()), in which the signal
 * libprof samples with may read as blocked where the kernel does not block it. Before
 * lp_libc is resolved: the system call, which glibc's function is but for refusing to
 * block glibc's two own signals. */
static inline int lp_sigmask(int how, const sigset_t *set, sigset_t *old)
{
    if (lp_libc.pthread_sigmask)
        return lp_libc.pthread_sigmask(how, set, old);
    return syscall(SYS_rt_sigprocmask, how, set, old, (size_t)(_NSIG / 8)) == 0 ? 0 : errno;
}

/* Sets the calling thread's mask to `mask` as the application's view of it
 * (libprof/interpose.c): per-thread sampling signal signo (> 0) reads blocked where mask
 * blocks it (smp_self.app_blocked) and stays unblocked for the kernel. */
void lp_sigmask_as_view(int signo, const sigset_t *mask);

static inline void lp_signals_block(sigset_t *old)
{
    sigset_t all;
    sigfillset(&all);
    lp_sigmask(SIG_SETMASK, &all, old);
}

static inline void lp_signals_restore(const sigset_t *old)
{
    lp_sigmask(SIG_SETMASK, old, NULL);
}

#endif
