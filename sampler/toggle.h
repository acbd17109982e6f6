/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The toggle signal (PROF_TOGGLE_SIGNAL), the handler's side: a signal sent to the process
 * (kill -s SIG PID) asks libprof to turn sampling off when it is on and on when it is off,
 * like gperftools' CPUPROFILESIGNAL. The handler only counts the request and wakes
 * libprof's writer thread (smp_writer_wake_up), which turns sampling off or on
 * (libprof/session.c): arming and disarming timers is no work for a signal handler.
 *
 * The signal is the application's as much as it was: when the application has an action
 * of its own for it (sigaction() and signal() are answered from what libprof keeps aside,
 * sampler/app_action.h), every instance goes to that action and none toggles; with its
 * action SIG_IGN, an instance is ignored; with SIG_DFL (it never asked), an instance is a
 * request. The handler runs on whichever thread the kernel picks for a signal sent to the
 * process, as any handler would: a system call of that thread that the kernel does not
 * restart after a handler (nanosleep, poll, ...) returns EINTR, as with any signal.
 */
#ifndef PROF_SAMPLER_TOGGLE_H
#define PROF_SAMPLER_TOGGLE_H

#include <signal.h>
#include <stdatomic.h>

#include "sampler/app_action.h"

struct smp_toggle {
    _Atomic unsigned requests; /* requests not yet served; handlers add, libprof/ takes */
    struct smp_app_action app; /* the application's action for the signal */
};

extern struct smp_toggle smp_toggle;

/* Async-signal-safe: the toggle signal's handler, for sigaction with SA_SIGINFO. Saves and
 * restores errno (but for a signal it hands to the application's action). */
void smp_toggle_handler(int sig, siginfo_t *info, void *ucontext);

#endif
