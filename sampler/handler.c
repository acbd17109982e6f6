/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The profiling signal handler (see handler.h). Everything reachable from here is on the
 * handler's path: this file, walk_fp.c and ring.c, checked by `make lint` against an
 * allowlist of async-signal-safe calls. The thread's stack bounds were captured outside
 * the handler; the walk never reads outside them.
 */
#include "sampler/handler.h"

#include <errno.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "arch/arch.h"
#include "sampler/ring.h"
#include "sampler/walk_fp.h"

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

/* Fills the slot's frames and returns the stop reason. */
static uint8_t take_stack(struct smp_slot *slot, const ucontext_t *uc)
{
    struct smp_regs regs = { .pc = arch_pc(uc), .sp = arch_sp(uc), .fp = arch_fp(uc) };
    struct smp_stack stack = {
        .lo = smp_self.stack_lo, .hi = smp_self.stack_hi, .root_fp = smp_self.root_fp
    };
    uint8_t why;

    if (stack.hi == 0) {
        slot->frames[0] = arch_strip_pac(regs.pc);
        slot->rec.n_frames = 1;
        slot->rec.sp_word = 0;
        return PROF_STOP_NO_STACK;
    }
    slot->rec.n_frames = (uint16_t)smp_walk_fp(&regs, &stack, slot->frames,
                                               smp_sampler.max_frames, &why);
    /* The word at sp is the caller's return address when the leaf has no frame yet. */
    int sp_ok = regs.sp >= stack.lo && regs.sp < stack.hi && stack.hi - regs.sp >= 8 &&
                !(regs.sp & 7u);
    slot->rec.sp_word = sp_ok ? *(const uint64_t *)regs.sp : 0;
    return why;
}

void smp_handler(int sig, siginfo_t *info, void *ucontext)
{
    (void)sig;
    (void)info;
    int saved_errno = errno;

    atomic_fetch_add_explicit(&smp_sampler.in_flight, 1, memory_order_acquire);
    if (!atomic_load_explicit(&smp_sampler.active, memory_order_acquire))
        goto out;
    count(PROF_STAT_SIGNALS);

    struct smp_slot *slot = smp_ring_reserve(smp_sampler.ring);
    if (!slot) {
        count(PROF_STAT_DROPPED);
        goto out;
    }
    uint8_t why = take_stack(slot, ucontext);
    if (smp_self.tid == 0)
        smp_self.tid = (uint32_t)syscall(SYS_gettid);
    slot->rec.time_ns = now_ns();
    slot->rec.tid = smp_self.tid;
    slot->rec.weight = 1;
    slot->rec.stop_reason = why;
    slot->rec.flags = why == PROF_STOP_END ? 0 : PROF_SAMPLE_TRUNCATED;
    slot->rec.reserved = 0;
    smp_ring_publish(smp_sampler.ring, slot);

    count(PROF_STAT_SAMPLES);
    if (why != PROF_STOP_END) {
        count(PROF_STAT_TRUNCATED);
        count(PROF_STAT_STOP_DEPTH + why - PROF_STOP_DEPTH);
    }
out:
    atomic_fetch_sub_explicit(&smp_sampler.in_flight, 1, memory_order_release);
    errno = saved_errno;
}
