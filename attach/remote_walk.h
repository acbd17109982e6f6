/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Walking the frame pointers of another process's thread from outside, with the same
 * stepper as the signal handler (common/fp_step.h): its stack comes from a copy (read
 * through process_vm_readv, or the user stack the kernel copied into a perf_event
 * sample), its code bytes through process_vm_readv, and "is this code" from its
 * mappings (attach/procmaps.h). Reporter thread only.
 */
#ifndef PROF_ATTACH_REMOTE_WALK_H
#define PROF_ATTACH_REMOTE_WALK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/fp_step.h"

struct att_maps;

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
    struct cmn_fp_mem mem;        /* first: the stepper's accessors get this struct back */
    pid_t pid;                    /* whose code bytes are read */
    const struct att_maps *maps; /* the target's mappings */
    const unsigned char *stack;   /* a copy of the target's stack ... */
    uint64_t stack_base;          /* ... whose first byte is at this address */
    size_t stack_len;             /* bytes of the copy */
    struct att_rwalk_code_cache *code_cache; /* NULL: read the target every time */
};

/* Not async-signal-safe. Prepares w to walk with a stack copy of stack_len bytes taken
 * at stack_base. */
void att_rwalk_init(struct att_rwalk *w, pid_t pid, const struct att_maps *maps,
                    const unsigned char *stack, uint64_t stack_base, size_t stack_len);
/* Not async-signal-safe. Remembers code bytes read through w in cache (owned by the
 * caller, zeroed before its first use, kept across walks of one process). */
static inline void att_rwalk_use_cache(struct att_rwalk *w, struct att_rwalk_code_cache *cache)
{
    w->code_cache = cache;
}
/* Walks from regs over the copy (bounds: the copy itself), as cmn_fp_walk(). */
unsigned att_rwalk(struct att_rwalk *w, const struct cmn_fp_regs *regs, uint64_t *frames,
                   unsigned max_frames, uint8_t *stop_reason, uint8_t *flags);
/* Reads [sp, end of the mapping that holds sp) of pid, at most max bytes, into a malloc'd
 * buffer (*out, free it), *len its length. 0, or -errno (-ENOENT: sp is in no mapping). */
int att_rwalk_read_stack(pid_t pid, const struct att_maps *maps, uint64_t sp, size_t max,
                         unsigned char **out, size_t *len);

#endif
