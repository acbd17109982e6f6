/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The unwind-table cache (see uwcache.h). File layout:
 *
 *   struct header (64 bytes: magic, the table format's magic, the ELF machine, the
 *                  table's size, the build-id)
 *   the table, as cmn_uw_table_layout() lays it out, total_bytes long
 */
#include "libprof/uwcache.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/uw_table.h"
#include "libprof/fd.h"

#define UWC_MAGIC 0x32435755u /* "UWC2": tables with the C runtime's _init (UWC1: without) */
#define UWC_MAX_BYTES (256u << 20)

#if defined(__x86_64__)
#define UWC_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define UWC_MACHINE EM_AARCH64
#endif

struct header {
    uint32_t magic;       /* UWC_MAGIC */
    uint32_t table_magic; /* CMN_UW_MAGIC: the table's format */
    uint32_t machine;     /* EM_*: the registers its rules name */
    uint32_t build_id_len;
    uint64_t table_bytes; /* what follows */
    uint8_t build_id[40];
};

static char dir[PATH_MAX]; /* "" when there is no cache */

void lp_uwcache_init(void)
{
    dir[0] = '\0';
    if (getauxval(AT_SECURE))
        return;
    const char *own = getenv("LIBPROF_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    int n = -1;
    if (own != NULL)
        n = own[0] ? snprintf(dir, sizeof(dir), "%s/unwind", own) : -1;
    else if (xdg != NULL && xdg[0] == '/')
        n = snprintf(dir, sizeof(dir), "%s/prof/unwind", xdg);
    else if (home != NULL && home[0] == '/')
        n = snprintf(dir, sizeof(dir), "%s/.cache/prof/unwind", home);
    if (n < 0 || (size_t)n >= sizeof(dir))
        dir[0] = '\0';
}

/* The cache file's path for a build-id; 0, or -1 when there is no cache. */
static int path_of(const uint8_t *id, size_t len, char *out, size_t cap)
{
    if (dir[0] == '\0' || len == 0 || len > sizeof(((struct header *)0)->build_id))
        return -1;
    char hex[2 * 40 + 1];
    for (size_t i = 0; i < len; i++)
        snprintf(hex + 2 * i, 3, "%02x", id[i]);
    int n = snprintf(out, cap, "%s/%s.uwt", dir, hex);
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

/* 1 when the table's arrays lie inside its bytes and its page index stays within its rows:
 * whatever else the file holds, a lookup then reads only inside it. */
static int table_holds(const struct cmn_uw_table *t, uint64_t bytes)
{
    if (bytes < sizeof(*t) || t->magic != CMN_UW_MAGIC || t->total_bytes != bytes ||
        t->size == 0 || t->size >= (1ull << 32) ||
        t->n_pages != (t->size + (1u << CMN_UW_PAGE_SHIFT) - 1) >> CMN_UW_PAGE_SHIFT ||
        t->pages_at != sizeof(*t) ||
        t->pcs_at != t->pages_at + 4ull * (t->n_pages + 1ull) ||
        t->rules_at != t->pcs_at + 4ull * t->n_rows ||
        cmn_uw_table_bytes(t->n_rows, t->size) != bytes)
        return 0;
    const uint32_t *first = cmn_uw_pages(t);
    for (uint32_t p = 0; p <= t->n_pages; p++)
        if (first[p] > t->n_rows || (p > 0 && first[p] < first[p - 1]))
            return 0;
    return 1;
}

const struct cmn_uw_table *lp_uwcache_load(const uint8_t *build_id, size_t len, uint64_t *bytes)
{
    char path[PATH_MAX];
    if (path_of(build_id, len, path, sizeof(path)) != 0)
        return NULL;
    int fd = lp_fd_open(path, O_RDONLY | O_NOFOLLOW, 0);
    if (fd < 0)
        return NULL;
    struct stat st;
    void *map = MAP_FAILED;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > (off_t)sizeof(struct header) &&
        st.st_size < (off_t)UWC_MAX_BYTES)
        map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    lp_fd_close(fd);
    if (map == MAP_FAILED)
        return NULL;
    const struct header *h = map;
    const struct cmn_uw_table *t = (const struct cmn_uw_table *)(h + 1);
    if (h->magic == UWC_MAGIC && h->table_magic == CMN_UW_MAGIC && h->machine == UWC_MACHINE &&
        h->build_id_len == len && memcmp(h->build_id, build_id, len) == 0 &&
        h->table_bytes == (uint64_t)st.st_size - sizeof(*h) && table_holds(t, h->table_bytes)) {
        *bytes = (uint64_t)st.st_size;
        return t;
    }
    munmap(map, (size_t)st.st_size);
    return NULL;
}

/* mkdir -p of the cache directory, each part private to its user. */
static int make_dir(void)
{
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s", dir);
    for (char *s = p + 1;; s++) {
        if (*s == '/' || *s == '\0') {
            char c = *s;
            *s = '\0';
            if (mkdir(p, 0700) != 0 && errno != EEXIST)
                return -1;
            *s = c;
            if (c == '\0')
                return 0;
        }
    }
}

void lp_uwcache_store(const uint8_t *build_id, size_t len, const struct cmn_uw_table *t)
{
    char path[PATH_MAX], tmp[PATH_MAX + 32];
    if (path_of(build_id, len, path, sizeof(path)) != 0 || make_dir() != 0)
        return;
    snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
    int fd = lp_fd_open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
    if (fd < 0)
        return;
    struct header h = {.magic = UWC_MAGIC, .table_magic = CMN_UW_MAGIC,
                       .machine = UWC_MACHINE, .build_id_len = (uint32_t)len,
                       .table_bytes = t->total_bytes};
    memcpy(h.build_id, build_id, len);
    int ok = lp_fd_write_all(fd, &h, sizeof(h)) == 0 &&
             lp_fd_write_all(fd, t, (size_t)t->total_bytes) == 0;
    lp_fd_close(fd);
    if (!ok || rename(tmp, path) != 0)
        unlink(tmp);
}
