/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the ELF segment lookup (common/elf_file.h): which link-time address a
 * mapping of a module starts at, by the segment it maps. */
#include <criterion/criterion.h>
#include <elf.h>
#include <stdint.h>

#include "common/elf_file.h"

/* rustc 1.95's LLD: a read-only segment at offset 0 and address 0, the executable one at
 * offset 0x158e0 and address 0x168e0 (their distance differs by 0x1000), as the loader maps
 * them: the code's mapping starts at file offset 0x15000, a page that holds the read-only
 * segment's end too. */
static const struct cmn_elf_load lld[] = {
    {0x0, 0x0, 0x158e0, 0x158e0, PF_R},
    {0x158e0, 0x168e0, 0x42910, 0x42910, PF_R | PF_X},
    {0x581f0, 0x5a1f0, 0x2bf0, 0x2e10, PF_R | PF_W},
};

Test(elf_file, an_executable_mapping_takes_the_executable_segment_that_shares_its_page)
{
    uint64_t vaddr = 0;
    cr_assert(cmn_elf_vaddr_of(lld, 3, 0x15000, 1, &vaddr));
    cr_expect_eq(vaddr, 0x16000, "the code mapping starts at 0x%llx, not 0x16000",
                 (unsigned long long)vaddr);
    /* The same page mapped read-only is the first segment's. */
    cr_assert(cmn_elf_vaddr_of(lld, 3, 0x15000, 0, &vaddr));
    cr_expect_eq(vaddr, 0x15000);
}

Test(elf_file, the_usual_layout_maps_each_segment_at_its_own_offset)
{
    /* GNU ld: segments start on their own pages, address and offset the same modulo. */
    static const struct cmn_elf_load gnu[] = {
        {0x0, 0x0, 0x1000, 0x1000, PF_R},
        {0x1000, 0x1000, 0x5000, 0x5000, PF_R | PF_X},
        {0x6000, 0x6000, 0x800, 0x800, PF_R},
        {0x6df0, 0x7df0, 0x300, 0x400, PF_R | PF_W},
    };
    uint64_t vaddr = 0;
    cr_assert(cmn_elf_vaddr_of(gnu, 4, 0x1000, 1, &vaddr));
    cr_expect_eq(vaddr, 0x1000);
    cr_assert(cmn_elf_vaddr_of(gnu, 4, 0x6000, 0, &vaddr));
    cr_expect_eq(vaddr, 0x6000);
    cr_assert(cmn_elf_vaddr_of(gnu, 4, 0x6000, 1, &vaddr) == 1 && vaddr == 0x6000,
              "no executable segment holds it: the one whose bytes do");
    cr_expect_not(cmn_elf_vaddr_of(gnu, 4, 0x9000, 1, &vaddr), "past every segment");
}
