/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Installs libprof's signal handlers (see install.h). SA_RESTART makes interrupted system
 * calls restart where the kernel allows, so the application sees no EINTR from us;
 * SA_ONSTACK puts the kernel's signal frame on the thread's alternate stack, never on the
 * small stack the thread may run on (sampler/sigstack.h).
 */
#include "sampler/install.h"

#include <errno.h>
#include <string.h>

#include "sampler/handler.h"

void smp_install_mask(sigset_t *set)
{
    static const int synchronous[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS};
    sigfillset(set);
    for (size_t i = 0; i < sizeof(synchronous) / sizeof(synchronous[0]); i++)
        sigdelset(set, synchronous[i]);
}

int smp_install_handler(int signo, struct sigaction *old, smp_sigaction_fn *sigaction_fn)
{
    return smp_install(signo, smp_handler, old, sigaction_fn);
}

int smp_install(int signo, void (*handler)(int, siginfo_t *, void *), struct sigaction *old,
                smp_sigaction_fn *sigaction_fn)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    smp_install_mask(&sa.sa_mask);
    return sigaction_fn(signo, &sa, old) == 0 ? 0 : -errno;
}
