/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Parsing one line of /proc/PID/maps (common to the library, which records its own
 * mappings, and to the commands that read another process's). Header-only, never installed.
 *
 * Signal handler's path: not allowed (strtoull and strchr are not on its list).
 */
#ifndef PROF_COMMON_MAPS_LINE_H
#define PROF_COMMON_MAPS_LINE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "include/libprof/prof_format.h"

/* One line of /proc/PID/maps, the source of MAP records:
 *   55d0c8a00000-55d0c8a21000 r-xp 00002000 fe:01 1234   /usr/bin/app */
struct cmn_maps_line {
    uint64_t start, end; /* [start, end) */
    uint64_t offset;     /* file offset of start */
    uint64_t dev;        /* the file's device, (major << 32) | minor; 0 with inode 0 */
    uint64_t inode;      /* the file's inode, 0 for anonymous and special mappings */
    uint32_t prot;       /* PROF_MAP_* */
    const char *path;    /* into the line: the file, "[vdso]" and the like, "" anonymous */
};

/* Parses line (without its newline) into *m; 0, or -1 when it is not a maps line. */
static inline int cmn_maps_parse_line(const char *line, struct cmn_maps_line *m)
{
    char *end;
    m->start = strtoull(line, &end, 16);
    if (*end != '-')
        return -1;
    m->end = strtoull(end + 1, &end, 16);
    if (*end != ' ' || strlen(end) < 6 || end[5] != ' ' || m->end <= m->start)
        return -1;
    const char *perms = end + 1; /* "r-xp" */
    m->prot = (perms[0] == 'r' ? PROF_MAP_READ : 0u) | (perms[1] == 'w' ? PROF_MAP_WRITE : 0u) |
              (perms[2] == 'x' ? PROF_MAP_EXEC : 0u);
    m->offset = strtoull(perms + 5, &end, 16);
    m->path = "";
    m->inode = 0;
    m->dev = 0;
    if (*end == ' ') {
        char *at;
        uint64_t major = strtoull(end + 1, &at, 16);
        if (*at == ':')
            m->dev = major << 32 | strtoull(at + 1, NULL, 16);
    }
    end = strchr(end + 1, ' '); /* past the device */
    if (end != NULL) {
        m->inode = strtoull(end + 1, &end, 10);
        if (*end != ' ')
            end = NULL; /* nothing after the inode: no path */
    }
    if (end != NULL) {
        while (*end == ' ')
            end++;
        m->path = end;
    }
    return 0;
}

#endif
