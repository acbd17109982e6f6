/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Unit tests of the stacks libprof's handlers sample on (sampler/sigstack.h): where a
 * sample runs, and how much stack the handler path takes, measured. The measure: two
 * stacks painted with a byte pattern; the thread's alternate signal stack (where the
 * kernel puts its signal frame and the handler starts) and libprof's stack (where the
 * sample runs); real signals of ours (rt_tgsigqueueinfo to this thread, as a CPU timer's)
 * interrupt a 200-frame recursion, walked by each stepper (tables, frame pointers,
 * libunwind, and both for PROF_UNWIND=check); the deepest byte changed on each stack is
 * what it took. docs/ARCHITECTURE.md ("The handler's contract") states these numbers.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "include/libprof/prof_format.h"
#include "libprof/unwind.h"
#include "sampler/handler.h"
#include "sampler/install.h"
#include "sampler/ring.h"
#include "sampler/sigstack.h"
#include "sampler/timer_thread.h"
#include "sampler/walk.h"

#define PAINT 0xa5
#define ALT_BYTES (256u << 10)

static uint64_t ring_mem[1u << 16];
static struct smp_ring ring;
static _Alignas(16) uint8_t alt[ALT_BYTES];           /* the thread's alternate stack */
static _Alignas(16) uint8_t own[SMP_SIGSTACK_BYTES];  /* libprof's */

static void setup(unsigned walk_mode)
{
    memset(&smp_sampler, 0, sizeof(smp_sampler));
    memset(ring_mem, 0, sizeof(ring_mem)); /* zeroed memory is an empty ring */
    cr_assert_eq(smp_ring_init(&ring, ring_mem, 64 * smp_ring_slot_bytes(256), 256), 0);
    smp_sampler.ring = &ring;
    smp_sampler.max_frames = 256;
    smp_sampler.walk_mode = walk_mode;
    smp_sampler.source = PROF_TIMER_THREAD;
    pthread_attr_t attr;
    void *addr;
    size_t size;
    pthread_getattr_np(pthread_self(), &attr);
    pthread_attr_getstack(&attr, &addr, &size);
    pthread_attr_destroy(&attr);
    memset(&smp_self, 0, sizeof(smp_self));
    smp_self.stack_lo = (uintptr_t)addr;
    smp_self.stack_hi = (uintptr_t)addr + size;
    memset(alt, PAINT, sizeof(alt));
    memset(own, PAINT, sizeof(own));
    smp_sigstack_self = (struct smp_sigstack){(uintptr_t)own, (uintptr_t)own + sizeof(own)};
    stack_t ss = {.ss_sp = alt, .ss_size = sizeof(alt), .ss_flags = 0};
    cr_assert_eq(sigaltstack(&ss, NULL), 0);
    cr_assert_eq(smp_install_handler(SIGPROF, NULL, sigaction), 0);
    atomic_store(&smp_sampler.active, 1);
}

/* A signal of our CPU timer's, to this thread, now. */
static void signal_self(void)
{
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    si.si_signo = SIGPROF;
    si.si_code = SI_TIMER;
    si.si_value.sival_ptr = SMP_TIMER_COOKIE;
    cr_assert_eq(syscall(SYS_rt_tgsigqueueinfo, getpid(), (pid_t)syscall(SYS_gettid), SIGPROF,
                         &si),
                 0);
}

__attribute__((noinline)) static int recurse(int depth)
{
    if (depth == 0) {
        for (int i = 0; i < 20; i++)
            signal_self();
        return 0;
    }
    int r = recurse(depth - 1);
    __asm__ volatile("" ::: "memory");
    return r + 1;
}

/* The bytes of stack [lo, hi) that were written below hi: from the lowest changed byte. */
static size_t used(const uint8_t *lo, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (lo[i] != PAINT)
            return n - i;
    return 0;
}

static void measure(unsigned walk_mode, const char *name, size_t *kernel_and_entry,
                    size_t *sample)
{
    setup(walk_mode);
    recurse(200);
    size_t samples = smp_ring_used(&ring);
    cr_assert_geq(samples, 20, "%s: %zu samples of 20 signals", name, samples);
    *kernel_and_entry = used(alt, sizeof(alt));
    *sample = used(own, sizeof(own));
    cr_log_info("%s: the kernel's signal frame and the handler's entry took %zu bytes of the "
                "alternate stack, the sample %zu bytes of libprof's (AT_MINSIGSTKSZ %lu)",
                name, *kernel_and_entry, *sample, getauxval(AT_MINSIGSTKSZ));
    stack_t off = {.ss_flags = SS_DISABLE};
    sigaltstack(&off, NULL);
}

/* What a stepper's samples took, checked against what libprof reserves. */
static void check_fits(size_t entry, size_t sample)
{
    size_t kernel = getauxval(AT_MINSIGSTKSZ);
    cr_assert_lt(sample, SMP_SIGSTACK_NEED, "a sample took %zu bytes, more than the %u reserved",
                 sample, SMP_SIGSTACK_NEED);
    cr_assert_lt(entry, kernel + 1024, "the handler's entry took %zu bytes with the kernel's "
                 "frame (AT_MINSIGSTKSZ %zu): more than 1 KiB of its own", entry, kernel);
    cr_assert_lt(entry + SMP_SIGSTACK_NEED, SMP_SIGSTACK_BYTES);
}

Test(sigstack, the_handler_path_fits_in_what_libprof_reserves_for_it)
{
    size_t entry, sample;
    cr_assert_eq(lp_unwind_init(PROF_UNWIND_AUTO, NULL), 0);
    lp_unwind_build_all();
    measure(SMP_WALK_AUTO, "tables", &entry, &sample);
    check_fits(entry, sample);
    measure(SMP_WALK_FP, "frame pointers", &entry, &sample);
    check_fits(entry, sample);
}

#ifdef PROF_HAVE_LIBUNWIND
/* PROF_UNWIND=check: the tables' walk, then libunwind's into a second buffer. */
Test(sigstack, the_handler_path_with_libunwind_fits_too)
{
    size_t entry, sample;
    cr_assert_eq(lp_unwind_init(PROF_UNWIND_LIBUNWIND, NULL), 0);
    lp_unwind_use_as_oracle();
    lp_unwind_build_all();
    setup(SMP_WALK_AUTO);
    smp_sampler.check_unwind = 1;
    recurse(200);
    cr_assert_gt(atomic_load(&smp_sampler.counters[PROF_STAT_CHECK_SAME]) +
                     atomic_load(&smp_sampler.counters[PROF_STAT_CHECK_DIFF]),
                 0, "libunwind walked");
    entry = used(alt, sizeof(alt));
    sample = used(own, sizeof(own));
    cr_log_info("check (tables, then libunwind): the kernel's signal frame and the handler's "
                "entry took %zu bytes, the sample %zu", entry, sample);
    check_fits(entry, sample);
    stack_t off = {.ss_flags = SS_DISABLE};
    sigaltstack(&off, NULL);
}
#endif

Test(sigstack, a_sample_on_a_stack_of_no_one_s_is_skipped_and_counted)
{
    setup(SMP_WALK_AUTO);
    smp_sigstack_self = (struct smp_sigstack){0, 0}; /* no stack of its own, and no spare */
    signal_self();
    cr_assert_eq(smp_ring_used(&ring), 0, "no sample without a stack to take it on");
    cr_assert_eq(atomic_load(&smp_sampler.counters[PROF_STAT_NO_SIGSTACK]), 1);
    cr_assert_eq(atomic_load(&smp_sampler.counters[PROF_STAT_SIGNALS]), 1);
    cr_assert_eq(used(alt, sizeof(alt)) < 8192, 1, "only the kernel's frame and the entry");
    stack_t off = {.ss_flags = SS_DISABLE};
    sigaltstack(&off, NULL);
}

Test(sigstack, a_thread_without_a_stack_of_its_own_takes_the_spare)
{
    static _Alignas(16) uint8_t spare[SMP_SIGSTACK_BYTES];
    setup(SMP_WALK_AUTO);
    smp_sigstack_self = (struct smp_sigstack){0, 0};
    memset(spare, PAINT, sizeof(spare));
    smp_sigstack_spare.stack = (struct smp_sigstack){(uintptr_t)spare,
                                                     (uintptr_t)spare + sizeof(spare)};
    signal_self();
    cr_assert_eq(smp_ring_used(&ring), 1);
    cr_assert_gt(used(spare, sizeof(spare)), 0, "the sample ran on the spare");
    cr_assert_eq(atomic_load(&smp_sigstack_spare.busy), 0, "and gave it back");
    smp_sigstack_spare.stack = (struct smp_sigstack){0, 0};
    stack_t off = {.ss_flags = SS_DISABLE};
    sigaltstack(&off, NULL);
}

Test(sigstack, in_place_on_libprof_s_own_alternate_stack_when_it_has_room)
{
    setup(SMP_WALK_AUTO);
    /* libprof's stack is the alternate stack: the kernel's frame and the sample both on it. */
    stack_t ss = {.ss_sp = own, .ss_size = sizeof(own), .ss_flags = 0};
    cr_assert_eq(sigaltstack(&ss, NULL), 0);
    signal_self();
    cr_assert_eq(smp_ring_used(&ring), 1);
    cr_assert_eq(used(alt, sizeof(alt)), 0, "nothing on the other stack");
    cr_assert_gt(used(own, sizeof(own)), getauxval(AT_MINSIGSTKSZ) / 2);
    stack_t off = {.ss_flags = SS_DISABLE};
    sigaltstack(&off, NULL);
}
