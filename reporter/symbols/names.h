/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Interned function names. Each distinct string gets a small id (0, 1, 2, ...), so that
 * stacks are arrays of ids and compare as integers. The symbolizer interns a name once per
 * distinct address; the aggregate and the outputs read names back by id. The strings live
 * in an arena owned by the table and stay valid, at the same address, until
 * rep_names_fini(). Reporter thread only.
 */
#ifndef PROF_REPORTER_SYMBOLS_NAMES_H
#define PROF_REPORTER_SYMBOLS_NAMES_H

#include "common/check.h"
#include "common/hashtab.h"

#include <stddef.h>
#include <stdint.h>

struct rep_names_chunk;

/* One interned string, by its id. */
struct rep_names_entry {
    const char *str; /* NUL-terminated, in the arena */
    uint64_t hash;   /* of its bytes */
    uint32_t len;    /* strlen(str), for comparing */
};

struct rep_names {
    struct rep_names_entry *entries; /* id -> its string; n_names of them */
    uint32_t n_names;                /* ids in use */
    size_t cap_entries;              /* entries allocated */
    struct cmn_hashtab table;        /* the ids by their strings (common/hashtab.h) */
    struct rep_names_chunk *chunks;  /* the arena: a list of blocks, newest first */
    size_t chunk_left;               /* free bytes at the end of the newest block */
};

/* Not async-signal-safe. */
/* Makes t an empty table. Returns CMN_OK; allocates nothing yet. */
int rep_names_init(struct rep_names *t);
/* Frees everything t owns; every string it handed out dies. Accepts NULL. */
void rep_names_fini(struct rep_names *t);
/* The id of the len bytes at s (which need no NUL), adding them if new. Returns CMN_OK or
 * CMN_E_NOMEM (t unchanged then). A string holding a NUL is cut there. */
int rep_names_intern(struct rep_names *t, const char *s, size_t len, uint32_t *id /* out */);

/* The string of an id that rep_names_intern() returned. */
static inline const char *rep_names_get(const struct rep_names *t, uint32_t id)
{
    assert(id < t->n_names);
    return t->entries[id].str;
}

/* The length of the string of an id that rep_names_intern() returned. */
static inline uint32_t rep_names_len(const struct rep_names *t, uint32_t id)
{
    assert(id < t->n_names);
    return t->entries[id].len;
}

#endif
