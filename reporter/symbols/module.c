/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * An object file opened with libbfd, reduced to two sorted arrays: its loadable sections
 * (file position, size, address), which turn a file offset into the file's own address
 * (the same arithmetic for PIE, non-PIE and shared objects, since mappings are recorded
 * with their file offsets), and its function symbols (address, size, name), one per
 * address. A lookup is two binary searches. The symbols are the full table, or, for a
 * stripped file, the one in its separate debug file when the distribution's -dbg package
 * installed it under /usr/lib/debug/.build-id/ (or a .gnu_debuglink names one, found as
 * gdb finds it, or the caller's finder fetches one from a debuginfod server), else the
 * dynamic table with the functions of the file's MiniDebugInfo when it has some
 * (reporter/symbols/minidebug.c); the PLT entries libbfd synthesizes are added.
 * Source lines and inlined functions come from the DWARF of the file or of that debug file
 * (rep_module_lines), read by libbfd on demand. On x86_64 the module compiles its
 * .eh_frame into an unwind table (common/uw_build.h) the first time it is asked where a
 * leaf's return address is (`prof symbolize`, for the candidate lines of old backtraces).
 * Created and used by the symbolizer in the reporter's thread; the bfds stay open for the
 * module's life because the symbol names live in their memory.
 *
 * Sizes: libbfd's public API has no symbol size, but its ELF back end keeps the ELF
 * symbol right after the asymbol (elf_symbol_type in elf-bfd.h, which binutils-dev does
 * not install: an asymbol, then Elf_Internal_Sym starting with st_value and st_size).
 * elf_sym_view mirrors that prefix. The sizes are trusted only when, for every symbol
 * read, the mirrored st_value equals the symbol's address and the mirrored ELF type agrees
 * with the flags libbfd derived from it (STT_FUNC with BSF_FUNCTION, STT_GNU_IFUNC with
 * BSF_GNU_INDIRECT_FUNCTION); otherwise the module does without them and a function
 * reaches up to the next symbol or the end of its section. With sizes, an address in a
 * gap between functions (a static function of a stripped library) stays unnamed instead
 * of being blamed on the function before it.
 */
#include "reporter/symbols/module.h"

#include <bfd.h>
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/build_id.h"
#include "common/check.h"
#include "common/err.h"
#include "common/ranges.h"
#include "common/uw_build.h"
#include "common/uw_table.h"
#include "reporter/symbols/minidebug.h"

#define MODULE_BUILD_ID_MAX 64u
#define MODULE_DEBUG_DIR "/usr/lib/debug/.build-id"
#define MODULE_GLOBAL_DEBUG_DIR "/usr/lib/debug"

struct elf_sym_view {
    asymbol symbol;
    bfd_vma st_value;
    bfd_vma st_size;
    unsigned long st_name;
    unsigned char st_info;
};

struct mod_section {
    uint64_t filepos; /* the section's offset in the file */
    uint64_t size;    /* its bytes */
    uint64_t vma;     /* its address in the file's layout */
};

struct mod_func {
    uint64_t vma;     /* first address */
    uint64_t size;    /* bytes, 0 when unknown */
    uint64_t sec_end; /* end of the section holding it: no function reaches past it */
    const char *name; /* in the bfd's or the synthetic block's memory */
    int rank;         /* binding and type: 4 global, 2 weak, + 1 function (see cmp_func) */
};

struct rep_module {
    bfd *abfd;
    struct cmn_uw_table *uw;  /* its .eh_frame compiled (x86_64), once asked; NULL: none */
    bool is_uw_tried;         /* uw was built, or could not be */
    bfd *debug_bfd;           /* the separate debug file, when its symbols are used */
    asymbol **debug_syms;     /* its static symbol table, or NULL */
    bfd *mini_bfd;            /* the MiniDebugInfo, when there is no debug file */
    asymbol **mini_syms;      /* its symbol table, or NULL */
    asymbol **syms;           /* static symbol table, or NULL */
    asymbol **dynsyms;        /* dynamic symbol table, or NULL */
    asymbol *synth;           /* synthetic symbols (PLT entries), one malloc'd block */
    struct mod_section *secs; /* loadable sections with contents, by filepos */
    size_t n_secs;
    struct mod_func *funcs; /* function symbols by vma, one per vma */
    size_t n_funcs;
    uint8_t build_id[MODULE_BUILD_ID_MAX];
    size_t build_id_len; /* 0 when the file has no build-id note */
};

static void silent_bfd_error(const char *fmt, va_list ap)
{
    /* libbfd reports oddities of the files it reads on stderr by default; the reporter
     * reports a module it cannot use once, itself, from the status it gets back. */
    (void)fmt;
    (void)ap;
}

static int init_bfd_once(struct cmn_err *err)
{
    static bool is_done;
    if (is_done)
        return CMN_OK;
    if (bfd_init() != BFD_INIT_MAGIC)
        return cmn_err_set(err, CMN_E_INPUT, "libbfd does not match prof's bfd.h");
    bfd_set_error_handler(silent_bfd_error);
    is_done = true;
    return CMN_OK;
}

static int cmp_section(const void *va, const void *vb)
{
    const struct mod_section *a = va, *b = vb;
    return a->filepos < b->filepos ? -1 : a->filepos > b->filepos;
}

static int load_sections(struct rep_module *m)
{
    size_t n = 0;
    for (asection *s = m->abfd->sections; s != NULL; s = s->next)
        n++;
    m->secs = calloc(n ? n : 1, sizeof(*m->secs));
    if (m->secs == NULL)
        return CMN_E_NOMEM;
    for (asection *s = m->abfd->sections; s != NULL; s = s->next) {
        flagword f = bfd_section_flags(s);
        if ((f & SEC_LOAD) == 0 || (f & SEC_HAS_CONTENTS) == 0 || bfd_section_size(s) == 0)
            continue;
        m->secs[m->n_secs++] = (struct mod_section){.filepos = (uint64_t)s->filepos,
                                                    .size = bfd_section_size(s),
                                                    .vma = bfd_section_vma(s)};
    }
    qsort(m->secs, m->n_secs, sizeof(*m->secs), cmp_section);
    return CMN_OK;
}

/* Reads one symbol table; the count, 0 when the file has none or bfd cannot read it. */
static long load_table(bfd *abfd, bool is_dynamic, asymbol ***out)
{
    long ub =
        is_dynamic ? bfd_get_dynamic_symtab_upper_bound(abfd) : bfd_get_symtab_upper_bound(abfd);
    *out = NULL;
    if (ub <= 0)
        return 0;
    asymbol **t = malloc((size_t)ub);
    if (t == NULL)
        return -1;
    long n =
        is_dynamic ? bfd_canonicalize_dynamic_symtab(abfd, t) : bfd_canonicalize_symtab(abfd, t);
    if (n <= 0) {
        free(t);
        return 0;
    }
    *out = t;
    return n;
}

static bool is_function(const asymbol *sym)
{
    flagword f = sym->flags;
    if (f & (BSF_SECTION_SYM | BSF_FILE | BSF_DEBUGGING | BSF_WARNING | BSF_INDIRECT))
        return false;
    const asection *sec = sym->section;
    if (sec == NULL || bfd_is_und_section(sec) || bfd_is_abs_section(sec) ||
        bfd_is_com_section(sec))
        return false;
    if ((f & (BSF_FUNCTION | BSF_GNU_INDIRECT_FUNCTION)) == 0 &&
        (bfd_section_flags(sec) & SEC_CODE) == 0)
        return false;
    const char *name = sym->name;
    /* Assembler-local labels and the ARM/AArch64 mapping symbols ($x, $d) name no
     * function. */
    return name != NULL && name[0] != '\0' && name[0] != '$' && strncmp(name, ".L", 2) != 0;
}

/* The ELF size of sym, or 0; clears *trust when the mirrored fields disagree with what
 * libbfd says about the symbol (see the file comment). */
static uint64_t elf_size(const bfd *abfd, const asymbol *sym, bool *trust)
{
    if (bfd_get_flavour(abfd) != bfd_target_elf_flavour || (sym->flags & BSF_SYNTHETIC))
        return 0;
    const struct elf_sym_view *v = (const struct elf_sym_view *)sym;
    unsigned type = ELF64_ST_TYPE(v->st_info);
    bool is_func = (sym->flags & BSF_FUNCTION) != 0;
    bool is_ifunc = (sym->flags & BSF_GNU_INDIRECT_FUNCTION) != 0;
    if (v->st_value != bfd_asymbol_value(sym) || (type == STT_FUNC) != is_func ||
        (type == STT_GNU_IFUNC) != is_ifunc)
        *trust = false;
    return v->st_size;
}

static int rank_of(const asymbol *sym)
{
    int r = 0;
    if (sym->flags & BSF_GLOBAL)
        r += 4;
    else if (sym->flags & BSF_WEAK)
        r += 2;
    if (sym->flags & (BSF_FUNCTION | BSF_GNU_INDIRECT_FUNCTION))
        r += 1;
    return r;
}

static size_t leading_underscores(const char *s)
{
    size_t n = 0;
    while (s[n] == '_')
        n++;
    return n;
}

/* By address; at one address the name to show first: a function over a label, fewer
 * leading underscores (glibc's weak getpid over its global __getpid: the name the program
 * called), a stronger binding, then bytewise, so that the choice is stable. */
static int cmp_func(const void *va, const void *vb)
{
    const struct mod_func *a = va, *b = vb;
    if (a->vma != b->vma)
        return a->vma < b->vma ? -1 : 1;
    if ((a->rank & 1) != (b->rank & 1))
        return (b->rank & 1) - (a->rank & 1);
    size_t ua = leading_underscores(a->name), ub = leading_underscores(b->name);
    if (ua != ub)
        return ua < ub ? -1 : 1;
    if (a->rank != b->rank)
        return b->rank - a->rank;
    return strcmp(a->name, b->name);
}

static void add_funcs(struct rep_module *m, bfd *abfd, asymbol **syms, long n, bool *trust)
{
    for (long i = 0; i < n; i++) {
        const asymbol *sym = syms[i];
        if (!is_function(sym))
            continue;
        const asection *sec = sym->section;
        m->funcs[m->n_funcs++] = (struct mod_func){
            .vma = bfd_asymbol_value(sym),
            .size = elf_size(abfd, sym, trust),
            .sec_end = bfd_section_vma(sec) + bfd_section_size(sec),
            .name = sym->name,
            .rank = rank_of(sym),
        };
    }
}

/* Sorts the functions and keeps one per address, the best-ranked name with the largest
 * size seen there. Drops every size when they cannot be trusted. */
static void sort_funcs(struct rep_module *m, bool trust)
{
    qsort(m->funcs, m->n_funcs, sizeof(*m->funcs), cmp_func);
    size_t kept = 0;
    for (size_t i = 0; i < m->n_funcs; i++) {
        struct mod_func f = m->funcs[i];
        if (!trust)
            f.size = 0;
        if (kept > 0 && m->funcs[kept - 1].vma == f.vma) {
            if (f.size > m->funcs[kept - 1].size)
                m->funcs[kept - 1].size = f.size;
            continue;
        }
        m->funcs[kept++] = f;
    }
    m->n_funcs = kept;
}

/* The NT_GNU_BUILD_ID note among the notes of section s (common/build_id.h). */
static void load_build_id_from(struct rep_module *m, asection *s)
{
    if (bfd_section_size(s) < 16 || bfd_section_size(s) > 4096)
        return;
    size_t size = bfd_section_size(s);
    unsigned char *buf = malloc(size);
    if (buf != NULL && bfd_get_section_contents(m->abfd, s, buf, 0, size))
        m->build_id_len = cmn_build_id_note(buf, size, m->build_id, sizeof(m->build_id));
    free(buf);
}

/* The note is in .note.gnu.build-id, or among other notes in a section named otherwise
 * (the kernel's vDSO has one ".note"). */
static void load_build_id(struct rep_module *m)
{
    asection *s = bfd_get_section_by_name(m->abfd, ".note.gnu.build-id");
    if (s != NULL)
        load_build_id_from(m, s);
    for (s = m->abfd->sections; s != NULL && m->build_id_len == 0; s = s->next)
        if (strncmp(bfd_section_name(s), ".note", 5) == 0)
            load_build_id_from(m, s);
}

/* Opens path as the separate debug file of m; true when it is an object file. */
static bool open_debug_file(struct rep_module *m, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return false;
    m->debug_bfd = bfd_openr(path, NULL);
    if (m->debug_bfd == NULL)
        return false;
    /* Distributions compress the DWARF sections of debug files (SHF_COMPRESSED); libbfd
     * reads them only when asked to. */
    m->debug_bfd->flags |= BFD_DECOMPRESS;
    if (!bfd_check_format(m->debug_bfd, bfd_object)) {
        bfd_close(m->debug_bfd);
        m->debug_bfd = NULL;
        return false;
    }
    return true;
}

/* Finds the separate debug file of m the way gdb does: first by build-id
 * (/usr/lib/debug/.build-id/ab/cdef...89.debug), then by the .gnu_debuglink section, whose
 * name is looked for next to the file, in its .debug/ directory and under
 * /usr/lib/debug/<its directory>, and accepted only when its CRC-32 matches the one the
 * link carries (libbfd's bfd_follow_gnu_debuglink does the search and the check). Its
 * addresses are the stripped file's. Opens it as m->debug_bfd when found. */
static void find_debug_file(struct rep_module *m)
{
    if (m->build_id_len >= 2) {
        char path[sizeof(MODULE_DEBUG_DIR) + 2 * MODULE_BUILD_ID_MAX + 16];
        size_t n =
            (size_t)snprintf(path, sizeof(path), "%s/%02x/", MODULE_DEBUG_DIR, m->build_id[0]);
        for (size_t i = 1; i < m->build_id_len; i++)
            n += (size_t)snprintf(path + n, sizeof(path) - n, "%02x", m->build_id[i]);
        snprintf(path + n, sizeof(path) - n, ".debug");
        if (open_debug_file(m, path))
            return;
    }
    if (bfd_get_section_by_name(m->abfd, ".gnu_debuglink") == NULL)
        return;
    char *link = bfd_follow_gnu_debuglink(m->abfd, MODULE_GLOBAL_DEBUG_DIR);
    if (link != NULL)
        open_debug_file(m, link);
    free(link);
}

/* Reads the full symbol table of the separate debug file, when there is one. Returns the
 * count, 0 when there is no usable debug file, -1 when out of memory. */
static long load_debug_table(struct rep_module *m)
{
    if (m->debug_bfd == NULL)
        return 0;
    return load_table(m->debug_bfd, false, &m->debug_syms);
}

static int load_symbols(struct rep_module *m)
{
    long n_static = load_table(m->abfd, false, &m->syms);
    long n_dyn = load_table(m->abfd, true, &m->dynsyms);
    if (n_static < 0 || n_dyn < 0)
        return CMN_E_NOMEM;
    long n_synth =
        bfd_get_synthetic_symtab(m->abfd, n_static, m->syms, n_dyn, m->dynsyms, &m->synth);
    if (n_synth < 0) {
        n_synth = 0;
        m->synth = NULL;
    }
    /* The static table, when there is one, holds the dynamic symbols too; a stripped file
     * has only the dynamic one, unless its debug file is installed. */
    bfd *table_bfd = m->abfd;
    asymbol **table = n_static > 0 ? m->syms : m->dynsyms;
    long n_table = n_static > 0 ? n_static : n_dyn;
    long n_mini = 0;
    if (n_static == 0) {
        long n_debug = load_debug_table(m);
        if (n_debug < 0)
            return CMN_E_NOMEM;
        if (n_debug > 0) {
            table_bfd = m->debug_bfd;
            table = m->debug_syms;
            n_table = n_debug;
        } else if (m->mini_bfd != NULL) {
            /* MiniDebugInfo holds the functions the dynamic table lacks: both are needed. */
            n_mini = load_table(m->mini_bfd, false, &m->mini_syms);
            if (n_mini < 0)
                return CMN_E_NOMEM;
        }
    }
    m->funcs = calloc((size_t)(n_table + n_mini + n_synth) + 1, sizeof(*m->funcs));
    if (m->funcs == NULL)
        return CMN_E_NOMEM;
    bool trust = true;
    add_funcs(m, table_bfd, table, n_table, &trust);
    add_funcs(m, m->mini_bfd, m->mini_syms, n_mini, &trust);
    for (long i = 0; i < n_synth; i++) {
        asymbol *sym = &m->synth[i];
        add_funcs(m, m->abfd, &sym, 1, &trust);
    }
    sort_funcs(m, trust);
    return CMN_OK;
}

/* For a stripped file without a local debug file: one from the finder, else the
 * MiniDebugInfo. */
static int find_elsewhere(struct rep_module *m, const char *path,
                          const struct rep_module_finder *finder)
{
    if (m->debug_bfd != NULL || bfd_get_symtab_upper_bound(m->abfd) > (long)sizeof(asymbol *))
        return CMN_OK;
    if (finder != NULL && m->build_id_len > 0) {
        char *debug_path = NULL;
        int rc = finder->find(finder->ctx, path, m->build_id, m->build_id_len, &debug_path);
        if (rc == CMN_E_NOMEM)
            return rc;
        if (rc == CMN_OK)
            open_debug_file(m, debug_path);
        free(debug_path);
    }
    if (m->debug_bfd == NULL)
        return rep_minidebug_open(m->abfd, &m->mini_bfd);
    return CMN_OK;
}

int rep_module_open(const char *path, struct rep_module **out, struct cmn_err *err)
{
    return rep_module_open_with(path, NULL, out, err);
}

int rep_module_open_with(const char *path, const struct rep_module_finder *finder,
                         struct rep_module **out, struct cmn_err *err)
{
    *out = NULL;
    int rc = init_bfd_once(err);
    if (rc != CMN_OK)
        return rc;
    /* bfd_openr would block on a FIFO and read forever from a device. */
    struct stat st;
    if (stat(path, &st) != 0)
        return cmn_err_set(err, CMN_E_INPUT, "%s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return cmn_err_set(err, CMN_E_INPUT, "%s: not a regular file", path);
    struct rep_module *m = calloc(1, sizeof(*m));
    if (m == NULL)
        return cmn_err_nomem(err);
    m->abfd = bfd_openr(path, NULL);
    if (m->abfd == NULL) {
        rc = cmn_err_set(err, CMN_E_INPUT, "%s: %s", path, bfd_errmsg(bfd_get_error()));
        goto fail;
    }
    m->abfd->flags |= BFD_DECOMPRESS;
    if (!bfd_check_format(m->abfd, bfd_object)) {
        rc = cmn_err_set(err, CMN_E_INPUT, "%s: not an object file (%s)", path,
                         bfd_errmsg(bfd_get_error()));
        goto fail;
    }
    load_build_id(m);
    /* The debug file serves the symbols of a stripped file and the line tables of any
     * file without its own DWARF. */
    if (bfd_get_section_by_name(m->abfd, ".debug_info") == NULL) {
        find_debug_file(m);
        if (find_elsewhere(m, path, finder) != CMN_OK) {
            rc = cmn_err_nomem(err);
            goto fail;
        }
    }
    if (load_sections(m) != CMN_OK || load_symbols(m) != CMN_OK) {
        rc = cmn_err_nomem(err);
        goto fail;
    }
    *out = m;
    return CMN_OK;
fail:
    rep_module_close(m);
    return rc;
}

void rep_module_close(struct rep_module *m)
{
    if (m == NULL)
        return;
    int saved_errno = errno;
    if (m->abfd != NULL)
        bfd_close(m->abfd);
    if (m->debug_bfd != NULL)
        bfd_close(m->debug_bfd);
    if (m->mini_bfd != NULL)
        bfd_close(m->mini_bfd);
    free(m->debug_syms);
    free(m->mini_syms);
    free(m->uw);
    free(m->syms);
    free(m->dynsyms);
    free(m->synth);
    free(m->secs);
    free(m->funcs);
    free(m);
    errno = saved_errno;
}

/* The section holding file offset off, or NULL. */
static const struct mod_section *section_at(const struct rep_module *m, uint64_t off)
{
    /* The answer is below lo: the last filepos <= off. */
    size_t lo = CMN_RANGE_UPPER(m->secs, m->n_secs, filepos, off);
    if (lo == 0 || off - m->secs[lo - 1].filepos >= m->secs[lo - 1].size)
        return NULL;
    assert(m->secs[lo - 1].filepos <= off && (lo == m->n_secs || m->secs[lo].filepos > off));
    return &m->secs[lo - 1];
}

/* The index of the last function starting at or below vma, or n_funcs when none does. */
static size_t func_index_at(const struct rep_module *m, uint64_t vma)
{
    size_t lo = CMN_RANGE_UPPER(m->funcs, m->n_funcs, vma, vma);
    assert(lo == 0 || m->funcs[lo - 1].vma <= vma);
    assert(lo == m->n_funcs || m->funcs[lo].vma > vma);
    return lo == 0 ? m->n_funcs : lo - 1;
}

int rep_module_lookup(const struct rep_module *m, uint64_t off, const char **name /* out */)
{
    const struct mod_section *sec = section_at(m, off);
    if (sec == NULL)
        return CMN_E_NOTFOUND;
    uint64_t vma = sec->vma + (off - sec->filepos);
    size_t fi = func_index_at(m, vma);
    if (fi == m->n_funcs)
        return CMN_E_NOTFOUND;
    const struct mod_func *f = &m->funcs[fi];
    bool covers;
    if (f->size != 0)
        covers = vma - f->vma < f->size;
    else
        covers = vma < f->sec_end && (fi + 1 == m->n_funcs || vma < m->funcs[fi + 1].vma);
    if (!covers)
        return CMN_E_NOTFOUND;
    *name = f->name;
    return CMN_OK;
}

static void *alloc_table(void *ctx, uint64_t bytes)
{
    (void)ctx;
    return bytes <= SIZE_MAX ? malloc((size_t)bytes) : NULL;
}

/* Compiles .eh_frame into m->uw, on x86_64 only: there the return address of a function
 * that has pushed nothing is the word at the stack pointer (see rep_module_ra_at_sp). A
 * file without it just answers "unknown". */
static void load_unwind_table(struct rep_module *m)
{
    m->is_uw_tried = true;
    asection *s = bfd_get_section_by_name(m->abfd, ".eh_frame");
    if (bfd_get_arch(m->abfd) != bfd_arch_i386 || bfd_get_arch_size(m->abfd) != 64 || s == NULL ||
        (bfd_section_flags(s) & SEC_HAS_CONTENTS) == 0 || bfd_section_size(s) == 0)
        return;
    size_t size = bfd_section_size(s);
    uint8_t *data = malloc(size);
    if (data == NULL)
        return;
    if (bfd_get_section_contents(m->abfd, s, data, 0, size)) {
        struct cmn_cfi_build b = {.regs = {7, 6, 16, 1}}; /* x86_64's DWARF rsp, rbp, rip */
        struct cmn_cfi_section sec = {data, size, bfd_section_vma(s), 0, false};
        cmn_cfi_add_section(&b, &sec);
        m->uw = cmn_cfi_table(&b, alloc_table, NULL);
        cmn_cfi_build_free(&b);
    }
    free(data);
}

int rep_module_ra_at_sp(struct rep_module *m, uint64_t off, bool *yes /* out */)
{
    const struct mod_section *sec = section_at(m, off);
    if (!m->is_uw_tried)
        load_unwind_table(m);
    uint32_t rule = sec != NULL && m->uw != NULL
                        ? cmn_uw_lookup(m->uw, sec->vma + (off - sec->filepos))
                        : 0;
    unsigned kind = cmn_uw_kind(rule);
    if (kind == CMN_UW_NONE || kind == CMN_UW_STOP)
        return CMN_E_NOTFOUND;
    /* CFA = rsp + 8, the return address right below it: nothing pushed yet. */
    *yes = kind == CMN_UW_CFA_SP && cmn_uw_off(rule) == 8 && cmn_uw_ra(rule) == 1;
    return CMN_OK;
}

/* The section of abfd, loaded or not (a debug file's .text has no contents), whose
 * addresses hold vma, or NULL. */
static asection *section_of_vma(bfd *abfd, uint64_t vma)
{
    for (asection *s = abfd->sections; s != NULL; s = s->next) {
        if ((bfd_section_flags(s) & SEC_ALLOC) != 0 && vma >= bfd_section_vma(s) &&
            vma - bfd_section_vma(s) < bfd_section_size(s))
            return s;
    }
    return NULL;
}

int rep_module_lines(struct rep_module *m, uint64_t off, struct rep_module_frame *out, size_t cap,
                     size_t *n /* out */)
{
    *n = 0;
    const struct mod_section *sec = section_at(m, off);
    if (sec == NULL || cap == 0)
        return CMN_E_NOTFOUND;
    uint64_t vma = sec->vma + (off - sec->filepos);
    /* The file's own DWARF when it has some, else its debug file's. */
    bfd *abfd = m->abfd;
    asymbol **syms = m->syms;
    if (bfd_get_section_by_name(abfd, ".debug_info") == NULL) {
        abfd = m->debug_bfd;
        syms = m->debug_syms;
    }
    asection *s = abfd != NULL ? section_of_vma(abfd, vma) : NULL;
    const char *file = NULL, *func = NULL;
    unsigned line = 0;
    if (s == NULL ||
        !bfd_find_nearest_line(abfd, s, syms, vma - bfd_section_vma(s), &file, &func, &line))
        return CMN_E_NOTFOUND;
    out[(*n)++] = (struct rep_module_frame){.func = func, .file = file, .line = line};
    while (*n < cap && bfd_find_inliner_info(abfd, &file, &func, &line))
        out[(*n)++] = (struct rep_module_frame){.func = func, .file = file, .line = line};
    return CMN_OK;
}

int rep_module_build_id(const struct rep_module *m, const uint8_t **id /* out */,
                        size_t *n /* out */)
{
    if (m->build_id_len == 0)
        return CMN_E_NOTFOUND;
    *id = m->build_id;
    *n = m->build_id_len;
    return CMN_OK;
}

bool rep_module_has_dwarf(const struct rep_module *m)
{
    return bfd_get_section_by_name(m->abfd, ".debug_info") != NULL ||
           (m->debug_bfd != NULL && bfd_get_section_by_name(m->debug_bfd, ".debug_info") != NULL);
}

size_t rep_module_n_functions(const struct rep_module *m)
{
    return m->n_funcs;
}
