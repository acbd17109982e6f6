/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Walking a stopped thread of another process with libunwind's remote unwinder
 * (libunwind-ptrace), from the .eh_frame unwind tables of the code, for the ptrace snapshot
 * of `prof stacks` (attach/ptrace_snap.c) when the frame-pointer walk cannot follow code
 * built without frame pointers, as most distributions build their programs and libraries.
 * libunwind reads the thread's registers and memory itself with ptrace, memory one word per
 * PTRACE_PEEKDATA (the stack, and the unwind entries it decodes from the target's copy of
 * .eh_frame), and looks the entries up in the files the process maps, named by
 * /proc/TID/maps: so the thread must stay in a ptrace stop of the caller's for the whole
 * walk, the walk costs system calls in proportion to its frames (bounded by its depth
 * limit; about 2500 for a 20-frame python3 stack, fewer for threads whose code an earlier
 * walk decoded), and it cannot read a file that prof does not see under the same path
 * (another mount namespace). The frames follow the frame-pointer walk's convention: the
 * interrupted pc first, then one return address per caller, leaf first.
 *
 * One struct att_punw serves one snapshot: it holds libunwind's address space, whose cache
 * of unwind information (UNW_CACHE_GLOBAL) is shared by every thread of the process, valid
 * because none of them runs while it lives. Built with libunwind only when the Makefile's
 * UNWIND switch is 1 (it defines PROF_HAVE_LIBUNWIND and links -lunwind-ptrace
 * -lunwind-generic); otherwise every function here says that prof was built without it.
 * Reporter thread only.
 */
#ifndef PROF_ATTACH_PTRACE_UNWIND_H
#define PROF_ATTACH_PTRACE_UNWIND_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct cmn_err;
struct att_maps;

/* One snapshot's libunwind state. Zero-initialize; att_punw_init() fills it. */
struct att_punw {
    void *addr_space; /* libunwind's unw_addr_space_t; NULL until initialized (always NULL
                       * without libunwind); written by init and fini only */
};

/* Not async-signal-safe; reporter thread only. */
/* Whether prof was built with libunwind's remote unwinder. */
bool att_punw_is_built(void);
/* Prepares u for the walks of one snapshot. CMN_OK; CMN_E_INPUT with the message "prof was
 * built without libunwind" in a build without it; CMN_E_NOMEM. Release with
 * att_punw_fini(). */
int att_punw_init(struct att_punw *u, struct cmn_err *err);
/* Releases what att_punw_init() made and zeroes u; accepts a zeroed u. */
void att_punw_fini(struct att_punw *u);
/* Walks thread tid of the process whose mappings are maps; the thread must be in a ptrace
 * stop of this process's. Writes the interrupted pc, then one return address per frame,
 * into frames (at most max_frames >= 1), and sets *stop_reason: PROF_STOP_END when
 * libunwind reports the outermost frame (or a null pc), PROF_STOP_DEPTH at max_frames,
 * PROF_STOP_BOUNDS when libunwind cannot step or a frame's pc is in no executable mapping
 * or its stack pointer leaves [the leaf's stack pointer, the end of its mapping],
 * PROF_STOP_ORDER when the stack pointer does not strictly increase. Returns the number of
 * frames; 0 when the walk could not start (u not initialized, the registers unreadable),
 * *stop_reason then unset. */
unsigned att_punw_walk(struct att_punw *u, pid_t tid, const struct att_maps *maps,
                       uint64_t *frames, unsigned max_frames, uint8_t *stop_reason);

#endif
