/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Where the entry trampolines' code is. The trampolines (libprof/interpose.c) run below
 * main() and below every thread's start routine; a stack walk ends at their frame. They
 * live in a linker section of their own, so that a call chain the kernel recorded
 * (libprof/ksamples.c) can be cut where the handler's walk would end. Header-only, the
 * bottom of libprof/: it names a section, nothing else.
 */
#ifndef PROF_LIBPROF_TRAMPOLINES_H
#define PROF_LIBPROF_TRAMPOLINES_H

#include <stdint.h>

/* Puts a function among the trampolines. */
#define LP_TRAMPOLINE __attribute__((section("lp_trampolines"), noinline))

/* The section's bounds, from the linker (hidden: -z start-stop-visibility=hidden). */
extern const char __start_lp_trampolines[] __attribute__((visibility("hidden")));
extern const char __stop_lp_trampolines[] __attribute__((visibility("hidden")));

/* Async-signal-safe. The address range of the trampolines' code: a return address in it
 * ends a stack. */
static inline void lp_trampolines_range(uintptr_t *lo, uintptr_t *hi)
{
    *lo = (uintptr_t)__start_lp_trampolines;
    *hi = (uintptr_t)__stop_lp_trampolines;
}

#endif
