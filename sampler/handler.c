/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The profiling signal handler (see handler.h). Everything reachable from here is on the
 * handler's path: this file, walk_fp.c, walk_unw.c, probe.c, codemap.c and ring.c, checked
 * by `make lint` against an allowlist of async-signal-safe calls. The thread's stack
 * bounds were captured outside the handler; the walk never reads outside them.
 */
#include "sampler/handler.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "arch/arch.h"
#include "sampler/ring.h"
#include "sampler/timer_thread.h"
#include "sampler/walk_fp.h"
#ifdef PROF_HAVE_LIBUNWIND
#include "sampler/walk_unw.h"
#endif

struct smp_sampler smp_sampler;
__thread struct smp_thread smp_self __attribute__((tls_model("initial-exec")));

static void count(unsigned idx)
{
    atomic_fetch_add_explicit(&smp_sampler.counters[idx], 1, memory_order_relaxed);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* When the interrupted code runs on the thread's alternate signal stack (an application
 * signal handler installed with SA_ONSTACK), that stack's bounds replace the thread's:
 * the walk then reads the handler's frames there, and stops where they end. */
static void use_alt_stack_if_there(uintptr_t sp, struct smp_stack *stack)
{
    stack_t ss;
    if (sp >= stack->lo && sp < stack->hi)
        return;
    if (syscall(SYS_sigaltstack, NULL, &ss) != 0 || (ss.ss_flags & SS_DISABLE))
        return;
    uintptr_t lo = (uintptr_t)ss.ss_sp, hi = lo + ss.ss_size;
    if (sp >= lo && sp < hi) {
        stack->lo = lo;
        stack->hi = hi;
        stack->root_fp = 0;
    }
}

SMP_READS_STACK uint8_t smp_take_stack(struct prof_rec_sample *rec, uint64_t *frames,
                                       const ucontext_t *uc)
{
    struct fpstep_regs regs = {
        .pc = arch_pc(uc), .sp = arch_sp(uc), .fp = arch_fp(uc), .lr = arch_lr(uc)
    };
    struct smp_stack stack = {
        .lo = smp_self.stack_lo, .hi = smp_self.stack_hi, .root_fp = smp_self.root_fp
    };
    uint8_t why, flags;

    rec->flags = 0;
    if (stack.hi == 0) {
        frames[0] = arch_strip_pac(regs.pc);
        rec->n_frames = 1;
        rec->sp_word = 0;
        return PROF_STOP_NO_STACK;
    }
    use_alt_stack_if_there(regs.sp, &stack);
#ifdef PROF_HAVE_LIBUNWIND
    /* libunwind finds the leaf's caller from unwind tables itself: sp_word stays 0 so that
     * the reporter adds nothing. A nested walk on this thread falls back to the chain. */
    if (smp_unw_enabled) {
        unsigned n = smp_walk_unw((void *)uc, &regs, &stack, frames,
                                  smp_sampler.max_frames, &why);
        if (n > 0) {
            rec->n_frames = (uint16_t)n;
            rec->sp_word = 0;
            return why;
        }
    }
#endif
    rec->n_frames = (uint16_t)smp_walk_fp(&regs, &stack, frames,
                                               smp_sampler.max_frames, &why, &flags);
    rec->flags = flags;
    /* The word at sp is the caller's return address when the leaf has no frame yet. When
     * the stepper already recovered that caller (PROF_SAMPLE_LEAF_CALLER), sp_word is 0 so
     * that the reporter does not add it a second time. */
    int sp_ok = regs.sp >= stack.lo && regs.sp < stack.hi && stack.hi - regs.sp >= 8 &&
                !(regs.sp & 7u) && !(flags & PROF_SAMPLE_LEAF_CALLER);
    rec->sp_word = sp_ok ? *(const uint64_t *)regs.sp : 0;
    return why;
}

/* Whether our timer sent this signal, and the weight it carries (0 when it is not ours).
 * The perf source's counter stops after each overflow and is re-armed here. */
static uint32_t our_weight(const siginfo_t *info)
{
    /* The perf source arms a per-thread timer instead of a counter for the threads past
     * its descriptor budget, so both kinds of per-thread signal can come. */
    switch (smp_sampler.source) {
    case PROF_TIMER_THREAD:
    case PROF_TIMER_PERF:
        if (info->si_code == SI_TIMER && info->si_value.sival_ptr == SMP_TIMER_COOKIE)
            return info->si_overrun > 0 ? 1u + (uint32_t)info->si_overrun : 1u;
        if (smp_sampler.source == PROF_TIMER_PERF &&
            (info->si_code == POLL_HUP || info->si_code == POLL_IN)) {
            ioctl(info->si_fd, PERF_EVENT_IOC_REFRESH, 1);
            return 1;
        }
        return 0;
    default:
        return info->si_code == SI_KERNEL ? 1 : 0;
    }
}

/* Runs the application's own action for a signal that is not ours. Its default action
 * (terminate, for the signals we use) is not applied: the signal is dropped then. */
static void hand_to_application(int sig, siginfo_t *info, void *ucontext)
{
    int at = atomic_load_explicit(&smp_sampler.app_action_at, memory_order_acquire);
    if (at < 0 || at > 1)
        return;
    const struct sigaction *a = &smp_sampler.app_actions[at];
    if (a->sa_flags & SA_SIGINFO) {
        if (a->sa_sigaction)
            a->sa_sigaction(sig, info, ucontext);
    } else if (a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN) {
        a->sa_handler(sig);
    }
}

void smp_handler(int sig, siginfo_t *info, void *ucontext)
{
    int saved_errno = errno;

    atomic_fetch_add_explicit(&smp_sampler.in_flight, 1, memory_order_acquire);
    uint32_t weight = our_weight(info);
    if (weight == 0) {
        errno = saved_errno;
        hand_to_application(sig, info, ucontext);
        saved_errno = errno;
        goto out;
    }
    if (!atomic_load_explicit(&smp_sampler.active, memory_order_acquire))
        goto out;
    count(PROF_STAT_SIGNALS);

    /* This thread's own ring first; when it has none or it is full, the shared one. */
    struct smp_ring *ring = smp_self.ring;
    struct smp_slot *slot = ring ? smp_ring_reserve(ring) : NULL;
    if (!slot) {
        ring = smp_sampler.ring;
        slot = smp_ring_reserve(ring);
    }
    if (!slot) {
        count(PROF_STAT_DROPPED);
        goto out;
    }
    uint8_t why = smp_take_stack(&slot->rec, slot->frames, ucontext);
    if (smp_self.tid == 0)
        smp_self.tid = (uint32_t)syscall(SYS_gettid);
    slot->rec.time_ns = now_ns();
    slot->rec.tid = smp_self.tid;
    slot->rec.weight = weight;
    slot->rec.stop_reason = why;
    slot->rec.flags |= why == PROF_STOP_END ? 0 : PROF_SAMPLE_TRUNCATED;
    slot->rec.reserved = 0;
    smp_ring_publish(ring, slot);

    count(PROF_STAT_SAMPLES);
    atomic_fetch_add_explicit(&smp_sampler.counters[PROF_STAT_WEIGHT], weight,
                              memory_order_relaxed);
    if (why != PROF_STOP_END) {
        count(PROF_STAT_TRUNCATED);
        count(PROF_STAT_STOP_DEPTH + why - PROF_STOP_DEPTH);
    }
out:
    atomic_fetch_sub_explicit(&smp_sampler.in_flight, 1, memory_order_release);
    errno = saved_errno;
}
