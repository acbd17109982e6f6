/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The public backtrace API (include/libprof/prof.h): prof_backtrace() and prof_backtrace_fd(),
 * called by the application from anywhere, signal and crash handlers included.
 *
 * The walk follows frame pointers from the caller's frame. It cannot rely on the stack
 * bounds the profiler captured (smp_self): a crash handler typically runs on an
 * alternate signal stack, and a thread libprof did not start has no bounds at all, while
 * pthread_getattr_np() is not async-signal-safe. So every word is read through the
 * fault-proof probe (sampler/probe.h: one process_vm_readv(2), a few hundred ns) and the
 * chain is checked as the sampler checks it: aligned frames, strictly increasing while on
 * one stack, return addresses inside executable mappings (sampler/codemap.h), at most
 * PROF_BT_MAX_FRAMES steps; instruction bytes (a leaf's, the trampoline's) go through the
 * probe too, since the code map may be older than the mappings. Where a return address is the sigreturn trampoline, the frame
 * above it is a signal frame: the walk records the interrupted instruction and goes on
 * from the interrupted frame pointer (on the thread's stack, below or above the
 * alternate one), which is how a SIGSEGV handler's backtrace reaches the faulting
 * function. The faulting function's caller is added when the instruction bytes at the pc
 * prove where it is (entry, `ret`); otherwise prof_backtrace_fd() writes the word at the
 * interrupted stack pointer as a candidate line ("? module+0xOFF"), which `prof
 * symbolize` names only where the function's unwind information says the return address
 * is there (a function without a frame, the usual crash site), and drops otherwise. Module names come from lp_unwind_module_at(), a table read from
 * /proc/self/maps outside any handler (at profile start and each dlopen), never from
 * dl_iterate_phdr(), which takes the loader's lock.
 */
#include "include/libprof/prof.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "arch/arch.h"
#include "common/fp_step.h"
#include "libprof/unwind.h"
#include "sampler/codemap.h"
#include "sampler/probe.h"

#define PROF_BT_MAX_FRAMES 4096 /* steps of one walk at most, whatever `max` says */
#define FD_FRAMES 256           /* frames prof_backtrace_fd() writes at most */

/* Reads the word at addr through the probe; 0 on success. */
static int read_word(uintptr_t addr, uintptr_t *out)
{
    if (addr & (sizeof(uintptr_t) - 1))
        return -EFAULT;
    return smp_probe_read(out, addr, sizeof(*out));
}

/* The stepper's accessors for a walk from anywhere: every read through the probe, even of
 * the stack (a crash handler's interrupted context may hold any address). */
static int probe_stack_word(const struct cmn_fp_mem *m, uintptr_t addr, uintptr_t *out)
{
    (void)m;
    return read_word(addr, out) == 0;
}

static int probe_code(const struct cmn_fp_mem *m, uintptr_t addr, uint8_t *out, unsigned n)
{
    (void)m;
    return smp_probe_read(out, addr, n) == 0 ? 0 : -1;
}

static int probe_is_code(const struct cmn_fp_mem *m, uintptr_t addr)
{
    (void)m;
    return smp_codemap_contains(addr);
}

static const struct cmn_fp_mem probe_mem = {
    .stack_word = probe_stack_word,
    .code = probe_code,
    .is_code = probe_is_code,
};

/* 1 when ra is the sigreturn trampoline. */
static int is_sigreturn(uintptr_t ra)
{
    uint8_t code[ARCH_SIGRETURN_LEN];
    return smp_probe_read(code, ra, sizeof(code)) == 0 && arch_is_sigreturn(code);
}

/* What a walk's entry is. */
#define BT_RETURN 0    /* a return address */
#define BT_EXACT 1     /* an interrupted instruction (below a signal frame) */
#define BT_CANDIDATE 2 /* the word at an interrupted leaf's stack pointer, when the leaf's
                        * state is not proven: its return address if its unwind information
                        * says so (`prof symbolize` checks), else nothing */

/* Walks from frame fp; fills pcs and kinds (BT_*; at most max entries) after skipping
 * `skip` frames. Returns the number written. */
static int walk(uintptr_t fp, void **pcs, uint8_t *kinds, int max, int skip)
{
    int n = 0, seen = 0;
    uintptr_t prev = 0;
#define BT_PUT(pc, kind)                                                                   \
    do {                                                                                   \
        if (n < max && seen++ >= skip) {                                                   \
            kinds[n] = (kind);                                                             \
            pcs[n++] = (void *)(pc);                                                       \
        }                                                                                  \
    } while (0)
    for (int step = 0; step < PROF_BT_MAX_FRAMES && n < max && fp != 0; step++) {
        uintptr_t next, ra;
        if ((prev != 0 && fp <= prev) || read_word(fp + ARCH_FRAME_FP_OFF, &next) != 0 ||
            read_word(fp + ARCH_FRAME_RET_OFF, &ra) != 0)
            break;
        ra = arch_strip_pac(ra);
        if (ra == 0 || !smp_codemap_contains(ra))
            break;
        uintptr_t uc = is_sigreturn(ra) ? arch_sigframe_uc(fp) : 0;
        if (uc != 0) {
            /* The handler's frame returns into the trampoline: the interrupted context
             * follows, and the walk goes on from it on whatever stack it was. */
            struct cmn_fp_regs regs = {0};
            if (read_word(uc + ARCH_UC_PC_OFF, &regs.pc) != 0 ||
                read_word(uc + ARCH_UC_SP_OFF, &regs.sp) != 0 ||
                read_word(uc + ARCH_UC_FP_OFF, &regs.fp) != 0)
                break;
            BT_PUT(arch_strip_pac(regs.pc), BT_EXACT);
            /* A fault in a leaf caught at its entry or its `ret` (the instruction bytes at
             * the pc prove it): its caller is on the stack or in the link register, not in
             * the chain. Elsewhere (the body of a leaf without a frame, the usual crash
             * site) the word at sp goes along as a candidate, for the unwind information
             * to confirm. */
            uintptr_t caller = arch_strip_pac(
                cmn_fp_leaf_caller(&probe_mem, &regs, regs.sp, regs.sp + 2 * sizeof(uintptr_t)));
            uintptr_t at_sp = 0;
            if (caller != 0)
                BT_PUT(caller, BT_RETURN);
            else if (!ARCH_HAS_LR && read_word(regs.sp, &at_sp) == 0 &&
                     smp_codemap_contains(at_sp))
                BT_PUT(at_sp, BT_CANDIDATE);
            next = regs.fp;
            prev = 0;
        } else {
            BT_PUT(ra, BT_RETURN);
            prev = fp;
        }
        fp = next;
    }
#undef BT_PUT
    return n;
}

__attribute__((noinline)) PROF_API int prof_backtrace(void **pcs, int max, int skip)
{
    if (pcs == NULL || max <= 0)
        return 0;
    /* The candidates are left out: an array cannot say that an entry is unproven. */
    int cap = max < PROF_BT_MAX_FRAMES ? max : PROF_BT_MAX_FRAMES;
    uint8_t kinds[cap];
    int n = walk((uintptr_t)__builtin_frame_address(0), pcs, kinds, cap, skip < 0 ? 0 : skip);
    int k = 0;
    for (int i = 0; i < n; i++)
        if (kinds[i] != BT_CANDIDATE)
            pcs[k++] = pcs[i];
    return k;
}

/* Formats v in hex into buf (no prefix); returns the length. Async-signal-safe. */
static size_t fmt_hex_sigsafe(char *buf, uint64_t v)
{
    char tmp[16];
    size_t n = 0;
    do {
        tmp[n++] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v != 0);
    for (size_t i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    return n;
}

/* Writes all of buf; 0 or -1. Retries short writes and EINTR. */
static int write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, buf, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        buf += w;
        len -= (size_t)w;
    }
    return 0;
}

/* One output line for frame pc: "path+0xOFF\n" or "0xADDR\n", with "? " before it for a
 * candidate. */
static int write_frame(int fd, uintptr_t pc, int is_candidate)
{
    char line[4096 + 32];
    uint64_t offset;
    size_t len = 0;
    if (is_candidate) {
        line[len++] = '?';
        line[len++] = ' ';
    }
    if (lp_unwind_module_at(pc, line + len, 4096, &offset) == 0 && line[len] != '\0') {
        len += strlen(line + len);
        line[len++] = '+';
    } else {
        offset = pc;
    }
    line[len++] = '0';
    line[len++] = 'x';
    len += fmt_hex_sigsafe(line + len, offset);
    line[len++] = '\n';
    return write_all(fd, line, len);
}

__attribute__((noinline)) PROF_API int prof_backtrace_fd(int fd, int skip)
{
    int saved_errno = errno;
    void *pcs[FD_FRAMES];
    uint8_t kinds[FD_FRAMES];
    int n = walk((uintptr_t)__builtin_frame_address(0), pcs, kinds, FD_FRAMES,
                 skip < 0 ? 0 : skip);
    int rc = n;
    for (int i = 0; i < n && rc >= 0; i++) {
        uintptr_t pc = (uintptr_t)pcs[i];
        /* A return address points after the call; name the call instruction. */
        if (write_frame(fd, kinds[i] == BT_EXACT ? pc : pc - 1, kinds[i] == BT_CANDIDATE) != 0)
            rc = -1;
    }
    errno = saved_errno;
    return rc;
}
