/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * An all-thread snapshot of a running process taken from outside with ptrace, for
 * `prof stacks` when the process does not run under libprof (or will not answer). Every
 * thread is seized (PTRACE_SEIZE) and stopped (PTRACE_INTERRUPT) without a signal, its
 * registers and stack are read, and every thread is detached again; the stacks are then
 * walked with the library's own walk (attach/remote_walk.h). Read-only: nothing
 * is written into the process, and it runs on as before: a signal that arrived while a
 * thread was stopped is delivered when it is detached, a process stopped by SIGSTOP stays
 * stopped, and a system call that the stop interrupted restarts (an interrupt stop is not
 * a signal, so no handler runs and the call never sees EINTR).
 *
 * The result is a snapshot profile in the libprof format (docs/FORMAT.md): the file
 * header, PROCESS (timer_source PROF_TIMER_NONE), the executable MAP records, one THREAD
 * record per named thread, then per thread a PROF_REC_SNAPSHOT and, when its stack was
 * read, a PROF_REC_SAMPLE of weight 1, then END: the same file libprof writes when it is
 * asked for a snapshot, so one printer serves both. Reporter thread only; prof must not
 * have other children being waited for meanwhile.
 *
 * How each stack is walked (enum att_ptrace_unwind, `prof stacks --unwind`): while the
 * threads are stopped only their registers and a copy of their stacks are taken; once
 * they run again, each copy is walked with the unwind tables of the modules its frames
 * are in (attach/uwtables.h, built from the target's files) and by frame pointer where a
 * module has none (auto, the default), by frame pointer only, or by the tables only
 * (dwarf). With libunwind, libunwind's remote unwinder walks each thread while it is
 * stopped (attach/ptrace_unwind.h): slower, and the oracle the tests compare the tables
 * with. The PROCESS record's unwinder says which (PROF_UNWIND_AUTO, _FP, _DWARF,
 * _LIBUNWIND); a module whose table could not be built is named in a NOTE record.
 */
#ifndef PROF_ATTACH_PTRACE_SNAP_H
#define PROF_ATTACH_PTRACE_SNAP_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

struct cmn_err;

#define ATT_PTRACE_SNAP_STACK_MAX (8u << 20) /* stack bytes copied per thread at most */
#define ATT_PTRACE_SNAP_DEPTH 1024u          /* frames per thread at most */

/* How the threads' stacks are walked. */
enum att_ptrace_unwind {
    ATT_PTRACE_UNWIND_AUTO,      /* unwind tables where a module has one, frame pointers
                                  * elsewhere */
    ATT_PTRACE_UNWIND_FP,        /* frame pointers only */
    ATT_PTRACE_UNWIND_LIBUNWIND, /* libunwind for every thread */
    ATT_PTRACE_UNWIND_DWARF,     /* unwind tables only: a frame without a row ends the walk */
};

/* Not async-signal-safe. */
/* Takes the snapshot of process pid and writes it to out. Threads have stop_timeout_s
 * seconds (from the first attach) to stop; one that has not stopped by then is listed as
 * not answering. CMN_OK; CMN_E_INPUT with a one-line message when the process does not
 * exist or cannot be attached (the message says why: another user's process, the Yama
 * ptrace scope, a debugger already attached); CMN_E_NOMEM; CMN_E_IO when writing to out
 * failed. The process is detached whatever the outcome. */
int att_ptrace_snap(pid_t pid, double stop_timeout_s, FILE *out, struct cmn_err *err);
/* As att_ptrace_snap() (which walks as ATT_PTRACE_UNWIND_AUTO), walking as unwind says.
 * ATT_PTRACE_UNWIND_LIBUNWIND in a prof built without libunwind is CMN_E_INPUT, before
 * anything is attached. */
int att_ptrace_snap_unwind(pid_t pid, double stop_timeout_s, enum att_ptrace_unwind unwind,
                           FILE *out, struct cmn_err *err);

/* What decides why a process may not be attached (read from /proc by the snapshot). */
struct att_ptrace_facts {
    pid_t pid;
    bool is_kthread;      /* a kernel thread (Kthread: 1) */
    long tracer;          /* TracerPid: already traced by this process, 0 when not */
    bool is_admin;        /* prof has CAP_SYS_PTRACE */
    bool is_other_user;   /* the target's real, effective or saved uid is not prof's */
    unsigned target_euid; /* the target's effective uid */
    unsigned my_euid;     /* prof's */
    int yama_scope;       /* kernel.yama.ptrace_scope, -1 without Yama */
};

/* Not async-signal-safe. The one-line reason (CMN_E_INPUT in err) for a refused attach. */
int att_ptrace_refusal(const struct att_ptrace_facts *f, struct cmn_err *err);

#endif
