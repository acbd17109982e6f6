/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The toggle signal's handler (see toggle.h). On the handler's path: `make lint` checks
 * what it calls.
 */
#include "sampler/toggle.h"

#include <errno.h>

#include "sampler/codemap.h"

struct smp_toggle smp_toggle;

void smp_toggle_handler(int sig, siginfo_t *info, void *ucontext)
{
    int saved_errno = errno;
    int rc = smp_app_action_deliver(&smp_toggle.app, sig, info, ucontext);
    if (rc == SMP_APP_RAN)
        return; /* errno as the application's handler left it */
    if (rc == SMP_APP_DEFAULT) {
        atomic_fetch_add_explicit(&smp_toggle.requests, 1, memory_order_release);
        smp_writer_wake_up();
    }
    errno = saved_errno;
}
