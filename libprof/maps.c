/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Mapping records (see maps.h). /proc/self/maps lines look like
 *   55d0c8a00000-55d0c8a21000 r-xp 00002000 fe:01 1234   /usr/bin/app
 * Only executable mappings are recorded: only they hold sampled pcs.
 */
#include "libprof/maps.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libprof/fd.h"
#include "include/prof_record.h"
#include "libprof/writer.h"

struct build_id_query {
    uintptr_t addr;  /* an address inside the object's mapping */
    uint8_t *id;     /* out */
    uint8_t len;     /* out: 0 when not found */
};

static int build_id_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct build_id_query *q = arg;
    int inside = 0;
    for (int i = 0; i < info->dlpi_phnum && !inside; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        inside = ph->p_type == PT_LOAD && q->addr >= lo && q->addr < lo + ph->p_memsz;
    }
    if (!inside)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const unsigned char *notes = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
        q->len = prof_record_build_id_note(notes, ph->p_memsz, q->id);
        if (q->len)
            break;
    }
    return 1;
}

/* Reads a whole /proc file into a malloc'd NUL-terminated buffer; free() it. */
static char *slurp(const char *path)
{
    int fd = lp_fd_open(path, O_RDONLY, 0);
    if (fd < 0)
        return NULL;
    size_t cap = 16384, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (cap - len < 4096) {
            char *bigger = realloc(buf, cap * 2);
            if (!bigger) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
        ssize_t n = read(fd, buf + len, cap - len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    lp_fd_close(fd);
    if (buf)
        buf[len] = '\0';
    return buf;
}

/* Parses one maps line into m and *path; 0 when it is an executable mapping. */
static int parse_line(const char *line, struct prof_rec_map *m, const char **path)
{
    struct prof_maps_line l;
    if (prof_maps_parse_line(line, &l) != 0 || !(l.prot & PROF_MAP_EXEC))
        return -1;
    memset(m, 0, sizeof(*m));
    m->start = l.start;
    m->end = l.end;
    m->file_offset = l.offset;
    m->prot = l.prot;
    *path = l.path;
    return 0;
}

/* Appends a record to a growing buffer; 0 or -ENOMEM. */
static int append_map(unsigned char **buf, size_t *len, size_t *cap,
                      const struct prof_rec_map *m, const char *path)
{
    size_t need = prof_record_size_str(sizeof(*m), strlen(path));
    if (*len + need > *cap) {
        size_t bigger_cap = *cap ? *cap * 2 : 8192;
        while (bigger_cap < *len + need)
            bigger_cap *= 2;
        unsigned char *bigger = realloc(*buf, bigger_cap);
        if (!bigger)
            return -ENOMEM;
        *buf = bigger;
        *cap = bigger_cap;
    }
    *len += prof_record_map(*buf + *len, need, m, path);
    return 0;
}

int lp_maps_collect(uint64_t time_ns, unsigned char **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    char *text = slurp("/proc/self/maps");
    if (!text)
        return errno ? -errno : -EIO;
    size_t cap = 0;
    int n = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        struct prof_rec_map m;
        const char *path;
        if (parse_line(line, &m, &path) != 0)
            continue;
        m.time_ns = time_ns;
        struct build_id_query q = { .addr = (uintptr_t)m.start, .id = m.build_id };
        /* The vdso has no file, but the reporter can read its own copy when the build-ids
         * agree (the same kernel). */
        if (path[0] == '/' || strcmp(path, "[vdso]") == 0)
            dl_iterate_phdr(build_id_cb, &q);
        m.build_id_len = q.len;
        if (append_map(out, out_len, &cap, &m, path) == 0)
            n++;
    }
    free(text);
    return n;
}

int lp_maps_write(struct lp_writer *w, uint64_t time_ns)
{
    unsigned char *recs;
    size_t len;
    int n = lp_maps_collect(time_ns, &recs, &len);
    if (n > 0)
        lp_writer_put_records(w, recs, len);
    free(recs);
    return n;
}
