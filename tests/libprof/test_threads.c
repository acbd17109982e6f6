/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * lp_thread_enter(): the stack bounds it captures for the handler's walks. The thread the
 * process started with gets them without /proc/self/maps (libprof/threads.c): they must
 * end where glibc's pthread_getattr_np() says, and hold the thread's frames.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdint.h>

#include "libprof/threads.h"
#include "sampler/handler.h"

/* pthread_getattr_np()'s bounds of the calling thread's stack. */
static void glibc_bounds(uintptr_t *lo, uintptr_t *hi)
{
    pthread_attr_t a;
    void *addr;
    size_t size;
    cr_assert_eq(pthread_getattr_np(pthread_self(), &a), 0);
    cr_assert_eq(pthread_attr_getstack(&a, &addr, &size), 0);
    pthread_attr_destroy(&a);
    *lo = (uintptr_t)addr;
    *hi = (uintptr_t)addr + size;
}

static void expect_bounds_hold_this_frame(void)
{
    uintptr_t lo, hi;
    volatile int here = 0;
    cr_assert_eq(lp_thread_enter(), 0);
    glibc_bounds(&lo, &hi);
    cr_expect_eq(smp_self.stack_hi, hi, "stack end %#lx, glibc's %#lx",
                 (unsigned long)smp_self.stack_hi, (unsigned long)hi);
    cr_expect(smp_self.stack_lo < (uintptr_t)&here && (uintptr_t)&here < smp_self.stack_hi,
              "a frame of this thread at %p is outside [%#lx, %#lx)", (void *)&here,
              (unsigned long)smp_self.stack_lo, (unsigned long)smp_self.stack_hi);
    cr_expect(smp_self.stack_lo >= lo, "stack bottom %#lx below glibc's %#lx",
              (unsigned long)smp_self.stack_lo, (unsigned long)lo);
    lp_thread_leave();
}

extern void *__libc_stack_end;

Test(threads, the_first_thread_s_stack_ends_as_glibc_s)
{
    uintptr_t lo, hi;
    glibc_bounds(&lo, &hi);
    cr_assert((uintptr_t)__libc_stack_end >= lo && (uintptr_t)__libc_stack_end < hi,
              "the test does not run on the thread the process started with");
    expect_bounds_hold_this_frame();
}

static void *in_thread(void *arg)
{
    (void)arg;
    expect_bounds_hold_this_frame();
    return NULL;
}

Test(threads, another_thread_s_stack_is_glibc_s)
{
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, in_thread, NULL), 0);
    pthread_join(t, NULL);
}
