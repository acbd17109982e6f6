/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Asking libprof for a snapshot of its process with a signal, for `prof stacks`: the
 * library walks every thread's stack from inside (its own signal handler per thread, no
 * ptrace) and writes the snapshot profile into a file that prof made for the answer.
 *
 * The protocol, shared with libprof (sampler/snapshot.h):
 *   1. the signal is PROF_SNAPSHOT_SIGNAL from the process's environment, spelled as
 *      PROF_SIGNAL is (a number, or PROF, USR1, USR2, RTMIN+N, RTMAX-N, with or without
 *      "SIG"; "0" or "off": none), else SIGRTMAX-3 (one below when PROF_SIGNAL took it);
 *   2. prof creates /tmp/prof-stacks.PID.NONCE (NONCE a random 32-bit number, in decimal)
 *      with O_CREAT|O_EXCL, mode 0600, owned by the process's effective uid (prof, as
 *      root, gives it away), and sends the signal with sigqueue(), whose value is
 *      0x70726f66 ("prof") << 32 | NONCE;
 *   3. the library opens that file (without O_CREAT) and writes a whole snapshot profile
 *      into it, ending with PROF_REC_END; prof reads it again every 10 ms until it is
 *      complete or the time is up, then removes it.
 * Reporter thread only.
 */
#ifndef PROF_ATTACH_SNAP_SIGNAL_H
#define PROF_ATTACH_SNAP_SIGNAL_H

#include <stdbool.h>
#include <sys/types.h>

struct cmn_err;

#define ATT_SNAP_SIGNAL_MAGIC 0x70726f66u /* "prof": the high half of the signal's value */
#define ATT_SNAP_SIGNAL_RT_OFFSET 3       /* the default signal is SIGRTMAX minus this */
#define ATT_SNAP_SIGNAL_POLL_NS 10000000  /* between two reads of the answer file */
#define ATT_SNAP_SIGNAL_WRITER "libprof-writer" /* the name of libprof's writer thread */

/* Not async-signal-safe. */
/* A signal spelled as libprof reads PROF_SIGNAL, into *sig: 0 for "0" and "off". CMN_OK,
 * or CMN_E_INPUT (message in err) when s is no signal or one libprof refuses (SIGKILL,
 * SIGSTOP, the fault signals, SIGABRT, SIGCHLD, SIGPIPE). */
int att_snap_signal_parse(const char *s, int *sig /* out */, struct cmn_err *err);
/* Whether process pid has libprof.so mapped. False also when its maps cannot be read. */
bool att_snap_signal_has_libprof(pid_t pid);
/* The signal libprof in process pid takes snapshots on, from its environment as libprof
 * read it at start (/proc/PID/environ); 0 when snapshots are off. The default when the
 * environment cannot be read. */
int att_snap_signal_of(pid_t pid);
/* Whether process pid has a handler for sig (/proc/PID/status SigCgt): a process whose
 * libprof takes no snapshots would be killed by it. */
bool att_snap_signal_is_caught(pid_t pid, int sig);
/* Reads the answer file at path when it is complete: true then (and the answer is the
 * caller's), false when it is not whole yet. */
typedef bool att_snap_answer_fn(const char *path, void *ctx);
/* Asks process pid for a snapshot with sig and waits up to timeout_s seconds for the
 * answer, a snapshot profile file that is_whole(path, ctx) reads each time it grows, until
 * it returns true. CMN_OK; CMN_E_NOTFOUND when no complete answer came in time;
 * CMN_E_INPUT when the signal could not be sent (the process is gone, belongs to another
 * user, or has no libprof writer thread to take it: its profile is finished; message in
 * err). The answer file is removed in every case. */
int att_snap_signal_ask(pid_t pid, int sig, double timeout_s, att_snap_answer_fn *is_whole,
                        void *ctx, struct cmn_err *err);

#endif
