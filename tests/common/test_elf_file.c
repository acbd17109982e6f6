/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the ELF segment lookup (common/elf_file.h): which link-time address a
 * mapping of a module starts at, by the segment it maps. */
#include <criterion/criterion.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

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

/* A zlib stream into out, as prof's reader does (the library loads zlib itself). */
static int inflate_for_test(const uint8_t *in, size_t n_in, uint8_t *out, size_t n_out)
{
    uLongf got = (uLongf)n_out;
    return uncompress(out, &got, in, (uLong)n_in) == Z_OK && got == n_out ? 0 : -1;
}

/* A compressed section (SHF_COMPRESSED, as Go links its .debug_frame and as objcopy
 * --compress-debug-sections makes them) comes back decompressed, the bytes of the section
 * it was made from; without a way to decompress it is refused, never handed over as its
 * compressed bytes (which the unwind-table compiler would take for rules). */
Test(elf_file, a_compressed_section_is_decompressed_or_refused)
{
    char dir[] = "/tmp/libprof-elf-XXXXXX", plain[64], packed[64], cmd[512];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(plain, sizeof(plain), "%s/plain", dir);
    snprintf(packed, sizeof(packed), "%s/packed", dir);
    snprintf(cmd, sizeof(cmd),
             "printf 'int main(void){return 0;}' | cc -g -x c -o %s - && "
             "objcopy --compress-debug-sections=zlib %s %s",
             plain, plain, packed);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    int a = open(plain, O_RDONLY), b = open(packed, O_RDONLY);
    cr_assert(a >= 0 && b >= 0);
    Elf64_Shdr sa, sb;
    cr_assert_eq(cmn_elf_section(a, ".debug_info", &sa), 0);
    cr_assert_eq(cmn_elf_section(b, ".debug_info", &sb), 0);
    cr_assert(!(sa.sh_flags & SHF_COMPRESSED) && (sb.sh_flags & SHF_COMPRESSED));
    uint8_t *da, *db;
    size_t na, nb;
    cr_assert_eq(cmn_elf_read_section(a, &sa, NULL, &da, &na), 0);
    cr_assert_eq(cmn_elf_read_section(b, &sb, NULL, &db, &nb), -ENOTSUP);
    cr_assert_eq(cmn_elf_read_section(b, &sb, inflate_for_test, &db, &nb), 0);
    cr_assert_eq(nb, na);
    cr_assert_eq(memcmp(da, db, na), 0);
    free(da);
    free(db);
    close(a);
    close(b);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}
