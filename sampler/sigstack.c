/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Choosing the stack a sample runs on (see sigstack.h), on the handler's path: a few
 * comparisons, an atomic exchange for the spare stack, and the switch itself
 * (arch_call_on_stack()). No system call.
 */
#include "sampler/sigstack.h"

#include "arch/arch.h"

__thread struct smp_sigstack smp_sigstack_self __attribute__((tls_model("initial-exec")));
struct smp_sigstack_spare smp_sigstack_spare;

int smp_sigstack_is_own(uintptr_t sp)
{
    const struct smp_sigstack *own = &smp_sigstack_self;
    return own->hi != 0 && sp > own->lo && sp <= own->hi;
}

int smp_sigstack_run(void (*fn)(void *), void *arg)
{
    const struct smp_sigstack *own = &smp_sigstack_self;
    uintptr_t sp = arch_sp_here();
    if (smp_sigstack_is_own(sp)) {
        if (sp - own->lo >= SMP_SIGSTACK_NEED) {
            fn(arg);
            return 0;
        }
        /* Under an application handler deep on our stack: too little left. */
    } else if (own->hi != 0) {
        arch_call_on_stack(fn, arg, own->hi);
        return 0;
    }
    struct smp_sigstack_spare *spare = &smp_sigstack_spare;
    if (spare->stack.hi == 0 ||
        atomic_exchange_explicit(&spare->busy, 1, memory_order_acquire) != 0)
        return -1;
    arch_call_on_stack(fn, arg, spare->stack.hi);
    atomic_store_explicit(&spare->busy, 0, memory_order_release);
    return 0;
}
