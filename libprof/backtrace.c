/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The public backtrace API (include/prof.h): prof_backtrace() and prof_backtrace_fd(),
 * called by the application from anywhere, signal and crash handlers included.
 *
 * The walk follows frame pointers from the caller's frame. It cannot rely on the stack
 * bounds the profiler captured (smp_self): a crash handler typically runs on an
 * alternate signal stack, and a thread libprof did not start has no bounds at all, while
 * pthread_getattr_np() is not async-signal-safe. So every word is read through the
 * fault-proof probe (sampler/probe.h: one process_vm_readv(2), a few hundred ns) and the
 * chain is checked as the sampler checks it: aligned frames, strictly increasing while on
 * one stack, return addresses inside executable mappings (sampler/codemap.h), at most
 * PROF_BT_MAX_FRAMES steps. Where a return address is the sigreturn trampoline, the frame
 * above it is a signal frame: the walk records the interrupted instruction and goes on
 * from the interrupted frame pointer (on the thread's stack, below or above the
 * alternate one), which is how a SIGSEGV handler's backtrace reaches the faulting
 * function. Module names come from lp_unwind_module_at(), a table read from
 * /proc/self/maps outside any handler (at profile start and each dlopen), never from
 * dl_iterate_phdr(), which takes the loader's lock.
 */
#include "include/prof.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "arch/arch.h"
#include "libprof/unwind.h"
#include "sampler/codemap.h"
#include "sampler/probe.h"
#include "sampler/walk_fp.h"

#define PROF_BT_MAX_FRAMES 4096 /* steps of one walk at most, whatever `max` says */
#define FD_FRAMES 256           /* frames prof_backtrace_fd() writes at most */

/* Reads the word at addr through the probe; 0 on success. */
static int read_word(uintptr_t addr, uintptr_t *out)
{
    if (addr & (sizeof(uintptr_t) - 1))
        return -EFAULT;
    return smp_probe_read(out, addr, sizeof(*out));
}

/* 1 when ra is the sigreturn trampoline. */
static int is_sigreturn(uintptr_t ra)
{
    uint8_t code[ARCH_SIGRETURN_LEN];
    return smp_probe_read(code, ra, sizeof(code)) == 0 && arch_is_sigreturn(code);
}

/* Walks from frame fp; fills pcs (at most max) after skipping `skip` frames, marks in
 * *exact_mask bit i when pcs[i] is an interrupted instruction rather than a return
 * address (for the first 64 entries). Returns the number written. */
static int walk(uintptr_t fp, void **pcs, int max, int skip, uint64_t *exact_mask)
{
    int n = 0, seen = 0;
    uintptr_t prev = 0;
    *exact_mask = 0;
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
            struct fpstep_regs regs = {0};
            if (read_word(uc + ARCH_UC_PC_OFF, &regs.pc) != 0 ||
                read_word(uc + ARCH_UC_SP_OFF, &regs.sp) != 0 ||
                read_word(uc + ARCH_UC_FP_OFF, &regs.fp) != 0)
                break;
            if (seen++ >= skip) {
                if (n < 64)
                    *exact_mask |= UINT64_C(1) << n;
                pcs[n++] = (void *)arch_strip_pac(regs.pc);
            }
            /* A fault in a leaf without its frame (the usual crash site): its caller is
             * on the stack or in the link register, not in the chain. */
            uintptr_t two[2], caller = 0;
            if (smp_probe_read(two, regs.sp, sizeof(two)) == 0)
                caller = smp_walk_fp_leaf_caller(&regs, regs.sp, regs.sp + sizeof(two));
            if (caller != 0 && n < max && seen++ >= skip)
                pcs[n++] = (void *)caller;
            next = regs.fp;
            prev = 0;
        } else {
            if (seen++ >= skip)
                pcs[n++] = (void *)ra;
            prev = fp;
        }
        fp = next;
    }
    return n;
}

__attribute__((noinline)) PROF_API int prof_backtrace(void **pcs, int max, int skip)
{
    if (pcs == NULL || max <= 0)
        return 0;
    uint64_t exact;
    return walk((uintptr_t)__builtin_frame_address(0), pcs, max, skip < 0 ? 0 : skip, &exact);
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

/* One output line for frame pc: "path+0xOFF\n" or "0xADDR\n". */
static int write_frame(int fd, uintptr_t pc)
{
    char line[4096 + 32];
    const char *path;
    uint64_t offset;
    size_t len = 0;
    if (lp_unwind_module_at(pc, &path, &offset) == 0 && path[0] != '\0') {
        size_t plen = strnlen(path, 4096);
        memcpy(line, path, plen);
        len = plen;
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
    uint64_t exact;
    int n = walk((uintptr_t)__builtin_frame_address(0), pcs, FD_FRAMES, skip < 0 ? 0 : skip,
                 &exact);
    int rc = n;
    for (int i = 0; i < n && rc >= 0; i++) {
        uintptr_t pc = (uintptr_t)pcs[i];
        /* A return address points after the call; name the call instruction. */
        int is_exact = i < 64 && (exact >> i & 1);
        if (write_frame(fd, is_exact ? pc : pc - 1) != 0)
            rc = -1;
    }
    errno = saved_errno;
    return rc;
}
