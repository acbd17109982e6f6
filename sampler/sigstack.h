/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The stacks libprof's handlers take their samples on. A sampling signal can reach a thread
 * on any stack: a goroutine's (a few KiB, in Go's heap), a coroutine's (16 KiB of malloc'd
 * memory), an application's small alternate signal stack. So the handlers are installed
 * with SA_ONSTACK (sampler/install.h), every thread libprof starts gets an alternate stack
 * of libprof's own when it has none (libprof/sigstacks.h maps them, SMP_SIGSTACK_BYTES
 * each, a guard page below), and the sample itself (the walk, the ring slot, libunwind)
 * runs through smp_sigstack_run(), which only ever runs it on one of libprof's stacks with
 * at least SMP_SIGSTACK_NEED bytes left below the stack pointer:
 *
 *   - on the thread's own libprof stack, where the kernel put the handler (the usual case:
 *     it is the thread's alternate stack), in place, when that much is left below;
 *   - elsewhere (the application installed an alternate stack of its own, or turned ours
 *     off, or the thread runs on a stack libprof knows nothing of), on the thread's libprof
 *     stack from its top: nothing else can be on it then (the kernel puts a signal frame on
 *     an alternate stack only while it is the thread's; a handler already on one stays on
 *     it, and sigaltstack() refuses to replace a stack in use);
 *   - for a thread without one (started before libprof, or not by pthread_create), on the
 *     spare stack shared by all such threads, taken with an atomic exchange;
 *   - else not at all: the sample is skipped and counted (PROF_STAT_NO_SIGSTACK).
 *
 * What runs in the handler before the switch (its frame, the origin check, the timer's
 * re-arm) stays within a few hundred bytes, on a stack the kernel has just proven has room
 * for its signal frame. The application's own handlers, which libprof's runs for signals it
 * did not send, run where the kernel put libprof's handler, never on the switched stack.
 * SMP_SIGSTACK_NEED is measured (tests/sampler/test_sigstack.c paints a stack, takes
 * samples on it with every stepper, and finds the deepest byte written).
 */
#ifndef PROF_SAMPLER_SIGSTACK_H
#define PROF_SAMPLER_SIGSTACK_H

#include <stdatomic.h>
#include <stdint.h>

/* The bytes a sample needs below the stack pointer at smp_sigstack_run() (the deepest
 * measured on x86_64 is 5.3 KiB, PROF_UNWIND=check; a quarter of this), and the size of
 * libprof's stacks:
 * room for the kernel's signal frame (AT_MINSIGSTKSZ: 3.4 KiB with AVX-512, 11 KiB with
 * AMX), a sample, and the application's own SA_ONSTACK handlers, which run on it when the
 * application gave the thread no stack of its own (Go's runtime takes it as the thread's
 * signal stack, which it makes 32 KiB). */
#define SMP_SIGSTACK_NEED (24u << 10)
#define SMP_SIGSTACK_BYTES (64u << 10)

/* A stack of libprof's: [lo, hi), hi 0 = none. */
struct smp_sigstack {
    uintptr_t lo; /* lowest usable address (a guard page lies below it) */
    uintptr_t hi; /* one past the highest, aligned to ARCH_STACK_ALIGN */
};

/* The calling thread's stack; written by libprof/ on the thread itself, with libprof's
 * signals blocked, before it can take a sample and after its last. */
extern __thread struct smp_sigstack smp_sigstack_self __attribute__((tls_model("initial-exec")));

/* The spare stack for threads without their own, set by libprof/ before the first signal
 * and never unmapped; busy while a handler runs on it. */
struct smp_sigstack_spare {
    struct smp_sigstack stack;
    _Atomic int busy;
};
extern struct smp_sigstack_spare smp_sigstack_spare;

/* Async-signal-safe, in one of libprof's handlers. Runs fn(arg) on a stack with
 * SMP_SIGSTACK_NEED bytes free below (see above): 0, or -1 when there was none (fn did not
 * run; the caller counts the sample skipped). */
int smp_sigstack_run(void (*fn)(void *), void *arg);

/* Async-signal-safe. 1 when sp lies on the calling thread's libprof stack. */
int smp_sigstack_is_own(uintptr_t sp);

#endif
