/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * One ELF file (executable, PIE or not, or shared library) opened with libbfd for
 * symbolization: its loadable sections, to turn a file offset into an address of the
 * file's own layout, its function symbols sorted by address, to name that address, and
 * (x86_64) its call frame information, to tell where a leaf's return address is.
 * The symbolizer (reporter/symbols/symbols.c) opens each file of a profile's mappings once and
 * asks it for every distinct address. A module owns its bfd and symbol storage; the names
 * it returns live until rep_module_close(). Reporter thread only: libbfd is not
 * thread-safe.
 */
#ifndef PROF_REPORTER_SYMBOLS_MODULE_H
#define PROF_REPORTER_SYMBOLS_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cmn_err;
struct rep_module;

/* One frame of source position: a function and where in it. */
struct rep_module_frame {
    const char *func; /* its raw (possibly mangled) name from DWARF, or NULL; lives in m */
    const char *file; /* the source file, or NULL; lives in m */
    unsigned line;    /* 1-based, 0 when unknown */
};

/* Finds the separate debug file of the module at path, whose build-id is id (n bytes),
 * elsewhere than on this machine (a debuginfod server). CMN_OK with *debug_path (malloc'd;
 * the module frees it), CMN_E_NOTFOUND, or CMN_E_NOMEM. */
typedef int (*rep_module_find_fn)(void *ctx, const char *path, const uint8_t *id, size_t n,
                                  char **debug_path /* out */);

struct rep_module_finder {
    rep_module_find_fn find; /* asked for a stripped file without a local debug file */
    void *ctx;               /* its first argument */
};

/* Not async-signal-safe. */
/* Opens the file at path and loads its symbols: the full symbol table, or for a stripped
 * file the one of its installed debug file (/usr/lib/debug/.build-id/xx/yyyy.debug), else
 * the dynamic one, plus the PLT entries libbfd synthesizes. The separate debug file is found
 * by build-id, then by .gnu_debuglink (with its CRC check), as gdb finds it. Returns CMN_OK and
 * *m (free it with rep_module_close), CMN_E_INPUT when the file cannot be opened or is not
 * an object file (message in err, naming path), or CMN_E_NOMEM. */
int rep_module_open(const char *path, struct rep_module **m /* out */, struct cmn_err *err);
/* The same, and for a stripped file (no symbol table) without a debug file here, finder
 * (which may be NULL) is asked for one; without any, the file's MiniDebugInfo (an
 * xz-compressed symbol table in its .gnu_debugdata section, as Fedora and Debian ship some
 * programs) adds its functions to the dynamic symbols. */
int rep_module_open_with(const char *path, const struct rep_module_finder *finder,
                         struct rep_module **m /* out */, struct cmn_err *err);
/* Closes m and frees every name it returned. Accepts NULL. */
void rep_module_close(struct rep_module *m);
/* The raw (possibly mangled) name of the function containing the byte at file offset off.
 * CMN_OK, or CMN_E_NOTFOUND when no loadable section or no function covers it. */
int rep_module_lookup(const struct rep_module *m, uint64_t off, const char **name /* out */);
/* The source position of the byte at file offset off, from the DWARF line and inline
 * information of the file or of its separate debug file: out[0] is the innermost function
 * (an inlined one when the code was inlined) with the file and line of that byte, then
 * each function it was inlined into with the line of the inlined call, out to the real
 * function. At most cap entries; *n gets their count. CMN_OK, or CMN_E_NOTFOUND when there
 * is no line information for it. The strings live until rep_module_close(). */
int rep_module_lines(struct rep_module *m, uint64_t off, struct rep_module_frame *out, size_t cap,
                     size_t *n /* out */);
/* Whether, at the instruction at file offset off, the function's return address is the
 * word at the stack pointer: its call frame information says the CFA is the stack
 * pointer + 8, so it has pushed nothing yet (at its entry, without a frame at all, or after
 * its epilogue). CMN_OK with *yes, or CMN_E_NOTFOUND when the file has no such information
 * for that address (or is not x86_64). */
int rep_module_ra_at_sp(struct rep_module *m, uint64_t off, bool *yes /* out */);
/* The file's GNU build-id note. CMN_OK with *id pointing into m, or CMN_E_NOTFOUND. */
int rep_module_build_id(const struct rep_module *m, const uint8_t **id /* out */,
                        size_t *n /* out */);
/* Whether m has DWARF for rep_module_lines, in the file or its separate debug file. */
bool rep_module_has_dwarf(const struct rep_module *m);
/* The number of function symbols loaded, for tests and diagnostics. */
size_t rep_module_n_functions(const struct rep_module *m);

#endif
