/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The ptrace snapshot (see ptrace_snap.h), in four phases:
 *
 *   1. attach: list /proc/PID/task, read each new thread's state letter and name (before
 *      the stop changes its state to 't'), seize it and ask it to stop; then wait for the
 *      stops of those threads and list the tasks again, until a listing finds no new
 *      thread (a thread that runs can start another until it is stopped itself);
 *   2. read: the process's mappings, then per stopped thread its registers
 *      (PTRACE_GETREGSET NT_PRSTATUS) and a copy of its stack from the stack pointer up to
 *      the end of its mapping; or, with --unwind libunwind, libunwind's walk, which reads
 *      the stopped thread itself;
 *   3. detach every thread, always, also after an error;
 *   4. walk the copies (unwind tables built from the target's files meanwhile: the
 *      process does not wait for them) and write the records, once the process runs
 *      again.
 *
 * What the first stop of a thread can be, and what is done so that the process cannot
 * tell: a PTRACE_EVENT_STOP (the interrupt, or the group-stop of a process stopped by
 * SIGSTOP, which it returns to when detached); or a signal-delivery-stop, when a signal was
 * being delivered as the thread was seized: its registers are read there, and the signal is
 * handed back to PTRACE_DETACH, which delivers it, so that it is neither lost nor doubled.
 * The interrupt still pending on such a thread dies with the detach.
 */
#include "attach/ptrace_snap.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attach/procmaps.h"
#include "attach/procstat.h"
#include "attach/ptrace_unwind.h"
#include "attach/remote_walk.h"
#include "attach/uwtables.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/grow.h"
#include "common/record.h"
#include "include/libprof/prof_format.h"

#define MAX_ROUNDS 64   /* task listings at most: a process that keeps starting threads */
#define POLL_NS 1000000 /* between two looks at the threads not stopped yet */

/* One thread of the target. */
struct task {
    pid_t tid;
    char state;                      /* the kernel's letter before the attach, 0 unknown */
    char name[PROF_THREAD_NAME_MAX]; /* its comm before the attach */
    bool is_seized;                  /* traced by us: must be detached */
    bool is_stopped;                 /* in a ptrace stop: registers can be read */
    int signal;                      /* of a signal-delivery-stop: delivered at detach */
    uint8_t status;                  /* PROF_SNAP_* */
    struct prof_rec_sample rec;      /* its stack's record, when status is OK */
    uint64_t *frames;                /* its stack, leaf first, rec.n_frames; malloc'd */
    bool has_regs;                   /* regs and copy were read, to be walked (phase 4) */
    struct cmn_fp_regs regs;         /* where it stopped */
    unsigned char *copy;             /* its stack from regs.sp up; malloc'd */
    size_t copy_len;
};

struct snap {
    pid_t pid;
    struct task *tasks; /* in the order first listed */
    size_t n_tasks;
    size_t cap_tasks;
    uint64_t time_ns;              /* CLOCK_MONOTONIC at the start */
    double deadline_s;             /* CLOCK_MONOTONIC by which threads must have stopped */
    bool is_refused;               /* a live thread refused to be seized (permission) */
    enum att_ptrace_unwind unwind; /* how stacks are walked */
    struct att_punw punw;          /* libunwind's state, with ATT_PTRACE_UNWIND_LIBUNWIND */
    struct att_uwtables tables;    /* the modules' unwind tables, built as walks meet them */
    uint64_t *scratch;             /* ATT_PTRACE_SNAP_DEPTH frames: a walk's, before kept */
};

/* One walk's result, before it is kept. */
struct walk {
    const uint64_t *frames; /* leaf first, in one of the snapshot's scratch arrays */
    unsigned n_frames;      /* 0: the walk did not start */
    uint8_t stop_reason;    /* PROF_STOP_* */
    uint8_t flags;          /* PROF_SAMPLE_*, TRUNCATED not yet set */
};

static bool has_task(const struct snap *s, pid_t tid)
{
    for (size_t i = 0; i < s->n_tasks; i++)
        if (s->tasks[i].tid == tid)
            return true;
    return false;
}

/* Seizes thread t and asks it to stop. A thread that is exiting (a zombie refuses to be
 * seized with EPERM) is gone; any other refusal is remembered for the error message. */
static void seize(struct snap *s, struct task *t)
{
    if (ptrace(PTRACE_SEIZE, t->tid, NULL, NULL) != 0) {
        int e = errno;
        char now = att_proc_task_state(s->pid, t->tid);
        if (e == ESRCH || now == 0 || now == 'Z' || now == 'X') {
            t->status = PROF_SNAP_GONE;
        } else {
            t->status = PROF_SNAP_FAILED;
            s->is_refused = true;
        }
        return;
    }
    t->is_seized = true;
    /* Fails only when the thread is already gone; its exit is then seen by waitpid. */
    ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL);
}

/* Adds and seizes the threads of the process not seen yet; *n_new says how many. */
static int scan_tasks(struct snap *s, size_t *n_new, struct cmn_err *err)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)s->pid);
    DIR *d = opendir(path);
    *n_new = 0;
    if (d == NULL) {
        if (errno == ENOENT && s->n_tasks == 0)
            return cmn_err_set(err, CMN_E_INPUT, "no process %d", (int)s->pid);
        return CMN_OK; /* the process exited meanwhile: its threads are gone */
    }
    struct dirent *e;
    int rc = CMN_OK;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long tid = strtol(e->d_name, &end, 10);
        if (e->d_name[0] < '0' || e->d_name[0] > '9' || *end != '\0' || has_task(s, (pid_t)tid))
            continue;
        if (!CMN_GROW(s->tasks, s->cap_tasks, s->n_tasks + 1, 16)) {
            rc = cmn_err_nomem(err);
            break;
        }
        struct task *t = &s->tasks[s->n_tasks++];
        memset(t, 0, sizeof(*t));
        t->tid = (pid_t)tid;
        t->status = PROF_SNAP_NO_ANSWER;
        t->state = att_proc_task_state(s->pid, t->tid);
        att_proc_task_name(s->pid, t->tid, t->name);
        seize(s, t);
        (*n_new)++;
    }
    closedir(d);
    return rc;
}

static void mark_gone(struct task *t)
{
    t->is_seized = false; /* reaped, or never ours: nothing to detach */
    t->status = PROF_SNAP_GONE;
}

/* What the wait status of a seized thread means for it. */
static void take_status(struct task *t, int st)
{
    if (WIFEXITED(st) || WIFSIGNALED(st)) {
        mark_gone(t);
        return;
    }
    if (!WIFSTOPPED(st))
        return;
    t->is_stopped = true;
    /* With PTRACE_SEIZE every group-stop and the interrupt are PTRACE_EVENT_STOPs; a stop
     * without an event is a signal being delivered, which the detach must deliver. */
    if ((st >> 16) == 0)
        t->signal = WSTOPSIG(st);
}

/* Waits until the seized threads from index first on have stopped, or the deadline. */
static void wait_stops(struct snap *s, size_t first)
{
    struct timespec tick = {0, POLL_NS};
    for (;;) {
        bool is_waiting = false;
        for (size_t i = first; i < s->n_tasks; i++) {
            struct task *t = &s->tasks[i];
            if (!t->is_seized || t->is_stopped)
                continue;
            int st;
            pid_t r = waitpid(t->tid, &st, __WALL | WNOHANG);
            if (r == t->tid)
                take_status(t, st);
            else if (r < 0 && errno == ECHILD)
                mark_gone(t); /* not ours any more: it exited */
            else
                is_waiting = true;
        }
        if (!is_waiting || cmn_clock_s() > s->deadline_s)
            return;
        nanosleep(&tick, NULL);
    }
}

/* Phase 1. */
static int attach_all(struct snap *s, struct cmn_err *err)
{
    for (int round = 0; round < MAX_ROUNDS; round++) {
        size_t first = s->n_tasks, n_new;
        int rc = scan_tasks(s, &n_new, err);
        if (rc != CMN_OK)
            return rc;
        if (n_new == 0)
            return CMN_OK;
        wait_stops(s, first);
    }
    return CMN_OK;
}

/* The registers a walk starts from, of a stopped thread; false when they cannot be read
 * (or the thread is not a 64-bit one of this architecture). */
static bool read_regs(pid_t tid, struct cmn_fp_regs *r)
{
#if defined(__x86_64__)
    struct user_regs_struct u;
    struct iovec iov = {.iov_base = &u, .iov_len = sizeof(u)};
    if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &iov) != 0 || iov.iov_len != sizeof(u))
        return false;
    *r = (struct cmn_fp_regs){.pc = u.rip, .sp = u.rsp, .fp = u.rbp, .lr = 0, .ret = u.rax,
                              .ret_known = 1, .arg = u.rdi, .arg_known = 1};
#elif defined(__aarch64__)
    struct user_regs_struct u;
    struct iovec iov = {.iov_base = &u, .iov_len = sizeof(u)};
    if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &iov) != 0 || iov.iov_len != sizeof(u))
        return false;
    *r = (struct cmn_fp_regs){.pc = u.pc, .sp = u.sp, .fp = u.regs[29], .lr = u.regs[30],
                              .ret = u.regs[0], .ret_known = 1, .arg = u.regs[0],
                              .arg_known = 1};
#else
#error "ptrace_snap.c: no register layout for this architecture"
#endif
    return true;
}

/* Phase 2 for a thread stopped at regs: a copy of its stack into t. CMN_OK (t->has_regs
 * set when the stack could be read) or CMN_E_NOMEM. */
static int copy_stack(struct snap *s, struct task *t, const struct cmn_fp_regs *regs,
                      const struct att_maps *maps)
{
    int r = att_rwalk_read_stack(s->pid, maps, regs->sp, ATT_PTRACE_SNAP_STACK_MAX, &t->copy,
                                 &t->copy_len);
    if (r != 0)
        return r == -ENOMEM ? CMN_E_NOMEM : CMN_OK;
    t->regs = *regs;
    t->has_regs = true;
    return CMN_OK;
}

/* Keeps walk w as thread t's stack. CMN_OK or CMN_E_NOMEM. */
static int keep(const struct snap *s, struct task *t, const struct walk *w)
{
    if ((t->frames = malloc(w->n_frames * sizeof(*t->frames))) == NULL)
        return CMN_E_NOMEM;
    memcpy(t->frames, w->frames, w->n_frames * sizeof(*t->frames));
    uint8_t flags = w->flags;
    if (w->stop_reason != PROF_STOP_END)
        flags |= PROF_SAMPLE_TRUNCATED;
    t->rec = (struct prof_rec_sample){.time_ns = s->time_ns,
                                      .tid = (uint32_t)t->tid,
                                      .weight = 1,
                                      .n_frames = (uint16_t)w->n_frames,
                                      .stop_reason = w->stop_reason,
                                      .flags = flags};
    t->status = PROF_SNAP_OK;
    return CMN_OK;
}

/* Phase 2 for one stopped thread: its registers and a copy of its stack, or with
 * libunwind its walk, which must read the thread while it is stopped. A thread whose
 * registers or stack cannot be read, or that libunwind cannot start on, keeps
 * PROF_SNAP_FAILED. */
static int read_stack(struct snap *s, struct task *t, const struct att_maps *maps)
{
    struct cmn_fp_regs regs;
    t->status = PROF_SNAP_FAILED;
    if (!read_regs(t->tid, &regs))
        return CMN_OK;
    if (s->unwind != ATT_PTRACE_UNWIND_LIBUNWIND)
        return copy_stack(s, t, &regs, maps);
    struct walk unw = {.frames = s->scratch};
    unw.n_frames = att_punw_walk(&s->punw, t->tid, maps, s->scratch, ATT_PTRACE_SNAP_DEPTH,
                                 &unw.stop_reason);
    return unw.n_frames > 0 ? keep(s, t, &unw) : CMN_OK;
}

/* Phase 4 for a thread whose stack was copied: the walk over the copy, as s->unwind says.
 * CMN_OK or CMN_E_NOMEM. */
static int walk_copy(struct snap *s, struct task *t, const struct att_maps *maps)
{
    static const enum att_rwalk_mode modes[] = {
        [ATT_PTRACE_UNWIND_AUTO] = ATT_RWALK_AUTO,
        [ATT_PTRACE_UNWIND_FP] = ATT_RWALK_FP,
        [ATT_PTRACE_UNWIND_LIBUNWIND] = ATT_RWALK_AUTO,
        [ATT_PTRACE_UNWIND_DWARF] = ATT_RWALK_DWARF,
    };
    struct att_rwalk rw;
    struct walk w = {.frames = s->scratch};
    att_rwalk_init(&rw, s->pid, maps, t->copy, t->regs.sp, t->copy_len);
    att_rwalk_use_tables(&rw, &s->tables, modes[s->unwind]);
    w.n_frames = att_rwalk(&rw, &t->regs, s->scratch, ATT_PTRACE_SNAP_DEPTH, &w.stop_reason,
                           &w.flags);
    free(t->copy);
    t->copy = NULL;
    return keep(s, t, &w);
}

/* Phase 3. A thread that has not stopped by now cannot be detached (PTRACE_DETACH needs
 * a stopped tracee); it is when prof exits, which also drops the interrupt still pending
 * on it. */
static void detach_all(struct snap *s)
{
    for (size_t i = 0; i < s->n_tasks; i++) {
        struct task *t = &s->tasks[i];
        int st;
        if (t->is_seized && !t->is_stopped && waitpid(t->tid, &st, __WALL | WNOHANG) == t->tid)
            take_status(t, st);
        if (t->is_seized && t->is_stopped)
            ptrace(PTRACE_DETACH, t->tid, NULL, (void *)(uintptr_t)t->signal);
        t->is_seized = false;
    }
}

int att_ptrace_refusal(const struct att_ptrace_facts *f, struct cmn_err *err)
{
    int pid = (int)f->pid;
    if (f->is_kthread)
        return cmn_err_set(err, CMN_E_INPUT,
                           "process %d is a kernel thread: it has no user-space stack", pid);
    if (f->tracer > 0)
        return cmn_err_set(err, CMN_E_INPUT,
                           "cannot attach to process %d: it is already traced by process %ld (a "
                           "debugger?)",
                           pid, f->tracer);
    if (!f->is_admin && f->is_other_user)
        return cmn_err_set(err, CMN_E_INPUT,
                           "cannot attach to process %d: it belongs to another user (uid %u) and "
                           "prof runs as uid %u; run prof as that user or as root",
                           pid, f->target_euid, f->my_euid);
    if (f->yama_scope == 3)
        return cmn_err_set(err, CMN_E_INPUT,
                           "cannot attach to process %d: kernel.yama.ptrace_scope is 3, which "
                           "forbids ptrace on this system until it restarts",
                           pid);
    if (f->yama_scope == 2 && !f->is_admin)
        return cmn_err_set(err, CMN_E_INPUT,
                           "cannot attach to process %d: kernel.yama.ptrace_scope is 2: only root "
                           "(CAP_SYS_PTRACE) may attach; run prof as root",
                           pid);
    if (f->yama_scope == 1 && !f->is_admin)
        return cmn_err_set(err, CMN_E_INPUT,
                           "cannot attach to process %d: kernel.yama.ptrace_scope is 1: a process "
                           "may attach only to its descendants; run prof as root "
                           "(CAP_SYS_PTRACE) or set kernel.yama.ptrace_scope to 0",
                           pid);
    return cmn_err_set(err, CMN_E_INPUT,
                       "cannot attach to process %d: permission denied (a setuid or "
                       "non-dumpable process?)",
                       pid);
}

/* The one line that says why the process could not be attached, from what /proc says. */
static int permission_error(pid_t pid, struct cmn_err *err)
{
    char v[128];
    struct att_ptrace_facts f = {.pid = pid, .my_euid = (unsigned)geteuid(), .yama_scope = -1};
    f.is_kthread = att_proc_status_field(pid, "Kthread", v, sizeof(v)) && atoi(v) == 1;
    if (att_proc_status_field(pid, "TracerPid", v, sizeof(v)))
        f.tracer = atol(v);
    f.is_admin = att_proc_has_cap(CAP_SYS_PTRACE);
    f.is_other_user = att_proc_is_other_user(pid, &f.target_euid);
    if (att_proc_read("/proc/sys/kernel/yama/ptrace_scope", v, sizeof(v)) > 0)
        f.yama_scope = atoi(v);
    return att_ptrace_refusal(&f, err);
}

static int put(FILE *out, const void *rec, size_t n, struct cmn_err *err)
{
    if (n == 0 || fwrite(rec, 1, n, out) != n)
        return cmn_err_set(err, CMN_E_IO, "write error: %s", n ? strerror(errno) : "record");
    return CMN_OK;
}

/* The PROCESS record's unwinder for the walks of mode. */
static uint16_t unwinder_of(enum att_ptrace_unwind mode)
{
    switch (mode) {
    case ATT_PTRACE_UNWIND_FP:
        return PROF_UNWIND_FP;
    case ATT_PTRACE_UNWIND_LIBUNWIND:
        return PROF_UNWIND_LIBUNWIND;
    case ATT_PTRACE_UNWIND_DWARF:
        return PROF_UNWIND_DWARF;
    default:
        return PROF_UNWIND_AUTO;
    }
}

/* The header, the PROCESS record and the MAP records. */
static int write_head(const struct snap *s, const struct att_maps *maps, FILE *out,
                      struct cmn_err *err)
{
    unsigned char buf[sizeof(struct prof_rec_process) + 4200];
    char exe[4096];
    att_proc_exe(s->pid, exe, sizeof(exe));
    struct prof_rec_process p = {
        .pid = (uint32_t)s->pid,
        .ppid = (uint32_t)att_proc_ppid(s->pid),
        .start_mono_ns = s->time_ns,
        .start_real_ns = cmn_clock_ns(CLOCK_REALTIME),
        .timer_source = PROF_TIMER_NONE,
        .unwinder = unwinder_of(s->unwind),
        .max_depth = ATT_PTRACE_SNAP_DEPTH,
    };
    int rc = put(out, buf, cmn_record_file_header(buf, sizeof(buf)), err);
    if (rc == CMN_OK)
        rc = put(out, buf, cmn_record_process(buf, sizeof(buf), &p, exe), err);
    if (rc == CMN_OK)
        rc = att_maps_write(maps, s->time_ns, out, err);
    return rc;
}

/* A NOTE record per module whose unwind table could not be built: its frames were walked
 * by frame pointer (or, with tables only, not at all). */
static int write_notes(struct snap *s, unsigned char *buf, size_t cap, FILE *out,
                       struct cmn_err *err)
{
    const struct att_uw_module *mod;
    int rc = CMN_OK;
    while (rc == CMN_OK && (mod = att_uwtables_failed(&s->tables)) != NULL) {
        char text[496]; /* a NOTE's text at most (docs/FORMAT.md) */
        snprintf(text, sizeof(text), "no unwind table for %s (%s): %s", mod->path, mod->why,
                 s->unwind == ATT_PTRACE_UNWIND_DWARF ? "its frames end the walks"
                                                      : "its frames are walked by frame pointer");
        rc = put(out, buf, cmn_record_note(buf, cap, s->time_ns, text), err);
    }
    return rc;
}

/* Phase 4: the whole file. */
static int write_profile(struct snap *s, const struct att_maps *maps, FILE *out,
                         struct cmn_err *err)
{
    size_t cap = sizeof(struct prof_rec_sample) + ATT_PTRACE_SNAP_DEPTH * sizeof(uint64_t);
    unsigned char *buf = malloc(cap);
    if (buf == NULL)
        return cmn_err_nomem(err);
    int rc = write_head(s, maps, out, err);
    if (rc == CMN_OK)
        rc = write_notes(s, buf, cap, out, err);
    for (size_t i = 0; i < s->n_tasks && rc == CMN_OK; i++) {
        const struct task *t = &s->tasks[i];
        if (t->name[0] != '\0')
            rc = put(out, buf, cmn_record_thread(buf, cap, s->time_ns, (uint32_t)t->tid, t->name),
                     err);
    }
    for (size_t i = 0; i < s->n_tasks && rc == CMN_OK; i++) {
        const struct task *t = &s->tasks[i];
        rc = put(out, buf,
                 cmn_record_snapshot(buf, cap, s->time_ns, (uint32_t)t->tid, t->status, t->state, 0),
                 err);
        if (rc == CMN_OK && t->status == PROF_SNAP_OK)
            rc = put(out, buf, cmn_record_sample(buf, cap, &t->rec, t->frames), err);
    }
    if (rc == CMN_OK)
        rc = put(out, buf, cmn_record_end(buf, cap), err);
    if (rc == CMN_OK && fflush(out) != 0)
        rc = cmn_err_set(err, CMN_E_IO, "write error: %s", strerror(errno));
    free(buf);
    return rc;
}

/* Phases 2 to 4, once every thread that could be is stopped. */
static int read_and_write(struct snap *s, FILE *out, struct cmn_err *err)
{
    struct att_maps maps;
    int rc = att_maps_read(s->pid, &maps, err);
    if (rc == CMN_OK && (s->scratch = malloc(ATT_PTRACE_SNAP_DEPTH * sizeof(uint64_t))) == NULL)
        rc = cmn_err_nomem(err);
    for (size_t i = 0; i < s->n_tasks && rc == CMN_OK; i++) {
        if (s->tasks[i].is_stopped && read_stack(s, &s->tasks[i], &maps) != CMN_OK)
            rc = cmn_err_nomem(err);
    }
    detach_all(s);
    for (size_t i = 0; i < s->n_tasks && rc == CMN_OK; i++) {
        if (s->tasks[i].has_regs && walk_copy(s, &s->tasks[i], &maps) != CMN_OK)
            rc = cmn_err_nomem(err);
    }
    if (rc == CMN_OK)
        rc = write_profile(s, &maps, out, err);
    att_maps_free(&maps);
    return rc;
}

/* Prepares libunwind when the walks are libunwind's: one that prof cannot give is an
 * error. */
static int prepare_unwind(struct snap *s, struct cmn_err *err)
{
    if (s->unwind != ATT_PTRACE_UNWIND_LIBUNWIND)
        return CMN_OK;
    struct cmn_err why = {0};
    int rc = att_punw_init(&s->punw, &why);
    if (rc == CMN_E_NOMEM)
        return cmn_err_nomem(err);
    if (rc != CMN_OK)
        return cmn_err_set(err, rc, "--unwind libunwind: %s", why.msg);
    return CMN_OK;
}

int att_ptrace_snap_unwind(pid_t pid, double stop_timeout_s, enum att_ptrace_unwind unwind,
                           FILE *out, struct cmn_err *err)
{
    struct snap s = {.pid = pid, .time_ns = cmn_clock_ns(CLOCK_MONOTONIC), .unwind = unwind};
    s.deadline_s = cmn_clock_s() + stop_timeout_s;
    att_uwtables_init(&s.tables, pid);
    int rc = prepare_unwind(&s, err);
    if (rc != CMN_OK)
        return rc;
    rc = attach_all(&s, err);
    bool is_any_seized = false;
    for (size_t i = 0; i < s.n_tasks; i++)
        is_any_seized = is_any_seized || s.tasks[i].is_stopped || s.tasks[i].is_seized;
    if (rc == CMN_OK && !is_any_seized) {
        if (s.is_refused)
            rc = permission_error(pid, err);
        else
            rc = cmn_err_set(err, CMN_E_INPUT, "no process %d (it exited)", (int)pid);
    }
    if (rc == CMN_OK)
        rc = read_and_write(&s, out, err);
    detach_all(&s);
    for (size_t i = 0; i < s.n_tasks; i++) {
        free(s.tasks[i].frames);
        free(s.tasks[i].copy);
    }
    free(s.tasks);
    free(s.scratch);
    att_punw_fini(&s.punw);
    att_uwtables_fini(&s.tables);
    return rc;
}

int att_ptrace_snap(pid_t pid, double stop_timeout_s, FILE *out, struct cmn_err *err)
{
    return att_ptrace_snap_unwind(pid, stop_timeout_s, ATT_PTRACE_UNWIND_AUTO, out, err);
}
