/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * MiniDebugInfo (gdb's name for it): an ELF file holding a symbol table, compressed with
 * xz into the .gnu_debugdata section of a stripped program or library, as Fedora ships
 * its programs and Debian some of its own. It names the functions that the dynamic symbol
 * table leaves out (static functions, those of an executable), without DWARF. The module
 * (reporter/symbols/module.c) opens it when a stripped file has no separate debug file;
 * the bfd it gets lives in memory (a memfd), owned by the module. Reporter thread only.
 */
#ifndef PROF_REPORTER_SYMBOLS_MINIDEBUG_H
#define PROF_REPORTER_SYMBOLS_MINIDEBUG_H

#include <bfd.h>

/* Inflated MiniDebugInfo larger than this is not read. */
#define REP_MINIDEBUG_MAX_BYTES (256u << 20)

/* Not async-signal-safe. */
/* Opens the MiniDebugInfo of abfd: CMN_OK with *mini (close it with bfd_close) or NULL
 * when abfd has none or it cannot be read (not xz, not an object file, too large), or
 * CMN_E_NOMEM. */
int rep_minidebug_open(bfd *abfd, bfd **mini /* out */);

#endif
