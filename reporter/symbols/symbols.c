/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Frame addresses to names: mapping search, module cache, address cache and the fallback
 * names. Reporter thread only.
 *
 * The mappings of the current profile are sorted by start (reporter/input/profile.c); max_end[i]
 * is the greatest end among mappings 0..i, so the search for an address walks back from
 * the last mapping starting at or below it only while an earlier mapping could still
 * reach it. Without overlaps that is one step.
 */
#include "reporter/symbols/symbols.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/grow.h"
#include "common/hash.h"
#include "reporter/base/warn.h"
#include "reporter/input/profile.h"
#include "reporter/symbols/demangle.h"
#include "reporter/symbols/module.h"
#include "reporter/symbols/names.h"
#include "reporter/symbols/vdso.h"

/* Functions inlined into one another at one address, at most; deeper chains keep their
 * innermost ones and the real function. */
#define SYM_MAX_INLINE 64

#define MAP_MODULE_NONE (-1)
#define MAP_MODULE_UNKNOWN (-2)

struct rep_sym_module {
    char *path;              /* as recorded in the mappings; owned */
    struct rep_module *mod;  /* NULL when the file could not be used */
    bool is_build_id_warned; /* a build-id mismatch was reported already */
};

/* What a cache slot answers about its address. */
#define SLOT_LEAF 0u   /* the name of a leaf frame */
#define SLOT_CALLER 1u /* the name of a caller's frame (a return address) */

struct rep_sym_slot {
    uint64_t addr; /* the frame address as recorded */
    uint32_t tag;  /* (mapping index + 2) << 2 | SLOT_*; 0 marks an empty slot */
    uint32_t id;   /* its name id */
};

int rep_sym_init(struct rep_sym *s, struct rep_names *names)
{
    memset(s, 0, sizeof(*s));
    s->names = names;
    return CMN_OK;
}

void rep_sym_fini(struct rep_sym *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->n_modules; i++) {
        free(s->modules[i].path);
        rep_module_close(s->modules[i].mod);
    }
    for (size_t i = 0; i < s->n_warnings; i++)
        free(s->warnings[i]);
    free(s->modules);
    free(s->max_end);
    free(s->map_module);
    free(s->cache);
    free(s->warnings);
    free(s->chains);
    memset(s, 0, sizeof(*s));
}

int rep_sym_use_profile(struct rep_sym *s, const struct rep_profile *p)
{
    free(s->max_end);
    free(s->map_module);
    free(s->cache);
    s->max_end = NULL;
    s->map_module = NULL;
    s->cache = NULL;
    s->cache_cap = 0;
    s->n_cached = 0;
    s->prof = p;
    size_t n = p->n_maps ? p->n_maps : 1;
    s->max_end = malloc(n * sizeof(*s->max_end));
    s->map_module = malloc(n * sizeof(*s->map_module));
    if (s->max_end == NULL || s->map_module == NULL)
        return CMN_E_NOMEM;
    uint64_t max_end = 0;
    for (size_t i = 0; i < p->n_maps; i++) {
        if (p->maps[i].end > max_end)
            max_end = p->maps[i].end;
        s->max_end[i] = max_end;
        s->map_module[i] = MAP_MODULE_UNKNOWN;
    }
    return CMN_OK;
}

static int add_warning(struct rep_sym *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int add_warning(struct rep_sym *s, const char *fmt, ...)
{
    if (!CMN_GROW(s->warnings, s->cap_warnings, s->n_warnings + 1, 8))
        return CMN_E_NOMEM;
    va_list ap;
    va_start(ap, fmt);
    int rc = vasprintf(&s->warnings[s->n_warnings], fmt, ap);
    va_end(ap);
    if (rc < 0)
        return CMN_E_NOMEM;
    s->n_warnings++;
    return CMN_OK;
}

/* Whether mapping c should name an address rather than b, both holding it, for a sample
 * at time_ns: the latest one seen at or before the sample, else the earliest one. */
static bool is_better_map(const struct rep_map *c, const struct rep_map *b, uint64_t time_ns)
{
    bool c_before = c->time_ns <= time_ns, b_before = b->time_ns <= time_ns;
    if (c_before != b_before)
        return c_before;
    return c_before ? c->time_ns > b->time_ns : c->time_ns < b->time_ns;
}

/* The index of the mapping holding a, or -1. */
static long find_map(const struct rep_sym *s, uint64_t a, uint64_t time_ns)
{
    const struct rep_map *maps = s->prof->maps;
    size_t lo = 0, hi = s->prof->n_maps;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (maps[mid].start <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    long best = -1;
    for (size_t j = lo; j-- > 0 && s->max_end[j] > a;) {
        if (a < maps[j].end && (best < 0 || is_better_map(&maps[j], &maps[best], time_ns)))
            best = (long)j;
    }
    return best;
}

/* Paths the kernel shows for memory that is no file: "[vdso]", "[stack]", "". */
static bool is_pseudo_path(const char *path)
{
    return path[0] == '\0' || path[0] == '[';
}

static bool same_build_id(const struct rep_map *map, const uint8_t *id, size_t n)
{
    /* A recorded id fills at most PROF_BUILD_ID_MAX bytes; a longer one was cut there. */
    if (map->build_id_len == PROF_BUILD_ID_MAX && n > PROF_BUILD_ID_MAX)
        n = PROF_BUILD_ID_MAX;
    return n == map->build_id_len && memcmp(id, map->build_id, n) == 0;
}

/* The entry of path: *index and *sm = NULL when it exists, else a new zeroed entry in *sm
 * (its path set; not counted until the caller commits it with s->n_modules++). CMN_OK or
 * CMN_E_NOMEM. */
static int module_entry(struct rep_sym *s, const char *path, int32_t *index,
                        struct rep_sym_module **sm)
{
    *sm = NULL;
    for (size_t i = 0; i < s->n_modules; i++) {
        if (strcmp(s->modules[i].path, path) == 0) {
            *index = (int32_t)i;
            return CMN_OK;
        }
    }
    if (!CMN_GROW(s->modules, s->cap_modules, s->n_modules + 1, 16))
        return CMN_E_NOMEM;
    struct rep_sym_module *e = &s->modules[s->n_modules];
    memset(e, 0, sizeof(*e));
    e->path = strdup(path);
    if (e->path == NULL)
        return CMN_E_NOMEM;
    *index = (int32_t)s->n_modules;
    *sm = e;
    return CMN_OK;
}

/* Opens (once) the module at path; CMN_OK with *index, or CMN_E_NOMEM. A file that cannot
 * be used still gets an entry, without a module, and a warning. */
static int open_module(struct rep_sym *s, const char *path, int32_t *index)
{
    struct rep_sym_module *sm;
    int rc = module_entry(s, path, index, &sm);
    if (rc != CMN_OK || sm == NULL)
        return rc;
    /* The kernel marks a file replaced or removed since it was mapped; what is at the path
     * now may be a newer build, which the build-id check catches. */
    char *file = strdup(path);
    if (file == NULL) {
        free(sm->path);
        return CMN_E_NOMEM;
    }
    size_t len = strlen(file), tail = strlen(" (deleted)");
    if (len > tail && strcmp(file + len - tail, " (deleted)") == 0)
        file[len - tail] = '\0';
    struct cmn_err err = {0};
    rc = rep_module_open(file, &sm->mod, &err);
    free(file);
    if (rc == CMN_E_NOMEM) {
        free(sm->path);
        return rc;
    }
    s->n_modules++;
    if (rc != CMN_OK)
        return add_warning(s, "cannot symbolize %s", err.msg);
    return CMN_OK;
}

static bool is_vdso(const char *path)
{
    return strcmp(path, "[vdso]") == 0;
}

/* Opens (once) the reporter's own vDSO as the module of "[vdso]" mappings, when its
 * build-id is the one map recorded; without it the entry has no module and frames there
 * are named "[vdso]+0xOFFSET". CMN_OK with *index, or CMN_E_NOMEM. */
static int open_vdso(struct rep_sym *s, const struct rep_map *map, int32_t *index)
{
    struct rep_sym_module *sm;
    int rc = module_entry(s, map->path, index, &sm);
    if (rc != CMN_OK || sm == NULL)
        return rc;
    rc = rep_vdso_open(map->build_id, map->build_id_len, &sm->mod);
    if (rc == CMN_E_NOMEM) {
        free(sm->path);
        return rc;
    }
    s->n_modules++;
    return CMN_OK;
}

/* The module of mapping i, or NULL; resolves it on first use. */
static int module_of_map(struct rep_sym *s, long i, struct rep_module **mod /* out */)
{
    *mod = NULL;
    const struct rep_map *map = &s->prof->maps[i];
    if (s->map_module[i] == MAP_MODULE_UNKNOWN) {
        s->map_module[i] = MAP_MODULE_NONE;
        if (!s->is_offline && (!is_pseudo_path(map->path) || is_vdso(map->path))) {
            int32_t index;
            int rc = is_vdso(map->path) ? open_vdso(s, map, &index)
                                        : open_module(s, map->path, &index);
            if (rc != CMN_OK)
                return rc;
            s->map_module[i] = index;
        }
        struct rep_sym_module *sm = s->map_module[i] >= 0 ? &s->modules[s->map_module[i]] : NULL;
        const uint8_t *id;
        size_t n;
        if (sm != NULL && sm->mod != NULL && map->build_id_len > 0 && !sm->is_build_id_warned &&
            rep_module_build_id(sm->mod, &id, &n) == CMN_OK && !same_build_id(map, id, n)) {
            sm->is_build_id_warned = true;
            int rc = add_warning(s,
                                 "%s has changed since the profile was taken (its build-id "
                                 "differs); names in it may be wrong",
                                 sm->path);
            if (rc != CMN_OK)
                return rc;
        }
    }
    if (s->map_module[i] >= 0)
        *mod = s->modules[s->map_module[i]].mod;
    return CMN_OK;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

/* Names frame address addr (looked up at la) found in mapping map_index (-1 for none). */
static int resolve(struct rep_sym *s, uint64_t addr, uint64_t la, long map_index,
                   uint32_t *id /* out */, bool *is_named /* out */)
{
    char buf[256];
    *is_named = false;
    if (map_index < 0) {
        snprintf(buf, sizeof(buf), "0x%" PRIx64, addr);
        return rep_names_intern(s->names, buf, strlen(buf), id);
    }
    const struct rep_map *map = &s->prof->maps[map_index];
    struct rep_module *mod;
    int rc = module_of_map(s, map_index, &mod);
    if (rc != CMN_OK)
        return rc;
    const char *raw;
    if (mod != NULL && rep_module_lookup(mod, la - map->start + map->file_offset, &raw) == CMN_OK) {
        char *name;
        if (rep_demangle_name(raw, &name) != CMN_OK)
            return CMN_E_NOMEM;
        *is_named = true;
        rc = rep_names_intern(s->names, name, strlen(name), id);
        free(name);
        return rc;
    }
    if (map->path[0] == '\0')
        snprintf(buf, sizeof(buf), "[anon]");
    else
        snprintf(buf, sizeof(buf), "%.200s+0x%" PRIx64, base_name(map->path),
                 addr - map->start + map->file_offset);
    return rep_names_intern(s->names, buf, strlen(buf), id);
}

static int grow_cache(struct rep_sym *s)
{
    size_t cap = s->cache_cap ? s->cache_cap * 2 : 4096;
    struct rep_sym_slot *c = calloc(cap, sizeof(*c));
    if (c == NULL)
        return CMN_E_NOMEM;
    for (size_t i = 0; i < s->cache_cap; i++) {
        const struct rep_sym_slot *old = &s->cache[i];
        if (old->tag == 0)
            continue;
        size_t j = cmn_hash_word(old->addr ^ ((uint64_t)old->tag << 48)) & (cap - 1);
        while (c[j].tag != 0)
            j = (j + 1) & (cap - 1);
        c[j] = *old;
    }
    free(s->cache);
    s->cache = c;
    s->cache_cap = cap;
    return CMN_OK;
}

/* The slot for (addr, tag): the one holding it (*is_found) or the empty one to fill. */
static int find_slot(struct rep_sym *s, uint64_t addr, uint32_t tag, struct rep_sym_slot **slot,
                     bool *is_found)
{
    if ((s->n_cached + 1) * 2 > s->cache_cap && grow_cache(s) != CMN_OK)
        return CMN_E_NOMEM;
    size_t mask = s->cache_cap - 1;
    size_t j = cmn_hash_word(addr ^ ((uint64_t)tag << 48)) & mask;
    for (; s->cache[j].tag != 0; j = (j + 1) & mask) {
        if (s->cache[j].addr == addr && s->cache[j].tag == tag)
            break;
    }
    *slot = &s->cache[j];
    *is_found = s->cache[j].tag != 0;
    return CMN_OK;
}

static void fill_slot(struct rep_sym *s, struct rep_sym_slot *slot, uint64_t addr, uint32_t tag,
                      uint32_t id)
{
    *slot = (struct rep_sym_slot){.addr = addr, .tag = tag, .id = id};
    s->n_cached++;
}

static uint32_t tag_of(long map_index, unsigned kind)
{
    return (uint32_t)((map_index + 2) << 2) | kind;
}

int rep_sym_frame(struct rep_sym *s, uint64_t addr, bool is_caller, uint64_t time_ns,
                  uint32_t *id /* out */)
{
    if (s->is_lines) {
        /* The cache holds chains then: answer with the innermost frame. */
        const uint32_t *ids;
        size_t n;
        int rc = rep_sym_frames(s, addr, is_caller, time_ns, &ids, &n);
        if (rc == CMN_OK)
            *id = ids[0];
        return rc;
    }
    /* A return address follows the call; the byte before it is still in the caller's
     * function even when the call was the function's last instruction. */
    uint64_t la = is_caller && addr > 0 ? addr - 1 : addr;
    long map_index = find_map(s, la, time_ns);
    uint32_t tag = tag_of(map_index, is_caller ? SLOT_CALLER : SLOT_LEAF);
    struct rep_sym_slot *slot;
    bool is_found;
    if (find_slot(s, addr, tag, &slot, &is_found) != CMN_OK)
        return CMN_E_NOMEM;
    if (is_found) {
        *id = slot->id;
        return CMN_OK;
    }
    bool is_named;
    int rc = resolve(s, addr, la, map_index, id, &is_named);
    if (rc == CMN_OK)
        fill_slot(s, slot, addr, tag, *id);
    return rc;
}

/* Interns "func (file:line)" (file by its base name; just func without a line), with
 * " [inlined]" after it for a function inlined into another. func is raw. */
static int intern_line(struct rep_sym *s, const char *func, const char *file, unsigned line,
                       bool is_inlined, uint32_t *id /* out */)
{
    char *name;
    if (rep_demangle_name(func != NULL ? func : "??", &name) != CMN_OK)
        return CMN_E_NOMEM;
    char *label;
    int n;
    const char *mark = is_inlined ? " [inlined]" : "";
    if (file != NULL && line != 0)
        n = asprintf(&label, "%s (%s:%u)%s", name, base_name(file), line, mark);
    else
        n = asprintf(&label, "%s%s", name, mark);
    free(name);
    if (n < 0)
        return CMN_E_NOMEM;
    int rc = rep_names_intern(s->names, label, (size_t)n, id);
    free(label);
    return rc;
}

/* Appends one entry to the chains. */
static int chain_push(struct rep_sym *s, uint32_t v)
{
    if (!CMN_GROW(s->chains, s->cap_chains, s->n_chains + 1, 4096))
        return CMN_E_NOMEM;
    s->chains[s->n_chains++] = v;
    return CMN_OK;
}

/* Resolves addr (looked up at la, in mapping map_index) into a new chain: the functions
 * inlined there, innermost first, then the real one, which keeps its symbol-table name
 * (the DWARF name of the outermost function is the same function, but a C++ one may be
 * spelled without its parameters). *at gets the chain's offset. */
static int resolve_chain(struct rep_sym *s, uint64_t addr, uint64_t la, long map_index,
                         size_t *at /* out */)
{
    uint32_t plain;
    bool is_named;
    int rc = resolve(s, addr, la, map_index, &plain, &is_named);
    if (rc != CMN_OK)
        return rc;
    struct rep_module_frame fr[SYM_MAX_INLINE];
    size_t n = 0;
    struct rep_module *mod = NULL;
    if (map_index >= 0 && module_of_map(s, map_index, &mod) != CMN_OK)
        return CMN_E_NOMEM;
    if (mod != NULL) {
        const struct rep_map *map = &s->prof->maps[map_index];
        if (rep_module_lines(mod, la - map->start + map->file_offset, fr, SYM_MAX_INLINE, &n) !=
            CMN_OK)
            n = 0;
    }
    *at = s->n_chains;
    if (chain_push(s, n > 0 ? (uint32_t)n : 1u) != CMN_OK)
        return CMN_E_NOMEM;
    if (n == 0)
        return chain_push(s, plain);
    for (size_t i = 0; i < n; i++) {
        bool is_outer = i + 1 == n;
        const char *func = fr[i].func;
        if (is_outer && is_named)
            func = NULL; /* the symbol-table name, already demangled, is used below */
        uint32_t id;
        if (func == NULL && is_outer) {
            char *label;
            int k = fr[i].file != NULL && fr[i].line != 0
                        ? asprintf(&label, "%s (%s:%u)", rep_names_get(s->names, plain),
                                   base_name(fr[i].file), fr[i].line)
                        : asprintf(&label, "%s", rep_names_get(s->names, plain));
            if (k < 0)
                return CMN_E_NOMEM;
            rc = rep_names_intern(s->names, label, (size_t)k, &id);
            free(label);
        } else {
            rc = intern_line(s, func, fr[i].file, fr[i].line, !is_outer, &id);
        }
        if (rc != CMN_OK || chain_push(s, id) != CMN_OK)
            return CMN_E_NOMEM;
    }
    return CMN_OK;
}

int rep_sym_frames(struct rep_sym *s, uint64_t addr, bool is_caller, uint64_t time_ns,
                   const uint32_t **ids /* out */, size_t *n /* out */)
{
    if (!s->is_lines) {
        *ids = &s->single_id;
        *n = 1;
        return rep_sym_frame(s, addr, is_caller, time_ns, &s->single_id);
    }
    uint64_t la = is_caller && addr > 0 ? addr - 1 : addr;
    long map_index = find_map(s, la, time_ns);
    uint32_t tag = tag_of(map_index, is_caller ? SLOT_CALLER : SLOT_LEAF);
    struct rep_sym_slot *slot;
    bool is_found;
    if (find_slot(s, addr, tag, &slot, &is_found) != CMN_OK)
        return CMN_E_NOMEM;
    size_t at;
    if (is_found) {
        at = slot->id;
    } else {
        /* Resolving may open a module, which does not touch the cache. */
        int rc = resolve_chain(s, addr, la, map_index, &at);
        if (rc != CMN_OK)
            return rc;
        if (at > UINT32_MAX)
            return CMN_E_NOMEM;
        fill_slot(s, slot, addr, tag, (uint32_t)at);
    }
    *n = s->chains[at];
    *ids = s->chains + at + 1;
    return CMN_OK;
}

const struct rep_map *rep_sym_map_at(const struct rep_sym *s, uint64_t addr, bool is_caller,
                                     uint64_t time_ns)
{
    uint64_t la = is_caller && addr > 0 ? addr - 1 : addr;
    long i = find_map(s, la, time_ns);
    return i < 0 ? NULL : &s->prof->maps[i];
}

void rep_sym_warn(const struct rep_sym *sym, size_t *n_printed)
{
    for (; *n_printed < sym->n_warnings; (*n_printed)++)
        rep_warnf("%s", sym->warnings[*n_printed]);
}
