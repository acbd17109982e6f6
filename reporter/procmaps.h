/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Another process's mappings, read from /proc/PID/maps, for the commands that look at a
 * running process from outside (`prof stacks`, `prof record -p`): to tell code from data
 * while walking its stacks, to find a thread's stack bounds, and to write the MAP records
 * (with build-ids, read from the mapped files, or from the target's memory for its vDSO)
 * that let the profile be symbolized later, as libprof's own are. Reporter thread only.
 */
#ifndef PROF_REPORTER_PROCMAPS_H
#define PROF_REPORTER_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "include/libprof/prof_format.h"

struct rep_err;

struct rep_pmap {
    uint64_t start, end;  /* [start, end) */
    uint64_t offset;      /* file offset of start */
    uint32_t prot;        /* PROF_MAP_* */
    char *path;           /* the maps line's name ("/usr/lib/...", "[stack]", "[vdso]"), or
                           * "" for anonymous memory */
    uint8_t build_id_len; /* executable mappings only: 0 when none was found */
    uint8_t build_id[PROF_BUILD_ID_MAX];
};

struct rep_pmaps {
    struct rep_pmap *v; /* sorted by start, not overlapping */
    size_t n;
};

/* Not async-signal-safe. Reads all of pid's mappings, with the build-ids of the executable
 * ones. REP_OK; REP_E_INPUT with a one-line message when the process does not exist or
 * its maps cannot be read (permission); REP_E_NOMEM. */
int rep_pmaps_read(pid_t pid, struct rep_pmaps *out, struct rep_err *err);
void rep_pmaps_free(struct rep_pmaps *m);
/* The mapping that holds addr, or NULL. */
const struct rep_pmap *rep_pmaps_find(const struct rep_pmaps *m, uint64_t addr);
/* 1 when addr lies in an executable mapping. */
bool rep_pmaps_is_code(const struct rep_pmaps *m, uint64_t addr);
/* Writes one PROF_REC_MAP record per executable mapping, seen at time_ns. REP_OK or
 * REP_E_IO. */
int rep_pmaps_write(const struct rep_pmaps *m, uint64_t time_ns, FILE *out, struct rep_err *err);
/* Writes the PROF_REC_MAP record of one mapping, whatever its protection, seen at time_ns.
 * REP_OK or REP_E_IO. */
int rep_pmaps_write_one(const struct rep_pmap *p, uint64_t time_ns, FILE *out, struct rep_err *err);
/* Adds a mapping that pid made after m was read (`prof record -p` learns of them from the
 * kernel): a copy of *p, its path copied, with the build-id read as rep_pmaps_read() does
 * when p is executable and carries none. Like the kernel, it takes the place of whatever
 * part of older mappings it overlaps; m stays sorted and free of overlaps. Entries of m
 * move: pointers into m->v are dead afterwards. REP_OK or REP_E_NOMEM. */
int rep_pmaps_add(struct rep_pmaps *m, pid_t pid, const struct rep_pmap *p);

#endif
