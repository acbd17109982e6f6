/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Another process's unwind tables (see uwtables.h). A module's file is opened, checked
 * against the identity the maps line gives (device and inode), its segments and its
 * call-frame sections read with pread (common/elf_file.h), and compiled
 * (common/uw_build.h). The vDSO's image is copied out of the target into a memfd, so that
 * the same file reader serves it.
 */
#include "attach/uwtables.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "arch/arch.h"
#include "attach/procmaps.h"
#include "common/clock.h"
#include "common/grow.h"
#include "common/uw_build.h"
#include "common/uw_table.h"

#define VDSO_MAX_BYTES (1u << 20) /* a vDSO image larger than this is not read */

void att_uwtables_init(struct att_uwtables *u, pid_t pid)
{
    memset(u, 0, sizeof(*u));
    u->pid = pid;
}

void att_uwtables_fini(struct att_uwtables *u)
{
    if (u == NULL)
        return;
    for (size_t i = 0; i < u->n_mods; i++) {
        free(u->mods[i].path);
        free(u->mods[i].table);
    }
    free(u->mods);
    memset(u, 0, sizeof(*u));
}

static bool is_vdso(const struct att_map *m)
{
    return strcmp(m->path, "[vdso]") == 0;
}

/* The file at path when it is the one mapping m maps (same device and inode), opened
 * read-only; -1 otherwise. */
static int open_if_mapped(const char *path, const struct att_map *m)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) == 0 && (uint64_t)st.st_ino == m->inode &&
        ((uint64_t)major(st.st_dev) << 32 | minor(st.st_dev)) == m->dev)
        return fd;
    close(fd);
    return -1;
}

/* The file mapping m maps: through the target's root, else its map_files entry. */
static int open_mapped(pid_t pid, const struct att_map *m, const char **why)
{
    char path[4200];
    snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, m->path);
    int fd = open_if_mapped(path, m);
    if (fd >= 0)
        return fd;
    snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, m->start,
             m->end);
    fd = open_if_mapped(path, m);
    if (fd < 0)
        *why = "its file cannot be opened as mapped: replaced or deleted since, or in another "
               "mount namespace, and /proc/PID/map_files needs privilege";
    return fd;
}

/* The target's vDSO image (mapping m) in a memfd. */
static int open_vdso(pid_t pid, const struct att_map *m, const char **why)
{
    size_t n = (size_t)(m->end - m->start);
    if (n > VDSO_MAX_BYTES)
        n = VDSO_MAX_BYTES;
    unsigned char *img = malloc(n);
    int fd = -1;
    *why = "its vDSO image cannot be read";
    if (img == NULL)
        return -1;
    struct iovec local = {.iov_base = img, .iov_len = n};
    struct iovec remote = {.iov_base = (void *)(uintptr_t)m->start, .iov_len = n};
    if (process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)n &&
        (fd = memfd_create("prof-vdso", MFD_CLOEXEC)) >= 0) {
        size_t done = 0;
        while (done < n) {
            ssize_t w = write(fd, img + done, n - done);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                break;
            done += (size_t)w;
        }
        if (done < n) {
            close(fd);
            fd = -1;
        }
    }
    free(img);
    return fd;
}

/* A compressed section's zlib stream into out, exactly n_out bytes (common/elf_file.h). */
static int inflate_zlib(const uint8_t *in, size_t n_in, uint8_t *out, size_t n_out)
{
    uLongf got = (uLongf)n_out;
    return uncompress(out, &got, in, (uLong)n_in) == Z_OK && got == n_out ? 0 : -1;
}

/* Adds section `name` of the file to b, when there is one that can be read. */
static void add_section(struct cmn_cfi_build *b, int fd, const char *name, bool is_debug_frame)
{
    Elf64_Shdr sh;
    uint8_t *data;
    size_t n;
    if (cmn_elf_section(fd, name, &sh) != 0 ||
        cmn_elf_read_section(fd, &sh, inflate_zlib, &data, &n) != 0)
        return;
    struct cmn_cfi_section s = {data, n, sh.sh_addr, 0, is_debug_frame};
    cmn_cfi_add_section(b, &s);
    free(data);
}

/* The C runtime's _init, from the file's .init section (cmn_cfi_add_crt_init). */
static void add_crt_init(struct cmn_cfi_build *b, int fd)
{
    Elf64_Shdr sh;
    uint8_t *data;
    size_t n;
    if (cmn_elf_section(fd, ".init", &sh) != 0 || sh.sh_size > CMN_CFI_CRT_INIT_MAX ||
        cmn_elf_read_section(fd, &sh, NULL, &data, &n) != 0)
        return;
    cmn_cfi_add_crt_init(b, sh.sh_addr, data, n);
    free(data);
}

/* A Go program's stack-switching functions get STOP rows (common/uw_build.h), their code
 * read from the file's .text. */
static void stop_go_stack_switches(struct cmn_cfi_build *b, int fd)
{
    Elf64_Shdr sh;
    uint8_t *text;
    size_t n;
    if ((cmn_elf_section(fd, ".gopclntab", &sh) != 0 &&
         cmn_elf_section(fd, ".note.go.buildid", &sh) != 0) ||
        cmn_elf_section(fd, ".text", &sh) != 0 || cmn_elf_read_section(fd, &sh, NULL, &text, &n) != 0)
        return;
    cmn_cfi_stop_stack_switches(b, text, sh.sh_addr, n);
    free(text);
}

/* The allocation callback's context: the session, and the size asked for last. */
struct alloc_ctx {
    const struct att_uwtables *u;
    uint64_t bytes;
};

static void *alloc_table(void *ctx, uint64_t bytes)
{
    struct alloc_ctx *c = ctx;
    c->bytes = bytes;
    if (c->u->bytes + bytes > ATT_UW_MAX_BYTES || bytes > SIZE_MAX)
        return NULL;
    return malloc((size_t)bytes);
}

/* The table of the file open at fd; NULL with *why. */
static struct cmn_uw_table *compile(struct att_uwtables *u, int fd, const char **why)
{
    struct cmn_cfi_build b = {.regs = {ARCH_DWARF_SP, ARCH_DWARF_FP, ARCH_DWARF_RA,
                                       ARCH_DWARF_X86_64}};
    struct alloc_ctx ctx = {.u = u};
    /* .eh_frame first: where both describe an address, the section read first wins. */
    add_section(&b, fd, ".eh_frame", false);
    add_section(&b, fd, ".debug_frame", true);
    stop_go_stack_switches(&b, fd);
    add_crt_init(&b, fd);
    struct cmn_uw_table *t = cmn_cfi_table(&b, alloc_table, &ctx);
    if (t != NULL) {
        u->bytes += ctx.bytes;
        u->n_tables++;
    } else if (!b.out_of_memory) {
        *why = "no call-frame information (.eh_frame, .debug_frame)";
    } else {
        *why = u->bytes + ctx.bytes > ATT_UW_MAX_BYTES ? "the unwind tables' memory bound (256 MiB)"
                                                       : "out of memory";
    }
    cmn_cfi_build_free(&b);
    return t;
}

/* Builds mod's table from the file (or vDSO) that mapping m maps. */
static void build(struct att_uwtables *u, struct att_uw_module *mod, const struct att_map *m)
{
    uint64_t t0 = cmn_clock_ns(CLOCK_MONOTONIC);
    const char *why = NULL;
    int fd = mod->ino == 0 ? open_vdso(u->pid, m, &why) : open_mapped(u->pid, m, &why);
    if (fd >= 0) {
        int n = cmn_elf_loads(fd, mod->loads, CMN_ELF_MAX_LOADS);
        if (n <= 0) {
            why = "not a 64-bit ELF file it can read";
        } else {
            mod->n_loads = (unsigned)n;
            mod->table = compile(u, fd, &why);
        }
        close(fd);
    }
    mod->why = mod->table != NULL ? NULL : why;
    mod->build_ns = cmn_clock_ns(CLOCK_MONOTONIC) - t0;
    u->build_ns += mod->build_ns;
}

/* The index of mapping m's module, registered and built when new; -1 for code that has no
 * module (anonymous memory, [vsyscall]) or when memory ran out. */
static int module_of(struct att_uwtables *u, const struct att_map *m)
{
    bool vdso = is_vdso(m);
    if (!vdso && (m->inode == 0 || m->path[0] != '/'))
        return -1;
    uint64_t dev = vdso ? 0 : m->dev, ino = vdso ? 0 : m->inode;
    for (size_t i = 0; i < u->n_mods; i++)
        if (u->mods[i].dev == dev && u->mods[i].ino == ino)
            return (int)i;
    if (u->n_mods >= INT32_MAX || !CMN_GROW(u->mods, u->cap_mods, u->n_mods + 1, 16))
        return -1;
    struct att_uw_module *mod = &u->mods[u->n_mods];
    *mod = (struct att_uw_module){.dev = dev, .ino = ino, .path = strdup(m->path)};
    if (mod->path == NULL)
        return -1;
    build(u, mod, m);
    return (int)u->n_mods++;
}

const struct cmn_uw_table *att_uwtables_find(struct att_uwtables *u, const struct att_map *m,
                                             uint64_t *bias)
{
    struct att_uw_memo *e = &u->memo[(m->start >> 12) % ATT_UW_MEMO];
    if (e->end != m->end || e->start != m->start || e->offset != m->offset || e->dev != m->dev ||
        e->ino != m->inode) {
        *e = (struct att_uw_memo){.start = m->start, .end = m->end, .offset = m->offset,
                                  .dev = m->dev, .ino = m->inode, .module = module_of(u, m)};
        uint64_t vaddr;
        const struct att_uw_module *mod = e->module >= 0 ? &u->mods[e->module] : NULL;
        if (mod != NULL && cmn_elf_vaddr_of(mod->loads, mod->n_loads, m->offset,
                                            (m->prot & PROF_MAP_EXEC) != 0, &vaddr))
            e->bias = m->start - vaddr;
        else
            e->module = -1; /* no segment holds the mapping: its addresses are not known */
    }
    if (e->module < 0)
        return NULL;
    *bias = e->bias;
    return u->mods[e->module].table;
}

const struct att_uw_module *att_uwtables_failed(struct att_uwtables *u)
{
    while (u->n_failed_seen < u->n_mods) {
        const struct att_uw_module *mod = &u->mods[u->n_failed_seen++];
        if (mod->table == NULL)
            return mod;
    }
    return NULL;
}
