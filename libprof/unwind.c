/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Stepper setup outside the handler (see unwind.h). The tables handlers read (the code
 * map, the module table, the snapshot of loaded objects) are reader-counted double buffers
 * (sampler/dbuf.h): a refresh fills the copy no reader is inside, then publishes it, so a
 * reader never sees its table change however slow it is. Refreshes are serialized by
 * map_lock (never taken in a handler), which the fork hooks hold across fork().
 */
#include "libprof/unwind.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/maps_line.h"
#include "include/libprof/prof_format.h"
#include "libprof/codemap.h"
#include "libprof/fd.h"
#include "libprof/libc.h"
#include "libprof/uwcache.h"
#include "libprof/uwtables.h"
#include "sampler/codemap.h"
#include "sampler/dbuf.h"
#include "sampler/probe.h"

/* The executable mappings with their files, for lp_unwind_module_at(). */
struct module_table {
    size_t n;                                 /* entries in use */
    struct smp_code_range ranges[SMP_CODEMAP_MAX];
    uint64_t file_offsets[SMP_CODEMAP_MAX];   /* offset in the file of ranges[i].start */
    uint32_t module_ids[SMP_CODEMAP_MAX];     /* the unwind-table module of each range
                                               * (libprof/uwtables.h), 0 none */
    uint32_t path_at[SMP_CODEMAP_MAX];        /* offset of its path in `paths` */
    size_t n_path_bytes;                      /* bytes of `paths` in use */
    char paths[LP_UNWIND_PATH_BYTES];         /* NUL-terminated paths, "" when anonymous */
};

static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER; /* serializes refreshes */
static struct module_table modules[2];
static struct smp_dbuf modules_dbuf;
static _Atomic int modules_loaded; /* 0 before the first load */
/* A fork child has its parent's code map, made under the map lock held across the fork:
 * its session starts from it (a pc outside it asks for a rescan, as in the parent). */
static int map_inherited;
static uint64_t last_rescan_ns;    /* when the writer last reread the maps on request */
static uint64_t map_read_ns;       /* when the maps were last read, for any reason */

/* Adds one /proc/self/maps line to t when it is executable. */
static void parse_maps_line(const char *line, struct module_table *t)
{
    struct cmn_maps_line m;
    if (t->n >= SMP_CODEMAP_MAX || cmn_maps_parse_line(line, &m) != 0)
        return;
    if (!(m.prot & PROF_MAP_EXEC)) {
        lp_uwtables_header(&m); /* where a module's ELF header may be */
        return;
    }
    const char *path = m.path;
    if (t->n_path_bytes + strlen(path) + 1 > sizeof(t->paths))
        path = ""; /* out of room: the range still counts as code, without its file */
    size_t len = strlen(path) + 1;
    memcpy(t->paths + t->n_path_bytes, path, len);
    t->ranges[t->n] = (struct smp_code_range){.start = (uintptr_t)m.start,
                                               .end = (uintptr_t)m.end};
    t->file_offsets[t->n] = m.offset;
    t->module_ids[t->n] = lp_uwtables_module(&m);
    t->path_at[t->n] = (uint32_t)t->n_path_bytes;
    t->n_path_bytes += len;
    t->n++;
}

int lp_unwind_module_at(uintptr_t pc, char *path, size_t cap, uint64_t *file_offset)
{
    if (!atomic_load_explicit(&modules_loaded, memory_order_acquire))
        return -ENOENT;
    int i = smp_dbuf_enter(&modules_dbuf);
    if (i < 0)
        return -ENOENT;
    const struct module_table *t = &modules[i];
    int rc = -ENOENT;
    size_t lo = 0, hi = t->n < SMP_CODEMAP_MAX ? t->n : SMP_CODEMAP_MAX;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (pc < t->ranges[mid].start) {
            hi = mid;
        } else if (pc >= t->ranges[mid].end) {
            lo = mid + 1;
        } else {
            const char *p = t->paths + t->path_at[mid];
            size_t len = strnlen(p, cap > 0 ? cap - 1 : 0);
            memcpy(path, p, len);
            if (cap > 0)
                path[len] = '\0';
            *file_offset = pc - t->ranges[mid].start + t->file_offsets[mid];
            rc = 0;
            break;
        }
    }
    smp_dbuf_leave(&modules_dbuf, i);
    return rc;
}

/* Gives range i of the module table ctx its module's unwind table, as far as it is built. */
static void annotate(struct smp_code_range *r, size_t i, void *ctx)
{
    const struct module_table *t = ctx;
    lp_uwtables_annotate(r, t->module_ids[i], t->file_offsets[i]);
}

/* Publishes the ranges of t as the code map; map_lock held. */
static void publish_code_map(struct module_table *t)
{
    lp_codemap_publish_with(t->ranges, t->n, annotate, t);
    lp_uwtables_published();
}

void lp_unwind_code_range(uintptr_t pc, uintptr_t *lo, uintptr_t *hi)
{
    *lo = *hi = 0;
    if (!atomic_load_explicit(&modules_loaded, memory_order_acquire))
        return;
    int i = smp_dbuf_enter(&modules_dbuf);
    if (i < 0)
        return;
    const struct module_table *t = &modules[i];
    for (size_t k = 0; k < t->n && k < SMP_CODEMAP_MAX; k++) {
        if (pc >= t->ranges[k].start && pc < t->ranges[k].end) {
            *lo = t->ranges[k].start;
            *hi = t->ranges[k].end;
            break;
        }
    }
    smp_dbuf_leave(&modules_dbuf, i);
}

/* Reads the executable ranges of /proc/self/maps (sorted by the kernel) and publishes them
 * to the handlers; map_lock held. Without the file, no map is published and every address
 * passes. */
static void load_code_map(char **keep)
{
    map_read_ns = cmn_clock_ns(CLOCK_MONOTONIC);
    char maps_path[64];
    char *text = lp_fd_slurp(lp_fd_self_path("maps", maps_path, sizeof(maps_path)), NULL);
    if (!text)
        return;
    if (keep)
        *keep = strdup(text);
    int j = smp_dbuf_spare(&modules_dbuf);
    struct module_table *t = &modules[j];
    t->n = 0;
    t->n_path_bytes = 0;
    char *save = NULL;
    lp_uwtables_scan_begin();
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        parse_maps_line(line, t);
    lp_uwtables_scan_end();
    free(text);
    publish_code_map(t);
    smp_dbuf_publish(&modules_dbuf, j);
    atomic_store_explicit(&modules_loaded, 1, memory_order_release);
}

void lp_unwind_serve(void)
{
    int rescan = atomic_load_explicit(&smp_codemap_rescan, memory_order_relaxed);
    uint64_t now = cmn_clock_ns(CLOCK_MONOTONIC);
    if (rescan && now - last_rescan_ns < LP_UNWIND_RESCAN_NS)
        rescan = 0; /* served at a later period: the flag stays set */
    if (!rescan && atomic_load(&smp_codemap_n_wanted) == lp_uwtables_served())
        return;
    pthread_mutex_lock(&map_lock);
    if (rescan) {
        atomic_store(&smp_codemap_rescan, 0);
        last_rescan_ns = now;
    }
    /* A module the map names was asked for: build it first, so that the map published
     * next has its table. */
    unsigned changed = lp_uwtables_build_wanted();
    if (rescan)
        load_code_map(NULL);
    else if (changed > 0)
        publish_code_map(&modules[atomic_load(&modules_dbuf.current) & 1]);
    pthread_mutex_unlock(&map_lock);
}

int lp_unwind_rescan_since(uint64_t time_ns)
{
    pthread_mutex_lock(&map_lock);
    uint64_t now = cmn_clock_ns(CLOCK_MONOTONIC);
    /* At most every LP_UNWIND_RESCAN_MIN_NS: a pc that no read of the maps places (a
     * corrupt frame's) must not make every sample read them. */
    int read = map_read_ns <= time_ns && now - map_read_ns >= LP_UNWIND_RESCAN_MIN_NS;
    if (read) {
        atomic_store(&smp_codemap_rescan, 0);
        last_rescan_ns = now;
        load_code_map(NULL);
    }
    pthread_mutex_unlock(&map_lock);
    return read;
}

void lp_unwind_build_all(void)
{
    pthread_mutex_lock(&map_lock);
    lp_uwtables_want_all();
    if (lp_uwtables_build_wanted() > 0)
        publish_code_map(&modules[atomic_load(&modules_dbuf.current) & 1]);
    pthread_mutex_unlock(&map_lock);
}

void lp_unwind_want_at(uintptr_t pc)
{
    struct smp_codemap_view v;
    smp_codemap_enter(&v);
    const struct smp_code_range *r = smp_codemap_view_find(&v, pc);
    if (r != NULL && r->table == NULL && r->module != 0)
        smp_codemap_want(r->module);
    smp_codemap_leave(&v);
}

uint64_t lp_unwind_table_bytes(uint64_t *n_tables)
{
    pthread_mutex_lock(&map_lock);
    uint64_t bytes = lp_uwtables_bytes();
    *n_tables = lp_uwtables_count();
    pthread_mutex_unlock(&map_lock);
    return bytes;
}

#ifdef PROF_HAVE_LIBUNWIND

#include <dlfcn.h>
#include <link.h>
#include <sys/uio.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "libprof/objects.h"
#include "sampler/walk_unw.h"

typedef int phdr_cb_fn(struct dl_phdr_info *, size_t, void *);

#if UINTPTR_MAX > 0xffffffffu
#define REL_SYM(info) ELF64_R_SYM(info)
#else
#define REL_SYM(info) ELF32_R_SYM(info)
#endif

#define LP_UNWIND_SNAP_PHDRS 16384u /* program headers a snapshot holds, all objects */

/* A copy of what dl_iterate_phdr() would list, built from lp_objects_scan(); the program
 * headers and names the entries point to are copies too, in the snapshot itself. */
struct snapshot {
    size_t n_objects;                                   /* entries in use */
    struct dl_phdr_info objects[LP_UNWIND_MAX_OBJECTS];
    size_t n_phdrs;                                     /* entries of phdrs in use */
    ElfW(Phdr) phdrs[LP_UNWIND_SNAP_PHDRS];
    size_t n_name_bytes;                                /* bytes of names in use */
    char names[LP_UNWIND_PATH_BYTES];
};

static struct snapshot *snaps[2]; /* mapped at init, never unmapped; the spare written by
                                   * take_snapshot() under map_lock */
static struct smp_dbuf snaps_dbuf;
static _Atomic int snaps_ready;   /* 0 until the first snapshot */
static int ready;                 /* lp_unwind_init(PROF_UNWIND_LIBUNWIND) done */

/* Adds object o to snapshot s; 0, or -1 when s is full. */
static int add_to_snapshot(struct snapshot *s, const struct lp_object *o)
{
    size_t name_len = strlen(o->path) + 1;
    if (s->n_objects >= LP_UNWIND_MAX_OBJECTS || s->n_phdrs + o->phnum > LP_UNWIND_SNAP_PHDRS ||
        s->n_name_bytes + name_len > sizeof(s->names))
        return -1;
    ElfW(Phdr) *ph = &s->phdrs[s->n_phdrs];
    memcpy(ph, o->phdrs, o->phnum * sizeof(*ph));
    char *name = &s->names[s->n_name_bytes];
    memcpy(name, o->path, name_len);
    s->objects[s->n_objects++] = (struct dl_phdr_info){
        .dlpi_addr = o->bias, .dlpi_name = name, .dlpi_phdr = ph, .dlpi_phnum = o->phnum};
    s->n_phdrs += o->phnum;
    s->n_name_bytes += name_len;
    return 0;
}

/* Takes a new snapshot of the loaded objects; map_lock held. */
static void take_snapshot(void)
{
    struct lp_objects objects;
    if (lp_objects_scan(&objects) != 0)
        return;
    int j = smp_dbuf_spare(&snaps_dbuf);
    struct snapshot *s = snaps[j];
    s->n_objects = s->n_phdrs = s->n_name_bytes = 0;
    for (size_t i = 0; i < objects.n && add_to_snapshot(s, &objects.v[i]) == 0; i++)
        continue;
    lp_objects_free(&objects);
    smp_dbuf_publish(&snaps_dbuf, j);
    atomic_store_explicit(&snaps_ready, 1, memory_order_release);
}

int lp_unwind_serving_phdr(void)
{
    return smp_unw_busy && atomic_load_explicit(&snaps_ready, memory_order_acquire);
}

int lp_unwind_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
    int i = smp_dbuf_enter(&snaps_dbuf);
    if (i < 0)
        return 0;
    const struct snapshot *s = snaps[i];
    int rc = 0;
    for (size_t k = 0; k < s->n_objects && rc == 0; k++) {
        struct dl_phdr_info info = s->objects[k];
        rc = cb(&info, sizeof(info), data);
    }
    smp_dbuf_leave(&snaps_dbuf, i);
    return rc;
}

/* libunwind is loaded only for PROF_UNWIND=libunwind: dlopen() and the functions by their
 * real names (libunwind.h maps unw_step to _ULx86_64_step and so on; LP_UNW_NAME expands
 * the macro, then quotes it). */
#define LP_UNW_QUOTE(x) #x
#define LP_UNW_NAME(x) LP_UNW_QUOTE(x)

static struct {
    int (*getcontext)(unw_context_t *);
    int (*init_local)(unw_cursor_t *, unw_context_t *);
    int (*step)(unw_cursor_t *);
    int (*get_reg)(unw_cursor_t *, unw_regnum_t, unw_word_t *);
    int (*set_caching_policy)(unw_addr_space_t, unw_caching_policy_t);
    void *get_proc_info;
    unw_addr_space_t *local_addr_space;
} unw;

/* libunwind's imports that touch descriptors or the signal mask, and our stand-ins
 * (sampler/walk_unw.h). */
static const struct {
    const char *name;
    void *to;
} redirects[] = {
    {"pipe2", (void *)smp_unw_pipe2}, {"read", (void *)smp_unw_read},
    {"write", (void *)smp_unw_write}, {"close", (void *)smp_unw_close},
    {"syscall", (void *)smp_unw_syscall},
    {"sigprocmask", (void *)smp_unw_sigprocmask},
};

/* A dynamic-section address: glibc relocates them in place on this architecture; one that
 * was left as it was linked is below the load bias. */
static uintptr_t dyn_addr(const struct link_map *lm, ElfW(Addr) v)
{
    return v < lm->l_addr ? lm->l_addr + v : v;
}

/* Points one relocated slot at `to`. A slot in a read-only page (full RELRO, which
 * process_vm_writev(2) refuses to write) is made writable for the store, then read-only
 * again. */
static void patch_slot(uintptr_t slot, void *to)
{
    struct iovec local = {.iov_base = &to, .iov_len = sizeof(to)};
    struct iovec remote = {.iov_base = (void *)slot, .iov_len = sizeof(to)};
    if (process_vm_writev(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)sizeof(to))
        return;
    long page = sysconf(_SC_PAGESIZE);
    void *at = (void *)(slot & ~(uintptr_t)(page - 1));
    if (mprotect(at, (size_t)page, PROT_READ | PROT_WRITE) != 0)
        return;
    __atomic_store_n((void **)slot, to, __ATOMIC_RELAXED);
    mprotect(at, (size_t)page, PROT_READ);
}

/* Redirects libunwind's imports (see sampler/walk_unw.h) in the copy we loaded: its
 * relocations (DT_JMPREL, DT_RELA) that name one of the functions above. 0, or -ENOENT
 * when the library's dynamic section cannot be read. */
static int redirect_imports(void *lib)
{
    struct link_map *lm;
    if (dlinfo(lib, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !lm->l_ld)
        return -ENOENT;
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const ElfW(Rela) *rel[2] = {NULL, NULL};
    size_t rel_bytes[2] = {0, 0};
    for (const ElfW(Dyn) *d = lm->l_ld; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_SYMTAB: symtab = (const ElfW(Sym) *)dyn_addr(lm, d->d_un.d_ptr); break;
        case DT_STRTAB: strtab = (const char *)dyn_addr(lm, d->d_un.d_ptr); break;
        case DT_JMPREL: rel[0] = (const ElfW(Rela) *)dyn_addr(lm, d->d_un.d_ptr); break;
        case DT_PLTRELSZ: rel_bytes[0] = d->d_un.d_val; break;
        case DT_RELA: rel[1] = (const ElfW(Rela) *)dyn_addr(lm, d->d_un.d_ptr); break;
        case DT_RELASZ: rel_bytes[1] = d->d_un.d_val; break;
        default: break;
        }
    }
    if (!symtab || !strtab)
        return -ENOENT;
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; rel[k] && i < rel_bytes[k] / sizeof(ElfW(Rela)); i++) {
            size_t sym = REL_SYM(rel[k][i].r_info);
            if (sym == 0)
                continue;
            const char *name = strtab + symtab[sym].st_name;
            for (size_t r = 0; r < sizeof(redirects) / sizeof(redirects[0]); r++)
                if (strcmp(name, redirects[r].name) == 0)
                    patch_slot(lm->l_addr + rel[k][i].r_offset, redirects[r].to);
        }
    }
    return 0;
}

/* Loads libunwind with libc's dlopen: ours would refresh the tables, whose lock the caller
 * holds. The caller loads the tables afterwards. */
static int load_libunwind(void)
{
    lp_libc_init();
    void *lib = lp_libc.dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        lib = lp_libc.dlopen("libunwind.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return -ENOENT;
    void *init_local2 = dlsym(lib, LP_UNW_NAME(unw_init_local2));
    unw.getcontext = (int (*)(unw_context_t *))dlsym(lib, LP_UNW_NAME(unw_tdep_getcontext));
    unw.init_local = (int (*)(unw_cursor_t *, unw_context_t *))dlsym(
        lib, LP_UNW_NAME(unw_init_local));
    unw.step = (int (*)(unw_cursor_t *))dlsym(lib, LP_UNW_NAME(unw_step));
    unw.get_reg = (int (*)(unw_cursor_t *, unw_regnum_t, unw_word_t *))dlsym(
        lib, LP_UNW_NAME(unw_get_reg));
    unw.set_caching_policy = (int (*)(unw_addr_space_t, unw_caching_policy_t))dlsym(
        lib, LP_UNW_NAME(unw_set_caching_policy));
    unw.local_addr_space = (unw_addr_space_t *)dlsym(lib, LP_UNW_NAME(unw_local_addr_space));
    unw.get_proc_info = dlsym(lib, LP_UNW_NAME(unw_get_proc_info));
    if (!init_local2 || !unw.getcontext || !unw.init_local || !unw.step || !unw.get_reg ||
        !unw.set_caching_policy || !unw.local_addr_space || !unw.get_proc_info)
        return -ENOENT; /* libunwind stays loaded: it may be the application's too */
    /* Before libunwind's first unwind, which opens its validation pipe. */
    if (redirect_imports(lib) != 0)
        return -ENOENT;
    smp_walk_unw_set_api(init_local2, (void *)unw.step, (void *)unw.get_reg, unw.get_proc_info);
    return 0;
}

/* Unwinds this thread's own stack once, through the handler's code path, so that the
 * lazy bindings libunwind uses are in place before a signal needs them. */
static void warm_up(void)
{
    unw_context_t uc;
    unw_cursor_t cursor;
    if (unw.getcontext(&uc) != 0 || unw.init_local(&cursor, &uc) != 0)
        return;
    smp_unw_busy = 1;
    for (int i = 0; i < 64 && unw.step(&cursor) > 0; i++) {
        unw_word_t ip;
        unw.get_reg(&cursor, UNW_REG_IP, &ip);
    }
    smp_unw_busy = 0;
}

static int map_snapshots(void)
{
    for (int i = 0; i < 2; i++) {
        void *m = mmap(NULL, sizeof(struct snapshot), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return -ENOMEM;
        snaps[i] = m;
    }
    return 0;
}

/* map_lock held; the code map is loaded after, with libunwind's own mappings in it. */
static int init_libunwind(void)
{
    if (map_snapshots() != 0 || load_libunwind() != 0)
        return -ENOTSUP;
    /* No register-state cache: its global form takes a mutex in every step (see
     * sampler/walk_unw.h). */
    unw.set_caching_policy(*unw.local_addr_space, UNW_CACHE_NONE);
    take_snapshot();
    warm_up();
    ready = 1;
    smp_unw_enabled = 1;
    return 0;
}

void lp_unwind_use_as_oracle(void)
{
    smp_unw_enabled = 0; /* the handler walks with the tables, then asks libunwind too */
}

int lp_unwind_init(unsigned unwinder, char **maps_text)
{
    if (maps_text)
        *maps_text = NULL;
    smp_probe_init();
    lp_uwcache_init();
    pthread_mutex_lock(&map_lock);
    int rc = 0;
    if (unwinder == PROF_UNWIND_LIBUNWIND && !ready)
        rc = init_libunwind();
    if (!map_inherited || !atomic_load(&modules_loaded))
        load_code_map(maps_text);
    map_inherited = 0;
    pthread_mutex_unlock(&map_lock);
    return rc;
}

void lp_unwind_refresh(void)
{
    pthread_mutex_lock(&map_lock);
    load_code_map(NULL);
    if (ready)
        take_snapshot();
    pthread_mutex_unlock(&map_lock);
}

void lp_unwind_unload_begin(void)
{
    if (ready)
        smp_walk_unw_pause();
}

void lp_unwind_unload_end(void)
{
    lp_unwind_refresh();
    if (ready)
        smp_walk_unw_resume();
}

void lp_unwind_fork_prepare(void)
{
    pthread_mutex_lock(&map_lock);
    if (ready)
        smp_walk_unw_pause(); /* no handler is inside libunwind at the fork */
}

void lp_unwind_fork_parent(void)
{
    if (ready)
        smp_walk_unw_resume();
    pthread_mutex_unlock(&map_lock);
}

void lp_unwind_fork_child(void)
{
    lp_uwtables_fork_child();
    smp_walk_unw_after_fork();
    smp_dbuf_reset(&snaps_dbuf);
    smp_dbuf_reset(&modules_dbuf);
    smp_dbuf_reset(&smp_codemap.dbuf);
    map_inherited = 1;
    pthread_mutex_unlock(&map_lock);
}

#else

int lp_unwind_init(unsigned unwinder, char **maps_text)
{
    if (maps_text)
        *maps_text = NULL;
    smp_probe_init();
    lp_uwcache_init();
    pthread_mutex_lock(&map_lock);
    if (!map_inherited || !atomic_load(&modules_loaded))
        load_code_map(maps_text);
    map_inherited = 0;
    pthread_mutex_unlock(&map_lock);
    return unwinder == PROF_UNWIND_LIBUNWIND ? -ENOTSUP : 0;
}

void lp_unwind_refresh(void)
{
    pthread_mutex_lock(&map_lock);
    load_code_map(NULL);
    pthread_mutex_unlock(&map_lock);
}

void lp_unwind_unload_begin(void)
{
}

void lp_unwind_unload_end(void)
{
    lp_unwind_refresh();
}

void lp_unwind_use_as_oracle(void)
{
}

/* Without libunwind no walk ever needs the loader's list served from a snapshot. */
int lp_unwind_serving_phdr(void)
{
    return 0;
}

int lp_unwind_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
    (void)cb;
    (void)data;
    return 0;
}

void lp_unwind_fork_prepare(void)
{
    pthread_mutex_lock(&map_lock);
}

void lp_unwind_fork_parent(void)
{
    pthread_mutex_unlock(&map_lock);
}

void lp_unwind_fork_child(void)
{
    lp_uwtables_fork_child();
    smp_dbuf_reset(&modules_dbuf);
    smp_dbuf_reset(&smp_codemap.dbuf);
    map_inherited = 1;
    pthread_mutex_unlock(&map_lock);
}

#endif
