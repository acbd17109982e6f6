/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Installs the profiling signal handler (see install.h). SA_RESTART makes interrupted
 * system calls restart where the kernel allows, so the application sees no EINTR from us.
 */
#include "sampler/install.h"

#include <errno.h>
#include <string.h>

#include "sampler/handler.h"

int smp_install_handler(int signo, int block, struct sigaction *old,
                        smp_sigaction_fn *sigaction_fn)
{
    return smp_install(signo, smp_handler, block, old, sigaction_fn);
}

int smp_install(int signo, void (*handler)(int, siginfo_t *, void *), int block,
                struct sigaction *old, smp_sigaction_fn *sigaction_fn)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (block > 0)
        sigaddset(&sa.sa_mask, block);
    return sigaction_fn(signo, &sa, old) == 0 ? 0 : -errno;
}
