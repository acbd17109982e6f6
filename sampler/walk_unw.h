/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The libunwind stepper (PROF_UNWIND=libunwind): walks the interrupted thread's stack with
 * libunwind's local unwinder and the .eh_frame unwind tables, so that code built without
 * frame pointers (-O2 on most distributions) still gives whole stacks. Built only when
 * libunwind is found (the Makefile's UNWIND switch defines PROF_HAVE_LIBUNWIND).
 *
 * On the signal handler's path. It is safe there only because libprof/unwind.c prepared
 * libunwind outside any handler: per-thread caches, a warm-up unwind that resolved
 * libunwind's own lazy bindings, and a dl_iterate_phdr() that, while smp_unw_busy is set
 * on the calling thread, serves a snapshot of the loaded objects instead of taking the
 * loader's lock. libunwind 1.6.2 validates each address it reads (a write(2) of the byte
 * to a pipe, answered EFAULT when unreadable) before loading from it.
 */
#ifndef PROF_SAMPLER_WALK_UNW_H
#define PROF_SAMPLER_WALK_UNW_H

#include <stdint.h>

#include "sampler/walk_fp.h"

/* 1 when the handler walks with libunwind: set by libprof/unwind.c before the handler is
 * installed, read by the handler. */
extern int smp_unw_enabled;

/* Not async-signal-safe. The libunwind functions the stepper calls (unw_init_local2,
 * unw_step, unw_get_reg), found by libprof/unwind.c with dlsym() after it loaded
 * libunwind with dlopen(): libunwind is loaded only when PROF_UNWIND=libunwind asks for it,
 * since loading it costs every process close to a millisecond. Set before
 * smp_unw_enabled. */
void smp_walk_unw_set_api(void *init_local2, void *step, void *get_reg);

/* 1 while this thread is inside smp_walk_unw(); libprof/unwind.c's dl_iterate_phdr reads
 * it. Initial-exec TLS, so the handler reaches it without a call. */
extern __thread int smp_unw_busy __attribute__((tls_model("initial-exec")));

/* Async-signal-safe once lp_unwind_init() has run; not re-entrant on one thread: a nested
 * call returns 0 and the caller walks with smp_walk_fp() instead. Walks from ucontext (the
 * handler's third argument), writing the leaf pc then one return address per frame into
 * frames (at most max_frames >= 1), and stops with a PROF_STOP_* reason in *stop_reason:
 * END when libunwind reaches the outermost frame or the frame of libprof's entry
 * trampoline (stack->root_fp, which is not included), DEPTH at max_frames, BOUNDS when a
 * frame's stack pointer leaves the thread's stack or libunwind cannot step, ORDER when it
 * does not increase. Returns the number of frames, 0 when it could not start. */
unsigned smp_walk_unw(void *ucontext, const struct fpstep_regs *regs,
                      const struct smp_stack *stack, uint64_t *frames, unsigned max_frames,
                      uint8_t *stop_reason);

/* Not async-signal-safe; never from a handler. Pause makes every later smp_walk_unw()
 * return 0 (the handler then walks with frame pointers) and waits until no walk started
 * before it is still running; resume undoes one pause. libprof/ brackets dlclose() with
 * them, so that no handler follows a snapshot into an object being unmapped. */
void smp_walk_unw_pause(void);
void smp_walk_unw_resume(void);

#endif
