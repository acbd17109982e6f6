/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Delivering the application's signals from inside our handlers (see app_action.h). On
 * the handler's path: raw system calls only. The masks are the kernel's: 8 bytes, one bit
 * per signal, bit sig - 1; glibc's sigset_t starts with them.
 */
#include "sampler/app_action.h"

#include <stdint.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "arch/arch.h"

/* The kernel's struct sigaction for rt_sigaction(2), the same on x86_64 and aarch64. */
struct kernel_sigaction {
    void *handler;
    unsigned long flags;
    void *restorer;
    uint64_t mask;
};

static uint64_t sig_bit(int sig)
{
    return sig >= 1 && sig <= 64 ? UINT64_C(1) << (sig - 1) : 0;
}

static uint64_t first_word(const sigset_t *set)
{
    uint64_t w;
    memcpy(&w, set, sizeof(w));
    return w;
}

int smp_app_action_deliver(struct smp_app_action *a, int sig, siginfo_t *info, void *ucontext)
{
    int i = smp_dbuf_enter(&a->dbuf);
    if (i < 0)
        return SMP_APP_LOST;
    struct sigaction act = a->copies[i];
    smp_dbuf_leave(&a->dbuf, i);

    void (*h)(int) = act.sa_handler; /* sa_handler and sa_sigaction share one word */
    if (h == SIG_IGN)
        return SMP_APP_IGNORED;
    if (h == SIG_DFL || atomic_load(&a->reset_to_default))
        return SMP_APP_DEFAULT;
    if (act.sa_flags & SA_RESETHAND) {
        /* The kernel resets the disposition as it delivers: one delivery gets the handler,
         * any later one the default action. */
        int zero = 0;
        if (!atomic_compare_exchange_strong(&a->reset_to_default, &zero, 1))
            return SMP_APP_DEFAULT;
    }
    const ucontext_t *uc = ucontext;
    uint64_t mask = first_word(&uc->uc_sigmask) | first_word(&act.sa_mask);
    if (!(act.sa_flags & SA_NODEFER))
        mask |= sig_bit(sig);
    mask &= ~(sig_bit(SIGKILL) | sig_bit(SIGSTOP));
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &mask, NULL, ARCH_KERNEL_SIGSET_BYTES);
    if (act.sa_flags & SA_SIGINFO)
        act.sa_sigaction(sig, info, ucontext);
    else
        h(sig);
    return SMP_APP_RAN;
}

void smp_app_signal_default(int sig)
{
    switch (sig) {
    case SIGCHLD:
    case SIGURG:
    case SIGWINCH:
    case SIGCONT:
    case SIGSTOP:
    case SIGTSTP:
    case SIGTTIN:
    case SIGTTOU:
        return;
    default:
        break;
    }
    struct kernel_sigaction dfl = {.handler = SIG_DFL};
    if (syscall(SYS_rt_sigaction, sig, &dfl, NULL, ARCH_KERNEL_SIGSET_BYTES) != 0)
        return;
    syscall(SYS_tgkill, (long)getpid(), (long)syscall(SYS_gettid), (long)sig);
}
