/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The unwind-table cache (see uwcache.h). File layout:
 *
 *   struct header (72 bytes: magic, the table format's magic, the ELF machine, the
 *                  table's size, the fingerprint, the build-id)
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
#include "libprof/log.h"

/* "UWC6": the fingerprint hashed in four lanes (UWC5: Go's cgo call rows, CMN_UW_GO_CGO;
 * UWC4: the fingerprint hashed by words; UWC3: by bytes; UWC2: the build-id alone) */
#define UWC_MAGIC 0x36435755u
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
    uint64_t fingerprint; /* lp_uwcache_key's */
    uint8_t build_id[40];
};

static char dir[PATH_MAX]; /* "" when there is no cache */
static int is_refused;     /* the directory was found unsafe: said once */

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

int lp_uwcache_is_on(void)
{
    return dir[0] != '\0' && getuid() == geteuid() && getgid() == getegid();
}

/* The cache directory, opened without following a link, when it is the effective user's
 * alone; -1 otherwise (said once, in a note). No cache while the effective and real users
 * or groups differ: a privileged process never reads another user's tables. */
static int open_dir(void)
{
    if (!lp_uwcache_is_on())
        return -1;
    int fd = lp_fd_open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_uid == geteuid() && (st.st_mode & 077) == 0)
        return fd;
    lp_fd_close(fd);
    if (!is_refused)
        lp_note("the unwind-table cache %s is not a directory of this user's closed to others "
                "(mode 0700): not used", dir);
    is_refused = 1;
    return -1;
}

/* The cache file's name for a key (in the directory); 0, or -1 when there is none. */
static int name_of(const struct lp_uwcache_key *k, char *out, size_t cap)
{
    if (k->build_id_len == 0 || k->build_id_len > sizeof(((struct header *)0)->build_id) ||
        cap < 2 * k->build_id_len + 8)
        return -1;
    for (size_t i = 0; i < k->build_id_len; i++)
        snprintf(out + 2 * i, 3, "%02x", k->build_id[i]);
    snprintf(out + 2 * k->build_id_len, 5, ".uwt");
    return 0;
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

/* Reads all of the file into mem (size bytes). 0 or -1. */
static int read_all(int fd, void *mem, size_t size)
{
    for (size_t got = 0; got < size;) {
        ssize_t n = pread(fd, (char *)mem + got, size - got, (off_t)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        got += (size_t)n;
    }
    return 0;
}

const struct cmn_uw_table *lp_uwcache_load(const struct lp_uwcache_key *k, uint64_t *bytes)
{
    char name[96];
    int dfd = name_of(k, name, sizeof(name)) == 0 ? open_dir() : -1;
    if (dfd < 0)
        return NULL;
    int fd = lp_fd_openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0);
    lp_fd_close(dfd);
    if (fd < 0)
        return NULL;
    struct stat st;
    void *mem = MAP_FAILED;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
        st.st_size > (off_t)sizeof(struct header) && st.st_size < (off_t)UWC_MAX_BYTES)
        mem = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    /* A copy, checked once it is ours: the file may change or be cut meanwhile. Its pages
     * are made at the mmap, in one call (half the CPU of a fault for each page the read
     * would take here), not mapped from the file: a file cut under a mapping raises
     * SIGBUS in whoever reads it, the signal handler among them. */
    int rc = mem == MAP_FAILED ? -1 : read_all(fd, mem, (size_t)st.st_size);
    lp_fd_close(fd);
    if (mem == MAP_FAILED)
        return NULL;
    const struct header *h = mem;
    const struct cmn_uw_table *t = (const struct cmn_uw_table *)(h + 1);
    if (rc == 0 && h->magic == UWC_MAGIC && h->table_magic == CMN_UW_MAGIC &&
        h->machine == UWC_MACHINE && h->build_id_len == k->build_id_len &&
        memcmp(h->build_id, k->build_id, k->build_id_len) == 0 &&
        h->fingerprint == k->fingerprint &&
        h->table_bytes == (uint64_t)st.st_size - sizeof(*h) && table_holds(t, h->table_bytes)) {
        mprotect(mem, (size_t)st.st_size, PROT_READ);
        *bytes = (uint64_t)st.st_size;
        return t;
    }
    munmap(mem, (size_t)st.st_size);
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

void lp_uwcache_store(const struct lp_uwcache_key *k, const struct cmn_uw_table *t)
{
    char name[96], tmp[128];
    if (name_of(k, name, sizeof(name)) != 0 || dir[0] == '\0' || make_dir() != 0)
        return;
    int dfd = open_dir();
    if (dfd < 0)
        return;
    snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", name, (long)getpid());
    int fd = lp_fd_openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
    if (fd < 0) {
        lp_fd_close(dfd);
        return;
    }
    struct header h = {.magic = UWC_MAGIC, .table_magic = CMN_UW_MAGIC,
                       .machine = UWC_MACHINE, .build_id_len = (uint32_t)k->build_id_len,
                       .table_bytes = t->total_bytes, .fingerprint = k->fingerprint};
    memcpy(h.build_id, k->build_id, k->build_id_len);
    int ok = lp_fd_write_all(fd, &h, sizeof(h)) == 0 &&
             lp_fd_write_all(fd, t, (size_t)t->total_bytes) == 0;
    lp_fd_close(fd);
    if (!ok || renameat(dfd, tmp, dfd, name) != 0)
        unlinkat(dfd, tmp, 0);
    lp_fd_close(dfd);
}
