/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The remote libunwind walk (see ptrace_unwind.h). libunwind is trusted for how to step,
 * not for where it lands: every frame it gives is checked as the frame-pointer stepper
 * checks its own (common/fp_step.h), since without unwind information for a pc libunwind
 * 1.6.2 on x86_64 guesses from the frame-pointer register, which in code built without
 * frame pointers holds anything.
 */
#include "attach/ptrace_unwind.h"

#include <stddef.h>

#include "common/err.h"

#ifdef PROF_HAVE_LIBUNWIND

#include <libunwind-ptrace.h>

#include "attach/procmaps.h"
#include "include/libprof/prof_format.h"

bool att_punw_is_built(void)
{
    return true;
}

int att_punw_init(struct att_punw *u, struct cmn_err *err)
{
    unw_addr_space_t as = unw_create_addr_space(&_UPT_accessors, 0);
    if (as == NULL)
        return cmn_err_nomem(err);
    /* The process does not run while u lives: what was learnt for one pc holds for all
     * its threads. */
    unw_set_caching_policy(as, UNW_CACHE_GLOBAL);
    u->addr_space = as;
    return CMN_OK;
}

void att_punw_fini(struct att_punw *u)
{
    if (u->addr_space != NULL)
        unw_destroy_addr_space((unw_addr_space_t)u->addr_space);
    u->addr_space = NULL;
}

/* Steps from the leaf (already in frames[0], its stack pointer sp0) until the walk must
 * end; returns the stop reason, *n the frames so far. The stack is [sp0, stack_end]. */
static uint8_t step_all(unw_cursor_t *cursor, const struct att_maps *maps, uint64_t sp0,
                        uint64_t stack_end, uint64_t *frames, unsigned max_frames, unsigned *n)
{
    uint64_t prev_sp = sp0;
    for (;;) {
        int rc = unw_step(cursor);
        if (rc == 0)
            return PROF_STOP_END;
        if (rc < 0)
            return PROF_STOP_BOUNDS;
        unw_word_t ip = 0, sp = 0;
        if (unw_get_reg(cursor, UNW_REG_IP, &ip) < 0 || unw_get_reg(cursor, UNW_REG_SP, &sp) < 0)
            return PROF_STOP_BOUNDS;
        if (ip == 0)
            return PROF_STOP_END;
        if (!att_maps_is_code(maps, ip) || sp < sp0 || sp > stack_end)
            return PROF_STOP_BOUNDS;
        if (sp <= prev_sp)
            return PROF_STOP_ORDER;
        if (*n >= max_frames)
            return PROF_STOP_DEPTH;
        frames[(*n)++] = ip;
        prev_sp = sp;
    }
}

unsigned att_punw_walk(struct att_punw *u, pid_t tid, const struct att_maps *maps,
                       uint64_t *frames, unsigned max_frames, uint8_t *stop_reason)
{
    if (u->addr_space == NULL || max_frames == 0)
        return 0;
    void *upt = _UPT_create(tid);
    if (upt == NULL)
        return 0;
    unsigned n = 0;
    unw_cursor_t cursor;
    unw_word_t ip = 0, sp = 0;
    if (unw_init_remote(&cursor, (unw_addr_space_t)u->addr_space, upt) == 0 &&
        unw_get_reg(&cursor, UNW_REG_IP, &ip) == 0 && unw_get_reg(&cursor, UNW_REG_SP, &sp) == 0) {
        frames[n++] = ip;
        /* A stack pointer in no mapping: the leaf alone, as the frame-pointer walk has it. */
        const struct att_map *stack = att_maps_find(maps, sp);
        *stop_reason = stack == NULL
                           ? PROF_STOP_BOUNDS
                           : step_all(&cursor, maps, sp, stack->end, frames, max_frames, &n);
    }
    _UPT_destroy(upt);
    return n;
}

#else /* !PROF_HAVE_LIBUNWIND */

bool att_punw_is_built(void)
{
    return false;
}

int att_punw_init(struct att_punw *u, struct cmn_err *err)
{
    u->addr_space = NULL;
    return cmn_err_set(err, CMN_E_INPUT, "prof was built without libunwind");
}

void att_punw_fini(struct att_punw *u)
{
    u->addr_space = NULL;
}

unsigned att_punw_walk(struct att_punw *u, pid_t tid, const struct att_maps *maps,
                       uint64_t *frames, unsigned max_frames, uint8_t *stop_reason)
{
    (void)u;
    (void)tid;
    (void)maps;
    (void)frames;
    (void)max_frames;
    (void)stop_reason;
    return 0;
}

#endif
