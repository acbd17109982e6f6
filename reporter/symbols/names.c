/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * String interning for function names: a hash table (common/hashtab.h) of ids over an
 * array of entries (string, length, hash), with the characters in a bump arena of blocks
 * that never move, so a pointer handed out stays valid while the table grows. Used by the
 * symbolizer (writes) and by the aggregate and outputs (reads), in the reporter's thread.
 */
#include "reporter/symbols/names.h"

#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/grow.h"
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
    cmn_hashtab_init(&t->table, 512);
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
    free(t->entries);
    cmn_hashtab_fini(&t->table);
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

static uint64_t entry_hash(const void *ctx, uint32_t id)
{
    return ((const struct rep_names *)ctx)->entries[id].hash;
}

/* A string as looked up: its bytes and their hash. */
struct name_key {
    const char *s;
    size_t len;
    uint64_t hash;
};

static bool is_name(const void *ctx, uint32_t id, const void *key)
{
    const struct rep_names_entry *e = &((const struct rep_names *)ctx)->entries[id];
    const struct name_key *k = key;
    return e->hash == k->hash && e->len == k->len && memcmp(e->str, k->s, k->len) == 0;
}

/* Makes room for one more id: the entries and the table. */
static int reserve_one(struct rep_names *t)
{
    if (t->n_names >= UINT32_MAX / 2 ||
        !CMN_GROW(t->entries, t->cap_entries, (size_t)t->n_names + 1, 256))
        return CMN_E_NOMEM;
    return cmn_hashtab_reserve(&t->table, entry_hash, t) == 0 ? CMN_OK : CMN_E_NOMEM;
}

int rep_names_intern(struct rep_names *t, const char *s, size_t len, uint32_t *id /* out */)
{
    const char *nul = memchr(s, '\0', len);
    if (nul != NULL)
        len = (size_t)(nul - s);
    if (len > UINT32_MAX - 1)
        len = UINT32_MAX - 1;
    struct name_key key = {s, len, cmn_hash_bytes(s, len)};
    uint32_t found = cmn_hashtab_find(&t->table, key.hash, is_name, t, &key);
    if (found != CMN_HASHTAB_NONE) {
        *id = found;
        return CMN_OK;
    }
    if (reserve_one(t) != CMN_OK)
        return CMN_E_NOMEM;
    char *copy = arena_copy(t, s, len);
    if (copy == NULL)
        return CMN_E_NOMEM;
    uint32_t new_id = t->n_names++;
    t->entries[new_id] =
        (struct rep_names_entry){.str = copy, .hash = key.hash, .len = (uint32_t)len};
    cmn_hashtab_insert(&t->table, key.hash, new_id);
    *id = new_id;
    return CMN_OK;
}
