/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The pool of stacks for libprof's handlers (see sigstacks.h). */
#include "libprof/sigstacks.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "arch/arch.h"
#include "sampler/sigstack.h"

#define GUARD_BYTES 4096u

enum { FREE, USED };

struct slot {
    _Atomic int state; /* FREE -> USED by a thread's compare-and-swap, back by it */
    _Atomic(void *) mem; /* guard page then stack, mapped by the first taker, for good */
    _Atomic uint32_t tid; /* the thread that holds it, for the fork child */
};

static struct slot pool[LP_SIGSTACKS_POOL];
static _Atomic int enabled;

/* A stack of GUARD_BYTES + SMP_SIGSTACK_BYTES, its guard page inaccessible; NULL when it
 * cannot be mapped. */
static void *map_stack(void)
{
    void *m = mmap(NULL, GUARD_BYTES + SMP_SIGSTACK_BYTES, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    if (mprotect(m, GUARD_BYTES, PROT_NONE) != 0) {
        munmap(m, GUARD_BYTES + SMP_SIGSTACK_BYTES);
        return NULL;
    }
    return m;
}

static struct smp_sigstack bounds_of(void *m)
{
    uintptr_t lo = (uintptr_t)m + GUARD_BYTES;
    uintptr_t hi = (lo + SMP_SIGSTACK_BYTES) & ~(uintptr_t)(ARCH_STACK_ALIGN - 1);
    return (struct smp_sigstack){lo, hi};
}

/* In a fork child only the forking thread lives: the other threads' slots are free. */
static void fork_child(void)
{
    uint32_t self = (uint32_t)gettid();
    for (unsigned i = 0; i < LP_SIGSTACKS_POOL; i++)
        if (atomic_load(&pool[i].state) == USED && atomic_load(&pool[i].tid) != self)
            atomic_store(&pool[i].state, FREE);
}

int lp_sigstacks_init(void)
{
    if (atomic_exchange(&enabled, 1) != 0)
        return smp_sigstack_spare.stack.hi != 0 ? 0 : -ENOMEM;
    pthread_atfork(NULL, NULL, fork_child);
    void *m = map_stack();
    if (m == NULL)
        return -ENOMEM;
    smp_sigstack_spare.stack = bounds_of(m);
    return 0;
}

/* A free slot's stack, mapped when it is new: the slot's index, or -1. */
static int take_slot(void)
{
    for (unsigned i = 0; i < LP_SIGSTACKS_POOL; i++) {
        int want = FREE;
        if (atomic_load_explicit(&pool[i].state, memory_order_relaxed) != FREE ||
            !atomic_compare_exchange_strong(&pool[i].state, &want, USED))
            continue;
        if (atomic_load(&pool[i].mem) == NULL) {
            void *m = map_stack();
            if (m == NULL) {
                atomic_store(&pool[i].state, FREE);
                return -1;
            }
            atomic_store(&pool[i].mem, m);
        }
        atomic_store(&pool[i].tid, (uint32_t)gettid());
        return (int)i;
    }
    return -1;
}

int lp_sigstacks_enter(void)
{
    if (!atomic_load(&enabled) || smp_sigstack_self.hi != 0)
        return 0;
    int i = take_slot();
    void *m = i >= 0 ? atomic_load(&pool[i].mem) : map_stack();
    if (m == NULL)
        return -ENOMEM;
    struct smp_sigstack s = bounds_of(m);
    /* The thread's own alternate stack, when it has one, stays: the handler runs there
     * when it has room, and switches to this one when not. A thread pthread_create()
     * starts has none, so one call sets libprof's; the rare thread that had one gets it
     * back. */
    stack_t ss = {.ss_sp = (void *)s.lo, .ss_size = s.hi - s.lo, .ss_flags = 0}, before;
    if (sigaltstack(&ss, &before) == 0 && !(before.ss_flags & SS_DISABLE))
        sigaltstack(&before, NULL);
    smp_sigstack_self = s;
    return 0;
}

void lp_sigstacks_leave(void)
{
    struct smp_sigstack s = smp_sigstack_self;
    if (s.hi == 0)
        return;
    /* Turned off in one call; when it was the program's own by then, it is put back. */
    stack_t off = {.ss_flags = SS_DISABLE}, before;
    if (sigaltstack(&off, &before) != 0)
        return; /* EPERM: a handler runs on it; the stack is kept */
    if (!(before.ss_flags & SS_DISABLE) && (uintptr_t)before.ss_sp != s.lo)
        sigaltstack(&before, NULL);
    smp_sigstack_self = (struct smp_sigstack){0, 0};
    atomic_signal_fence(memory_order_seq_cst);
    void *m = (void *)(s.lo - GUARD_BYTES);
    for (unsigned i = 0; i < LP_SIGSTACKS_POOL; i++) {
        if (atomic_load(&pool[i].mem) == m) {
            atomic_store(&pool[i].state, FREE);
            return;
        }
    }
    munmap(m, GUARD_BYTES + SMP_SIGSTACK_BYTES);
}
