/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Copying the reporter's vDSO image out to a file libbfd can open. The image's size is
 * not given anywhere; it is the end of the furthest of its ELF program segments and of its
 * section header table, all of which lie inside the mapping. Reporter thread only.
 */
#include "reporter/symbols/vdso.h"

#include <elf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "common/err.h"
#include "include/libprof/prof_format.h"
#include "reporter/symbols/module.h"

/* The image's size in bytes, 0 when it does not look like a 64-bit ELF image. */
static size_t image_size(const unsigned char *img)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64)
        return 0;
    size_t end = (size_t)eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
    const Elf64_Phdr *ph = (const Elf64_Phdr *)(img + eh->e_phoff);
    for (size_t i = 0; i < eh->e_phnum; i++) {
        size_t seg_end = (size_t)(ph[i].p_offset + ph[i].p_filesz);
        if (seg_end > end)
            end = seg_end;
    }
    return end;
}

/* Writes n bytes at img to a new temporary file; its path in *path (free it). */
static int write_temp(const unsigned char *img, size_t n, char **path /* out */)
{
    const char *dir = getenv("TMPDIR");
    if (dir == NULL || dir[0] == '\0')
        dir = "/tmp";
    if (asprintf(path, "%s/prof-vdso-XXXXXX", dir) < 0)
        return CMN_E_NOMEM;
    int fd = mkstemp(*path);
    if (fd < 0) {
        free(*path);
        return CMN_E_NOTFOUND;
    }
    bool ok = write(fd, img, n) == (ssize_t)n;
    ok = close(fd) == 0 && ok;
    if (!ok) {
        unlink(*path);
        free(*path);
        return CMN_E_NOTFOUND;
    }
    return CMN_OK;
}

int rep_vdso_open(const uint8_t *id, size_t n, struct rep_module **m /* out */)
{
    *m = NULL;
    const unsigned char *img = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
    if (img == NULL || n == 0)
        return CMN_E_NOTFOUND;
    size_t size = image_size(img);
    if (size == 0)
        return CMN_E_NOTFOUND;
    char *path;
    int rc = write_temp(img, size, &path);
    if (rc != CMN_OK)
        return rc;
    struct cmn_err err = {0};
    rc = rep_module_open(path, m, &err);
    /* The module has read its symbols and call frame information; the vDSO has no line
     * information that would make libbfd come back to the file. */
    unlink(path);
    free(path);
    if (rc != CMN_OK)
        return rc == CMN_E_NOMEM ? rc : CMN_E_NOTFOUND;
    const uint8_t *own;
    size_t n_own;
    if (n > PROF_BUILD_ID_MAX)
        n = PROF_BUILD_ID_MAX;
    if (rep_module_build_id(*m, &own, &n_own) != CMN_OK || n_own < n ||
        (n_own != n && n != PROF_BUILD_ID_MAX) ||
        memcmp(own, id, n) != 0) {
        rep_module_close(*m);
        *m = NULL;
        return CMN_E_NOTFOUND;
    }
    return CMN_OK;
}
