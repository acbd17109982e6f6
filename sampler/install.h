/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Installing the profiling signal handler. Called by libprof/ on an application thread
 * before the first timer is armed; never from a handler.
 */
#ifndef PROF_SAMPLER_INSTALL_H
#define PROF_SAMPLER_INSTALL_H

#include <signal.h>

typedef int smp_sigaction_fn(int, const struct sigaction *, struct sigaction *);

/* Not async-signal-safe. Installs smp_handler() for signo with SA_SIGINFO | SA_RESTART
 * (not SA_ONSTACK: the handler must never run on an application's small alternate
 * stack), through sigaction_fn (libc's sigaction: libprof/ interposes the exported one).
 * The previous action goes to *old when old is not NULL. 0 or -errno. */
int smp_install_handler(int signo, int block, struct sigaction *old,
                        smp_sigaction_fn *sigaction_fn);
/* The same for another of our handlers (the snapshot signal's). block: a signal to hold
 * off while the handler runs (0: none), so that our two handlers never nest: a snapshot
 * taken inside the sampling handler would show the handler's frames. */
int smp_install(int signo, void (*handler)(int, siginfo_t *, void *), int block,
                struct sigaction *old, smp_sigaction_fn *sigaction_fn);

#endif
