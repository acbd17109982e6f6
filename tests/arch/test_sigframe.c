/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the signal-frame layout in arch/<arch>.h: from the stack pointer a handler
 * returns to the trampoline with, the ucontext_t and the siginfo_t are where the kernel put
 * them for a real signal (the kernel-time samples of libprof/ksamples.c read the signal's
 * number there, in the sigreturn system call). */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>

#include "arch/arch.h"

static volatile uintptr_t seen_info, seen_uc;
static volatile int seen_signo;

static void on_signal(int signo, siginfo_t *info, void *uc)
{
    seen_signo = signo;
    seen_info = (uintptr_t)info;
    seen_uc = (uintptr_t)uc;
}

Test(arch_sigframe, the_siginfo_lies_where_the_kernel_put_it_beside_the_ucontext)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    cr_assert_eq(sigaction(SIGUSR1, &sa, NULL), 0);
    cr_assert_eq(raise(SIGUSR1), 0);
    cr_assert_eq(seen_signo, SIGUSR1);
    /* Both are the stack pointer at the trampoline plus a constant: the stack pointer the
     * ucontext_t is found from is the one the siginfo_t is found from. */
    uintptr_t sp = 0x10000;
    cr_expect_eq(arch_sigframe_info_at(sp) - arch_sigframe_uc_at(sp), seen_info - seen_uc,
                 "the siginfo_t is %ld bytes from the ucontext_t, not %ld",
                 (long)(seen_info - seen_uc),
                 (long)(arch_sigframe_info_at(sp) - arch_sigframe_uc_at(sp)));
    cr_expect_eq(((const siginfo_t *)seen_info)->si_signo, SIGUSR1);
}
