/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The line cache: what the DWARF of one module said about its addresses (the chain of
 * functions inlined at a file offset, each with its file and line), kept across runs of
 * prof in a file named by the module's build-id, so that a later report of the same
 * program never reads that DWARF again. Reading a large module's DWARF (the C library's
 * debug file: 10 MB of compressed sections to inflate) costs more than naming a million
 * samples; an answer from the cache costs a hash lookup.
 *
 * The symbolizer (reporter/symbols/symbols.c) opens one cache per module whose DWARF it
 * would read, asks it before the module, adds what the module answered, and closes it when
 * it is done, which writes the file back when something was added. A build-id names one
 * build of one file, and its separate debug file has the same one, so an entry never goes
 * stale; a module without DWARF is not cached (its answers would change once a debug file
 * appears). The file is text (docs/OUTPUTS.md): a first line "prof-lines 1", then one line
 * per address, "OFFSET\tN" and N times "\tFUNC\tFILE\tLINE" (offset in hex; an empty
 * FUNC or FILE stands for none). It is replaced whole (a temporary file, then rename), so
 * that two reports at once lose at most each other's additions. A file that cannot be read
 * or written is no error: the cache just does not help. Reporter thread only; a cache owns
 * its memory and the strings it returns, which live until rep_sym_lcache_close().
 */
#ifndef PROF_REPORTER_SYMBOLS_LINECACHE_H
#define PROF_REPORTER_SYMBOLS_LINECACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rep_module_frame;
struct rep_sym_lcache;

/* Entries one cache file holds at most; more are not added. */
#define REP_SYM_LCACHE_MAX_ENTRIES 1000000u

/* Not async-signal-safe. */
/* The cache directory from the environment: $LIBPROF_CACHE_DIR (empty: no cache), else
 * $XDG_CACHE_HOME/prof, else $HOME/.cache/prof. CMN_OK with *dir (malloc'd, free it) or
 * NULL when there is none; CMN_E_NOMEM. */
int rep_sym_lcache_dir(char **dir /* out */);
/* Opens the cache of the module with build-id id (n bytes, n > 0) under dir, reading what
 * an earlier run left there. CMN_OK with *c (close it with rep_sym_lcache_close), or
 * CMN_E_NOMEM. */
int rep_sym_lcache_open(const char *dir, const uint8_t *id, size_t n,
                        struct rep_sym_lcache **c /* out */);
/* The frames cached for file offset off, innermost first, at most cap into out; *n may be
 * 0 (the DWARF has nothing there). CMN_OK, or CMN_E_NOTFOUND when off is not cached. */
int rep_sym_lcache_get(const struct rep_sym_lcache *c, uint64_t off, struct rep_module_frame *out,
                       size_t cap, size_t *n /* out */);
/* Adds the n frames fr (copied) as the answer for off. CMN_OK (also when the entry cannot
 * be stored in the file's format and is left out) or CMN_E_NOMEM. */
int rep_sym_lcache_put(struct rep_sym_lcache *c, uint64_t off, const struct rep_module_frame *fr,
                       size_t n);
/* Writes the file back when entries were added (best effort), then frees c. Accepts NULL. */
void rep_sym_lcache_close(struct rep_sym_lcache *c);

#endif
