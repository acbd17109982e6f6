/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Unwind tables kept across processes, by build-id: a program that starts thousands of
 * short processes (make, shell scripts) builds libc's table once, not once per process
 * that is sampled. A table (common/uw_table.h) is position-independent; the cache file is
 * a header naming the build-id, the architecture and the table format, then the table,
 * which a process maps read-only and its handlers read in place. Files live under
 * $LIBPROF_CACHE_DIR/unwind (default $XDG_CACHE_HOME/prof/unwind, or
 * ~/.cache/prof/unwind; LIBPROF_CACHE_DIR set but empty turns the cache off), are written
 * to a temporary name and renamed (two processes writing one build-id leave one whole
 * file), and are checked when mapped: a table whose offsets and page index do not hold
 * together is not used, so a damaged file costs a rebuild, never a fault in a handler.
 * A set-user-ID or set-capabilities program (AT_SECURE) uses no cache.
 *
 * Not async-signal-safe: libprof/uwtables.c calls it in the writer thread, with the map
 * lock held; lp_uwcache_init() on the thread that starts the session.
 */
#ifndef PROF_LIBPROF_UWCACHE_H
#define PROF_LIBPROF_UWCACHE_H

#include <stddef.h>
#include <stdint.h>

struct cmn_uw_table;

/* Reads where the cache is from the environment (once, before any thread of ours runs:
 * the program may change its environment later). */
void lp_uwcache_init(void);
/* The cached table of the build-id, mapped read-only: its bytes in *bytes; NULL when
 * there is none, or it does not check out. */
const struct cmn_uw_table *lp_uwcache_load(const uint8_t *build_id, size_t len, uint64_t *bytes);
/* Keeps table t for the build-id, for the processes to come (errors are ignored). */
void lp_uwcache_store(const uint8_t *build_id, size_t len, const struct cmn_uw_table *t);

#endif
