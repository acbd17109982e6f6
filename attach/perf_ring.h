/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The perf_event side of `prof record -p` (attach/record_pid.h): the task-clock counters
 * it opens on another process's threads (user space only, one per thread and CPU, set up
 * for one of the two sample layouts: registers and a copy of the top of the user stack by
 * default, the kernel's own callchain with --unwind kernel), the ring buffer per CPU
 * that every counter on that CPU writes into, and reading whole records out of a ring
 * (common/perf_ring.h), which common/perf_record.h decodes by attr.sample_type. It knows
 * nothing of the profile format, of which thread counts through which counters or of what
 * a record means to the profile: record_pid.c decides that. Reporter thread only, single-threaded:
 * a struct att_pring is used by one thread from att_pring_init() to att_pring_fini(), and
 * owns every descriptor, mapping and buffer it holds until then. Functions that can fail
 * return CMN_OK or a CMN_E_* code with a one-line message in a caller-owned struct cmn_err
 * (common/err.h).
 */
#ifndef PROF_ATTACH_PERF_RING_H
#define PROF_ATTACH_PERF_RING_H

#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/perf_ring.h"

struct cmn_err;

#define ATT_PRING_RECORD_MAX 65536u /* a perf record's size is a u16 */

/* One counter: a thread on one CPU. Written by the functions below (opened, HUP, closed),
 * read by the caller. */
struct att_pring_counter {
    int fd;      /* -1 once closed */
    pid_t tid;   /* the thread it was opened on; the threads that inherit it count as its */
    uint64_t id; /* the kernel's id for it, which those threads' records carry too */
    bool is_hup; /* poll said HUP: its thread and all that inherited it are gone */
};

/* The ring of one CPU: the buffer of its first counter, shared by the others on it. */
struct att_pring_buf {
    int fd;                            /* that counter (closed as a counter); -1: not mapped */
    struct perf_event_mmap_page *meta; /* the mapping: this page, then the data area */
    unsigned char *data;               /* the data area */
    uint64_t data_bytes;               /* its size, a power of two */
    size_t map_bytes;                  /* the whole mapping */
};

/* The counters and rings of one process. Written only by the functions below; the caller
 * may read pid, max_stack, n_cpus, counters, n_counters and n_live. */
struct att_pring {
    pid_t pid;                   /* the process, for messages */
    bool is_kernel_callchain;    /* --unwind kernel */
    unsigned max_stack;          /* --unwind kernel: kernel.perf_event_max_stack */
    struct perf_event_attr attr; /* of every counter; attr.sample_type is the layout of the
                                  * samples (common/perf_record.h decodes it) */
    size_t page_bytes;           /* the system's page: a ring's metadata page */
    size_t ring_bytes; /* the data area of the next ring; halved under the locked-memory cap */

    int *cpus;                   /* the online CPUs' numbers */
    struct att_pring_buf *rings; /* one per entry of cpus */
    size_t n_cpus;

    struct att_pring_counter *counters;      /* sorted by id (the kernel hands ids out in
                                              * increasing order) */
    size_t n_counters, cap_counters, n_live; /* n_live: not HUP */

    unsigned char *wrap; /* ATT_PRING_RECORD_MAX bytes: a record that wraps around the
                          * ring's end, made whole */
};

/* Reading the records of one ring: att_pring_read_begin(), att_pring_read_next() until it
 * returns NULL or the caller stops, then att_pring_read_end(). On the caller's stack. */
struct att_pring_reader {
    struct cmn_pring ring; /* the ring read (common/perf_ring.h) */
    unsigned char *wrap;   /* where a record that wraps is made whole (the att_pring's) */
};

/* Not async-signal-safe; reporter thread only. */
/* Prepares p to sample the threads of process pid at hz Hz: checks hz against
 * kernel.perf_event_max_sample_rate and, with is_kernel_callchain, lowers *max_depth (in,
 * out) to kernel.perf_event_max_stack; sets up the counters' attributes, finds the online
 * CPUs, and shares the rings' memory budget out over them. Opens nothing yet. CMN_OK;
 * CMN_E_INPUT when hz is over the kernel's limit; CMN_E_NOMEM. Call att_pring_fini() in
 * every case. */
int att_pring_init(struct att_pring *p, pid_t pid, unsigned hz, unsigned *max_depth,
                   bool is_kernel_callchain, struct cmn_err *err);
/* Closes whatever att_pring_close() did not, and frees p's memory. p may be NULL, or
 * zeroed and never initialized. */
void att_pring_fini(struct att_pring *p);
/* Opens thread tid's counter on CPU p->cpus[k] and makes it write into that CPU's ring,
 * mapping the ring if it is the first counter there. CMN_OK; CMN_E_NOTFOUND, err left
 * alone, when the thread is gone; CMN_E_INPUT with the reason (permissions,
 * perf_event_paranoid, descriptor or locked-memory limits); CMN_E_NOMEM. */
int att_pring_open(struct att_pring *p, pid_t tid, size_t k, struct cmn_err *err);
/* The counter with this id, or NULL. The pointer is dead after the next att_pring_open(). */
const struct att_pring_counter *att_pring_counter_of(const struct att_pring *p, uint64_t id);
/* Waits up to wait_ns for a ring to fill, for a counter to hang up or for a signal, with
 * the signal mask wait_mask; marks the counters that hung up (is_hup, n_live). fds and
 * which are the caller's, with room for p->n_counters entries each. */
void att_pring_wait(struct att_pring *p, struct pollfd *fds, size_t *which, uint64_t wait_ns,
                    const sigset_t *wait_mask);
/* Unmaps every ring and closes every counter: the process runs on without them. Returns
 * the CPU time the counters saw (with every thread that inherited them), in ns; 0 when
 * they are closed already. */
uint64_t att_pring_close(struct att_pring *p);

/* Begins reading the ring of CPU p->cpus[k]; false when it is not mapped. */
bool att_pring_read_begin(struct att_pring *p, size_t k, struct att_pring_reader *rd);
/* The next whole record of the ring (header included), its header in *h (out), or NULL
 * when there is none (or what is there is no record the kernel writes: it is skipped). The
 * record stays valid until the next call: one that wraps around the ring's end is copied
 * into p->wrap. */
const unsigned char *att_pring_read_next(struct att_pring_reader *rd, struct perf_event_header *h);
/* Gives what was read back to the kernel. */
void att_pring_read_end(struct att_pring_reader *rd);

/* Appends v to the growing array *out (malloc'd; *n used, *cap allocated): the lists of
 * CPUs and of thread ids. 0 or -ENOMEM. */
int att_pring_push_int(int **out, size_t *n, size_t *cap, int v);

#endif
