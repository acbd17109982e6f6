/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The modules' unwind tables (see uwtables.h). The registry is an array indexed by module
 * id; ids are never reused, so a request a handler made for an id always names the module
 * it meant. A module is PENDING until a walk asks for its table, then BUILT or NONE.
 */
#include "libprof/uwtables.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "arch/arch.h"
#include "common/build_id.h"
#include "common/elf_file.h"
#include "common/uw_build.h"
#include "common/uw_table.h"
#include "libprof/fd.h"
#include "libprof/log.h"
#include "libprof/objects.h"
#include "libprof/uwcache.h"
#include "sampler/codemap.h"

#define LP_UW_PENDING 0
#define LP_UW_BUILT 1
#define LP_UW_NONE 2

struct module {
    uint64_t dev, ino;      /* the file's identity; both 0 for the vDSO */
    char *path;             /* as /proc/self/maps names it; owned */
    uintptr_t header;       /* where its ELF header is mapped (offset 0), 0 not seen */
    int state;              /* LP_UW_* */
    const struct cmn_uw_table *table; /* when BUILT; mapped for good */
    unsigned n_loads;
    struct cmn_elf_load loads[CMN_ELF_MAX_LOADS]; /* its link-time layout, when BUILT */
};

static struct module registry[SMP_MODULES_MAX]; /* [0] unused: id 0 is "none" */
static uint32_t n_registered = 1;
static uint64_t table_bytes;
static unsigned n_tables;
static uint32_t n_wanted_seen; /* smp_codemap_n_wanted when last served */

static int is_vdso(const char *path)
{
    return strcmp(path, "[vdso]") == 0;
}

static uint32_t find_or_add(const struct cmn_maps_line *m, int vdso);

uint32_t lp_uwtables_module(const struct cmn_maps_line *m)
{
    int vdso = is_vdso(m->path);
    if (!vdso && (m->inode == 0 || m->path[0] != '/'))
        return 0;
    uint32_t id = find_or_add(m, vdso);
    if (id != 0 && m->offset == 0 && (m->prot & PROF_MAP_READ))
        registry[id].header = (uintptr_t)m->start;
    return id;
}

/* The module of mapping m by its file's identity, registered when new; 0 when the registry
 * is full. */
static uint32_t find_or_add(const struct cmn_maps_line *m, int vdso)
{
    uint64_t dev = vdso ? 0 : m->dev, ino = vdso ? 0 : m->inode;
    for (uint32_t id = 1; id < n_registered; id++)
        if (registry[id].dev == dev && registry[id].ino == ino &&
            (ino != 0 || is_vdso(registry[id].path)))
            return id;
    if (n_registered >= SMP_MODULES_MAX)
        return 0;
    char *path = strdup(m->path);
    if (path == NULL)
        return 0;
    registry[n_registered] = (struct module){.dev = dev, .ino = ino, .path = path};
    return n_registered++;
}

void lp_uwtables_annotate(struct smp_code_range *r, uint32_t id, uint64_t offset)
{
    r->table = NULL;
    r->bias = 0;
    r->module = 0;
    if (id == 0 || id >= n_registered)
        return;
    const struct module *mod = &registry[id];
    uint64_t vaddr;
    if (mod->state == LP_UW_PENDING)
        r->module = id;
    else if (mod->state == LP_UW_BUILT && cmn_elf_vaddr_of(mod->loads, mod->n_loads, offset, 1,
                                                           &vaddr)) {
        r->table = mod->table;
        r->bias = r->start - (uintptr_t)vaddr;
    }
}

/* The module's ELF header and program headers, read where the loader mapped them (with
 * the fault-proof read: the module may be unloaded meanwhile), and its load bias. 0, or
 * -1 when they cannot be read. */
static int read_headers(const struct module *mod, struct lp_object *o)
{
    ElfW(Ehdr) eh;
    if (mod->header == 0 || lp_objects_read_memory(&eh, mod->header, sizeof(eh)) != 0 ||
        memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_phentsize != sizeof(ElfW(Phdr)))
        return -1;
    o->phnum = eh.e_phnum < LP_OBJECT_MAX_PHDRS ? eh.e_phnum : LP_OBJECT_MAX_PHDRS;
    if (lp_objects_read_memory(o->phdrs, mod->header + eh.e_phoff,
                               o->phnum * sizeof(ElfW(Phdr))) != 0)
        return -1;
    for (unsigned i = 0; i < o->phnum; i++) {
        const ElfW(Phdr) *ph = &o->phdrs[i];
        if (ph->p_type == PT_LOAD && ph->p_offset == 0) {
            o->bias = mod->header - ph->p_vaddr;
            return 0;
        }
    }
    return -1;
}

/* The module's layout from its program headers. */
static void take_loads(struct module *mod, const struct lp_object *o)
{
    mod->n_loads = 0;
    for (unsigned i = 0; i < o->phnum && mod->n_loads < CMN_ELF_MAX_LOADS; i++) {
        const ElfW(Phdr) *ph = &o->phdrs[i];
        if (ph->p_type == PT_LOAD)
            mod->loads[mod->n_loads++] = (struct cmn_elf_load){ph->p_offset, ph->p_vaddr,
                                                               ph->p_filesz, ph->p_memsz,
                                                               ph->p_flags};
    }
}

/* The module's GNU build-id, from its note segments in memory: its length, 0 when none. */
static size_t build_id_of(const struct lp_object *o, uint8_t *id, size_t cap)
{
    uint8_t notes[1024];
    for (unsigned i = 0; i < o->phnum; i++) {
        const ElfW(Phdr) *ph = &o->phdrs[i];
        size_t n = ph->p_filesz < sizeof(notes) ? ph->p_filesz : sizeof(notes);
        if (ph->p_type != PT_NOTE || n == 0 ||
            lp_objects_read_memory(notes, o->bias + ph->p_vaddr, n) != 0)
            continue;
        size_t len = cmn_build_id_note(notes, n, id, cap);
        if (len > 0)
            return len;
    }
    return 0;
}

/* The table of a build-id that an earlier process built, when it fits the bound. */
static const struct cmn_uw_table *cached_table(const uint8_t *id, size_t len)
{
    uint64_t bytes = 0;
    const struct cmn_uw_table *t = len > 0 ? lp_uwcache_load(id, len, &bytes) : NULL;
    if (t == NULL)
        return NULL;
    if (table_bytes + bytes > LP_UW_MAX_BYTES) {
        munmap((void *)((const char *)t - (bytes - t->total_bytes)), bytes);
        return NULL;
    }
    table_bytes += bytes;
    n_tables++;
    return t;
}

/* .eh_frame as the loader mapped it: located by .eh_frame_hdr (PT_GNU_EH_FRAME), read to
 * the end of the segment holding it, and added to b. 0, or -errno. */
static int add_mapped_eh_frame(struct cmn_cfi_build *b, const struct lp_object *o,
                               uint8_t **keep)
{
    const ElfW(Phdr) *hdr = NULL;
    for (unsigned i = 0; i < o->phnum && hdr == NULL; i++)
        if (o->phdrs[i].p_type == PT_GNU_EH_FRAME)
            hdr = &o->phdrs[i];
    if (hdr == NULL)
        return -ENOENT;
    uint8_t head[16];
    size_t head_n = hdr->p_memsz < sizeof(head) ? hdr->p_memsz : sizeof(head);
    uintptr_t head_at = o->bias + hdr->p_vaddr;
    if (head_n < 8 || lp_objects_read_memory(head, head_at, head_n) != 0 || head[0] != 1)
        return -EINVAL;
    struct cmn_cfi_section hs = {head, head_n, head_at, 0, false};
    struct cmn_cfi_cursor c = {head, 4, head_n, false};
    uint64_t eh_at = cmn_cfi_ptr(&c, head[1], &hs);
    if (c.is_bad)
        return -EINVAL;
    const ElfW(Phdr) *seg = NULL;
    for (unsigned i = 0; i < o->phnum && seg == NULL; i++) {
        const ElfW(Phdr) *ph = &o->phdrs[i];
        if (ph->p_type == PT_LOAD && eh_at >= o->bias + ph->p_vaddr &&
            eh_at - (o->bias + ph->p_vaddr) < ph->p_filesz)
            seg = ph;
    }
    if (seg == NULL)
        return -EINVAL;
    size_t n = (size_t)(o->bias + seg->p_vaddr + seg->p_filesz - eh_at);
    if (n > CMN_ELF_MAX_SECTION)
        n = CMN_ELF_MAX_SECTION;
    uint8_t *data = malloc(n);
    if (data == NULL)
        return -ENOMEM;
    if (lp_objects_read_memory(data, eh_at, n) != 0) {
        free(data);
        return -EFAULT;
    }
    struct cmn_cfi_section s = {data, n, eh_at, o->bias, false};
    cmn_cfi_add_section(b, &s);
    *keep = data;
    return 0;
}

/* The bytes of code the FDEs read so far describe. */
static uint64_t covered(const struct cmn_cfi_build *b)
{
    uint64_t n = 0;
    for (size_t i = 0; i < b->n_fdes; i++)
        n += b->fdes[i].len;
    return n;
}

/* The bytes of the module's executable segments. */
static uint64_t text_bytes(const struct lp_object *o)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < o->phnum; i++)
        if (o->phdrs[i].p_type == PT_LOAD && (o->phdrs[i].p_flags & PF_X))
            n += o->phdrs[i].p_memsz;
    return n;
}

/* A section of the module's file, when the file is still the one mapped. */
static void add_file_section(struct cmn_cfi_build *b, const struct module *mod,
                             const char *name, int is_debug_frame)
{
    if (mod->path[0] != '/')
        return;
    int fd = lp_fd_open(mod->path, O_RDONLY, 0);
    if (fd < 0)
        return;
    struct stat st;
    Elf64_Shdr sh;
    uint8_t *data = NULL;
    size_t n = 0;
    if (fstat(fd, &st) == 0 && (uint64_t)st.st_ino == mod->ino &&
        ((uint64_t)major(st.st_dev) << 32 | minor(st.st_dev)) == mod->dev &&
        cmn_elf_section(fd, name, &sh) == 0 && cmn_elf_read_section(fd, &sh, &data, &n) == 0) {
        struct cmn_cfi_section s = {data, n, sh.sh_addr, 0, is_debug_frame != 0};
        cmn_cfi_add_section(b, &s);
        free(data);
    }
    lp_fd_close(fd);
}

/* The C runtime's _init where the loader mapped it, at the start of the first executable
 * segment (common/uw_build.h, cmn_cfi_add_crt_init). */
static void add_crt_init(struct cmn_cfi_build *b, const struct lp_object *o)
{
    for (unsigned i = 0; i < o->phnum; i++) {
        const ElfW(Phdr) *ph = &o->phdrs[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uint8_t code[CMN_CFI_CRT_INIT_MAX];
        size_t n = ph->p_filesz < sizeof(code) ? (size_t)ph->p_filesz : sizeof(code);
        if (lp_objects_read_memory(code, o->bias + ph->p_vaddr, n) == 0)
            cmn_cfi_add_crt_init(b, ph->p_vaddr, code, n);
        return;
    }
}

/* Memory for a table: mapped, so that it never shares pages with the program's heap; the
 * bound on all tables' memory holds. */
static void *map_table(void *ctx, uint64_t bytes)
{
    *(uint64_t *)ctx = bytes;
    if (table_bytes + bytes > LP_UW_MAX_BYTES)
        return NULL;
    void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return mem == MAP_FAILED ? NULL : mem;
}

/* The table of b's rows; NULL with *why when there is nothing or no room. */
static const struct cmn_uw_table *make_table(struct cmn_cfi_build *b, const char **why)
{
    uint64_t bytes = 0;
    struct cmn_uw_table *t = cmn_cfi_table(b, map_table, &bytes);
    if (t == NULL) {
        *why = !b->out_of_memory                          ? "no call-frame information"
               : table_bytes + bytes > LP_UW_MAX_BYTES    ? "the tables' memory bound"
                                                          : "out of memory";
        return NULL;
    }
    mprotect(t, bytes, PROT_READ);
    table_bytes += bytes;
    n_tables++;
    return t;
}

/* Builds module id's table; its state becomes BUILT or NONE (with a note saying why).
 * Reads the module's memory only, but for a module without .eh_frame in memory, or whose
 * .eh_frame describes less than half of its code (built with -fno-asynchronous-unwind-
 * tables, its .eh_frame holds the C runtime's start code only): its file then, for
 * .debug_frame, for as long as it takes. */
static void build(uint32_t id)
{
    struct module *mod = &registry[id];
    struct cmn_cfi_build b = {.regs = {ARCH_DWARF_SP, ARCH_DWARF_FP, ARCH_DWARF_RA,
                                       ARCH_DWARF_X86_64}};
    const char *why = "its headers cannot be read";
    ElfW(Phdr) phdrs[LP_OBJECT_MAX_PHDRS];
    struct lp_object o = {.phdrs = phdrs};
    uint8_t *eh = NULL, bid[PROF_BUILD_ID_MAX];
    if (read_headers(mod, &o) == 0) {
        take_loads(mod, &o);
        size_t bid_len = build_id_of(&o, bid, sizeof(bid));
        mod->table = cached_table(bid, bid_len);
        if (mod->table == NULL) {
            int mapped = add_mapped_eh_frame(&b, &o, &eh) == 0;
            if (!mapped)
                add_file_section(&b, mod, ".eh_frame", 0);
            if (!mapped || covered(&b) < text_bytes(&o) / 2)
                add_file_section(&b, mod, ".debug_frame", 1);
            add_crt_init(&b, &o);
            mod->table = make_table(&b, &why);
            if (mod->table != NULL && bid_len > 0)
                lp_uwcache_store(bid, bid_len, mod->table);
        }
    }
    free(eh);
    cmn_cfi_build_free(&b);
    mod->state = mod->table ? LP_UW_BUILT : LP_UW_NONE;
    if (mod->table == NULL)
        lp_note("no unwind table for %s (%s): its frames are walked by frame pointer",
                mod->path, why);
}

unsigned lp_uwtables_build_wanted(void)
{
    uint32_t wanted = atomic_load(&smp_codemap_n_wanted);
    if (wanted == n_wanted_seen)
        return 0;
    n_wanted_seen = wanted;
    unsigned changed = 0;
    for (uint32_t id = 1; id < n_registered; id++) {
        if (registry[id].state != LP_UW_PENDING ||
            !atomic_load_explicit(&smp_codemap_wanted[id], memory_order_relaxed))
            continue;
        build(id);
        changed++;
    }
    return changed;
}

void lp_uwtables_want_all(void)
{
    for (uint32_t id = 1; id < n_registered; id++)
        if (registry[id].state == LP_UW_PENDING &&
            atomic_exchange(&smp_codemap_wanted[id], 1) == 0)
            atomic_fetch_add(&smp_codemap_n_wanted, 1);
}

uint32_t lp_uwtables_served(void)
{
    return n_wanted_seen;
}

uint64_t lp_uwtables_bytes(void)
{
    return table_bytes;
}

unsigned lp_uwtables_count(void)
{
    return n_tables;
}

void lp_uwtables_fork_child(void)
{
    /* The registry is whole (the map lock was held across the fork); a request the
     * parent's writer had not served yet is served by the child's. */
    n_wanted_seen = 0;
}
