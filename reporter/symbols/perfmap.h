/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Perf maps: the names a JIT compiler gives the code it writes into anonymous memory,
 * in the file /tmp/perf-PID.map that perf reads (V8 with --perf-basic-prof, the JVM through
 * an agent, LuaJIT, .NET, CPython 3.12 with -X perf, ...). Each line is
 * "START SIZE NAME": the code's first address and its size in hex (a "0x" is accepted),
 * then the name to the end of the line. A runtime that reuses memory writes the new
 * function further down: where entries overlap, the later line wins.
 *
 * The symbolizer (reporter/symbols/symbols.c) loads the map of a profile's process, from
 * /tmp or the directory the caller names (a profile read on another machine, next to its
 * map), when it first meets a frame in anonymous memory or outside every recorded mapping,
 * and names such frames from it. A map owns its entries and names, which live until
 * rep_sym_perfmap_free(). Reporter thread only.
 */
#ifndef PROF_REPORTER_SYMBOLS_PERFMAP_H
#define PROF_REPORTER_SYMBOLS_PERFMAP_H

#include <stddef.h>
#include <stdint.h>

/* The directory perf maps are written to. */
#define REP_SYM_PERFMAP_DIR "/tmp"

struct rep_sym_perfmap_entry {
    uint64_t start;   /* first address of the code */
    uint64_t end;     /* one past its last byte */
    uint32_t line;    /* its line in the file, 0-based: the later one wins */
    const char *name; /* NUL-terminated, in the map's text */
};

struct rep_sym_perfmap {
    uint32_t pid;                          /* whose map it is */
    char *text;                            /* the file, cut into names; owned */
    struct rep_sym_perfmap_entry *entries; /* by start, then line; owned */
    size_t n_entries;
    uint64_t *max_end; /* per entry i: the greatest end among entries 0..i; owned */
};

/* Not async-signal-safe. */
/* Loads dir/perf-PID.map (dir NULL: REP_SYM_PERFMAP_DIR) into m, when it is a regular file
 * of owner_uid's (the profiled process's user) or root's: in a shared directory such as
 * /tmp anyone can write a map for any pid. CMN_OK (a missing, unreadable or refused file
 * gives an empty map; malformed lines are skipped), or CMN_E_NOMEM. */
int rep_sym_perfmap_load(struct rep_sym_perfmap *m, const char *dir, uint32_t pid,
                         uint32_t owner_uid);
/* Frees what m owns. Accepts NULL. */
void rep_sym_perfmap_fini(struct rep_sym_perfmap *m);
/* The name of the code holding addr, or NULL. */
const char *rep_sym_perfmap_lookup(const struct rep_sym_perfmap *m, uint64_t addr);

#endif
