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

#include "common/check.h"
#include "common/err.h"
#include "common/grow.h"
#include "common/hash.h"
#include "common/ranges.h"
#include "reporter/base/warn.h"
#include "reporter/input/profile.h"
#include "reporter/symbols/debuginfod.h"
#include "reporter/symbols/demangle.h"
#include "reporter/symbols/linecache.h"
#include "reporter/symbols/module.h"
#include "reporter/symbols/names.h"
#include "reporter/symbols/perfmap.h"
#include "reporter/symbols/vdso.h"

/* Functions inlined into one another at one address, at most; deeper chains keep their
 * innermost ones and the real function. */
#define SYM_MAX_INLINE 64

#define SYM_PERFMAP_UNKNOWN (-1)

#define MAP_MODULE_NONE (-1)
#define MAP_MODULE_UNKNOWN (-2)

struct rep_sym_module {
    char *path;              /* as recorded in the mappings; owned */
    struct rep_module *mod;  /* NULL when the file could not be used */
    bool is_build_id_warned; /* a build-id mismatch was reported already */
    bool is_lcache_tried;    /* lcache was looked for */
    struct rep_sym_lcache *lcache; /* its DWARF's answers kept across runs, or NULL */
};

/* What a cache entry answers about its address. */
#define SLOT_LEAF 0u   /* the name of a leaf frame */
#define SLOT_CALLER 1u /* the name of a caller's frame (a return address) */

struct rep_sym_cached {
    uint64_t addr; /* the frame address as recorded */
    uint32_t tag;  /* (mapping index + 2) << 2 | SLOT_* */
    uint32_t id;   /* its name id, or with chains the index of its chain */
};

int rep_sym_init(struct rep_sym *s, struct rep_names *names)
{
    memset(s, 0, sizeof(*s));
    cmn_hashtab_init(&s->cache_table, 4096);
    s->names = names;
    return rep_sym_dbgd_init(&s->dbgd);
}

void rep_sym_fini(struct rep_sym *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->n_modules; i++) {
        free(s->modules[i].path);
        rep_sym_lcache_close(s->modules[i].lcache);
        rep_module_close(s->modules[i].mod);
    }
    free(s->cache_dir);
    rep_sym_dbgd_fini(&s->dbgd);
    for (size_t i = 0; i < s->n_perfmaps; i++)
        rep_sym_perfmap_fini(&s->perfmaps[i]);
    free(s->perfmaps);
    for (size_t i = 0; i < s->n_warnings; i++)
        free(s->warnings[i]);
    free(s->modules);
    free(s->max_end);
    free(s->map_module);
    free(s->cache);
    cmn_hashtab_fini(&s->cache_table);
    free(s->warnings);
    free(s->chains);
    memset(s, 0, sizeof(*s));
}

int rep_sym_use_profile(struct rep_sym *s, const struct rep_profile *p)
{
    free(s->max_end);
    free(s->map_module);
    free(s->cache);
    cmn_hashtab_fini(&s->cache_table);
    s->max_end = NULL;
    s->map_module = NULL;
    s->cache = NULL;
    s->cap_cache = 0;
    s->n_cached = 0;
    s->prof = p;
    s->perfmap_index = SYM_PERFMAP_UNKNOWN;
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
    size_t lo = CMN_RANGE_UPPER(maps, s->prof->n_maps, start, a);
    long best = -1;
    for (size_t j = lo; j-- > 0 && s->max_end[j] > a;) {
        if (a < maps[j].end && (best < 0 || is_better_map(&maps[j], &maps[best], time_ns)))
            best = (long)j;
    }
    assert(best < 0 || (maps[best].start <= a && a < maps[best].end));
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

/* The module finder's callback: a debug file from a debuginfod server. */
static int find_on_server(void *ctx, const char *path, const uint8_t *id, size_t n,
                          char **debug_path)
{
    struct rep_sym *s = ctx;
    return rep_sym_dbgd_find(&s->dbgd, path, id, n, debug_path);
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
    struct rep_module_finder finder = {.find = find_on_server, .ctx = s};
    rc = rep_module_open_with(file, &finder, &sm->mod, &err);
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

/* Paths of anonymous memory, where JIT compilers put their code: "" as libprof records
 * it, "[anon:NAME]" for memory named with prctl(PR_SET_VMA), "//anon" as perf shows it. */
static bool is_anon_path(const char *path)
{
    return path[0] == '\0' || strncmp(path, "[anon", 5) == 0 || strcmp(path, "//anon") == 0;
}

/* The perf map of the current profile's process, loaded on first use, or NULL. */
static int current_perfmap(struct rep_sym *s, const struct rep_sym_perfmap **m /* out */)
{
    *m = NULL;
    if (s->is_offline || !s->prof->has_process)
        return CMN_OK;
    uint32_t pid = s->prof->process.pid;
    if (s->perfmap_index == SYM_PERFMAP_UNKNOWN) {
        size_t i = 0;
        while (i < s->n_perfmaps && s->perfmaps[i].pid != pid)
            i++;
        if (i == s->n_perfmaps) {
            if (!CMN_GROW(s->perfmaps, s->cap_perfmaps, s->n_perfmaps + 1, 4))
                return CMN_E_NOMEM;
            int rc = rep_sym_perfmap_load(&s->perfmaps[i], s->perf_map_dir, pid,
                                          s->prof->owner_uid);
            s->n_perfmaps++; /* kept even when partly loaded, so that fini frees it */
            if (rc != CMN_OK)
                return rc;
        }
        s->perfmap_index = (long)i;
    }
    *m = &s->perfmaps[s->perfmap_index];
    return CMN_OK;
}

/* Names frame address addr (looked up at la) from the perf map of the profile's process,
 * for a frame in anonymous memory or in no recorded mapping; *is_named false when the map
 * does not have it. */
static int resolve_jit(struct rep_sym *s, uint64_t la, uint32_t *id, bool *is_named)
{
    *is_named = false;
    const struct rep_sym_perfmap *m;
    if (current_perfmap(s, &m) != CMN_OK)
        return CMN_E_NOMEM;
    const char *name = m != NULL ? rep_sym_perfmap_lookup(m, la) : NULL;
    if (name == NULL)
        return CMN_OK;
    *is_named = true;
    return rep_names_intern(s->names, name, strlen(name), id);
}

/* Names frame address addr (looked up at la) found in mapping map_index (-1 for none). */
static int resolve(struct rep_sym *s, uint64_t addr, uint64_t la, long map_index,
                   uint32_t *id /* out */, bool *is_named /* out */)
{
    char buf[256];
    *is_named = false;
    const struct rep_map *map = map_index >= 0 ? &s->prof->maps[map_index] : NULL;
    if (map == NULL || is_anon_path(map->path)) {
        /* Code in anonymous memory (JIT), mapped or not when the mappings were taken. */
        int rc = resolve_jit(s, la, id, is_named);
        if (rc != CMN_OK || *is_named)
            return rc;
    }
    if (map_index < 0) {
        snprintf(buf, sizeof(buf), "0x%" PRIx64, addr);
        return rep_names_intern(s->names, buf, strlen(buf), id);
    }
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

static uint64_t cached_key_hash(uint64_t addr, uint32_t tag)
{
    return cmn_hash_word(addr ^ ((uint64_t)tag << 48));
}

static uint64_t cached_hash(const void *ctx, uint32_t i)
{
    const struct rep_sym_cached *c = &((const struct rep_sym *)ctx)->cache[i];
    return cached_key_hash(c->addr, c->tag);
}

static bool is_cached(const void *ctx, uint32_t i, const void *key)
{
    const struct rep_sym_cached *c = &((const struct rep_sym *)ctx)->cache[i];
    const struct rep_sym_cached *k = key;
    return c->addr == k->addr && c->tag == k->tag;
}

/* What the cache holds for (addr, tag): its id (a name id, or with chains a chain's
 * index) in *id. */
static bool find_cached(const struct rep_sym *s, uint64_t addr, uint32_t tag, uint32_t *id)
{
    struct rep_sym_cached key = {.addr = addr, .tag = tag};
    uint32_t i = cmn_hashtab_find(&s->cache_table, cached_key_hash(addr, tag), is_cached, s, &key);
    if (i != CMN_HASHTAB_NONE)
        *id = s->cache[i].id;
    return i != CMN_HASHTAB_NONE;
}

/* Caches id for (addr, tag). CMN_OK or CMN_E_NOMEM. */
static int add_cached(struct rep_sym *s, uint64_t addr, uint32_t tag, uint32_t id)
{
    if (!CMN_GROW(s->cache, s->cap_cache, s->n_cached + 1, 2048) ||
        cmn_hashtab_reserve(&s->cache_table, cached_hash, s) != 0)
        return CMN_E_NOMEM;
    s->cache[s->n_cached] = (struct rep_sym_cached){.addr = addr, .tag = tag, .id = id};
    cmn_hashtab_insert(&s->cache_table, cached_key_hash(addr, tag), (uint32_t)s->n_cached++);
    return CMN_OK;
}

static uint32_t tag_of(long map_index, unsigned kind)
{
    return (uint32_t)((map_index + 2) << 2) | kind;
}

/* The name of a marker of frames left out of a deep stack (PROF_FRAME_ELIDED). */
static int elided_name(struct rep_sym *s, uint64_t marker, uint32_t *id /* out */)
{
    char label[64];
    int n = snprintf(label, sizeof(label), "[%" PRIu64 " frames elided]",
                     (uint64_t)(marker & ~PROF_FRAME_ELIDED));
    return rep_names_intern(s->names, label, (size_t)n, id);
}

/* Whether frames are named through chains (several frames per address, or file and line)
 * rather than one plain name per address. */
static bool uses_chains(const struct rep_sym *s)
{
    return s->is_lines || !s->is_no_inline;
}

int rep_sym_frame(struct rep_sym *s, uint64_t addr, bool is_caller, uint64_t time_ns,
                  uint32_t *id /* out */)
{
    if (PROF_FRAME_IS_ELIDED(addr))
        return elided_name(s, addr, id);
    if (uses_chains(s)) {
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
    if (find_cached(s, addr, tag, id))
        return CMN_OK;
    bool is_named;
    int rc = resolve(s, addr, la, map_index, id, &is_named);
    return rc == CMN_OK ? add_cached(s, addr, tag, *id) : rc;
}

/* Interns the label of one frame of a chain: "func", with is_lines " (file:line)" after it
 * (file by its base name; nothing when the line is unknown), and for a function inlined
 * into another " [inlined]". func is already demangled. */
static int intern_label(struct rep_sym *s, const char *func, const struct rep_module_frame *fr,
                        bool is_inlined, uint32_t *id /* out */)
{
    char *label;
    int n;
    const char *mark = is_inlined ? " [inlined]" : "";
    if (s->is_lines && fr->file != NULL && fr->line != 0)
        n = asprintf(&label, "%s (%s:%u)%s", func, base_name(fr->file), fr->line, mark);
    else
        n = asprintf(&label, "%s%s", func, mark);
    if (n < 0)
        return CMN_E_NOMEM;
    int rc = rep_names_intern(s->names, label, (size_t)n, id);
    free(label);
    return rc;
}

/* The id of frame fr of a chain: an inlined function by its DWARF name; the real one
 * (is_outer) by plain, its symbol-table name, when is_named (the DWARF name of the
 * outermost function is the same function, but a C++ one may be spelled without its
 * parameters), else by its DWARF name when there is one. */
static int chain_label(struct rep_sym *s, const struct rep_module_frame *fr, bool is_outer,
                       uint32_t plain, bool is_named, uint32_t *id /* out */)
{
    if (is_outer && (is_named || fr->func == NULL)) {
        *id = plain;
        if (!s->is_lines)
            return CMN_OK;
        return intern_label(s, rep_names_get(s->names, plain), fr, false, id);
    }
    char *name;
    if (rep_demangle_name(fr->func != NULL ? fr->func : "??", &name) != CMN_OK)
        return CMN_E_NOMEM;
    int rc = intern_label(s, name, fr, !is_outer, id);
    free(name);
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

/* The line cache of the module of mapping i (whose module is open), or NULL when it has
 * none: no DWARF to spare reading, no build-id to name the cache by, or no cache
 * directory. Opened on first use. */
static int line_cache(struct rep_sym *s, long i, struct rep_sym_lcache **lc /* out */)
{
    *lc = NULL;
    struct rep_sym_module *sm = &s->modules[s->map_module[i]];
    if (!sm->is_lcache_tried) {
        sm->is_lcache_tried = true;
        if (!s->is_cache_dir_read) {
            s->is_cache_dir_read = true;
            if (rep_sym_lcache_dir(&s->cache_dir) != CMN_OK)
                return CMN_E_NOMEM;
        }
        const uint8_t *id;
        size_t n;
        if (s->cache_dir != NULL && rep_module_has_dwarf(sm->mod) &&
            rep_module_build_id(sm->mod, &id, &n) == CMN_OK &&
            rep_sym_lcache_open(s->cache_dir, id, n, &sm->lcache) != CMN_OK)
            return CMN_E_NOMEM;
    }
    *lc = sm->lcache;
    return CMN_OK;
}

/* The source frames at file offset off of the module of mapping map_index, innermost
 * first, into fr (at most cap); *n is 0 when nothing is known. From the line cache when it
 * has them, else from the module's DWARF, and then into the cache. */
static int module_frames(struct rep_sym *s, long map_index, uint64_t off,
                         struct rep_module_frame *fr, size_t cap, size_t *n /* out */)
{
    *n = 0;
    struct rep_module *mod = NULL;
    if (map_index < 0)
        return CMN_OK;
    if (module_of_map(s, map_index, &mod) != CMN_OK)
        return CMN_E_NOMEM;
    if (mod == NULL)
        return CMN_OK;
    struct rep_sym_lcache *lc;
    if (line_cache(s, map_index, &lc) != CMN_OK)
        return CMN_E_NOMEM;
    if (lc != NULL && rep_sym_lcache_get(lc, off, fr, cap, n) == CMN_OK)
        return CMN_OK;
    if (rep_module_lines(mod, off, fr, cap, n) != CMN_OK)
        *n = 0;
    return lc != NULL ? rep_sym_lcache_put(lc, off, fr, *n) : CMN_OK;
}

/* Resolves addr (looked up at la, in mapping map_index) into a new chain: the functions
 * inlined there, innermost first, then the real one; with is_no_inline the real one only.
 * *at gets the chain's offset. */
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
    /* An address no symbol covers (padding between functions, code of a stripped file)
     * keeps its plain name: DWARF's nearest line would stretch the function before it. */
    if (map_index >= 0 && is_named) {
        const struct rep_map *map = &s->prof->maps[map_index];
        rc = module_frames(s, map_index, la - map->start + map->file_offset, fr,
                           SYM_MAX_INLINE, &n);
        if (rc != CMN_OK)
            return rc;
    }
    size_t first = s->is_no_inline && n > 0 ? n - 1 : 0;
    *at = s->n_chains;
    if (chain_push(s, n > 0 ? (uint32_t)(n - first) : 1u) != CMN_OK)
        return CMN_E_NOMEM;
    if (n == 0)
        return chain_push(s, plain);
    for (size_t i = first; i < n; i++) {
        uint32_t id;
        if (chain_label(s, &fr[i], i + 1 == n, plain, is_named, &id) != CMN_OK ||
            chain_push(s, id) != CMN_OK)
            return CMN_E_NOMEM;
    }
    return CMN_OK;
}

int rep_sym_frames(struct rep_sym *s, uint64_t addr, bool is_caller, uint64_t time_ns,
                   const uint32_t **ids /* out */, size_t *n /* out */)
{
    if (!uses_chains(s) || PROF_FRAME_IS_ELIDED(addr)) {
        *ids = &s->single_id;
        *n = 1;
        return rep_sym_frame(s, addr, is_caller, time_ns, &s->single_id);
    }
    uint64_t la = is_caller && addr > 0 ? addr - 1 : addr;
    long map_index = find_map(s, la, time_ns);
    uint32_t tag = tag_of(map_index, is_caller ? SLOT_CALLER : SLOT_LEAF);
    uint32_t cached;
    size_t at;
    if (find_cached(s, addr, tag, &cached)) {
        at = cached;
    } else {
        int rc = resolve_chain(s, addr, la, map_index, &at);
        if (rc != CMN_OK)
            return rc;
        if (at > UINT32_MAX || add_cached(s, addr, tag, (uint32_t)at) != CMN_OK)
            return CMN_E_NOMEM;
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

void rep_sym_warn(struct rep_sym *sym, size_t *n_printed)
{
    char *unnamed;
    if (rep_sym_dbgd_take(&sym->dbgd, &unnamed) == CMN_OK && unnamed != NULL) {
        add_warning(sym, "%s", unnamed);
        free(unnamed);
    }
    for (; *n_printed < sym->n_warnings; (*n_printed)++)
        rep_warnf("%s", sym->warnings[*n_printed]);
}
