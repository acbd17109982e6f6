/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Fault-proof reads (see probe.h), on the signal handler's path: raw system calls and
 * plain loads only, errno saved and restored around every call. `use_sigprocmask` is
 * written once by smp_probe_init() before any handler runs and only read afterwards.
 */
#include "sampler/probe.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "arch/arch.h"

/* Set when process_vm_readv does not work in this process (seccomp, ENOSYS): by
 * smp_probe_init(), or by the first read that finds it refused. A plain int: every writer
 * stores the same value. */
static int use_sigprocmask;

static int readable8(uintptr_t addr)
{
    /* how = -1 is invalid: the kernel copies the new mask from addr first (EFAULT when it
     * cannot), then rejects `how` with EINVAL and leaves the mask alone. */
    long rc = syscall(SYS_rt_sigprocmask, -1, (void *)addr, (void *)0,
                      ARCH_KERNEL_SIGSET_BYTES);
    return rc == -1 && errno == EINVAL;
}

/* The kernel's copy; -ENOSYS when process_vm_readv itself is refused (not EFAULT). */
static int read_vm(void *dst, uintptr_t addr, size_t n)
{
    struct iovec local = { .iov_base = dst, .iov_len = n };
    struct iovec remote = { .iov_base = (void *)addr, .iov_len = n };
    long rc = syscall(SYS_process_vm_readv, (long)syscall(SYS_getpid), &local, 1UL, &remote,
                      1UL, 0UL);
    if (rc == (long)n)
        return 0;
    return rc < 0 && (errno == ENOSYS || errno == EPERM) ? -ENOSYS : -EFAULT;
}

/* Checks every 8-byte window the n bytes touch (they can span two pages), then loads. */
static int read_checked(void *dst, uintptr_t addr, size_t n)
{
    if (addr + n < addr)
        return -EFAULT;
    if (!readable8(addr & ~(uintptr_t)7) || !readable8((addr + n - 1) & ~(uintptr_t)7))
        return -EFAULT;
    memcpy(dst, (const void *)addr, n);
    return 0;
}

int smp_probe_read(void *dst, uintptr_t addr, size_t n)
{
    if (n == 0 || n > SMP_PROBE_MAX_BYTES)
        return -EINVAL;
    int saved_errno = errno;
    int rc = use_sigprocmask ? read_checked(dst, addr, n) : read_vm(dst, addr, n);
    if (rc == -ENOSYS) {
        /* Refused here (seccomp, an emulator) though smp_probe_init() was not told:
         * switch for good. */
        use_sigprocmask = 1;
        rc = read_checked(dst, addr, n);
    }
    errno = saved_errno;
    return rc;
}

/* The kernel's copy of n bytes, as far as they are readable: the bytes copied; -ENOSYS
 * when process_vm_readv is refused. iov_local entries of the same buffer take one page
 * each, so that a span of pages is proven readable by one call. */
static long read_vm_pages(void *page, uintptr_t from, unsigned n_pages)
{
    struct iovec local[SMP_PROBE_MAX_PAGES];
    struct iovec remote = {.iov_base = (void *)from, .iov_len = (size_t)n_pages * SMP_PROBE_PAGE};
    for (unsigned i = 0; i < n_pages; i++)
        local[i] = (struct iovec){.iov_base = page, .iov_len = SMP_PROBE_PAGE};
    long rc = syscall(SYS_process_vm_readv, (long)syscall(SYS_getpid), local,
                      (unsigned long)n_pages, &remote, 1UL, 0UL);
    if (rc < 0)
        return errno == ENOSYS || errno == EPERM ? -ENOSYS : 0;
    return rc;
}

/* The same by the fallback: each page checked, the last one loaded. */
static long read_checked_pages(void *page, uintptr_t from, unsigned n_pages)
{
    for (unsigned i = 0; i < n_pages; i++)
        if (!readable8(from + (uintptr_t)i * SMP_PROBE_PAGE) ||
            !readable8(from + (uintptr_t)(i + 1) * SMP_PROBE_PAGE - 8))
            return (long)i * SMP_PROBE_PAGE;
    memcpy(page, (const void *)(from + (uintptr_t)(n_pages - 1) * SMP_PROBE_PAGE), SMP_PROBE_PAGE);
    return (long)n_pages * SMP_PROBE_PAGE;
}

int smp_probe_pages(void *page, uintptr_t from, unsigned n_pages)
{
    if (n_pages == 0 || n_pages > SMP_PROBE_MAX_PAGES || (from & (SMP_PROBE_PAGE - 1)) ||
        from + (uintptr_t)n_pages * SMP_PROBE_PAGE < from)
        return -EINVAL;
    int saved_errno = errno;
    long want = (long)n_pages * SMP_PROBE_PAGE;
    long got = use_sigprocmask ? read_checked_pages(page, from, n_pages)
                               : read_vm_pages(page, from, n_pages);
    if (got == -ENOSYS) {
        use_sigprocmask = 1;
        got = read_checked_pages(page, from, n_pages);
    }
    errno = saved_errno;
    return got == want ? 0 : -EFAULT;
}

int smp_probe_readable8(uintptr_t addr)
{
    int saved_errno = errno;
    int ok = addr + 8 > addr && readable8(addr);
    errno = saved_errno;
    return ok;
}

void smp_probe_init(void)
{
    static const uint64_t known = 0x0123456789abcdefull;
    uint64_t got = 0;
    use_sigprocmask = read_vm(&got, (uintptr_t)&known, sizeof(got)) != 0 || got != known;
}
