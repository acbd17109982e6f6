/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the libunwind stepper's stand-in for sigprocmask (sampler/walk_unw.h):
 * inside a walk, where the handler's mask already blocks every asynchronous signal, the
 * lock bracket libunwind makes (block all, saving; then restore the saved set) changes
 * nothing, so a signal the handler blocks stays blocked to its end; outside a walk it
 * sets the kernel's mask as asked. */
#ifdef PROF_HAVE_LIBUNWIND
#include <criterion/criterion.h>
#include <signal.h>
#include <string.h>

#include "sampler/walk_unw.h"

/* 1 when the kernel's mask of this thread blocks sig. */
static int blocked(int sig)
{
    sigset_t now;
    sigemptyset(&now);
    cr_assert_eq(pthread_sigmask(SIG_BLOCK, NULL, &now), 0);
    return sigismember(&now, sig);
}

Test(walk_unw, a_lock_bracket_inside_a_walk_leaves_the_mask_as_the_handler_set_it)
{
    sigset_t handler, full, saved;
    sigemptyset(&handler);
    sigaddset(&handler, SIGRTMIN + 2); /* the signal the handler runs with blocked */
    cr_assert_eq(pthread_sigmask(SIG_SETMASK, &handler, NULL), 0);
    sigfillset(&full);
    memset(&saved, 0, sizeof(saved));
    smp_unw_busy = 1;
    cr_assert_eq(smp_unw_sigprocmask(SIG_SETMASK, &full, &saved), 0);
    cr_expect_eq(blocked(SIGUSR1), 0, "the mask changed inside a walk");
    cr_assert_eq(smp_unw_sigprocmask(SIG_SETMASK, &saved, NULL), 0);
    smp_unw_busy = 0;
    cr_expect_eq(blocked(SIGRTMIN + 2), 1, "the handler's signal was unblocked by the restore");
    cr_expect_eq(blocked(SIGUSR1), 0);
}

Test(walk_unw, outside_a_walk_the_kernel_mask_is_set_as_asked)
{
    sigset_t none, one, old;
    sigemptyset(&none);
    cr_assert_eq(pthread_sigmask(SIG_SETMASK, &none, NULL), 0);
    sigemptyset(&one);
    sigaddset(&one, SIGUSR2);
    sigemptyset(&old);
    cr_assert_eq(smp_unw_sigprocmask(SIG_SETMASK, &one, &old), 0);
    cr_expect_eq(blocked(SIGUSR2), 1);
    cr_expect_eq(sigismember(&old, SIGUSR2), 0);
    cr_assert_eq(smp_unw_sigprocmask(SIG_SETMASK, &old, NULL), 0);
    cr_expect_eq(blocked(SIGUSR2), 0);
}
#endif
