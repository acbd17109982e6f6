/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The line cache's file and table. The file is read whole into one buffer whose tabs and
 * newlines become NULs, so that the strings of its entries point into it; entries added
 * later own copies of theirs. Entries live in one array, their frames back to back in
 * another, found through a hash table (common/hashtab.h) from offset to entry. Reporter thread
 * only.
 */
#include "reporter/symbols/linecache.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/check.h"
#include "common/err.h"
#include "common/grow.h"
#include "common/hash.h"
#include "common/hashtab.h"
#include "reporter/symbols/module.h"

#define LCACHE_MAGIC "prof-lines 1"
#define LCACHE_SUBDIR "lines"
#define LCACHE_MAX_FILE_BYTES (256u << 20)

struct lc_entry {
    uint64_t off;   /* the file offset asked about */
    uint32_t first; /* index of its first frame in frames */
    uint32_t n;     /* its frames, 0 for "nothing known there" */
};

struct rep_sym_lcache {
    char *dir;                /* the cache directory; owned */
    char *path;               /* the cache file; owned */
    char *text;               /* the file as read, cut into strings; owned */
    struct lc_entry *entries; /* in order of addition */
    size_t n_entries;
    size_t cap_entries;
    struct rep_module_frame *frames; /* the entries' frames back to back */
    size_t n_frames;
    size_t cap_frames;
    struct cmn_hashtab table; /* the entries by offset */
    char **owned;     /* strings copied by rep_sym_lcache_put */
    size_t n_owned;
    size_t cap_owned;
    bool is_dirty; /* entries were added since the file was read */
};

int rep_sym_lcache_dir(char **dir)
{
    *dir = NULL;
    const char *env = getenv("LIBPROF_CACHE_DIR");
    int n;
    if (env != NULL) {
        if (env[0] == '\0')
            return CMN_OK;
        n = asprintf(dir, "%s", env);
    } else if ((env = getenv("XDG_CACHE_HOME")) != NULL && env[0] == '/') {
        n = asprintf(dir, "%s/prof", env);
    } else if ((env = getenv("HOME")) != NULL && env[0] == '/') {
        n = asprintf(dir, "%s/.cache/prof", env);
    } else {
        return CMN_OK;
    }
    if (n < 0) {
        *dir = NULL;
        return CMN_E_NOMEM;
    }
    return CMN_OK;
}

static uint64_t entry_hash(const void *ctx, uint32_t i)
{
    return cmn_hash_word(((const struct rep_sym_lcache *)ctx)->entries[i].off);
}

static bool is_entry(const void *ctx, uint32_t i, const void *off)
{
    return ((const struct rep_sym_lcache *)ctx)->entries[i].off == *(const uint64_t *)off;
}

/* The index of the entry for off, or -1. */
static long find(const struct rep_sym_lcache *c, uint64_t off)
{
    uint32_t i = cmn_hashtab_find(&c->table, cmn_hash_word(off), is_entry, c, &off);
    return i == CMN_HASHTAB_NONE ? -1 : (long)i;
}

/* Adds an entry for off whose n frames are then filled by the caller at *fr. */
static int add_entry(struct rep_sym_lcache *c, uint64_t off, size_t n,
                     struct rep_module_frame **fr /* out */)
{
    if (!CMN_GROW(c->entries, c->cap_entries, c->n_entries + 1, 256) ||
        !CMN_GROW(c->frames, c->cap_frames, c->n_frames + n, 1024) ||
        cmn_hashtab_reserve(&c->table, entry_hash, c) != 0)
        return CMN_E_NOMEM;
    c->entries[c->n_entries] =
        (struct lc_entry){.off = off, .first = (uint32_t)c->n_frames, .n = (uint32_t)n};
    cmn_hashtab_insert(&c->table, cmn_hash_word(off), (uint32_t)c->n_entries++);
    *fr = c->frames + c->n_frames;
    c->n_frames += n;
    return CMN_OK;
}

/* The next tab- or newline-ended field at *p, cut with a NUL, and in *is_eol whether a
 * newline ended it; NULL at the end of the text. */
static char *next_field(char **p, char *end, bool *is_eol)
{
    char *f = *p;
    char *q = f;
    while (q < end && *q != '\t' && *q != '\n')
        q++;
    if (q == end)
        return NULL;
    *is_eol = *q == '\n';
    *q = '\0';
    *p = q + 1;
    return f;
}

/* Reads one entry line at *p; false when it is malformed (the rest of the file is then
 * ignored) or out of memory. */
static bool parse_entry(struct rep_sym_lcache *c, char **p, char *end)
{
    bool eol;
    char *off_s = next_field(p, end, &eol), *stop;
    if (off_s == NULL || eol)
        return false;
    uint64_t off = strtoull(off_s, &stop, 16);
    char *n_s = *stop == '\0' && stop != off_s ? next_field(p, end, &eol) : NULL;
    if (n_s == NULL)
        return false;
    unsigned long n = strtoul(n_s, &stop, 10);
    if (*stop != '\0' || stop == n_s || n > 64 || (n == 0) != eol || find(c, off) >= 0)
        return false;
    struct rep_module_frame fr[64];
    for (unsigned long i = 0; i < n; i++) {
        char *f[3];
        for (int k = 0; k < 3; k++) {
            f[k] = next_field(p, end, &eol);
            if (f[k] == NULL || eol != (k == 2 && i + 1 == n))
                return false;
        }
        fr[i] = (struct rep_module_frame){.func = f[0][0] ? f[0] : NULL,
                                          .file = f[1][0] ? f[1] : NULL,
                                          .line = (unsigned)strtoul(f[2], NULL, 10)};
    }
    struct rep_module_frame *dst;
    if (add_entry(c, off, n, &dst) != CMN_OK)
        return false;
    memcpy(dst, fr, n * sizeof(*fr));
    return true;
}

/* Reads the file at c->path, when there is one. */
static void load(struct rep_sym_lcache *c)
{
    FILE *f = fopen(c->path, "re");
    if (f == NULL)
        return;
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (uint64_t)st.st_size < LCACHE_MAX_FILE_BYTES &&
        (c->text = malloc((size_t)st.st_size + 1)) != NULL) {
        size_t len = fread(c->text, 1, (size_t)st.st_size, f);
        char *p = c->text, *end = c->text + len;
        *end = '\0';
        bool eol;
        if (next_field(&p, end, &eol) != NULL && eol && strcmp(c->text, LCACHE_MAGIC) == 0) {
            while (p < end && parse_entry(c, &p, end))
                ;
        }
    }
    fclose(f);
}

int rep_sym_lcache_open(const char *dir, const uint8_t *id, size_t n, struct rep_sym_lcache **out)
{
    assert(dir != NULL && n > 0);
    *out = NULL;
    struct rep_sym_lcache *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return CMN_E_NOMEM;
    cmn_hashtab_init(&c->table, 512);
    char hex[2 * 64 + 1];
    size_t k = 0;
    for (size_t i = 0; i < n && i < 64; i++)
        k += (size_t)snprintf(hex + k, sizeof(hex) - k, "%02x", id[i]);
    if ((c->dir = strdup(dir)) == NULL ||
        asprintf(&c->path, "%s/" LCACHE_SUBDIR "/%s", dir, hex) < 0) {
        c->path = NULL;
        rep_sym_lcache_close(c);
        return CMN_E_NOMEM;
    }
    load(c);
    *out = c;
    return CMN_OK;
}

int rep_sym_lcache_get(const struct rep_sym_lcache *c, uint64_t off, struct rep_module_frame *out,
                       size_t cap, size_t *n)
{
    long i = find(c, off);
    if (i < 0)
        return CMN_E_NOTFOUND;
    const struct lc_entry *e = &c->entries[i];
    *n = e->n < cap ? e->n : cap;
    memcpy(out, c->frames + e->first, *n * sizeof(*out));
    return CMN_OK;
}

/* Whether s can be written as a field: no tab, no newline. */
static bool is_storable(const char *s)
{
    return s == NULL || strpbrk(s, "\t\n") == NULL;
}

/* A copy of s owned by c (NULL stays NULL); false when out of memory. */
static bool own(struct rep_sym_lcache *c, const char *s, const char **copy)
{
    *copy = NULL;
    if (s == NULL)
        return true;
    if (!CMN_GROW(c->owned, c->cap_owned, c->n_owned + 1, 64))
        return false;
    char *d = strdup(s);
    if (d == NULL)
        return false;
    c->owned[c->n_owned++] = d;
    *copy = d;
    return true;
}

int rep_sym_lcache_put(struct rep_sym_lcache *c, uint64_t off, const struct rep_module_frame *fr,
                       size_t n)
{
    if (find(c, off) >= 0 || c->n_entries >= REP_SYM_LCACHE_MAX_ENTRIES || n > 64)
        return CMN_OK;
    for (size_t i = 0; i < n; i++) {
        if (!is_storable(fr[i].func) || !is_storable(fr[i].file))
            return CMN_OK;
    }
    struct rep_module_frame *dst;
    if (add_entry(c, off, n, &dst) != CMN_OK)
        return CMN_E_NOMEM;
    for (size_t i = 0; i < n; i++) {
        dst[i].line = fr[i].line;
        if (!own(c, fr[i].func, &dst[i].func) || !own(c, fr[i].file, &dst[i].file))
            return CMN_E_NOMEM;
    }
    c->is_dirty = true;
    return CMN_OK;
}

static void write_entries(const struct rep_sym_lcache *c, FILE *f)
{
    fputs(LCACHE_MAGIC "\n", f);
    for (size_t i = 0; i < c->n_entries; i++) {
        const struct lc_entry *e = &c->entries[i];
        fprintf(f, "%" PRIx64 "\t%u", e->off, e->n);
        for (uint32_t k = 0; k < e->n; k++) {
            const struct rep_module_frame *fr = &c->frames[e->first + k];
            fprintf(f, "\t%s\t%s\t%u", fr->func ? fr->func : "", fr->file ? fr->file : "",
                    fr->line);
        }
        fputc('\n', f);
    }
}

/* Writes every entry to a temporary file next to the cache file, then renames it over. */
static void save(const struct rep_sym_lcache *c)
{
    char *sub = NULL, *tmp = NULL;
    if (asprintf(&sub, "%s/" LCACHE_SUBDIR, c->dir) < 0)
        return;
    /* The cache directory and its parent may not exist yet (~/.cache on a new account). */
    char *parent = strdup(c->dir);
    char *slash = parent != NULL ? strrchr(parent, '/') : NULL;
    if (slash != NULL && slash != parent) {
        *slash = '\0';
        mkdir(parent, 0700);
    }
    free(parent);
    mkdir(c->dir, 0700);
    mkdir(sub, 0700);
    free(sub);
    if (asprintf(&tmp, "%s.%ld.tmp", c->path, (long)getpid()) < 0)
        return;
    FILE *f = fopen(tmp, "we");
    if (f != NULL) {
        write_entries(c, f);
        bool is_written = !ferror(f);
        if (fclose(f) == 0 && is_written && rename(tmp, c->path) == 0) {
            free(tmp);
            return;
        }
        unlink(tmp);
    }
    free(tmp);
}

void rep_sym_lcache_close(struct rep_sym_lcache *c)
{
    if (c == NULL)
        return;
    int saved_errno = errno;
    if (c->is_dirty)
        save(c);
    for (size_t i = 0; i < c->n_owned; i++)
        free(c->owned[i]);
    free(c->owned);
    cmn_hashtab_fini(&c->table);
    free(c->frames);
    free(c->entries);
    free(c->text);
    free(c->path);
    free(c->dir);
    free(c);
    errno = saved_errno;
}
