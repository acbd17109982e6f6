/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Setting up the steppers outside any signal handler: the fault-proof probe's method, the
 * code map and module table (executable ranges and their files, from /proc/self/maps) for
 * both steppers and for the backtrace API, and for PROF_UNWIND=libunwind everything
 * libunwind must have before it may run in the handler (no register-state cache, its
 * descriptor calls redirected, one warm-up unwind that binds its lazy calls, a snapshot of
 * the loaded objects). Called by
 * libprof/session.c on an application thread before the handler is installed, and by
 * libprof/interpose.c around dlopen()/dlclose() to refresh the maps and the snapshot.
 *
 * The snapshot serves libunwind's dl_iterate_phdr() calls made from our handler: glibc's
 * dl_iterate_phdr() takes the loader's lock, which the interrupted thread may hold (inside
 * dlopen, or in a C++ exception's unwind), so calling it from the handler could deadlock.
 * The snapshot itself is built without the loader (libprof/objects.h).
 * libunwind 1.6.2 has no hook to replace it, so libprof.so exports dl_iterate_phdr()
 * itself (libprof/interpose.c): on a thread inside smp_walk_unw() it iterates the snapshot
 * without a lock (lp_unwind_iterate_phdr()); anywhere else it forwards to glibc's.
 */
#ifndef PROF_LIBPROF_UNWIND_H
#define PROF_LIBPROF_UNWIND_H

#include <link.h>
#include <stddef.h>
#include <stdint.h>


#define LP_UNWIND_MAX_OBJECTS 1024u      /* loaded objects the snapshot can hold */
#define LP_UNWIND_PATH_BYTES (256u << 10) /* file paths the module table can hold */

/* Not async-signal-safe. Prepares the stepper `unwinder` (PROF_UNWIND_*). Returns 0, or
 * -ENOTSUP when it is PROF_UNWIND_LIBUNWIND and libprof was built without libunwind (the
 * caller then falls back to PROF_UNWIND_FP). Application thread, before the handler is
 * installed; idempotent. With maps_text, *maps_text gets a malloc'd copy of the
 * /proc/self/maps text the code map was read from (for the profile's first mapping
 * records: one read at start), or NULL when none was read (a fork child keeps its
 * parent's map). */
int lp_unwind_init(unsigned unwinder, char **maps_text);

/* Not async-signal-safe; after lp_unwind_init(PROF_UNWIND_LIBUNWIND) succeeded: libunwind
 * walks only as the oracle of PROF_UNWIND=check (sampler/handler.c), not as the stepper. */
void lp_unwind_use_as_oracle(void);

/* Not async-signal-safe. Rereads the code map (sampler/codemap.h) and, when libunwind was
 * prepared, retakes the snapshot of loaded objects: after dlopen(). Any thread but a
 * handler. */
void lp_unwind_refresh(void);

#define LP_UNWIND_RESCAN_NS 20000000ull /* the maps are reread on request at most this often */
#define LP_UNWIND_RESCAN_MIN_NS 1000000ull /* and for a walk of a sample (rescan_since) */

/* Not async-signal-safe; the writer thread, every period and when a handler wakes it.
 * Serves what walks asked for (sampler/codemap.h): builds the unwind tables of the modules
 * they met without one (libprof/uwtables.h), and rereads the maps after a pc outside
 * them; publishes the code map again when anything changed. */
void lp_unwind_serve(void);
/* Not async-signal-safe; the writer thread. Reads the maps again when they were last read
 * before time_ns (CLOCK_MONOTONIC): for a walk of a sample taken then that met code in no
 * range of the code map. 1 when it read them. */
int lp_unwind_rescan_since(uint64_t time_ns);
/* Not async-signal-safe; any thread but a handler. Builds the unwind table of every
 * module that has none yet, and publishes them: before a snapshot, whose walks must not
 * stop at a table that is still to come. */
void lp_unwind_build_all(void);
/* Not async-signal-safe; any thread but a handler. Asks for the unwind table of the module
 * that holds code address pc, as a walk that met it would (the writer thread builds it at
 * once): for a module whose samples cannot wait for it (a Go program's: a walk stopped at
 * a table still to come is walked again over a copy of its stack, which cannot follow a
 * cgo call onto a goroutine's stack). */
void lp_unwind_want_at(uintptr_t pc);
/* Not async-signal-safe. The memory of the unwind tables built so far; their number into
 * *n_tables. */
uint64_t lp_unwind_table_bytes(uint64_t *n_tables);

/* Async-signal-safe, re-entrant. The file holding code address pc and pc's offset in it,
 * from the executable mappings read at the last lp_unwind_init()/refresh: 0 with the path
 * copied into path (cap bytes at most, NUL-terminated; "" for anonymous code) and
 * *file_offset, or -ENOENT when pc is in no known mapping. */
int lp_unwind_module_at(uintptr_t pc, char *path, size_t cap, uint64_t *file_offset);

/* Not async-signal-safe. The executable range of the last maps read that holds pc into
 * [*lo, *hi); both 0 when none does. */
void lp_unwind_code_range(uintptr_t pc, uintptr_t *lo, uintptr_t *hi);


/* Not async-signal-safe. pthread_atfork() handlers (libprof/session.c calls them from
 * its own): prepare holds the refresh lock and keeps handlers out of libunwind across the
 * fork; parent undoes that; child also clears the reader counts of threads that are not in
 * the child. */
void lp_unwind_fork_prepare(void);
void lp_unwind_fork_parent(void);
void lp_unwind_fork_child(void);

/* Async-signal-safe. 1 when the calling thread is inside smp_walk_unw() and a snapshot
 * exists: its dl_iterate_phdr() calls go to lp_unwind_iterate_phdr(), else to glibc's. */
int lp_unwind_serving_phdr(void);
/* Async-signal-safe, lock-free. dl_iterate_phdr() over the snapshot. */
int lp_unwind_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data);

/* Not async-signal-safe. Bracket the real dlclose(): begin makes handlers walk with frame
 * pointers and waits until no handler is inside libunwind (whose snapshot may point into
 * the object about to be unmapped); end refreshes as lp_unwind_refresh() and lets
 * handlers use libunwind again. Any thread but a handler. */
void lp_unwind_unload_begin(void);
void lp_unwind_unload_end(void);

#endif
