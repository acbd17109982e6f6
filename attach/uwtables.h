/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The unwind tables of another process's modules (common/uw_table.h), built in the prof
 * process for the walks of `prof stacks` and `prof record -p` (attach/remote_walk.h). A
 * module is a file, known by its device and inode (every mapping of it shares its table),
 * or the target's vDSO. A table is built the first time a walk meets a pc in the module,
 * from the file the target maps: /proc/PID/root/PATH when the file found there is the one
 * mapped (same device and inode as the maps line), else /proc/PID/map_files/START-END
 * (the mapped file itself, even deleted or in another mount namespace; needs privilege).
 * Its .eh_frame section is read from the file (link-time addresses: the section's own
 * address, bias 0), then its .debug_frame, which fills what .eh_frame leaves out; the
 * vDSO, which has no file, is read from the target's memory (process_vm_readv) and read
 * the same way. A mapping's load bias comes from the file's PT_LOAD segments: the
 * link-time address of the mapping's file offset.
 *
 * Tables live as long as the struct att_uwtables (one per session: a snapshot, or a
 * recording), in malloc'd memory bounded by ATT_UW_MAX_BYTES in all. A module whose table
 * cannot be built is remembered with the reason (no call-frame information, the file is
 * not the one mapped, the memory bound, ...): its frames are walked by frame pointer
 * (or, with tables only, not at all), and the caller can list those modules
 * (att_uwtables_failed()) for the profile's notes. Reporter thread only, single-threaded.
 */
#ifndef PROF_ATTACH_UWTABLES_H
#define PROF_ATTACH_UWTABLES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/elf_file.h"

#define ATT_UW_MAX_BYTES (256ull << 20) /* memory of one session's tables together */
#define ATT_UW_MEMO 64u                 /* mappings whose module and bias are remembered */

struct att_map;
struct cmn_uw_table;

/* One module: a file, or the vDSO. */
struct att_uw_module {
    uint64_t dev, ino;        /* the file's identity; both 0 for the vDSO */
    char *path;               /* as the maps line names it; owned */
    struct cmn_uw_table *table; /* NULL when it could not be built; owned */
    const char *why;          /* with table NULL: why, a static string */
    unsigned n_loads;         /* the file's PT_LOAD segments, for the mappings' biases */
    struct cmn_elf_load loads[CMN_ELF_MAX_LOADS];
    uint64_t build_ns;        /* how long its build took (wall time) */
};

/* A mapping already looked up: its module and bias. */
struct att_uw_memo {
    uint64_t start, end, offset, dev, ino; /* the mapping; end 0: an empty slot */
    int32_t module;                        /* index in mods, -1: no module (anonymous) */
    uint64_t bias;                         /* run-time minus link-time address */
};

/* One session's tables. Zero-initialize, then att_uwtables_init(). The fields are
 * written by the functions below only; the caller may read them. */
struct att_uwtables {
    pid_t pid;                    /* whose files and memory */
    struct att_uw_module *mods;   /* every module met, built or not */
    size_t n_mods, cap_mods;
    uint64_t bytes;               /* memory of the tables built */
    unsigned n_tables;            /* tables built */
    uint64_t build_ns;            /* wall time spent building, all modules */
    size_t n_failed_seen;         /* att_uwtables_failed() gave modules below this index */
    struct att_uw_memo memo[ATT_UW_MEMO];
};

/* Not async-signal-safe; reporter thread only. */
/* Prepares u for the modules of process pid. */
void att_uwtables_init(struct att_uwtables *u, pid_t pid);
/* Frees every table and module; u may be zeroed and never initialized. */
void att_uwtables_fini(struct att_uwtables *u);
/* The table for code in mapping m (of u's process), with the mapping's load bias in
 * *bias (subtract it from a pc to look the pc up); builds it the first time the module is
 * met. NULL when the module has none (anonymous code, or the build failed: the module's
 * why says so). The table lives until att_uwtables_fini(). */
const struct cmn_uw_table *att_uwtables_find(struct att_uwtables *u, const struct att_map *m,
                                             uint64_t *bias);
/* The next module whose table could not be built and that this function has not given
 * yet, or NULL: for a note in the profile per module. */
const struct att_uw_module *att_uwtables_failed(struct att_uwtables *u);

#endif
