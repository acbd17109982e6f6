/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The libunwind stepper (PROF_UNWIND=libunwind): walks the interrupted thread's stack with
 * libunwind's local unwinder and the .eh_frame unwind tables, so that code built without
 * frame pointers (-O2 on most distributions) still gives whole stacks. Built only when
 * libunwind is found (the Makefile's UNWIND switch defines PROF_HAVE_LIBUNWIND).
 *
 * On the signal handler's path. It is safe there only because libprof/unwind.c prepared
 * libunwind outside any handler: no register-state cache (Debian's libunwind 1.6.2 turns a
 * per-thread cache into one global cache behind a mutex, which a handler would take, and
 * which a fork child would inherit held), a warm-up unwind that resolved libunwind's own
 * lazy bindings, and a dl_iterate_phdr() that, while smp_unw_busy is set on the calling
 * thread, serves a snapshot of the loaded objects instead of taking the loader's lock.
 *
 * libunwind validates addresses it is unsure of (where it falls back from unwind tables to
 * the frame chain) by writing the byte to a pipe it opens on low descriptor numbers, and
 * reading the pipe empty: descriptors a program that closes every descriptor and opens its
 * own would find to be its files, read from and written to by our handler. libprof/unwind.c
 * points libunwind's imports of pipe2, read, write, close and syscall at the stand-ins
 * below: the pipe is a pair of numbers no descriptor can have, and "writing" a byte to it
 * is a fault-proof probe of that byte (sampler/probe.h). Its sigprocmask, around its locks,
 * goes to the kernel's mask, not through libprof's view of it (libprof/interpose.c), and
 * inside a walk, where the handler's mask blocks every asynchronous signal already, nowhere.
 * Every other call goes to libc.
 */
#ifndef PROF_SAMPLER_WALK_UNW_H
#define PROF_SAMPLER_WALK_UNW_H

#include <stdint.h>

#include "sampler/walk.h"

/* 1 when the handler walks with libunwind: set by libprof/unwind.c before the handler is
 * installed, read by the handler. */
extern int smp_unw_enabled;

/* Not async-signal-safe. The libunwind functions the stepper calls (unw_init_local2,
 * unw_step, unw_get_reg, unw_get_proc_info), found by libprof/unwind.c with dlsym() after
 * it loaded libunwind with dlopen(): libunwind is loaded only when PROF_UNWIND=libunwind
 * asks for it, since loading it costs every process close to a millisecond. Set before
 * smp_unw_enabled. */
void smp_walk_unw_set_api(void *init_local2, void *step, void *get_reg, void *get_proc_info);

/* 1 while this thread is inside smp_walk_unw(); libprof/unwind.c's dl_iterate_phdr reads
 * it. Initial-exec TLS, so the handler reaches it without a call. */
extern __thread int smp_unw_busy __attribute__((tls_model("initial-exec")));

/* Async-signal-safe once lp_unwind_init() has run; not re-entrant on one thread: a nested
 * call returns 0 and the caller walks with smp_walk() instead. Walks from ucontext (the
 * handler's third argument), writing the leaf pc then one return address per frame into
 * frames (at most max_frames >= 1), and stops with a PROF_STOP_* reason in *stop_reason:
 * END when libunwind reaches the outermost frame or the frame of libprof's entry
 * trampoline (stack->root_fp, which is not included), DEPTH at max_frames, BOUNDS when a
 * frame's stack pointer leaves the thread's stack, libunwind cannot step, or a frame has no
 * unwind information (libunwind would guess its caller from the frame pointer), ORDER
 * when it does not increase. Returns the number of frames, 0 when it could not start. */
unsigned smp_walk_unw(void *ucontext, const struct cmn_fp_regs *regs,
                      const struct smp_stack *stack, uint64_t *frames, unsigned max_frames,
                      uint8_t *stop_reason);

/* Not async-signal-safe; never from a handler. Pause makes every later smp_walk_unw()
 * return 0 (the handler then walks with frame pointers) and waits until no walk started
 * before it is still running; resume undoes one pause. libprof/ brackets dlclose() with
 * them, so that no handler follows a snapshot into an object being unmapped. */
void smp_walk_unw_pause(void);
void smp_walk_unw_resume(void);
/* Not async-signal-safe. In a fork child (one thread, in no handler): no walk is running
 * and none is paused. */
void smp_walk_unw_after_fork(void);

/* Async-signal-safe: libunwind's imports, redirected by libprof/unwind.c (see above). The
 * signatures are libc's. */
int smp_unw_pipe2(int fds[2], int flags);
long smp_unw_read(int fd, void *buf, unsigned long n);
long smp_unw_write(int fd, const void *buf, unsigned long n);
int smp_unw_close(int fd);
long smp_unw_syscall(long nr, ...);
int smp_unw_sigprocmask(int how, const void *set, void *old);

#endif
