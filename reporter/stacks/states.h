/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Thread states of wall-clock profiles (docs/FORMAT.md, "Thread states") as the reporter
 * shows and selects them. An off-CPU sample's state becomes its leaf frame: "[runnable]",
 * "[sleep: futex]", "[disk: read]", "[stopped]", "[wait]" (off CPU by the thread's own
 * choice, which kind not known), with the system call named when the profile says which
 * (the numbers are this machine's architecture's; an unknown one shows as "syscall N").
 * A sample on CPU (running, or any sample of a CPU profile) gets no such frame. --state
 * selects by kind, by group (on-cpu, off-cpu, waiting: sleeping, disk and wait) or by
 * system call. Pure functions over static tables; reporter thread only.
 */
#ifndef PROF_REPORTER_STACKS_STATES_H
#define PROF_REPORTER_STACKS_STATES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cmn_err;

/* What --state keeps: kinds (bit 1 << PROF_STATE_*; PROF_STATE_NONE goes with running)
 * and system calls. */
#define REP_STATE_CALLS_MAX 16u
struct rep_state_sel {
    uint32_t kinds;                     /* 0: no kind condition */
    int calls[REP_STATE_CALLS_MAX];     /* system call numbers */
    size_t n_calls;
};

/* Not async-signal-safe. */
/* Whether state (a sample's) is shown as a frame of its own: off CPU. */
bool rep_state_is_off_cpu(uint32_t state);
/* The leaf frame of state into buf (cap bytes, NUL included), e.g. "[sleep: futex]";
 * returns its length (0 for a state on CPU, which has none). */
size_t rep_state_frame(uint32_t state, char *buf, size_t cap);
/* The name of system call nr on this architecture, NULL when this table lacks it. */
const char *rep_state_call_name(int nr);
/* Adds the comma-separated words of list (running, on-cpu, runnable, sleeping, disk,
 * stopped, wait, waiting, off-cpu, or a system call's name) to *sel. CMN_OK, or
 * CMN_E_INPUT naming the word it does not know. */
int rep_state_sel_parse(struct rep_state_sel *sel, const char *list, struct cmn_err *err);
/* Whether sel keeps a sample of state (an empty sel keeps all). */
bool rep_state_sel_keeps(const struct rep_state_sel *sel, uint32_t state);

#endif
