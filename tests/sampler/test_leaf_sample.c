/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of how the handler (sampler/handler.c, take_stack) records an interrupted
 * leaf whose frame is not set up: it is called as the kernel would call it after a timer
 * expiry, with a hand-made context whose pc points at a `ret` (x86_64) and whose stack is
 * an array with a known chain. The recovered caller must be frames[1], flagged, with
 * sp_word 0 so that the reporter does not add it again; a leaf in its body keeps sp_word. */
#include <criterion/criterion.h>
#include <signal.h>
#include <string.h>
#include <ucontext.h>

#include "include/libprof/prof_format.h"
#include "sampler/handler.h"
#include "sampler/ring.h"
#include "sampler/sigstack.h"
#include "sampler/timer_thread.h"

#if defined(__x86_64__)
static uint64_t mem[8192];
static struct smp_ring ring;
static uintptr_t stk[64] __attribute__((aligned(16)));
static const uint8_t code_ret[] = {0xc3, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc};
static const uint8_t code_nop[] = {0x90, 0x90, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc};

/* The stack of libprof's the sample runs on (sampler/sigstack.h). */
static _Alignas(16) uint8_t own_stack[SMP_SIGSTACK_BYTES];

/* Runs the handler on a context at pc with sp = stk[0] and the frame pointer at stk[10]
 * (a two-frame chain), and returns the sample it recorded. */
static struct smp_slot *sample_at(const uint8_t *pc)
{
    memset(&smp_sampler, 0, sizeof(smp_sampler));
    cr_assert_eq(smp_ring_init(&ring, mem, 4 * smp_ring_slot_bytes(64), 64), 0);
    smp_sampler.ring = &ring;
    smp_sampler.max_frames = 64;
    smp_sampler.source = PROF_TIMER_THREAD;
    memset(&smp_self, 0, sizeof(smp_self));
    smp_sigstack_self = (struct smp_sigstack){(uintptr_t)own_stack,
                                              (uintptr_t)own_stack + sizeof(own_stack)};
    smp_self.stack_lo = (uintptr_t)&stk[0];
    smp_self.stack_hi = (uintptr_t)&stk[64];
    atomic_store(&smp_sampler.active, 1);

    stk[0] = 0x4444; /* the word at sp */
    stk[10] = (uintptr_t)&stk[20];
    stk[11] = 0x1111;
    stk[20] = 0;
    stk[21] = 0x2222;
    ucontext_t uc;
    memset(&uc, 0, sizeof(uc));
    uc.uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)pc;
    uc.uc_mcontext.gregs[REG_RSP] = (greg_t)(uintptr_t)&stk[0];
    uc.uc_mcontext.gregs[REG_RBP] = (greg_t)(uintptr_t)&stk[10];
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    si.si_signo = SIGPROF;
    si.si_code = SI_TIMER;
    si.si_value.sival_ptr = SMP_TIMER_COOKIE;
    smp_handler(SIGPROF, &si, &uc);
    struct smp_slot *s = smp_ring_peek(&ring);
    cr_assert_not_null(s);
    return s;
}

Test(leaf_sample, a_leaf_at_ret_is_recorded_with_its_caller_and_no_sp_word)
{
    struct smp_slot *s = sample_at(code_ret);
    cr_assert_eq(s->rec.n_frames, 4);
    cr_assert_eq(s->frames[0], (uintptr_t)code_ret);
    cr_assert_eq(s->frames[1], 0x4444);
    cr_assert_eq(s->frames[2], 0x1111);
    cr_assert_eq(s->frames[3], 0x2222);
    cr_assert_eq(s->rec.flags, PROF_SAMPLE_LEAF_CALLER);
    cr_assert_eq(s->rec.sp_word, 0, "the reporter would add the caller a second time");
    cr_assert_eq(s->rec.stop_reason, PROF_STOP_END);
}

Test(leaf_sample, a_leaf_in_its_body_keeps_the_chain_and_no_word_of_the_stack)
{
    struct smp_slot *s = sample_at(code_nop);
    cr_assert_eq(s->rec.n_frames, 3);
    cr_assert_eq(s->frames[1], 0x1111);
    cr_assert_eq(s->rec.flags, 0);
    cr_assert_eq(s->rec.sp_word, 0, "the word at sp proves nothing: it is not recorded");
}
#endif
