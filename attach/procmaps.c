/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Reading another process's mappings (see procmaps.h). A line of /proc/PID/maps:
 *   55d0c8a00000-55d0c8a21000 r-xp 00002000 fe:01 1234   /usr/bin/app
 * Build-ids come from the mapped file's PT_NOTE segments: the file is opened through
 * /proc/PID/map_files (exactly the mapped file, even deleted or in another mount
 * namespace; needs privilege), else through /proc/PID/root, else by its path. The vDSO
 * has no file: its notes are read from the target's memory. A mapping the target makes
 * later (att_maps_add()) cuts or replaces the older ones it overlaps, as in the kernel.
 */
#include "attach/procmaps.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/build_id.h"
#include "common/check.h"
#include "common/err.h"
#include "common/grow.h"
#include "common/maps_line.h"
#include "common/proc.h"
#include "common/ranges.h"
#include "common/record.h"

#define NOTES_MAX 65536u /* note segment bytes looked at */

/* The build-id in an ELF image reached through rd (a file or the target's memory). */
typedef ssize_t read_at_fn(void *ctx, void *buf, size_t n, uint64_t off);

static uint8_t elf_build_id(read_at_fn *rd, void *ctx, uint8_t *out)
{
    Elf64_Ehdr eh;
    if (rd(ctx, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
        memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 256)
        return 0;
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        if (rd(ctx, &ph, sizeof(ph), eh.e_phoff + (uint64_t)i * sizeof(ph)) != (ssize_t)sizeof(ph))
            return 0;
        if (ph.p_type != PT_NOTE || ph.p_filesz == 0)
            continue;
        size_t n = ph.p_filesz < NOTES_MAX ? (size_t)ph.p_filesz : NOTES_MAX;
        unsigned char *notes = malloc(n);
        if (!notes)
            return 0;
        ssize_t got = rd(ctx, notes, n, ph.p_offset);
        uint8_t len = got > 0 ? cmn_build_id_note(notes, (size_t)got, out, PROF_BUILD_ID_MAX) : 0;
        free(notes);
        if (len)
            return len;
    }
    return 0;
}

static ssize_t file_read_at(void *ctx, void *buf, size_t n, uint64_t off)
{
    return pread(*(int *)ctx, buf, n, (off_t)off);
}

struct mem_ctx {
    pid_t pid;
    uint64_t base;
    uint64_t size;
};

static ssize_t mem_read_at(void *ctx, void *buf, size_t n, uint64_t off)
{
    struct mem_ctx *c = ctx;
    if (off >= c->size)
        return -1;
    if (n > c->size - off)
        n = (size_t)(c->size - off);
    struct iovec local = {.iov_base = buf, .iov_len = n};
    struct iovec remote = {.iov_base = (void *)(uintptr_t)(c->base + off), .iov_len = n};
    return process_vm_readv(c->pid, &local, 1, &remote, 1, 0);
}

static void find_build_id(pid_t pid, struct att_map *m)
{
    if (strcmp(m->path, "[vdso]") == 0) {
        struct mem_ctx c = {.pid = pid, .base = m->start, .size = m->end - m->start};
        m->build_id_len = elf_build_id(mem_read_at, &c, m->build_id);
        return;
    }
    if (m->path[0] != '/')
        return;
    char tries[3][4200];
    snprintf(tries[0], sizeof(tries[0]), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid,
             m->start, m->end);
    snprintf(tries[1], sizeof(tries[1]), "/proc/%d/root%s", (int)pid, m->path);
    snprintf(tries[2], sizeof(tries[2]), "%s", m->path);
    for (int i = 0; i < 3; i++) {
        int fd = open(tries[i], O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        m->build_id_len = elf_build_id(file_read_at, &fd, m->build_id);
        close(fd);
        return;
    }
}

/* Parses one maps line into m (path strdup'ed); 0, -1 for a line it does not know,
 * -ENOMEM. */
static int parse_line(const char *line, struct att_map *m)
{
    struct cmn_maps_line l;
    if (cmn_maps_parse_line(line, &l) != 0)
        return -1;
    memset(m, 0, sizeof(*m));
    m->start = l.start;
    m->end = l.end;
    m->offset = l.offset;
    m->dev = l.dev;
    m->inode = l.inode;
    m->prot = l.prot;
    m->path = strdup(l.path);
    return m->path ? 0 : -ENOMEM;
}

int att_maps_read(pid_t pid, struct att_maps *out, struct cmn_err *err)
{
    memset(out, 0, sizeof(*out));
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
    struct cmn_proc_lines lines;
    int e = cmn_proc_lines_open(&(struct cmn_proc){.pid = pid}, "maps", &lines);
    if (e == -ENOENT)
        return cmn_err_set(err, CMN_E_INPUT, "no process %d", (int)pid);
    if (e == -ENOMEM)
        return cmn_err_nomem(err);
    if (e != 0)
        return cmn_err_set(err, CMN_E_INPUT, "cannot read %s: %s", path, strerror(-e));
    size_t cap = 0;
    int rc = CMN_OK;
    for (char *line; rc == CMN_OK && (line = cmn_proc_lines_next(&lines)) != NULL;) {
        if (!CMN_GROW(out->v, cap, out->n + 1, 64)) {
            rc = cmn_err_nomem(err);
            break;
        }
        int r = parse_line(line, &out->v[out->n]);
        if (r == -ENOMEM)
            rc = cmn_err_nomem(err);
        else if (r == 0)
            out->n++;
    }
    /* Reading another user's maps opens fine and then fails (EACCES) or reads nothing. */
    int read_errno = lines.read_errno;
    cmn_proc_lines_close(&lines);
    if (rc == CMN_OK && out->n == 0)
        rc = cmn_err_set(err, CMN_E_INPUT, "cannot read %s: %s", path,
                         read_errno ? strerror(read_errno) : "no mappings (a kernel thread?)");
    if (rc != CMN_OK) {
        att_maps_free(out);
        return rc;
    }
    for (size_t i = 0; i < out->n; i++)
        if (out->v[i].prot & PROF_MAP_EXEC)
            find_build_id(pid, &out->v[i]);
    return CMN_OK;
}

void att_maps_free(struct att_maps *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->v[i].path);
    free(m->v);
    m->v = NULL;
    m->n = 0;
}

const struct att_map *att_maps_find(const struct att_maps *m, uint64_t addr)
{
    size_t i = CMN_RANGE_FIND(m->v, m->n, start, end, addr);
    return i < m->n ? &m->v[i] : NULL;
}

bool att_maps_is_code(const struct att_maps *m, uint64_t addr)
{
    const struct att_map *p = att_maps_find(m, addr);
    return p && (p->prot & PROF_MAP_EXEC);
}

int att_maps_write_one(const struct att_map *p, uint64_t time_ns, FILE *out, struct cmn_err *err)
{
    unsigned char buf[sizeof(struct prof_rec_map) + 4200];
    struct prof_rec_map r = {.time_ns = time_ns,
                             .start = p->start,
                             .end = p->end,
                             .file_offset = p->offset,
                             .prot = p->prot,
                             .build_id_len = p->build_id_len};
    memcpy(r.build_id, p->build_id, sizeof(r.build_id));
    size_t n = cmn_record_map(buf, sizeof(buf), &r, p->path);
    if (n == 0)
        return CMN_OK; /* a path longer than PATH_MAX: not a file the reporter could open */
    if (fwrite(buf, 1, n, out) != n)
        return cmn_err_set(err, CMN_E_IO, "write error: %s", strerror(errno));
    return CMN_OK;
}

int att_maps_write(const struct att_maps *m, uint64_t time_ns, FILE *out, struct cmn_err *err)
{
    for (size_t i = 0; i < m->n; i++) {
        if (!(m->v[i].prot & PROF_MAP_EXEC))
            continue;
        int rc = att_maps_write_one(&m->v[i], time_ns, out, err);
        if (rc != CMN_OK)
            return rc;
    }
    return CMN_OK;
}

/* The part [start, end) of mapping e, which holds it. */
static struct att_map part_of(const struct att_map *e, uint64_t start, uint64_t end)
{
    struct att_map r = *e;
    r.offset = e->offset + (start - e->start);
    r.start = start;
    r.end = end;
    return r;
}

int att_maps_add(struct att_maps *m, pid_t pid, const struct att_map *p)
{
    assert(p->start < p->end);
    /* An older mapping that holds p on both sides is cut in two: its second part needs a
     * path of its own. There is at most one such mapping, so n + 2 entries are enough. */
    const struct att_map *outer = NULL;
    for (size_t i = 0; i < m->n && outer == NULL; i++)
        if (m->v[i].start < p->start && m->v[i].end > p->end)
            outer = &m->v[i];
    struct att_map added = *p;
    added.path = strdup(p->path != NULL ? p->path : "");
    char *outer_path = outer != NULL ? strdup(outer->path) : NULL;
    struct att_map *v = malloc((m->n + 2) * sizeof(*v));
    if (added.path == NULL || (outer != NULL && outer_path == NULL) || v == NULL) {
        free(added.path);
        free(outer_path);
        free(v);
        return CMN_E_NOMEM;
    }
    if ((added.prot & PROF_MAP_EXEC) && added.build_id_len == 0)
        find_build_id(pid, &added);
    size_t n = 0;
    for (size_t i = 0; i < m->n; i++) {
        const struct att_map *e = &m->v[i];
        if (e->end <= p->start || e->start >= p->end) {
            v[n++] = *e;
            continue;
        }
        bool has_left = (e->start < p->start), has_right = (e->end > p->end);
        if (has_left)
            v[n++] = part_of(e, e->start, p->start);
        if (has_right) {
            v[n] = part_of(e, p->end, e->end);
            if (has_left)
                v[n].path = outer_path;
            n++;
        }
        if (!has_left && !has_right)
            free(e->path);
    }
    size_t at = 0;
    while (at < n && v[at].start < p->start)
        at++;
    memmove(&v[at + 1], &v[at], (n - at) * sizeof(*v));
    v[at] = added;
    free(m->v);
    m->v = v;
    m->n = n + 1;
    return CMN_OK;
}
