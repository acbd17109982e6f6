/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * String interning for function names: an open-addressing hash table of ids over three
 * parallel arrays (string, length, hash), with the characters in a bump arena of blocks
 * that never move, so a pointer handed out stays valid while the table grows. Used by the
 * symbolizer (writes) and by the aggregate and outputs (reads), in the reporter's thread.
 */
#include "reporter/symbols/names.h"

#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/hash.h"

#define NAMES_CHUNK_BYTES (64u * 1024u)

struct rep_names_chunk {
    struct rep_names_chunk *next; /* the previous (older) block */
    size_t size_bytes;            /* bytes in data */
    char data[];
};

int rep_names_init(struct rep_names *t)
{
    memset(t, 0, sizeof(*t));
    return CMN_OK;
}

void rep_names_fini(struct rep_names *t)
{
    if (t == NULL)
        return;
    struct rep_names_chunk *c = t->chunks;
    while (c != NULL) {
        struct rep_names_chunk *next = c->next;
        free(c);
        c = next;
    }
    free(t->strs);
    free(t->lens);
    free(t->hashes);
    free(t->table);
    memset(t, 0, sizeof(*t));
}

/* Copies len bytes and a NUL into the arena; NULL when out of memory. */
static char *arena_copy(struct rep_names *t, const char *s, size_t len)
{
    if (t->chunks == NULL || t->chunk_left < len + 1) {
        size_t size = len + 1 > NAMES_CHUNK_BYTES ? len + 1 : NAMES_CHUNK_BYTES;
        struct rep_names_chunk *c = malloc(sizeof(*c) + size);
        if (c == NULL)
            return NULL;
        c->next = t->chunks;
        c->size_bytes = size;
        t->chunks = c;
        t->chunk_left = size;
    }
    char *dst = t->chunks->data + (t->chunks->size_bytes - t->chunk_left);
    memcpy(dst, s, len);
    dst[len] = '\0';
    t->chunk_left -= len + 1;
    return dst;
}

static void table_insert(uint32_t *table, size_t cap, uint64_t hash, uint32_t id)
{
    size_t i = hash & (cap - 1);
    while (table[i] != 0)
        i = (i + 1) & (cap - 1);
    table[i] = id + 1;
}

/* Makes room for one more id: grows the parallel arrays and keeps the table at most half
 * full. */
static int reserve_one(struct rep_names *t)
{
    if (t->n_names == t->cap_names) {
        if (t->cap_names >= UINT32_MAX / 2)
            return CMN_E_NOMEM;
        uint32_t cap = t->cap_names ? t->cap_names * 2 : 256;
        char **strs = realloc(t->strs, cap * sizeof(*strs));
        if (strs == NULL)
            return CMN_E_NOMEM;
        t->strs = strs;
        uint32_t *lens = realloc(t->lens, cap * sizeof(*lens));
        if (lens == NULL)
            return CMN_E_NOMEM;
        t->lens = lens;
        uint64_t *hashes = realloc(t->hashes, cap * sizeof(*hashes));
        if (hashes == NULL)
            return CMN_E_NOMEM;
        t->hashes = hashes;
        t->cap_names = cap;
    }
    if ((size_t)(t->n_names + 1) * 2 > t->table_cap) {
        size_t cap = t->table_cap ? t->table_cap * 2 : 512;
        uint32_t *table = calloc(cap, sizeof(*table));
        if (table == NULL)
            return CMN_E_NOMEM;
        for (uint32_t id = 0; id < t->n_names; id++)
            table_insert(table, cap, t->hashes[id], id);
        free(t->table);
        t->table = table;
        t->table_cap = cap;
    }
    return CMN_OK;
}

int rep_names_intern(struct rep_names *t, const char *s, size_t len, uint32_t *id /* out */)
{
    const char *nul = memchr(s, '\0', len);
    if (nul != NULL)
        len = (size_t)(nul - s);
    if (len > UINT32_MAX - 1)
        len = UINT32_MAX - 1;
    uint64_t hash = cmn_hash_bytes(s, len);
    if (t->table_cap != 0) {
        for (size_t i = hash & (t->table_cap - 1); t->table[i] != 0;
             i = (i + 1) & (t->table_cap - 1)) {
            uint32_t cand = t->table[i] - 1;
            if (t->hashes[cand] == hash && t->lens[cand] == len &&
                memcmp(t->strs[cand], s, len) == 0) {
                *id = cand;
                return CMN_OK;
            }
        }
    }
    if (reserve_one(t) != CMN_OK)
        return CMN_E_NOMEM;
    char *copy = arena_copy(t, s, len);
    if (copy == NULL)
        return CMN_E_NOMEM;
    uint32_t new_id = t->n_names++;
    t->strs[new_id] = copy;
    t->lens[new_id] = (uint32_t)len;
    t->hashes[new_id] = hash;
    table_insert(t->table, t->table_cap, hash, new_id);
    *id = new_id;
    return CMN_OK;
}
