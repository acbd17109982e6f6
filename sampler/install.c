/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Installs the profiling signal handler (see install.h). SA_RESTART makes interrupted
 * system calls restart where the kernel allows, so the application sees no EINTR from us.
 */
#include "sampler/install.h"

#include <errno.h>
#include <string.h>

#include "sampler/handler.h"

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
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    return sigaction_fn(signo, &sa, old) == 0 ? 0 : -errno;
}
