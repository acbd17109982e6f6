/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Picks the architecture header by the compiler's own macros, so that a cross build only
 * changes CC. Every arch header defines the same names: arch_pc(), arch_sp(), arch_fp(),
 * arch_lr(), arch_strip_pac(), ARCH_FP_ALIGN, ARCH_FRAME_FP_OFF, ARCH_FRAME_RET_OFF.
 * Header-only; uses libc and kernel headers only.
 */
#ifndef PROF_ARCH_ARCH_H
#define PROF_ARCH_ARCH_H

#if defined(__x86_64__)
#include "arch/x86_64.h"
#elif defined(__aarch64__)
#include "arch/aarch64.h"
#else
#error "libprof supports x86_64 and aarch64"
#endif

/* The kernel's sigset_t for rt_sigprocmask(2) and rt_sigaction(2): 8 bytes on x86_64 and
 * aarch64, whatever glibc's is. */
#define ARCH_KERNEL_SIGSET_BYTES 8u

#endif
