/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * RAW_SYSCALL4 for the parked workloads (tests/workloads/parked.c, nofp_parked.c): a system
 * call issued right where the macro is used, so that a thread blocked in it is caught in
 * the named function itself and not in a C library wrapper (which keeps no frame pointer).
 * Returns the kernel's result, -errno on failure.
 */
#ifndef PROF_TESTS_WORKLOADS_RAW_SYSCALL_H
#define PROF_TESTS_WORKLOADS_RAW_SYSCALL_H

/* A system call with up to four arguments, issued right where the macro is used. */
#if defined(__x86_64__)
#define RAW_SYSCALL4(nr, a, b, c, d)                                                               \
    ({                                                                                             \
        long ret_;                                                                                 \
        register long r10_ __asm__("r10") = (long)(d);                                             \
        __asm__ volatile("syscall"                                                                 \
                         : "=a"(ret_)                                                              \
                         : "a"((long)(nr)), "D"((long)(a)), "S"((long)(b)), "d"((long)(c)),        \
                           "r"(r10_)                                                               \
                         : "rcx", "r11", "memory");                                                \
        ret_;                                                                                      \
    })
#elif defined(__aarch64__)
#define RAW_SYSCALL4(nr, a, b, c, d)                                                               \
    ({                                                                                             \
        register long x8_ __asm__("x8") = (long)(nr);                                              \
        register long x0_ __asm__("x0") = (long)(a);                                               \
        register long x1_ __asm__("x1") = (long)(b);                                               \
        register long x2_ __asm__("x2") = (long)(c);                                               \
        register long x3_ __asm__("x3") = (long)(d);                                               \
        __asm__ volatile("svc #0"                                                                  \
                         : "+r"(x0_)                                                               \
                         : "r"(x8_), "r"(x1_), "r"(x2_), "r"(x3_)                                  \
                         : "memory");                                                              \
        x0_;                                                                                       \
    })
#else
#error "raw_syscall.h: no inline system call for this architecture"
#endif

#endif
