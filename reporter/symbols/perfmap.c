/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Reading a perf map: the whole file into one buffer, each line's name cut in place, the
 * entries sorted by start (then by line) with the running maximum of their ends, so that
 * a lookup is a binary search for the last entry starting at or below the address and a
 * walk back only while an earlier entry can still reach it. Reporter thread only.
 */
#include "reporter/symbols/perfmap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/check.h"
#include "common/err.h"
#include "common/grow.h"
#include "common/ranges.h"

/* Perf maps larger than this are not read. */
#define PERFMAP_MAX_BYTES (512u << 20)

static int cmp_entry(const void *va, const void *vb)
{
    const struct rep_sym_perfmap_entry *a = va, *b = vb;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return a->line < b->line ? -1 : a->line > b->line;
}

/* Reads the file at path into m->text (NUL-terminated); *len gets its length. Only a
 * regular file owned by owner_uid or root, opened without following a link and without
 * blocking (a FIFO put there would hang the report): a map another user wrote could name
 * the code of owner's process as they like. */
static int read_text(struct rep_sym_perfmap *m, const char *path, uint32_t owner_uid,
                     size_t *len)
{
    *len = 0;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return CMN_OK;
    struct stat st;
    int rc = CMN_OK;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (uint64_t)st.st_size <= PERFMAP_MAX_BYTES && (st.st_uid == owner_uid || st.st_uid == 0)) {
        m->text = malloc((size_t)st.st_size + 1);
        if (m->text == NULL)
            rc = CMN_E_NOMEM;
        while (m->text != NULL && *len < (size_t)st.st_size) {
            ssize_t n = read(fd, m->text + *len, (size_t)st.st_size - *len);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            *len += (size_t)n;
        }
    }
    if (m->text != NULL)
        m->text[*len] = '\0';
    close(fd);
    return rc;
}

/* Parses the line at p ("START SIZE NAME", NUL-terminated) into e; false when malformed. */
static bool parse_line(char *p, struct rep_sym_perfmap_entry *e)
{
    char *end;
    e->start = strtoull(p, &end, 16);
    if (end == p || *end != ' ')
        return false;
    p = end + 1;
    uint64_t size = strtoull(p, &end, 16);
    if (end == p || *end != ' ' || end[1] == '\0' || size == 0 || e->start + size < e->start)
        return false;
    e->end = e->start + size;
    e->name = end + 1;
    size_t n = strlen(e->name);
    if (n > 0 && e->name[n - 1] == '\r')
        end[n] = '\0'; /* a map written with CRLF line ends */
    return n > 1 || e->name[0] != '\r';
}

int rep_sym_perfmap_load(struct rep_sym_perfmap *m, const char *dir, uint32_t pid,
                         uint32_t owner_uid)
{
    memset(m, 0, sizeof(*m));
    m->pid = pid;
    char path[4096];
    snprintf(path, sizeof(path), "%s/perf-%u.map", dir != NULL ? dir : REP_SYM_PERFMAP_DIR, pid);
    size_t len, cap = 0;
    if (read_text(m, path, owner_uid, &len) != CMN_OK)
        return CMN_E_NOMEM;
    uint32_t line = 0;
    for (char *p = m->text; p != NULL && p < m->text + len; line++) {
        char *nl = strchr(p, '\n');
        if (nl != NULL)
            *nl = '\0';
        struct rep_sym_perfmap_entry e = {.line = line};
        if (parse_line(p, &e)) {
            if (!CMN_GROW(m->entries, cap, m->n_entries + 1, 256))
                return CMN_E_NOMEM;
            m->entries[m->n_entries++] = e;
        }
        p = nl != NULL ? nl + 1 : NULL;
    }
    if (m->n_entries > 1)
        qsort(m->entries, m->n_entries, sizeof(*m->entries), cmp_entry);
    m->max_end = malloc((m->n_entries ? m->n_entries : 1) * sizeof(*m->max_end));
    if (m->max_end == NULL)
        return CMN_E_NOMEM;
    for (size_t i = 0; i < m->n_entries; i++) {
        uint64_t prev = i > 0 ? m->max_end[i - 1] : 0;
        m->max_end[i] = m->entries[i].end > prev ? m->entries[i].end : prev;
    }
    return CMN_OK;
}

void rep_sym_perfmap_fini(struct rep_sym_perfmap *m)
{
    if (m == NULL)
        return;
    free(m->text);
    free(m->entries);
    free(m->max_end);
    memset(m, 0, sizeof(*m));
}

const char *rep_sym_perfmap_lookup(const struct rep_sym_perfmap *m, uint64_t addr)
{
    size_t lo = CMN_RANGE_UPPER(m->entries, m->n_entries, start, addr);
    const struct rep_sym_perfmap_entry *best = NULL;
    for (size_t j = lo; j-- > 0 && m->max_end[j] > addr;) {
        const struct rep_sym_perfmap_entry *e = &m->entries[j];
        if (addr < e->end && (best == NULL || e->line > best->line))
            best = e;
    }
    assert(best == NULL || (best->start <= addr && addr < best->end));
    return best != NULL ? best->name : NULL;
}
