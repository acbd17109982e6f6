/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The modules' unwind tables (see uwtables.h). The registry is an array indexed by module
 * id. A module is PENDING until a walk asks for its table, then BUILT or NONE; FREE once no
 * mapping of it is left, when its id may be taken by another module (a handler's request
 * for the old id then builds the new one's table early: harmless). A freed module's table
 * is unmapped only once no copy of the code map a handler may still read holds it: two
 * publishes later (sampler/dbuf.h: the second waits for the readers of the copy that held
 * it).
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
#include "common/hash.h"
#include "common/uw_build.h"
#include "common/uw_table.h"
#include "libprof/fd.h"
#include "libprof/log.h"
#include "libprof/objects.h"
#include "libprof/uwcache.h"
#include "libprof/zlib.h"
#include "sampler/codemap.h"

#define LP_UW_PENDING 0
#define LP_UW_BUILT 1
#define LP_UW_NONE 2
#define LP_UW_FREE 3
#define LP_UW_HEADERS_MAX 256u /* ELF headers remembered during one scan of the maps */
#define LP_UW_RETIRED_MAX 256u /* tables waiting to be unmapped */

struct module {
    uint64_t dev, ino;      /* the file's identity; both 0 for the vDSO */
    char *path;             /* as /proc/self/maps names it; owned */
    uintptr_t header;       /* where its ELF header is mapped (offset 0), 0 not seen */
    int state;              /* LP_UW_* */
    int is_seen;            /* a mapping of it was in the scan of the maps under way */
    const struct cmn_uw_table *table; /* when BUILT */
    void *mem;              /* the memory holding table (mem_bytes), unmapped when the
                             * module is freed and no handler can hold it any more */
    uint64_t mem_bytes;
    uint8_t build_id[PROF_BUILD_ID_MAX]; /* what the table was built for, when BUILT: the */
    size_t build_id_len;    /* build-id, or without one a hash of the program headers */
    uint64_t phdr_hash;
    unsigned n_loads;
    struct cmn_elf_load loads[CMN_ELF_MAX_LOADS]; /* its link-time layout, when BUILT */
};

/* An ELF header seen in a read-only mapping at offset 0 during a scan: a module's, when
 * the same file has an executable mapping (a data file's, when not). */
struct header_seen {
    uint64_t dev, ino;
    uintptr_t start;
};

/* A freed module's table, to be unmapped once publish_seq reaches at_seq. */
struct retired {
    void *mem;
    uint64_t bytes;
    uint64_t at_seq;
};

static struct module registry[SMP_MODULES_MAX]; /* [0] unused: id 0 is "none" */
static uint32_t n_registered = 1; /* ids in use are below this */
static uint64_t table_bytes;
static unsigned n_tables;
static uint32_t n_wanted_seen; /* smp_codemap_n_wanted when last served */
static struct header_seen headers[LP_UW_HEADERS_MAX]; /* of the scan under way */
static unsigned n_headers;
static struct retired retired[LP_UW_RETIRED_MAX];
static unsigned n_retired;
static uint64_t publish_seq; /* code maps published (lp_uwtables_published()) */

static int is_vdso(const char *path)
{
    return strcmp(path, "[vdso]") == 0;
}

static int read_headers(const struct module *mod, struct lp_object *o);
static size_t build_id_of(const struct lp_object *o, uint8_t *id, size_t cap);

/* The live module of a file (or the vDSO), 0 when none. */
static uint32_t find(uint64_t dev, uint64_t ino, int vdso)
{
    for (uint32_t id = 1; id < n_registered; id++)
        if (registry[id].state != LP_UW_FREE && registry[id].dev == dev &&
            registry[id].ino == ino && (ino != 0 || vdso))
            return id;
    return 0;
}

/* The identity of the module mapped at mod's header (read from memory): its build-id, or
 * without one a hash of its program headers. 0, or -1 when it cannot be read. */
static int identity_of(const struct module *mod, uint8_t *id, size_t *len, uint64_t *hash)
{
    ElfW(Phdr) phdrs[LP_OBJECT_MAX_PHDRS];
    struct lp_object o = {.phdrs = phdrs};
    if (read_headers(mod, &o) != 0)
        return -1;
    *len = build_id_of(&o, id, PROF_BUILD_ID_MAX);
    *hash = cmn_hash_bytes(phdrs, o.phnum * sizeof(phdrs[0]));
    return 0;
}

/* Frees module id: its slot for another module, its table for unmapping once no handler
 * can hold it. */
static void free_module(uint32_t id)
{
    struct module *mod = &registry[id];
    if (mod->mem != NULL) {
        if (n_retired < LP_UW_RETIRED_MAX)
            retired[n_retired++] = (struct retired){mod->mem, mod->mem_bytes, publish_seq + 2};
        /* else: left mapped, as every table once was */
        table_bytes -= mod->mem_bytes;
        n_tables--;
    }
    free(mod->path);
    atomic_store_explicit(&smp_codemap_wanted[id], 0, memory_order_relaxed);
    *mod = (struct module){.state = LP_UW_FREE};
}

/* Registers a new module for mapping m (header at `header`, 0 unknown); 0 when the
 * registry is full. A freed id is taken first. */
static uint32_t add(const struct cmn_maps_line *m, int vdso, uintptr_t header)
{
    uint32_t id = 1;
    while (id < n_registered && registry[id].state != LP_UW_FREE)
        id++;
    if (id >= SMP_MODULES_MAX)
        return 0;
    char *path = strdup(m->path);
    if (path == NULL)
        return 0;
    registry[id] = (struct module){.dev = vdso ? 0 : m->dev, .ino = vdso ? 0 : m->inode,
                                   .path = path, .header = header, .state = LP_UW_PENDING};
    if (id == n_registered)
        n_registered++;
    return id;
}

/* A module's ELF header was seen at `start`: where it was elsewhere before, the file was
 * mapped again, maybe changed (a library rewritten in place, or an inode reused, and
 * loaded again without our dlclose() wrapper reading the maps in between): a built table
 * is kept only for the same build-id (or, without one, the same program headers). */
static void header_moved(uint32_t id, uintptr_t start)
{
    struct module *mod = &registry[id];
    uintptr_t was = mod->header;
    mod->header = start;
    if (was == 0 || was == start || mod->state != LP_UW_BUILT)
        return;
    uint8_t bid[PROF_BUILD_ID_MAX];
    size_t len = 0;
    uint64_t hash = 0;
    if (identity_of(mod, bid, &len, &hash) == 0 && len == mod->build_id_len &&
        memcmp(bid, mod->build_id, len) == 0 && (len > 0 || hash == mod->phdr_hash))
        return;
    char *path = strdup(mod->path);
    struct cmn_maps_line m = {.dev = mod->dev, .inode = mod->ino, .path = path};
    int seen = mod->is_seen;
    free_module(id);
    uint32_t again = path ? add(&m, 0, start) : 0;
    if (again != 0)
        registry[again].is_seen = seen;
    free(path);
}

void lp_uwtables_scan_begin(void)
{
    for (uint32_t id = 1; id < n_registered; id++)
        registry[id].is_seen = 0;
    n_headers = 0;
}

void lp_uwtables_header(const struct cmn_maps_line *m)
{
    if (m->inode == 0 || m->path[0] != '/' || m->offset != 0 || !(m->prot & PROF_MAP_READ))
        return;
    uint32_t id = find(m->dev, m->inode, 0);
    if (id != 0)
        header_moved(id, (uintptr_t)m->start);
    else if (n_headers < LP_UW_HEADERS_MAX)
        headers[n_headers++] = (struct header_seen){m->dev, m->inode, (uintptr_t)m->start};
}

uint32_t lp_uwtables_module(const struct cmn_maps_line *m)
{
    int vdso = is_vdso(m->path);
    if (!vdso && (m->inode == 0 || m->path[0] != '/'))
        return 0;
    uint32_t id = find(vdso ? 0 : m->dev, vdso ? 0 : m->inode, vdso);
    uintptr_t header = m->offset == 0 && (m->prot & PROF_MAP_READ) ? (uintptr_t)m->start : 0;
    for (unsigned i = 0; header == 0 && id == 0 && i < n_headers; i++)
        if (headers[i].dev == m->dev && headers[i].ino == m->inode)
            header = headers[i].start;
    if (id == 0)
        id = add(m, vdso, header);
    else if (header != 0)
        header_moved(id, header);
    if (id != 0)
        registry[id].is_seen = 1;
    return id;
}

void lp_uwtables_scan_end(void)
{
    for (uint32_t id = 1; id < n_registered; id++)
        if (registry[id].state != LP_UW_FREE && !registry[id].is_seen)
            free_module(id);
}

void lp_uwtables_published(void)
{
    publish_seq++;
    unsigned kept = 0;
    for (unsigned i = 0; i < n_retired; i++) {
        if (publish_seq >= retired[i].at_seq)
            munmap(retired[i].mem, retired[i].bytes);
        else
            retired[kept++] = retired[i];
    }
    n_retired = kept;
}

unsigned lp_uwtables_n_modules(void)
{
    unsigned n = 0;
    for (uint32_t id = 1; id < n_registered; id++)
        n += registry[id].state != LP_UW_FREE;
    return n;
}

void lp_uwtables_annotate(struct smp_code_range *r, uint32_t id, uint64_t offset)
{
    r->table = NULL;
    r->bias = 0;
    r->module = 0;
    if (id == 0 || id >= n_registered || registry[id].state == LP_UW_FREE)
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

/* The table an earlier process built from the same input (key), when it fits the bound;
 * the memory holding it into mod. */
static const struct cmn_uw_table *cached_table(struct module *mod,
                                               const struct lp_uwcache_key *key)
{
    uint64_t bytes = 0;
    const struct cmn_uw_table *t = lp_uwcache_load(key, &bytes); /* no build-id: no name */
    if (t == NULL)
        return NULL;
    void *mem = (void *)((const char *)t - (bytes - t->total_bytes));
    if (table_bytes + bytes > LP_UW_MAX_BYTES) {
        munmap(mem, bytes);
        return NULL;
    }
    mod->mem = mem;
    mod->mem_bytes = bytes;
    table_bytes += bytes;
    n_tables++;
    return t;
}

/* .eh_frame as the loader mapped it: located by .eh_frame_hdr (PT_GNU_EH_FRAME), to the
 * end of the segment holding it; its address into *at and its bytes into *n. 0, or
 * -errno. */
static int locate_mapped_eh_frame(const struct lp_object *o, uintptr_t *at, size_t *n)
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
    *at = (uintptr_t)eh_at;
    *n = (size_t)(o->bias + seg->p_vaddr + seg->p_filesz - eh_at);
    if (*n > CMN_ELF_MAX_SECTION)
        *n = CMN_ELF_MAX_SECTION;
    return 0;
}

/* The mapped .eh_frame at..at+n into s (its data malloc'd: free it). 0, or -errno. */
static int read_mapped_eh_frame(const struct lp_object *o, uintptr_t at, size_t n,
                                struct cmn_cfi_section *s)
{
    uint8_t *data = malloc(n);
    if (data == NULL)
        return -ENOMEM;
    if (lp_objects_read_memory(data, at, n) != 0) {
        free(data);
        return -EFAULT;
    }
    *s = (struct cmn_cfi_section){data, n, at, o->bias, false};
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
    /* Never a FIFO or a device put at the path since (a blocked open would stall the
     * writer thread): a regular file, then the one mapped. */
    struct stat st;
    int fd = lp_fd_open_regular(mod->path, O_RDONLY, 0, &st, NULL);
    if (fd < 0)
        return;
    Elf64_Shdr sh;
    uint8_t *data = NULL;
    size_t n = 0;
    if ((uint64_t)st.st_ino == mod->ino &&
        ((uint64_t)major(st.st_dev) << 32 | minor(st.st_dev)) == mod->dev &&
        cmn_elf_section(fd, name, &sh) == 0 &&
        cmn_elf_read_section(fd, &sh, lp_zlib_inflate, &data, &n) == 0) {
        struct cmn_cfi_section s = {data, n, sh.sh_addr, 0, is_debug_frame != 0};
        cmn_cfi_add_section(b, &s);
        free(data);
    }
    lp_fd_close(fd);
}

/* 1 when the module's file is a Go program's (its linker's sections), still the file
 * mapped. */
static int is_go_module(const struct module *mod)
{
    struct stat st;
    Elf64_Shdr sh;
    int fd = mod->path[0] == '/' ? lp_fd_open_regular(mod->path, O_RDONLY, 0, &st, NULL) : -1;
    int is_go = fd >= 0 && (uint64_t)st.st_ino == mod->ino &&
                (cmn_elf_section(fd, ".gopclntab", &sh) == 0 ||
                 cmn_elf_section(fd, ".note.go.buildid", &sh) == 0);
    lp_fd_close(fd);
    return is_go;
}

/* Go's stack-switching functions get STOP rows (common/uw_build.h): their code read from
 * the module's executable segments in memory. */
static void stop_go_stack_switches(struct cmn_cfi_build *b, const struct lp_object *o)
{
    for (unsigned i = 0; i < o->phnum; i++) {
        const ElfW(Phdr) *ph = &o->phdrs[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || ph->p_filesz > CMN_ELF_MAX_SECTION)
            continue;
        uint8_t *text = malloc(ph->p_filesz);
        if (text && lp_objects_read_memory(text, o->bias + ph->p_vaddr, ph->p_filesz) == 0)
            cmn_cfi_stop_stack_switches(b, text, ph->p_vaddr, ph->p_filesz);
        free(text);
    }
}

/* The first bytes of the first executable segment, where the C runtime's _init is
 * (common/uw_build.h, cmn_cfi_add_crt_init): how many into code, its link-time address
 * into *vaddr; 0 when they cannot be read. */
static size_t read_crt_code(const struct lp_object *o, uint8_t *code, size_t cap,
                            uint64_t *vaddr)
{
    for (unsigned i = 0; i < o->phnum; i++) {
        const ElfW(Phdr) *ph = &o->phdrs[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        size_t n = ph->p_filesz < cap ? (size_t)ph->p_filesz : cap;
        *vaddr = ph->p_vaddr;
        return lp_objects_read_memory(code, o->bias + ph->p_vaddr, n) == 0 ? n : 0;
    }
    return 0;
}

/* What a table is compiled from, when it is the module's memory alone: its load
 * segments, its .eh_frame as mapped (at..at+n) and the first bytes of its code. Two
 * modules with the same fingerprint get the same table, so a cached table is found by it
 * (with the build-id), never by a build-id a module may share with another. The .eh_frame
 * is hashed through a small buffer, so that a table found in the cache costs no copy of
 * it (python3.11's is 400 KB: a hundred new pages a start); from read instead when the
 * bytes are read already. 0 when they cannot be read. */
static uint64_t fingerprint(const struct module *mod, uintptr_t at, size_t n,
                            uintptr_t bias, const uint8_t *code, size_t n_code,
                            const uint8_t *read)
{
    static uint8_t chunk[32768]; /* the map lock is held: one build at a time */
    struct cmn_hash_stream s = CMN_HASH_STREAM_INIT;
    cmn_hash_stream_add(&s, mod->loads, mod->n_loads * sizeof(mod->loads[0]));
    if (read != NULL)
        cmn_hash_stream_add(&s, read, n);
    for (size_t done = 0; read == NULL && done < n;) {
        size_t part = n - done < sizeof(chunk) ? n - done : sizeof(chunk);
        if (lp_objects_read_memory(chunk, at + done, part) != 0)
            return 0;
        cmn_hash_stream_add(&s, chunk, part);
        done += part;
    }
    uint64_t where = at - bias;
    cmn_hash_stream_add(&s, &where, sizeof(where));
    cmn_hash_stream_add(&s, code, n_code);
    return cmn_hash_stream_end(&s);
}

/* Memory for a table: mapped, so that it never shares pages with the program's heap; the
 * bound on all tables' memory holds. */
static void *map_table(void *ctx, uint64_t bytes)
{
    *(uint64_t *)ctx = bytes;
    if (table_bytes + bytes > LP_UW_MAX_BYTES)
        return NULL;
    void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    return mem == MAP_FAILED ? NULL : mem;
}

/* The table of b's rows, its memory into mod; NULL with *why when there is nothing or no
 * room. */
static const struct cmn_uw_table *make_table(struct module *mod, struct cmn_cfi_build *b,
                                             const char **why)
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
    mod->mem = t;
    mod->mem_bytes = bytes;
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
    uint8_t bid[PROF_BUILD_ID_MAX], code[CMN_CFI_CRT_INIT_MAX];
    struct cmn_cfi_section eh = {0};
    if (read_headers(mod, &o) == 0) {
        take_loads(mod, &o);
        uint64_t code_at = 0;
        size_t n_code = read_crt_code(&o, code, sizeof(code), &code_at);
        uintptr_t eh_at = 0;
        size_t eh_n = 0;
        int mapped = locate_mapped_eh_frame(&o, &eh_at, &eh_n) == 0;
        /* Only a table made from memory alone is cached: its input is all in the key. */
        struct lp_uwcache_key key = {bid, build_id_of(&o, bid, sizeof(bid)), 0};
        int cacheable = mapped && key.build_id_len > 0 && lp_uwcache_is_on();
        if (cacheable)
            key.fingerprint = fingerprint(mod, eh_at, eh_n, o.bias, code, n_code, NULL);
        mod->build_id_len = key.build_id_len;
        memcpy(mod->build_id, bid, key.build_id_len);
        mod->phdr_hash = cmn_hash_bytes(phdrs, o.phnum * sizeof(phdrs[0]));
        mod->table = cacheable && key.fingerprint != 0 ? cached_table(mod, &key) : NULL;
        if (mod->table == NULL) {
            mapped = mapped && read_mapped_eh_frame(&o, eh_at, eh_n, &eh) == 0;
            /* Stored under the fingerprint of the bytes the table is made of. */
            if (cacheable && mapped &&
                fingerprint(mod, eh_at, eh_n, o.bias, code, n_code, eh.data) != key.fingerprint)
                key.fingerprint = 0;
            if (mapped)
                cmn_cfi_add_section(&b, &eh);
            else
                add_file_section(&b, mod, ".eh_frame", 0);
            int from_file = !mapped || covered(&b) < text_bytes(&o) / 2;
            if (from_file) {
                add_file_section(&b, mod, ".debug_frame", 1);
                if (is_go_module(mod))
                    stop_go_stack_switches(&b, &o);
            }
            if (n_code > 0)
                cmn_cfi_add_crt_init(&b, code_at, code, n_code);
            mod->table = make_table(mod, &b, &why);
            if (mod->table != NULL && !from_file && cacheable && key.fingerprint != 0)
                lp_uwcache_store(&key, mod->table);
        }
    }
    free((void *)eh.data);
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
