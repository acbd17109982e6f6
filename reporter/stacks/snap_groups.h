/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The threads of an all-thread snapshot (PROF_REC_SNAPSHOT and the samples that follow)
 * grouped by identical stack, for `prof stacks`: threads whose stacks name the same frames
 * after symbolization (the same functions, and with file:line naming the same lines)
 * and stopped for the same reason form one group, however their addresses differ. Groups
 * come largest first, then by their lowest tid; the threads of a group by tid; then the
 * threads without a stack (no answer, gone, failed), by tid. The printer (out_stacks.c)
 * reads them. Owns its arrays; names and thread names point into the names table and the
 * profile, which must outlive it. Reporter thread only.
 */
#ifndef PROF_REPORTER_STACKS_SNAP_GROUPS_H
#define PROF_REPORTER_STACKS_SNAP_GROUPS_H

#include <stddef.h>
#include <stdint.h>

struct rep_profile;
struct rep_sample;
struct rep_sym;

/* One frame as printed: a frame address can give several (functions inlined there). */
struct rep_snap_frame {
    uint64_t addr; /* the leaf's pc, or a return address */
    uint32_t id;   /* its name in the symbolizer's names table */
};

/* One thread of the snapshot. */
struct rep_snap_member {
    uint32_t tid;
    const char *name;    /* its latest name in the profile, NULL when it has none */
    char run_state;      /* the kernel's state letter, 0 when unknown */
    uint8_t status;      /* PROF_SNAP_*; PROF_SNAP_OK exactly when it has a stack here */
    uint8_t stop_reason; /* PROF_STOP_* of its walk (with a stack) */
    uint16_t syscall;    /* PROF_SNAP_NOT_ASKED: the system call it waits in */
    uint32_t n_frames;   /* its frames, leaf first ... */
    size_t frames_at;    /* ... from this index of rep_snap_groups.frames */
};

struct rep_snap_group {
    size_t first;     /* index in members of its first thread, the one with the lowest tid */
    size_t n_members; /* its threads: members[first, first + n_members) */
};

struct rep_snap_groups {
    struct rep_snap_member *members; /* the threads with a stack, group after group in
                                      * no particular order of groups; then those without */
    size_t n_members;                /* all threads */
    size_t n_stacked;                /* those with a stack: members[0, n_stacked) */
    struct rep_snap_group *groups;   /* largest first, then by lowest tid */
    size_t n_groups;
    struct rep_snap_frame *frames; /* every member's frames, back to back */
    size_t n_frames;
    size_t cap_frames;
};

/* Not async-signal-safe. */
/* Groups the threads of snapshot profile p, symbolized with sym (already switched to p).
 * A thread is one PROF_REC_SNAPSHOT; one listed as answering whose sample is missing counts
 * as failed; a sample whose tid is not listed is a thread of its own (state unknown).
 * CMN_OK or CMN_E_NOMEM. Free g with rep_snap_groups_fini() either way. */
int rep_snap_groups_build(struct rep_snap_groups *g /* out */, struct rep_sym *sym,
                          const struct rep_profile *p);
/* Frees what g owns. Accepts NULL. */
void rep_snap_groups_fini(struct rep_snap_groups *g);

/* The frames of member m, leaf first. */
static inline const struct rep_snap_frame *rep_snap_member_frames(const struct rep_snap_groups *g,
                                                                  const struct rep_snap_member *m)
{
    return g->frames + m->frames_at;
}

#endif
