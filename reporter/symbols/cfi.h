/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Call frame information: the .eh_frame section every x86_64 object carries (gcc and
 * clang emit it by default, for C too), read far enough to answer one question: at a given
 * instruction, how is the canonical frame address (CFA, the stack pointer before the call)
 * computed? When the answer is "stack pointer + 8", the function has pushed nothing yet (it
 * is at its entry, frameless, or past its epilogue), so the word at the stack pointer is
 * its return address, which a frame-pointer walk skips. The symbolizer asks this for a
 * sample's leaf to decide whether the sample's sp_word is the leaf's caller.
 *
 * The index (one entry per FDE, sorted by address) is built once per module; the bytes stay
 * owned by the caller (reporter/symbols/module.c) and must outlive the index. Every read is
 * bounds-checked: a malformed section yields "unknown", never a read outside it.
 * Reporter thread only.
 */
#ifndef PROF_REPORTER_SYMBOLS_CFI_H
#define PROF_REPORTER_SYMBOLS_CFI_H

#include <stddef.h>
#include <stdint.h>

struct rep_cfi_fde;

struct rep_cfi {
    const uint8_t *data;      /* the .eh_frame bytes; not owned */
    size_t n_bytes;           /* their count */
    uint64_t vma;             /* the section's address, the base of pc-relative pointers */
    struct rep_cfi_fde *fdes; /* by start address; owned */
    size_t n_fdes;
};

/* DWARF register numbers of x86_64 that the rules below mention. */
#define REP_CFI_X86_64_RSP 7u

/* Not async-signal-safe. */
/* Indexes the n bytes of an .eh_frame section loaded at vma. CMN_OK (a section it cannot
 * make sense of gives an empty index) or CMN_E_NOMEM. */
int rep_cfi_init(struct rep_cfi *c, const uint8_t *data, size_t n, uint64_t vma);
/* Frees the index. Accepts NULL. */
void rep_cfi_fini(struct rep_cfi *c);
/* The CFA rule at address pc: CMN_OK with CFA = register *reg + *offset, or CMN_E_NOTFOUND
 * when no FDE covers pc or the rule is not of that form (an expression, an unknown
 * instruction, malformed data). */
int rep_cfi_cfa_at(const struct rep_cfi *c, uint64_t pc, unsigned *reg /* out */,
                   int64_t *offset /* out */);

#endif
