/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The walk over another process (see remote_walk.h). The copy of the stack is the whole
 * truth for stack words: the walk never reads the live stack, which keeps changing under a
 * thread that runs (perf_event samples) and costs a system call per word. A frame's table
 * comes from the mapping that holds its pc.
 */
#include "attach/remote_walk.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "attach/procmaps.h"
#include "attach/uwtables.h"

static int copy_word(const struct cmn_fp_mem *m, uintptr_t addr, uintptr_t *out)
{
    struct att_rwalk *w = (struct att_rwalk *)m;
    if (addr < w->stack_base || addr - w->stack_base > w->stack_len ||
        w->stack_len - (addr - w->stack_base) < sizeof(*out)) {
        w->is_out_of_copy = 1;
        return 0;
    }
    memcpy(out, w->stack + (addr - w->stack_base), sizeof(*out));
    return 1;
}

static int target_code(const struct cmn_fp_mem *m, uintptr_t addr, uint8_t *out, unsigned n)
{
    const struct att_rwalk *w = (const struct att_rwalk *)m;
    struct att_rwalk_code_cache *c = w->code_cache;
    unsigned k = (unsigned)((addr ^ addr >> 12) % ATT_RWALK_CODE_SLOTS);
    if (c != NULL && c->slot[k].addr == addr && c->slot[k].len >= n) {
        memcpy(out, c->slot[k].bytes, n);
        return 0;
    }
    struct iovec local = {.iov_base = out, .iov_len = n};
    struct iovec remote = {.iov_base = (void *)addr, .iov_len = n};
    if (process_vm_readv(w->pid, &local, 1, &remote, 1, 0) != (ssize_t)n)
        return -1;
    if (c != NULL && n <= sizeof(c->slot[k].bytes) && addr != 0) {
        c->slot[k].addr = addr;
        c->slot[k].len = (uint8_t)n;
        memcpy(c->slot[k].bytes, out, n);
    }
    return 0;
}

static int target_is_code(const struct cmn_fp_mem *m, uintptr_t addr)
{
    const struct att_rwalk *w = (const struct att_rwalk *)m;
    return att_maps_is_code(w->maps, addr);
}

/* The table of the module that holds pc, from the mapping that holds it. Tables are
 * built at once, never later: CMN_UW_PENDING is never said. Executable memory of no file
 * (a code generator's) is CMN_UW_ANON, where the walk looks for known stubs. */
static const struct cmn_uw_table *target_table(const struct cmn_uw_mem *m, uintptr_t pc,
                                               uintptr_t *bias, unsigned *info)
{
    const struct att_rwalk *w = (const struct att_rwalk *)m;
    const struct att_map *map = att_maps_find(w->maps, pc);
    uint64_t b = 0;
    if (map == NULL || !(map->prot & PROF_MAP_EXEC))
        return NULL;
    const struct cmn_uw_table *t = att_uwtables_find(w->tables, map, &b);
    *bias = (uintptr_t)b;
    if (t == NULL && map->inode == 0 && strcmp(map->path, "[vdso]") != 0)
        *info = CMN_UW_ANON;
    return t;
}

void att_rwalk_init(struct att_rwalk *w, pid_t pid, const struct att_maps *maps,
                    const unsigned char *stack, uint64_t stack_base, size_t stack_len)
{
    memset(w, 0, sizeof(*w));
    w->mem.fp.stack_word = copy_word;
    w->mem.fp.code = target_code;
    w->mem.fp.is_code = target_is_code;
    w->pid = pid;
    w->maps = maps;
    w->stack = stack;
    w->stack_base = stack_base;
    w->stack_len = stack_len;
}

void att_rwalk_use_tables(struct att_rwalk *w, struct att_uwtables *t, enum att_rwalk_mode mode)
{
    w->tables = mode == ATT_RWALK_FP ? NULL : t;
    w->mem.table = w->tables != NULL ? target_table : NULL;
    w->is_tables_only = mode == ATT_RWALK_DWARF;
}

unsigned att_rwalk(struct att_rwalk *w, const struct cmn_fp_regs *regs, uint64_t *frames,
                   unsigned max_frames, uint8_t *stop_reason, uint8_t *flags)
{
    struct cmn_uw_walk walk = {.lo = (uintptr_t)w->stack_base,
                               .hi = (uintptr_t)(w->stack_base + w->stack_len),
                               .frames = frames,
                               .max_frames = max_frames,
                               .tables_only = w->is_tables_only};
    w->is_out_of_copy = 0;
    unsigned n = cmn_uw_walk(&w->mem, regs, &walk);
    *stop_reason = walk.stop_reason;
    *flags = walk.flags;
    w->n_by_table = walk.n_by_table;
    w->n_by_fp = walk.n_by_fp;
    return n;
}

int att_rwalk_read_stack(pid_t pid, const struct att_maps *maps, uint64_t sp, size_t max,
                         unsigned char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    const struct att_map *m = att_maps_find(maps, sp);
    if (!m)
        return -ENOENT;
    size_t want = m->end - sp;
    if (want > max)
        want = max;
    unsigned char *buf = malloc(want ? want : 1);
    if (!buf)
        return -ENOMEM;
    struct iovec local = {.iov_base = buf, .iov_len = want};
    struct iovec remote = {.iov_base = (void *)(uintptr_t)sp, .iov_len = want};
    ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (got < 0) {
        int e = errno;
        free(buf);
        return -e;
    }
    *out = buf;
    *len = (size_t)got;
    return 0;
}
