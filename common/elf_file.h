/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The few things read from an ELF file on disk to build unwind tables: its loadable
 * segments (to turn a mapping's file offset into link-time addresses) and a section by
 * name (.eh_frame, .debug_frame). 64-bit little-endian files only (x86_64, aarch64). Every
 * read is a pread() checked against the file's size, so a truncated or hostile file gives
 * an error, never a fault. Used by the preloaded library's writer thread and by the prof
 * command. Header-only, never installed; not async-signal-safe (it allocates).
 *
 * Signal handler's path: not allowed (it allocates and reads files).
 */
#ifndef PROF_COMMON_ELF_FILE_H
#define PROF_COMMON_ELF_FILE_H

#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CMN_ELF_MAX_LOADS 16u               /* PT_LOAD segments kept */
#define CMN_ELF_MAX_SECTION (256u << 20)    /* the largest section read */
#define CMN_ELF_MAX_SHNUM 65280u            /* sections looked through */

/* A loadable segment: file bytes [offset, offset + filesz) at link-time vaddr. */
struct cmn_elf_load {
    uint64_t offset;
    uint64_t vaddr;
    uint64_t filesz;
    uint64_t memsz;
    uint32_t flags; /* p_flags: PF_X, PF_W, PF_R */
};

/* The largest page a loader maps a segment with: a mapping starts at its segment's file
 * offset rounded down to a page (4 KiB to 64 KiB). */
#define CMN_ELF_MAX_PAGE 0x10000u

/* Reads exactly n bytes at off; 0 or -errno (-EIO when the file is shorter). */
static inline int cmn_elf_pread(int fd, void *dst, size_t n, uint64_t off)
{
    size_t done = 0;
    while (done < n) {
        ssize_t got = pread(fd, (char *)dst + done, n - done, (off_t)(off + done));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return got < 0 ? -errno : -EIO;
        done += (size_t)got;
    }
    return 0;
}

/* The file's header, checked: 0, or -ENOEXEC when it is not a 64-bit little-endian ELF. */
static inline int cmn_elf_header(int fd, Elf64_Ehdr *eh)
{
    int rc = cmn_elf_pread(fd, eh, sizeof(*eh), 0);
    if (rc != 0)
        return rc == -EIO ? -ENOEXEC : rc;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_ident[EI_DATA] != ELFDATA2LSB)
        return -ENOEXEC;
    return 0;
}

/* The PT_LOAD segments, in file order, into loads (cap entries); their number, or -errno. */
static inline int cmn_elf_loads(int fd, struct cmn_elf_load *loads, unsigned cap)
{
    Elf64_Ehdr eh;
    int rc = cmn_elf_header(fd, &eh);
    if (rc != 0)
        return rc;
    if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 4096)
        return -ENOEXEC;
    unsigned n = 0;
    for (unsigned i = 0; i < eh.e_phnum && n < cap; i++) {
        Elf64_Phdr ph;
        if ((rc = cmn_elf_pread(fd, &ph, sizeof(ph), eh.e_phoff + (uint64_t)i * sizeof(ph))))
            return rc;
        if (ph.p_type == PT_LOAD)
            loads[n++] = (struct cmn_elf_load){ph.p_offset, ph.p_vaddr, ph.p_filesz, ph.p_memsz,
                                               ph.p_flags};
    }
    return (int)n;
}

/* The link-time address of the mapping that starts at file offset off into *vaddr, by the
 * segment it maps: 1, or 0 when none does. A mapping starts at its segment's offset rounded
 * down to a page, so that its first page may hold the end of the segment before it, whose
 * addresses may differ from this one's by other than a multiple of the page: LLD lays out
 * an executable segment at file offset 0x158a0 and address 0x168a0 after a read-only one
 * at 0 and 0, and the page at 0x15000 is then mapped twice, at 0x15000 for the first and
 * at 0x16000 for the second. So the segment is the one whose protection is the mapping's
 * (exec: PF_X), among those whose pages hold off; else the one whose bytes hold it. */
static inline int cmn_elf_vaddr_of(const struct cmn_elf_load *loads, unsigned n, uint64_t off,
                                   int exec, uint64_t *vaddr)
{
    const struct cmn_elf_load *best = NULL;
    for (unsigned i = 0; i < n; i++) {
        const struct cmn_elf_load *l = &loads[i];
        uint64_t first = l->offset & ~(uint64_t)(CMN_ELF_MAX_PAGE - 1);
        int holds = off >= l->offset && off - l->offset < l->filesz;
        int pages = off >= first && off < l->offset + l->filesz;
        if (pages && ((l->flags & PF_X) != 0) == (exec != 0)) {
            best = l;
            break;
        }
        if (holds && best == NULL)
            best = l;
    }
    if (best == NULL)
        return 0;
    *vaddr = best->vaddr + off - best->offset; /* modulo 2^64 when off < best->offset */
    return 1;
}

/* A section's header by name; 0, -ENOENT when there is none, or -errno. */
static inline int cmn_elf_section(int fd, const char *name, Elf64_Shdr *out)
{
    Elf64_Ehdr eh;
    int rc = cmn_elf_header(fd, &eh);
    if (rc != 0)
        return rc;
    if (eh.e_shoff == 0 || eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 ||
        eh.e_shnum > CMN_ELF_MAX_SHNUM || eh.e_shstrndx >= eh.e_shnum)
        return -ENOENT;
    Elf64_Shdr strs;
    if ((rc = cmn_elf_pread(fd, &strs, sizeof(strs),
                            eh.e_shoff + (uint64_t)eh.e_shstrndx * sizeof(strs))))
        return rc;
    size_t len = strlen(name) + 1;
    for (unsigned i = 1; i < eh.e_shnum; i++) {
        Elf64_Shdr sh;
        char buf[64];
        if ((rc = cmn_elf_pread(fd, &sh, sizeof(sh), eh.e_shoff + (uint64_t)i * sizeof(sh))))
            return rc;
        if (sh.sh_name >= strs.sh_size || strs.sh_size - sh.sh_name < len ||
            len > sizeof(buf) || cmn_elf_pread(fd, buf, len, strs.sh_offset + sh.sh_name))
            continue;
        if (memcmp(buf, name, len) == 0) {
            *out = sh;
            return sh.sh_type == SHT_NOBITS ? -ENOENT : 0;
        }
    }
    return -ENOENT;
}

/* Decompresses the zlib stream in[0..n_in) into out, exactly n_out bytes: 0, or -1 when
 * it cannot (not a whole stream, another size). Given by the caller: the library loads
 * zlib only when it meets a compressed section, prof links it. */
typedef int cmn_inflate_fn(const uint8_t *in, size_t n_in, uint8_t *out, size_t n_out);

/* A section's bytes, malloc'ed (free them): 0 with *data and *size, or -errno. A
 * compressed section (SHF_COMPRESSED: Go's and many distributions' .debug_* sections) is
 * decompressed with inflate, -ENOTSUP when inflate is NULL or the compression is not
 * zlib's: its compressed bytes are never handed over as the section's. */
static inline int cmn_elf_read_section(int fd, const Elf64_Shdr *sh, cmn_inflate_fn *inflate,
                                       uint8_t **data, size_t *size)
{
    if (sh->sh_size == 0 || sh->sh_size > CMN_ELF_MAX_SECTION)
        return -EFBIG;
    uint8_t *d = malloc(sh->sh_size);
    if (d == NULL)
        return -ENOMEM;
    int rc = cmn_elf_pread(fd, d, sh->sh_size, sh->sh_offset);
    if (rc == 0 && (sh->sh_flags & SHF_COMPRESSED)) {
        Elf64_Chdr ch;
        uint8_t *out = NULL;
        if (sh->sh_size < sizeof(ch) || inflate == NULL)
            rc = -ENOTSUP;
        if (rc == 0)
            memcpy(&ch, d, sizeof(ch));
        if (rc == 0 && (ch.ch_type != ELFCOMPRESS_ZLIB || ch.ch_size == 0 ||
                        ch.ch_size > CMN_ELF_MAX_SECTION))
            rc = -ENOTSUP;
        if (rc == 0 && (out = malloc(ch.ch_size)) == NULL)
            rc = -ENOMEM;
        if (rc == 0 && inflate(d + sizeof(ch), sh->sh_size - sizeof(ch), out, ch.ch_size) != 0)
            rc = -EINVAL;
        free(d);
        d = out;
        if (rc == 0) {
            *data = d;
            *size = ch.ch_size;
            return 0;
        }
    }
    if (rc != 0) {
        free(d);
        return rc;
    }
    *data = d;
    *size = sh->sh_size;
    return 0;
}

#endif
