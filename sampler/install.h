/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Installing libprof's signal handlers (the sampling signal's and the snapshot signal's).
 * Called by libprof/ on an application thread before the first timer is armed; never from
 * a handler.
 *
 * What may interrupt our handlers: nothing asynchronous. Their sa_mask holds every signal
 * but the synchronous fault signals (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS,
 * which the kernel delivers even when blocked, and which our handlers never cause) and
 * SIGKILL/SIGSTOP (which cannot be blocked). An application signal that arrives while one
 * of our handlers runs waits the few microseconds until it returns; so no application
 * handler ever runs on top of ours, and none can leave ours half done by siglongjmp() or
 * pthread_exit(). The application's own handler for one of our signals is run by ours,
 * after our bookkeeping, with the mask it asked for (sampler/app_action.h).
 */
#ifndef PROF_SAMPLER_INSTALL_H
#define PROF_SAMPLER_INSTALL_H

#include <signal.h>

typedef int smp_sigaction_fn(int, const struct sigaction *, struct sigaction *);

/* Not async-signal-safe. The mask our handlers run with (see above) into *set. */
void smp_install_mask(sigset_t *set);

/* Not async-signal-safe. Installs smp_handler() for signo with SA_SIGINFO | SA_RESTART |
 * SA_ONSTACK (the kernel's signal frame goes on the thread's alternate stack, libprof's or
 * the application's, never on a goroutine's or a coroutine's few KiB; the sample itself
 * runs on a stack of libprof's, sampler/sigstack.h) and the mask above, through sigaction_fn (libc's sigaction: libprof/ interposes
 * the exported one). The previous action goes to *old when old is not NULL. 0 or -errno. */
int smp_install_handler(int signo, struct sigaction *old, smp_sigaction_fn *sigaction_fn);
/* The same for another of our handlers (the snapshot signal's). */
int smp_install(int signo, void (*handler)(int, siginfo_t *, void *), struct sigaction *old,
                smp_sigaction_fn *sigaction_fn);

#endif
