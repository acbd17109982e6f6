/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libunwind stepper, on the signal handler's path (see walk_unw.h). It calls only
 * unw_init_local2(), unw_step() and unw_get_reg(), through the pointers libprof/unwind.c
 * resolved when it loaded libunwind (so `make lint` sees no libunwind symbol here; these
 * three are the whole list); everything they need was set up by libprof/unwind.c before
 * the first timer was armed. The busy flag both guards against re-entry (libunwind's
 * per-thread cache is not re-entrant) and tells our dl_iterate_phdr() to serve the
 * snapshot.
 */
#include "sampler/walk_unw.h"

#define UNW_LOCAL_ONLY
#include <errno.h>
#include <libunwind.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch/arch.h"
#include "include/libprof/prof_format.h"
#include "sampler/codemap.h"
#include "sampler/probe.h"

#if defined(__x86_64__)
#define FP_REG UNW_X86_64_RBP
#elif defined(__aarch64__)
#define FP_REG UNW_AARCH64_X29
#endif

int smp_unw_enabled;
static struct {
    int (*init_local2)(unw_cursor_t *, unw_context_t *, int);
    int (*step)(unw_cursor_t *);
    int (*get_reg)(unw_cursor_t *, unw_regnum_t, unw_word_t *);
    int (*get_proc_info)(unw_cursor_t *, unw_proc_info_t *);
} api; /* set once by smp_walk_unw_set_api(), before smp_unw_enabled */
__thread int smp_unw_busy __attribute__((tls_model("initial-exec")));
static _Atomic int paused;  /* > 0 while an object is being unloaded; libprof/ */
static _Atomic int walkers; /* handlers inside libunwind now, all threads */

/* Steps until the walk must end; returns the stop reason. */
static uint8_t step_all(unw_cursor_t *cursor, const struct smp_stack *stack, uintptr_t sp0,
                        uint64_t *frames, unsigned max_frames, unsigned *n)
{
    uintptr_t prev_sp = sp0;
    for (;;) {
        /* A frame without unwind information would be stepped by libunwind's guess from
         * the frame pointer: the walk ends there instead. (For such a frame libunwind
         * answers success with a made-up range, one byte at the ip.) */
        unw_proc_info_t pi;
        unw_word_t at = 0;
        if (api.get_reg(cursor, UNW_REG_IP, &at) < 0 || api.get_proc_info(cursor, &pi) < 0 ||
            (pi.start_ip == at && pi.end_ip == at + 1))
            return PROF_STOP_BOUNDS;
        int rc = api.step(cursor);
        if (rc == 0)
            return PROF_STOP_END;
        if (rc < 0)
            return PROF_STOP_BOUNDS;
        unw_word_t ip = 0, sp = 0, fp = 0;
        if (api.get_reg(cursor, UNW_REG_IP, &ip) < 0 || api.get_reg(cursor, UNW_REG_SP, &sp) < 0)
            return PROF_STOP_BOUNDS;
        if (ip == 0)
            return PROF_STOP_END;
        if (!smp_codemap_contains(arch_strip_pac(ip)))
            return PROF_STOP_BOUNDS;
        if (sp < stack->lo || sp > stack->hi)
            return PROF_STOP_BOUNDS;
        if (sp < prev_sp)
            return PROF_STOP_ORDER;
        /* The frame we stepped into is the trampoline's: ip returns into it. Known by its
         * code where libprof gave it (a function under the trampoline that keeps no frame
         * pointer has the trampoline's frame pointer too: Debian's python3 main() jumps to
         * Py_BytesMain()), else by its frame pointer. */
        if (stack->root_hi != 0 ? arch_strip_pac(ip) >= stack->root_lo &&
                                      arch_strip_pac(ip) < stack->root_hi
                                : stack->root_fp != 0 && api.get_reg(cursor, FP_REG, &fp) == 0 &&
                                      fp == stack->root_fp)
            return PROF_STOP_END;
        if (*n >= max_frames)
            return PROF_STOP_DEPTH;
        frames[(*n)++] = arch_strip_pac(ip);
        prev_sp = sp;
    }
}

unsigned smp_walk_unw(void *ucontext, const struct cmn_fp_regs *regs,
                      const struct smp_stack *stack, uint64_t *frames, unsigned max_frames,
                      uint8_t *stop_reason)
{
    if (smp_unw_busy)
        return 0;
    /* Announce the walk, then look at `paused`: with both sequentially consistent, an
     * unloader that saw walkers == 0 is certain this walk will see it paused. */
    atomic_fetch_add(&walkers, 1);
    if (atomic_load(&paused) != 0) {
        atomic_fetch_sub(&walkers, 1);
        return 0;
    }
    smp_unw_busy = 1;
    atomic_signal_fence(memory_order_seq_cst);

    unsigned n = 0;
    unw_cursor_t cursor;
    if (api.init_local2(&cursor, (unw_context_t *)ucontext, UNW_INIT_SIGNAL_FRAME) == 0) {
        frames[n++] = arch_strip_pac(regs->pc);
        *stop_reason = step_all(&cursor, stack, regs->sp, frames, max_frames, &n);
    }

    atomic_signal_fence(memory_order_seq_cst);
    smp_unw_busy = 0;
    atomic_fetch_sub(&walkers, 1);
    return n;
}

void smp_walk_unw_set_api(void *init_local2, void *step, void *get_reg, void *get_proc_info)
{
    api.init_local2 = (int (*)(unw_cursor_t *, unw_context_t *, int))init_local2;
    api.step = (int (*)(unw_cursor_t *))step;
    api.get_reg = (int (*)(unw_cursor_t *, unw_regnum_t, unw_word_t *))get_reg;
    api.get_proc_info = (int (*)(unw_cursor_t *, unw_proc_info_t *))get_proc_info;
}

void smp_walk_unw_pause(void)
{
    atomic_fetch_add(&paused, 1);
    while (atomic_load(&walkers) != 0)
        continue; /* a walk takes microseconds; no call, so nothing here can block */
}

void smp_walk_unw_resume(void)
{
    atomic_fetch_sub(&paused, 1);
}

void smp_walk_unw_after_fork(void)
{
    atomic_store(&walkers, 0);
    atomic_store(&paused, 0);
    smp_unw_busy = 0;
}

/* libunwind blocks every signal around its locks (sigprocmask(SIG_SETMASK, full, &saved),
 * then sigprocmask(SIG_SETMASK, &saved, NULL)). Through libprof's interposed sigprocmask
 * (the application's view, libprof/interpose.c) the restore unblocked our sampling signal
 * for the rest of the handler, and a second sample of ours could land in the first one's
 * frames. Inside a walk (smp_unw_busy) the handler's mask already blocks every
 * asynchronous signal, and a signal of ours finds the walk busy: nothing is changed and
 * the "saved" mask is the full one the restore then ignores. Elsewhere (libunwind's
 * set-up, or a program's own use of the same libunwind) the kernel's mask is set as asked,
 * without the view. */
int smp_unw_sigprocmask(int how, const void *set, void *old)
{
    if (smp_unw_busy) {
        if (old != NULL)
            __builtin_memset(old, 0xff, sizeof(sigset_t));
        return 0;
    }
    long rc = syscall(SYS_rt_sigprocmask, how, set, old, ARCH_KERNEL_SIGSET_BYTES);
    return rc == 0 ? 0 : -1;
}

/* The validation pipe's ends: numbers no descriptor can have (they are negative, and not
 * -1, which libunwind takes for "not open"). */
#define FAKE_READ_END (-0x70726f66)
#define FAKE_WRITE_END (-0x70726f67)

int smp_unw_pipe2(int fds[2], int flags)
{
    (void)flags;
    fds[0] = FAKE_READ_END;
    fds[1] = FAKE_WRITE_END;
    return 0;
}

long smp_unw_read(int fd, void *buf, unsigned long n)
{
    if (fd == FAKE_READ_END) {
        errno = EAGAIN; /* empty, as a drained non-blocking pipe is */
        return -1;
    }
    return read(fd, buf, n);
}

/* "Writes" the byte at buf into the pipe: succeeds when it is readable. */
static long validate(const void *buf, unsigned long n)
{
    uint8_t byte;
    if (n == 0 || smp_probe_read(&byte, (uintptr_t)buf, 1) != 0) {
        errno = EFAULT;
        return -1;
    }
    errno = 0;
    return 1;
}

long smp_unw_write(int fd, const void *buf, unsigned long n)
{
    if (fd == FAKE_WRITE_END)
        return validate(buf, n);
    return write(fd, buf, n);
}

int smp_unw_close(int fd)
{
    if (fd == FAKE_READ_END || fd == FAKE_WRITE_END)
        return 0;
    return close(fd);
}

long smp_unw_syscall(long nr, ...)
{
    va_list ap;
    va_start(ap, nr);
    long a[6];
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    if (nr == SYS_write && (int)a[0] == FAKE_WRITE_END)
        return validate((const void *)a[1], (unsigned long)a[2]);
    if (nr == SYS_read && (int)a[0] == FAKE_READ_END)
        return smp_unw_read((int)a[0], (void *)a[1], (unsigned long)a[2]);
    return syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
