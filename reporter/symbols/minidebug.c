/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Reading .gnu_debugdata: the section's bytes, inflated by liblzma's stream decoder into a
 * growing buffer, written to an anonymous memory file (memfd_create) that libbfd then
 * opens as an object file by descriptor, so that nothing touches the disk. libbfd owns the
 * descriptor from then on and closes it with the bfd. Reporter thread only.
 */
#include "reporter/symbols/minidebug.h"

#include <lzma.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/err.h"
#include "common/grow.h"

#define MINIDEBUG_SECTION ".gnu_debugdata"

/* Inflates the n xz bytes at in into *out (malloc'd) and *out_n. CMN_OK, CMN_E_INPUT when
 * they are not a whole xz stream or inflate past REP_MINIDEBUG_MAX_BYTES, CMN_E_NOMEM. */
static int inflate_xz(const uint8_t *in, size_t n, uint8_t **out, size_t *out_n)
{
    lzma_stream z = LZMA_STREAM_INIT;
    if (lzma_stream_decoder(&z, UINT64_MAX, 0) != LZMA_OK)
        return CMN_E_NOMEM;
    uint8_t *buf = NULL;
    size_t cap = 0, len = 0;
    int rc = CMN_GROW(buf, cap, n * 4 + 4096, n * 4 + 4096) ? CMN_OK : CMN_E_NOMEM;
    z.next_in = in;
    z.avail_in = n;
    while (rc == CMN_OK) {
        /* Twice the room each time, up to the limit. */
        if (len == cap && cap * 2 > REP_MINIDEBUG_MAX_BYTES) {
            rc = CMN_E_INPUT;
            break;
        }
        if (len == cap && !CMN_GROW(buf, cap, cap + 1, 4096)) {
            rc = CMN_E_NOMEM;
            break;
        }
        z.next_out = buf + len;
        z.avail_out = cap - len;
        lzma_ret r = lzma_code(&z, LZMA_FINISH);
        len = cap - z.avail_out;
        if (r == LZMA_STREAM_END)
            break;
        if (r != LZMA_OK && r != LZMA_BUF_ERROR)
            rc = r == LZMA_MEM_ERROR ? CMN_E_NOMEM : CMN_E_INPUT;
        else if (r == LZMA_BUF_ERROR && z.avail_out != 0)
            rc = CMN_E_INPUT; /* the input ended before the stream did */
    }
    lzma_end(&z);
    if (rc != CMN_OK) {
        free(buf);
        return rc;
    }
    *out = buf;
    *out_n = len;
    return CMN_OK;
}

/* Opens the n bytes at data as an object file, through a memfd. */
static bfd *open_in_memory(const uint8_t *data, size_t n)
{
    int fd = memfd_create("prof-minidebuginfo", MFD_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, data + done, n - done);
        if (w <= 0) {
            close(fd);
            return NULL;
        }
        done += (size_t)w;
    }
    if (lseek(fd, 0, SEEK_SET) != 0) {
        close(fd);
        return NULL;
    }
    bfd *b = bfd_fdopenr("[.gnu_debugdata]", NULL, fd); /* owns fd from here, even on failure */
    if (b == NULL)
        return NULL;
    if (!bfd_check_format(b, bfd_object)) {
        bfd_close(b);
        return NULL;
    }
    return b;
}

int rep_minidebug_open(bfd *abfd, bfd **mini)
{
    *mini = NULL;
    asection *s = bfd_get_section_by_name(abfd, MINIDEBUG_SECTION);
    if (s == NULL || (bfd_section_flags(s) & SEC_HAS_CONTENTS) == 0 || bfd_section_size(s) == 0 ||
        bfd_section_size(s) > REP_MINIDEBUG_MAX_BYTES)
        return CMN_OK;
    size_t n = bfd_section_size(s);
    uint8_t *xz = malloc(n);
    if (xz == NULL)
        return CMN_E_NOMEM;
    uint8_t *elf = NULL;
    size_t elf_n = 0;
    int rc = CMN_OK;
    if (bfd_get_section_contents(abfd, s, xz, 0, n))
        rc = inflate_xz(xz, n, &elf, &elf_n);
    free(xz);
    if (rc == CMN_E_NOMEM)
        return rc;
    if (elf != NULL)
        *mini = open_in_memory(elf, elf_n);
    free(elf);
    return CMN_OK;
}
