/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Walking another process's thread from outside, with the same walk as the signal handler
 * (common/uw_step.h): each frame stepped by the unwind table of its module
 * (attach/uwtables.h, built in prof from the target's files), by frame pointer where a
 * module has none. Its stack comes from a copy (read through process_vm_readv, or the
 * user stack the kernel copied into a perf_event sample), its code bytes through
 * process_vm_readv, and "is this code" from its mappings (attach/procmaps.h). Reporter
 * thread only.
 */
#ifndef PROF_ATTACH_REMOTE_WALK_H
#define PROF_ATTACH_REMOTE_WALK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/uw_step.h"

struct att_maps;
struct att_uwtables;

/* How frames are stepped (`--unwind` of `prof stacks` and `prof record -p`). */
enum att_rwalk_mode {
    ATT_RWALK_AUTO,  /* unwind tables where a module has one, frame pointers elsewhere */
    ATT_RWALK_FP,    /* frame pointers only */
    ATT_RWALK_DWARF, /* unwind tables only: a pc without a row ends the walk */
};

/* Code bytes already read from the target, by address: code does not change, and a
 * sampler that walks thousands of stacks a second would otherwise read the same bytes at
 * the same pcs with a system call each time. Direct-mapped; zero-initialized is empty. */
#define ATT_RWALK_CODE_SLOTS 1024u
struct att_rwalk_code_cache {
    struct {
        uint64_t addr;   /* 0: empty */
        uint8_t len;     /* bytes held */
        uint8_t bytes[16];
    } slot[ATT_RWALK_CODE_SLOTS];
};

/* One walk's view of the target. */
struct att_rwalk {
    struct cmn_uw_mem mem;        /* first: the walk's accessors get this struct back */
    pid_t pid;                    /* whose code bytes are read */
    const struct att_maps *maps; /* the target's mappings */
    const unsigned char *stack;   /* a copy of the target's stack ... */
    uint64_t stack_base;          /* ... whose first byte is at this address */
    size_t stack_len;             /* bytes of the copy */
    struct att_rwalk_code_cache *code_cache; /* NULL: read the target every time */
    struct att_uwtables *tables;  /* NULL: frame pointers only */
    int is_tables_only;           /* ATT_RWALK_DWARF */
    int is_out_of_copy;           /* out: the walk wanted a word beyond the copy */
    uint32_t n_by_table;          /* out: frames stepped by an unwind table */
    uint32_t n_by_fp;             /* out: frames stepped by frame pointer */
};

/* Not async-signal-safe. Prepares w to walk with a stack copy of stack_len bytes taken
 * at stack_base, by frame pointers until att_rwalk_use_tables(). */
void att_rwalk_init(struct att_rwalk *w, pid_t pid, const struct att_maps *maps,
                    const unsigned char *stack, uint64_t stack_base, size_t stack_len);
/* Not async-signal-safe. Remembers code bytes read through w in cache (owned by the
 * caller, zeroed before its first use, kept across walks of one process). */
static inline void att_rwalk_use_cache(struct att_rwalk *w, struct att_rwalk_code_cache *cache)
{
    w->code_cache = cache;
}
/* Not async-signal-safe. Walks as mode says, with the unwind tables of t (the caller's,
 * kept across walks of one process; built as walks meet their modules). */
void att_rwalk_use_tables(struct att_rwalk *w, struct att_uwtables *t, enum att_rwalk_mode mode);
/* Walks from regs over the copy (bounds: the copy itself), as cmn_uw_walk(): writes the
 * leaf pc then one return address per frame into frames (at most max_frames >= 1), sets
 * *stop_reason (PROF_STOP_*) and *flags (PROF_SAMPLE_LEAF_CALLER or 0) and w's counts;
 * returns the number of frames. It ends complete (PROF_STOP_END) at a frame whose unwind
 * row says it is the outermost (_start, a thread's clone), or at a null frame pointer or
 * return address. */
unsigned att_rwalk(struct att_rwalk *w, const struct cmn_fp_regs *regs, uint64_t *frames,
                   unsigned max_frames, uint8_t *stop_reason, uint8_t *flags);
/* Reads [sp, end of the mapping that holds sp) of pid, at most max bytes, into a malloc'd
 * buffer (*out, free it), *len its length. 0, or -errno (-ENOENT: sp is in no mapping). */
int att_rwalk_read_stack(pid_t pid, const struct att_maps *maps, uint64_t sp, size_t max,
                         unsigned char **out, size_t *len);

#endif
