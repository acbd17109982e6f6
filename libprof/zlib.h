/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Decompressing a module's compressed sections (SHF_COMPRESSED, zlib: Go's .debug_frame,
 * the only call-frame information a Go program has for its Go code) for the unwind-table
 * builder (libprof/uwtables.c). zlib is loaded with dlopen() the first time such a section
 * is met, never before: a program whose modules have none never sees it loaded. Not
 * async-signal-safe; the writer thread, with the map lock held.
 */
#ifndef PROF_LIBPROF_ZLIB_H
#define PROF_LIBPROF_ZLIB_H

#include <stddef.h>
#include <stdint.h>

/* common/elf_file.h's cmn_inflate_fn: 0 when the zlib stream in[0..n_in) holds exactly
 * n_out bytes, now in out; -1 otherwise, or when zlib cannot be loaded. */
int lp_zlib_inflate(const uint8_t *in, size_t n_in, uint8_t *out, size_t n_out);

#endif
