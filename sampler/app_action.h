/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The application's action for a signal one of libprof's handlers owns (the sampling
 * signal, the snapshot signal). The application keeps seeing the action it set: libprof/
 * answers its sigaction() calls from here and stores what it asks for here. A signal that
 * reaches our handler but was not sent by libprof belongs to the application and is
 * delivered to this action the way the kernel would have delivered it: with the signal
 * mask the action asks for (the interrupted mask, plus sa_mask, plus the signal itself
 * unless SA_NODEFER), SA_RESETHAND honoured, and the default action carried out where it
 * terminates the process. What the delivery cannot reproduce: SA_ONSTACK (the action runs
 * on the stack our handler runs on) and the stop/continue default actions (such a signal is
 * dropped; libprof never samples with one).
 *
 * The two copies are a reader-counted double buffer (sampler/dbuf.h): handlers copy the
 * current action out, libprof/ replaces it. Writers are serialized by libprof/ (with every
 * signal blocked on the writing thread).
 */
#ifndef PROF_SAMPLER_APP_ACTION_H
#define PROF_SAMPLER_APP_ACTION_H

#include <signal.h>
#include <stdatomic.h>
#include <string.h>

#include "sampler/dbuf.h"

/* What smp_app_action_deliver() did. */
#define SMP_APP_RAN 0     /* the application's handler ran */
#define SMP_APP_IGNORED 1 /* the action is SIG_IGN: nothing to do */
#define SMP_APP_DEFAULT 2 /* the action is SIG_DFL: the caller decides */
#define SMP_APP_LOST 3    /* the action could not be read (see dbuf.h): dropped */

struct smp_app_action {
    struct smp_dbuf dbuf;          /* which copy is current; handlers and libprof/ */
    struct sigaction copies[2];    /* the action; libprof/ writes the spare */
    _Atomic int reset_to_default;  /* 1 once an SA_RESETHAND action ran: it is SIG_DFL now;
                                    * set by a handler, cleared by the next store */
};

/* Async-signal-safe. Delivers signal sig (info, ucontext as our handler got them) to the
 * application's action as the kernel would, from inside our handler; the caller has
 * finished its own bookkeeping (the application's handler may never return: siglongjmp,
 * pthread_exit) and restored errno. Returns SMP_APP_*. */
int smp_app_action_deliver(struct smp_app_action *a, int sig, siginfo_t *info, void *ucontext);

/* Async-signal-safe. Carries out sig's default action when it terminates the process
 * (every signal but the ignore, stop and continue ones): the real disposition becomes
 * SIG_DFL and the signal is raised again on this thread, so that it is delivered, with its
 * default action, once our handler returns. Other default actions: nothing. */
void smp_app_signal_default(int sig);

/* Not async-signal-safe; writers serialized by the caller. */
/* Stores *act as the application's action. */
static inline void smp_app_action_store(struct smp_app_action *a, const struct sigaction *act)
{
    int j = smp_dbuf_spare(&a->dbuf);
    a->copies[j] = *act;
    smp_dbuf_publish(&a->dbuf, j);
    atomic_store(&a->reset_to_default, 0);
}

/* The application's action as it would see it from sigaction(). */
static inline void smp_app_action_load(struct smp_app_action *a, struct sigaction *out)
{
    *out = a->copies[atomic_load(&a->dbuf.current) & 1];
    if (atomic_load(&a->reset_to_default)) {
        memset(out, 0, sizeof(*out));
        out->sa_handler = SIG_DFL;
    }
}

#endif
