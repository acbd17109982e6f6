/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Loaded objects from /proc/self/maps and their headers in memory (see objects.h). The
 * maps lines of one file come together, the offset-0 mapping first: an object starts at a
 * readable offset-0 mapping of a file (or of the vDSO) whose first bytes are an ELF header
 * of this machine's class, and extends over the following lines of the same file.
 */
#include "libprof/objects.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/build_id.h"
#include "common/grow.h"
#include "common/maps_line.h"
#include "libprof/fd.h"

#define LP_OBJECT_NOTES_MAX 4096u /* bytes of a note segment read for the build-id */
#define LP_OBJECT_HEAD 4096u      /* bytes of an object's first mapping read at once */

int lp_objects_read_memory(void *dst, uintptr_t addr, size_t n)
{
    struct iovec local = {.iov_base = dst, .iov_len = n};
    struct iovec remote = {.iov_base = (void *)addr, .iov_len = n};
    int saved = errno;
    /* Named by this thread's id: once the main thread has called pthread_exit(), the
     * process's id names a zombie without memory. */
    long tid = syscall(SYS_gettid);
    ssize_t got = syscall(SYS_process_vm_readv, tid, &local, 1UL, &remote, 1UL, 0UL);
    int err = errno;
    errno = saved;
    if (got == (ssize_t)n)
        return 0;
    return got < 0 && (err == ENOSYS || err == EPERM) ? -ENOSYS : -EFAULT;
}

/* Where an object's bytes come from: its memory, or (when the kernel call is refused) its
 * file, at file offsets; the vDSO, which has no file and is never unmapped, directly. */
struct source {
    uintptr_t base; /* memory address of file offset 0 */
    int fd;         /* the file, -1 when not opened (yet) */
    const char *path;
    int is_vdso;
    /* The first bytes of the object's memory, read in one call: its ELF header, program
     * headers and build-id note are nearly always there (one read, not four). */
    unsigned char *head;
    size_t head_len; /* 0: not read */
};

/* n bytes at file offset off of the object (which, for the headers and the notes, lie in
 * its first mapping or in a segment at p_vaddr). mem_addr: where they are in memory. */
static int read_object(struct source *s, uintptr_t mem_addr, uint64_t off, void *dst, size_t n)
{
    if (mem_addr >= s->base && n <= s->head_len && mem_addr - s->base <= s->head_len - n) {
        memcpy(dst, s->head + (mem_addr - s->base), n);
        return 0;
    }
    int rc = lp_objects_read_memory(dst, mem_addr, n);
    if (rc != -ENOSYS)
        return rc;
    if (s->is_vdso) {
        memcpy(dst, (const void *)mem_addr, n);
        return 0;
    }
    struct stat st;
    if (s->fd < 0 && (s->fd = lp_fd_open_regular(s->path, O_RDONLY, 0, &st, NULL)) < 0)
        return -ENOENT;
    return pread(s->fd, dst, n, (off_t)off) == (ssize_t)n ? 0 : -EIO;
}

static int is_elf_here(const ElfW(Ehdr) *eh)
{
    return memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 &&
           eh->e_ident[EI_CLASS] == (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) &&
           eh->e_phentsize == sizeof(ElfW(Phdr)) && eh->e_phnum > 0;
}

/* The build-id from the object's note segments. */
static void read_build_id(struct source *s, struct lp_object *o)
{
    unsigned char *notes = malloc(LP_OBJECT_NOTES_MAX);
    for (unsigned i = 0; notes && i < o->phnum && o->build_id_len == 0; i++) {
        const ElfW(Phdr) *ph = &o->phdrs[i];
        if (ph->p_type != PT_NOTE || ph->p_filesz == 0)
            continue;
        size_t n = ph->p_filesz < LP_OBJECT_NOTES_MAX ? ph->p_filesz : LP_OBJECT_NOTES_MAX;
        if (read_object(s, o->bias + ph->p_vaddr, ph->p_offset, notes, n) == 0)
            o->build_id_len = cmn_build_id_note(notes, n, o->build_id, sizeof(o->build_id));
    }
    free(notes);
}

/* Fills o from the ELF header at s->base; 0, or -1 when it is not an ELF object of ours. */
static int read_headers(struct source *s, struct lp_object *o)
{
    ElfW(Ehdr) eh;
    if (read_object(s, s->base, 0, &eh, sizeof(eh)) != 0 || !is_elf_here(&eh))
        return -1;
    o->phnum = eh.e_phnum < LP_OBJECT_MAX_PHDRS ? eh.e_phnum : LP_OBJECT_MAX_PHDRS;
    o->phdrs = malloc(o->phnum * sizeof(ElfW(Phdr)));
    if (!o->phdrs || read_object(s, s->base + eh.e_phoff, eh.e_phoff, o->phdrs,
                                 o->phnum * sizeof(ElfW(Phdr))) != 0)
        return -1;
    /* The segment mapped at file offset 0 starts the object: base is its page. */
    long page = sysconf(_SC_PAGESIZE);
    for (unsigned i = 0; i < o->phnum; i++) {
        const ElfW(Phdr) *ph = &o->phdrs[i];
        if (ph->p_type == PT_LOAD && ph->p_offset < (uint64_t)page) {
            o->bias = s->base - (ph->p_vaddr & ~(uint64_t)(page - 1));
            read_build_id(s, o);
            return 0;
        }
    }
    return -1;
}

static void free_object(struct lp_object *o)
{
    free(o->path);
    free(o->phdrs);
    o->path = NULL;
    o->phdrs = NULL;
}

/* A deep copy of src into dst; 0 or -ENOMEM (dst holds nothing then). */
static int copy_object(struct lp_object *dst, const struct lp_object *src)
{
    *dst = *src;
    dst->path = strdup(src->path);
    dst->phdrs = malloc(src->phnum * sizeof(ElfW(Phdr)));
    if (!dst->path || !dst->phdrs) {
        free_object(dst);
        return -ENOMEM;
    }
    memcpy(dst->phdrs, src->phdrs, src->phnum * sizeof(ElfW(Phdr)));
    return 0;
}

/* The object of an earlier scan that starts where m does, from the same file. */
static const struct lp_object *known_object(const struct lp_objects *known,
                                            const struct cmn_maps_line *m)
{
    const struct lp_object *k = known ? lp_objects_find(known, (uintptr_t)m->start) : NULL;
    return k && k->base == (uintptr_t)m->start && k->inode == m->inode &&
                   strcmp(k->path, m->path) == 0
               ? k
               : NULL;
}

/* Appends the object starting at maps line m, when it is one; 0 or -ENOMEM. */
static int add_object(struct lp_objects *out, size_t *cap, const struct cmn_maps_line *m,
                      const struct lp_objects *known)
{
    int is_vdso = strcmp(m->path, "[vdso]") == 0;
    if (m->offset != 0 || !(m->prot & PROF_MAP_READ) || (m->path[0] != '/' && !is_vdso))
        return 0;
    if (!CMN_GROW(out->v, *cap, out->n + 1, 64))
        return -ENOMEM;
    struct lp_object *o = &out->v[out->n];
    const struct lp_object *k = known_object(known, m);
    if (k) { /* the same file at the same place: its headers are known */
        if (copy_object(o, k) != 0)
            return -ENOMEM;
        o->end = (uintptr_t)m->end;
        out->n++;
        return 0;
    }
    memset(o, 0, sizeof(*o));
    struct source s = {.base = (uintptr_t)m->start, .fd = -1, .path = m->path, .is_vdso = is_vdso};
    size_t head = m->end - m->start < LP_OBJECT_HEAD ? m->end - m->start : LP_OBJECT_HEAD;
    s.head = malloc(head);
    if (s.head && lp_objects_read_memory(s.head, s.base, head) == 0)
        s.head_len = head;
    int rc = read_headers(&s, o);
    free(s.head);
    lp_fd_close(s.fd);
    if (rc != 0) {
        free_object(o);
        return 0;
    }
    o->base = (uintptr_t)m->start;
    o->end = (uintptr_t)m->end;
    o->inode = m->inode;
    o->path = strdup(m->path);
    if (!o->path) {
        free_object(o);
        return -ENOMEM;
    }
    out->n++;
    return 0;
}

int lp_objects_scan(struct lp_objects *out)
{
    out->v = NULL;
    out->n = 0;
    char maps_path[64];
    char *text = lp_fd_slurp(lp_fd_self_path("maps", maps_path, sizeof(maps_path)), NULL);
    if (!text)
        return -errno;
    int rc = lp_objects_scan_text(text, NULL, out);
    free(text);
    return rc;
}

int lp_objects_scan_text(char *text, const struct lp_objects *known, struct lp_objects *out)
{
    out->v = NULL;
    out->n = 0;
    size_t cap = 0;
    int rc = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line && rc == 0;
         line = strtok_r(NULL, "\n", &save)) {
        struct cmn_maps_line m;
        if (cmn_maps_parse_line(line, &m) != 0)
            continue;
        struct lp_object *last = out->n ? &out->v[out->n - 1] : NULL;
        if (last && m.offset != 0 && m.inode == last->inode && strcmp(m.path, last->path) == 0)
            last->end = (uintptr_t)m.end; /* a later segment of the same file */
        else
            rc = add_object(out, &cap, &m, known);
    }
    if (rc != 0)
        lp_objects_free(out);
    return rc;
}

const struct lp_object *lp_objects_find(const struct lp_objects *o, uintptr_t addr)
{
    size_t lo = 0, hi = o->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (addr < o->v[mid].base)
            hi = mid;
        else if (addr >= o->v[mid].end)
            lo = mid + 1;
        else
            return &o->v[mid];
    }
    return NULL;
}

int lp_objects_copy(struct lp_objects *dst, const struct lp_objects *src)
{
    dst->n = 0;
    dst->v = src->n ? calloc(src->n, sizeof(*dst->v)) : NULL;
    if (src->n && !dst->v)
        return -ENOMEM;
    for (size_t i = 0; i < src->n; i++) {
        if (copy_object(&dst->v[i], &src->v[i]) != 0) {
            lp_objects_free(dst);
            return -ENOMEM;
        }
        dst->n++;
    }
    return 0;
}

void lp_objects_free(struct lp_objects *o)
{
    for (size_t i = 0; i < o->n; i++)
        free_object(&o->v[i]);
    free(o->v);
    o->v = NULL;
    o->n = 0;
}
