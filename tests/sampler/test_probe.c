/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the fault-proof probe (sampler/probe.c): it copies readable memory, and
 * answers -EFAULT for every kind of unreadable address (null, unmapped, PROT_NONE, a read
 * running into an unmapped page, kernel and non-canonical addresses) without a signal,
 * keeping errno. Criterion runs each test in its own process, so a fault would show as a
 * crash. */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sampler/probe.h"

static void setup(void)
{
    smp_probe_init();
}

TestSuite(probe, .init = setup);

/* Two pages: the first readable, the second unmapped. */
static uint8_t *readable_then_hole(size_t *page)
{
    *page = (size_t)sysconf(_SC_PAGESIZE);
    uint8_t *m = mmap(NULL, 2 * *page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                      -1, 0);
    cr_assert(m != MAP_FAILED);
    cr_assert_eq(munmap(m + *page, *page), 0);
    memset(m, 0x5a, *page);
    return m;
}

Test(probe, copies_readable_memory)
{
    static const char text[] = "the quick brown fox jumps over the lazy dog";
    char got[sizeof(text)];
    cr_assert_eq(smp_probe_read(got, (uintptr_t)text, sizeof(text)), 0);
    cr_assert_str_eq(got, text);
    cr_assert(smp_probe_readable8((uintptr_t)text));
}

Test(probe, refuses_null_unmapped_kernel_and_noncanonical_addresses)
{
    uint64_t w;
    const uintptr_t bad[] = {0, 8, 4095, UINT64_C(0x00007ff000000000) - 4096,
                             UINT64_C(0xffffffff81000000), UINT64_C(0x8000000000000000),
                             UINT64_MAX - 3};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cr_assert_eq(smp_probe_read(&w, bad[i], sizeof(w)), -EFAULT, "address %#lx",
                     (unsigned long)bad[i]);
        cr_assert_not(smp_probe_readable8(bad[i]), "address %#lx", (unsigned long)bad[i]);
    }
}

Test(probe, refuses_an_unmapped_page_and_prot_none)
{
    size_t page;
    uint8_t *m = readable_then_hole(&page);
    uint64_t w;
    cr_assert_eq(smp_probe_read(&w, (uintptr_t)(m + page), sizeof(w)), -EFAULT);
    cr_assert_not(smp_probe_readable8((uintptr_t)(m + page)));
    cr_assert_eq(mprotect(m, page, PROT_NONE), 0);
    cr_assert_eq(smp_probe_read(&w, (uintptr_t)m, sizeof(w)), -EFAULT);
    cr_assert_not(smp_probe_readable8((uintptr_t)m));
}

Test(probe, a_read_running_into_a_hole_fails_but_stops_short_of_it_works)
{
    size_t page;
    uint8_t *m = readable_then_hole(&page);
    uint8_t got[16];
    cr_assert_eq(smp_probe_read(got, (uintptr_t)(m + page - 8), 16), -EFAULT);
    cr_assert_eq(smp_probe_read(got, (uintptr_t)(m + page - 8), 8), 0);
    cr_assert_eq(got[7], 0x5a);
}

Test(probe, rejects_bad_sizes_and_keeps_errno)
{
    uint8_t got[SMP_PROBE_MAX_BYTES + 1];
    cr_assert_eq(smp_probe_read(got, (uintptr_t)got, 0), -EINVAL);
    cr_assert_eq(smp_probe_read(got, (uintptr_t)got, sizeof(got)), -EINVAL);
    errno = 1234;
    cr_assert_eq(smp_probe_read(got, 0, 8), -EFAULT);
    cr_assert_not(smp_probe_readable8(0));
    cr_assert_eq(errno, 1234);
}

Test(probe, leaves_the_signal_mask_alone)
{
    sigset_t before, after;
    /* The kernel fills only its 8-byte mask into glibc's larger sigset_t. */
    memset(&before, 0, sizeof(before));
    memset(&after, 0, sizeof(after));
    sigprocmask(SIG_SETMASK, NULL, &before);
    static uint64_t all_ones = UINT64_MAX;
    cr_assert(smp_probe_readable8((uintptr_t)&all_ones));
    sigprocmask(SIG_SETMASK, NULL, &after);
    cr_assert_eq(memcmp(&before, &after, sizeof(before)), 0);
}
