/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Unwind tables kept across processes, by build-id: a program that starts thousands of
 * short processes (make, shell scripts) builds libc's table once, not once per process
 * that is sampled. A table (common/uw_table.h) is position-independent; the cache file is
 * a header naming the build-id, a fingerprint of what the table was compiled from (the
 * module's load segments and its .eh_frame bytes as mapped: a library that carries
 * another's build-id, or one rebuilt with the same id, never gets the other's table), the
 * architecture and the table format, then the table. Files live under
 * $LIBPROF_CACHE_DIR/unwind (default $XDG_CACHE_HOME/prof/unwind, or
 * ~/.cache/prof/unwind; LIBPROF_CACHE_DIR set but empty turns the cache off), are written
 * to a temporary name and renamed (two processes writing one build-id leave one whole
 * file), and are checked when read: a table whose offsets and page index do not hold
 * together is not used, so a damaged file costs a rebuild, never a fault in a handler.
 *
 * Assume a hostile neighbour: the directory must be a directory (not a link) of the
 * effective user's that nobody else may enter (mode 0700; another is refused, with a
 * note, and the cache is not used); its files are opened without following links and
 * must be that user's regular files; a table is read into private anonymous memory, so
 * the handlers never read a file mapping that its owner could cut short (SIGBUS) or change
 * after the check. A set-user-ID or set-capabilities program (AT_SECURE), or a process
 * whose effective and real users or groups differ at the time (sudo -E, seteuid), uses no
 * cache.
 *
 * Not async-signal-safe: libprof/uwtables.c calls it in the writer thread, with the map
 * lock held; lp_uwcache_init() on the thread that starts the session.
 */
#ifndef PROF_LIBPROF_UWCACHE_H
#define PROF_LIBPROF_UWCACHE_H

#include <stddef.h>
#include <stdint.h>

struct cmn_uw_table;

/* What a cached table is found by. */
struct lp_uwcache_key {
    const uint8_t *build_id; /* the module's GNU build-id */
    size_t build_id_len;     /* 1 .. 40 bytes */
    uint64_t fingerprint;    /* of what the table is compiled from (libprof/uwtables.c) */
};

/* Reads where the cache is from the environment (once, before any thread of ours runs:
 * the program may change its environment later). */
void lp_uwcache_init(void);
/* 1 when tables may be read from and kept in the cache: a directory is named, and the
 * process's users are its real ones (a privileged process reads no other user's tables). */
int lp_uwcache_is_on(void);
/* The cached table of the key, read into private memory (read-only; the region starts
 * *bytes - t->total_bytes before the table): its bytes in *bytes; NULL when there is none,
 * or it does not check out. */
const struct cmn_uw_table *lp_uwcache_load(const struct lp_uwcache_key *k, uint64_t *bytes);
/* Keeps table t for the key, for the processes to come (errors are ignored). */
void lp_uwcache_store(const struct lp_uwcache_key *k, const struct cmn_uw_table *t);

#endif
