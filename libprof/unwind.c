/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Stepper setup outside the handler (see unwind.h). The snapshot is double-buffered: a
 * refresh fills the buffer no handler reads, then publishes it with one atomic store, so
 * a handler iterating the current one never sees it change. Two refreshes in a row could
 * overwrite a buffer a slow handler still reads; refreshes happen at dlopen()/dlclose(),
 * far apart compared with one unwind. Refreshes are serialized by a mutex (never taken in
 * a handler).
 */
#include "libprof/unwind.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "include/prof_format.h"
#include "include/prof_record.h"
#include "sampler/codemap.h"
#include "sampler/probe.h"

/* The executable mappings with their files, for lp_unwind_module_at(): two tables that
 * alternate like the code map's (publish the one handlers do not read). */
struct module_table {
    size_t n;                                 /* entries in use */
    struct smp_code_range ranges[SMP_CODEMAP_MAX];
    uint64_t file_offsets[SMP_CODEMAP_MAX];   /* offset in the file of ranges[i].start */
    uint32_t path_at[SMP_CODEMAP_MAX];        /* offset of its path in `paths` */
    size_t n_path_bytes;                      /* bytes of `paths` in use */
    char paths[LP_UNWIND_PATH_BYTES];         /* NUL-terminated paths, "" when anonymous */
};

static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER; /* load_code_map() callers */
static struct module_table modules[2];
static _Atomic(struct module_table *) modules_now; /* NULL before the first load */

/* The table a load fills: the one handlers are not reading. */
static struct module_table *spare_modules(void)
{
    return atomic_load(&modules_now) == &modules[0] ? &modules[1] : &modules[0];
}

/* Adds one /proc/self/maps line to t when it is executable. */
static void parse_maps_line(const char *line, struct module_table *t)
{
    struct prof_maps_line m;
    if (t->n >= SMP_CODEMAP_MAX || prof_maps_parse_line(line, &m) != 0 ||
        !(m.prot & PROF_MAP_EXEC))
        return;
    const char *path = m.path;
    if (t->n_path_bytes + strlen(path) + 1 > sizeof(t->paths))
        path = ""; /* out of room: the range still counts as code, without its file */
    size_t len = strlen(path) + 1;
    memcpy(t->paths + t->n_path_bytes, path, len);
    t->ranges[t->n] = (struct smp_code_range){.start = (uintptr_t)m.start,
                                               .end = (uintptr_t)m.end,
                                               .readable = (m.prot & PROF_MAP_READ) != 0};
    t->file_offsets[t->n] = m.offset;
    t->path_at[t->n] = (uint32_t)t->n_path_bytes;
    t->n_path_bytes += len;
    t->n++;
}

int lp_unwind_module_at(uintptr_t pc, const char **path, uint64_t *file_offset)
{
    const struct module_table *t = atomic_load_explicit(&modules_now, memory_order_acquire);
    size_t lo = 0, hi = t != NULL ? t->n : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (pc < t->ranges[mid].start) {
            hi = mid;
        } else if (pc >= t->ranges[mid].end) {
            lo = mid + 1;
        } else {
            *path = t->paths + t->path_at[mid];
            *file_offset = pc - t->ranges[mid].start + t->file_offsets[mid];
            return 0;
        }
    }
    return -ENOENT;
}

/* Reads the executable ranges of /proc/self/maps (sorted by the kernel) and publishes them
 * to the handlers. Without the file, no map is published and every address passes. */
static void load_code_map(void)
{
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    char buf[8192];
    size_t have = 0;
    struct module_table *t = spare_modules();
    t->n = 0;
    t->n_path_bytes = 0;
    for (;;) {
        ssize_t got = read(fd, buf + have, sizeof(buf) - 1 - have);
        if (got <= 0)
            break;
        have += (size_t)got;
        buf[have] = '\0';
        char *line = buf, *nl;
        while ((nl = strchr(line, '\n')) != NULL) {
            *nl = '\0';
            parse_maps_line(line, t);
            line = nl + 1;
        }
        have = (size_t)(buf + have - line);
        memmove(buf, line, have);
        if (have == sizeof(buf) - 1)
            have = 0; /* a line longer than the buffer: skip it */
    }
    close(fd);
    smp_codemap_publish(t->ranges, t->n);
    atomic_store_explicit(&modules_now, t, memory_order_release);
}

#ifdef PROF_HAVE_LIBUNWIND

#include <dlfcn.h>
#include <link.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "sampler/walk_unw.h"

typedef int phdr_cb_fn(struct dl_phdr_info *, size_t, void *);

struct snapshot {
    size_t n_objects;                                 /* entries in use */
    struct dl_phdr_info objects[LP_UNWIND_MAX_OBJECTS]; /* copies of the loader's records */
};

static struct snapshot snaps[2];         /* written by refresh under `lock` */
static _Atomic(struct snapshot *) current; /* what handlers iterate; NULL before init */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* serializes take_snapshot() */
static int ready;                        /* lp_unwind_init(PROF_UNWIND_LIBUNWIND) done */

static int copy_object(struct dl_phdr_info *info, size_t size, void *data)
{
    struct snapshot *s = data;
    (void)size;
    if (s->n_objects >= LP_UNWIND_MAX_OBJECTS)
        return 1;
    s->objects[s->n_objects++] = *info;
    return 0;
}

static void take_snapshot(void)
{
    pthread_mutex_lock(&lock);
    struct snapshot *s = atomic_load(&current) == &snaps[0] ? &snaps[1] : &snaps[0];
    s->n_objects = 0;
    /* Not from a handler: the interposer (libprof/interpose.c) forwards to glibc's. */
    dl_iterate_phdr(copy_object, s);
    atomic_store_explicit(&current, s, memory_order_release);
    pthread_mutex_unlock(&lock);
}

/* Lock-free: iterates the published snapshot. */
static int iterate_snapshot(phdr_cb_fn *cb, void *data)
{
    struct snapshot *s = atomic_load_explicit(&current, memory_order_acquire);
    int rc = 0;
    for (size_t i = 0; s != NULL && i < s->n_objects && rc == 0; i++) {
        struct dl_phdr_info info = s->objects[i];
        rc = cb(&info, sizeof(info), data);
    }
    return rc;
}

int lp_unwind_serving_phdr(void)
{
    return smp_unw_busy && atomic_load_explicit(&current, memory_order_acquire) != NULL;
}

int lp_unwind_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
    return iterate_snapshot(cb, data);
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
    unw_addr_space_t *local_addr_space;
} unw;

static int load_libunwind(void)
{
    void *lib = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        lib = dlopen("libunwind.so", RTLD_NOW | RTLD_LOCAL);
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
    if (!init_local2 || !unw.getcontext || !unw.init_local || !unw.step || !unw.get_reg ||
        !unw.set_caching_policy || !unw.local_addr_space)
        return -ENOENT; /* libunwind stays loaded: it may be the application's too */
    smp_walk_unw_set_api(init_local2, (void *)unw.step, (void *)unw.get_reg);
    return 0;
}

/* Unwinds this thread's own stack once, through the handler's code path, so that the
 * lazy bindings and caches libunwind uses are in place before a signal needs them. */
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

int lp_unwind_init(unsigned unwinder)
{
    smp_probe_init();
    pthread_mutex_lock(&map_lock);
    load_code_map();
    pthread_mutex_unlock(&map_lock);
    if (unwinder != PROF_UNWIND_LIBUNWIND || ready)
        return 0;
    if (load_libunwind() != 0)
        return -ENOTSUP;
    unw.set_caching_policy(*unw.local_addr_space, UNW_CACHE_PER_THREAD);
    take_snapshot();
    warm_up();
    ready = 1;
    smp_unw_enabled = 1;
    return 0;
}

void lp_unwind_refresh(void)
{
    pthread_mutex_lock(&map_lock);
    load_code_map();
    pthread_mutex_unlock(&map_lock);
    if (ready)
        take_snapshot();
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

#else

int lp_unwind_init(unsigned unwinder)
{
    smp_probe_init();
    pthread_mutex_lock(&map_lock);
    load_code_map();
    pthread_mutex_unlock(&map_lock);
    return unwinder == PROF_UNWIND_LIBUNWIND ? -ENOTSUP : 0;
}

void lp_unwind_refresh(void)
{
    pthread_mutex_lock(&map_lock);
    load_code_map();
    pthread_mutex_unlock(&map_lock);
}

void lp_unwind_unload_begin(void)
{
}

void lp_unwind_unload_end(void)
{
    lp_unwind_refresh();
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

#endif
