/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Another process's mappings, read from /proc/PID/maps, for the commands that look at a
 * running process from outside (`prof stacks`, `prof record -p`): to tell code from data
 * while walking its stacks, to find a thread's stack bounds, and to write the MAP records
 * (with build-ids, read from the mapped files, or from the target's memory for its vDSO)
 * that let the profile be symbolized later, as libprof's own are. Reporter thread only.
 */
#ifndef PROF_ATTACH_PROCMAPS_H
#define PROF_ATTACH_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "include/libprof/prof_format.h"

struct cmn_err;

struct att_map {
    uint64_t start, end;  /* [start, end) */
    uint64_t offset;      /* file offset of start */
    uint64_t dev;         /* the file's device, (major << 32) | minor, as the maps line
                           * and the kernel's MMAP2 record say; 0 with inode 0 */
    uint64_t inode;       /* the file's inode; 0 for anonymous memory and [vdso] */
    uint32_t prot;        /* PROF_MAP_* */
    char *path;           /* the maps line's name ("/usr/lib/...", "[stack]", "[vdso]"), or
                           * "" for anonymous memory */
    uint8_t build_id_len; /* executable mappings only: 0 when none was found */
    uint8_t build_id[PROF_BUILD_ID_MAX];
};

struct att_maps {
    struct att_map *v; /* sorted by start, not overlapping */
    size_t n;
};

/* Not async-signal-safe. Reads all of pid's mappings, with the build-ids of the executable
 * ones. CMN_OK; CMN_E_INPUT with a one-line message when the process does not exist or
 * its maps cannot be read (permission); CMN_E_NOMEM. */
int att_maps_read(pid_t pid, struct att_maps *out, struct cmn_err *err);
void att_maps_free(struct att_maps *m);
/* The mapping that holds addr, or NULL. */
const struct att_map *att_maps_find(const struct att_maps *m, uint64_t addr);
/* 1 when addr lies in an executable mapping. */
bool att_maps_is_code(const struct att_maps *m, uint64_t addr);
/* Writes one PROF_REC_MAP record per executable mapping, seen at time_ns. CMN_OK or
 * CMN_E_IO. */
int att_maps_write(const struct att_maps *m, uint64_t time_ns, FILE *out, struct cmn_err *err);
/* Writes the PROF_REC_MAP record of one mapping, whatever its protection, seen at time_ns.
 * CMN_OK or CMN_E_IO. */
int att_maps_write_one(const struct att_map *p, uint64_t time_ns, FILE *out, struct cmn_err *err);
/* Adds a mapping that pid made after m was read (`prof record -p` learns of them from the
 * kernel): a copy of *p, its path copied, with the build-id read as att_maps_read() does
 * when p is executable and carries none. Like the kernel, it takes the place of whatever
 * part of older mappings it overlaps; m stays sorted and free of overlaps. Entries of m
 * move: pointers into m->v are dead afterwards. CMN_OK or CMN_E_NOMEM. */
int att_maps_add(struct att_maps *m, pid_t pid, const struct att_map *p);

#endif
