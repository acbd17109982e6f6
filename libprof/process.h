/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Who this process is, for the PROCESS record that opens every file the library writes
 * (the profile, libprof/session.c; snapshots, libprof/snapshot.c). Application or writer
 * thread; not async-signal-safe.
 */
#ifndef PROF_LIBPROF_PROCESS_H
#define PROF_LIBPROF_PROCESS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "include/libprof/prof_format.h"

/* Not async-signal-safe. */
/* Fills p's pid, ppid and start_real_ns (CLOCK_REALTIME now) and exe (PATH_MAX bytes) with
 * this process's executable ("" when unknown); the caller sets the other fields. Returns
 * the bytes of the record (cmn_record_process() of p and exe). */
size_t lp_process_describe(struct prof_rec_process *p, char exe[PATH_MAX]);

/* Not async-signal-safe. 1 when the program is Go's (its executable's notes, in memory,
 * hold Go's build id: a note named "Go" of type 4), else 0. Such a program calls C through
 * cgo on another stack than its goroutines' (see common/uw_step.h, cmn_uw_go_cgo()). With
 * code not NULL, an address of the executable's code into *code (0 none). */
int lp_process_is_go(uintptr_t *code);

#endif
