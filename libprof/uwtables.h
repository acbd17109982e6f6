/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The unwind tables of the process's modules (common/uw_table.h): which modules there
 * are, which have a table, and building one when a walk asks for it. A module is a file
 * (by device and inode: every mapping of it shares its table), or the vDSO. Tables are
 * built lazily, in the writer thread, from what the loader mapped: .eh_frame found
 * through the PT_GNU_EH_FRAME segment in memory (read with the fault-proof
 * process_vm_readv, so a module unloaded meanwhile costs an error, not a crash). Only a
 * module without .eh_frame in memory sends the builder to its file (.eh_frame,
 * .debug_frame, when it is still the file mapped): no descriptor is opened otherwise, so
 * the program never sees one of ours appear. A process that ends before its first sample
 * builds nothing.
 *
 * A table's memory is mapped once and unmapped only after its module is gone from the
 * maps and no handler can be reading it (two publishes of the code map later); all of them
 * together stay under LP_UW_MAX_BYTES. A table is kept across processes by the module's build-id
 * (libprof/uwcache.h): a module an earlier process built is mapped from the cache instead. A module whose table cannot be built (no call-frame information, a
 * section that cannot be read, the memory bound) is walked by frame pointer, and a note in
 * the profile says which and why.
 *
 * All functions run with libprof/unwind.c's map lock held (the caller's), on any thread
 * but a handler; building runs on the writer thread (lp_unwind_serve()).
 */
#ifndef PROF_LIBPROF_UWTABLES_H
#define PROF_LIBPROF_UWTABLES_H

#include <stddef.h>
#include <stdint.h>

#include "common/maps_line.h"

#define LP_UW_MAX_BYTES (64ull << 20) /* memory of all tables together */

struct smp_code_range;

/* Not async-signal-safe; map lock held. */
/* A read of /proc/self/maps: scan_begin(), then for each line header() (a read-only
 * mapping at offset 0: where a module's ELF header may be; nothing is registered for it,
 * so data files take no slot) or module() (an executable mapping), then scan_end(), which
 * frees the modules no mapping was seen of. */
void lp_uwtables_scan_begin(void);
void lp_uwtables_header(const struct cmn_maps_line *m);
/* The module of an executable mapping of a file (or of the vDSO), registered when new: its
 * id (1 .. SMP_MODULES_MAX - 1), or 0 for code that has no module (anonymous memory) or
 * when the registry is full. A file mapped again at another address whose build-id (or
 * program headers) changed is a new module. */
uint32_t lp_uwtables_module(const struct cmn_maps_line *m);
void lp_uwtables_scan_end(void);
/* After each publish of the code map: unmaps the tables of freed modules that no copy of
 * the map handlers may read holds any more. */
void lp_uwtables_published(void);
/* The modules registered now. */
unsigned lp_uwtables_n_modules(void);
/* Fills r's table, bias and module for the mapping r covers (file offset `offset`) of
 * module id. */
void lp_uwtables_annotate(struct smp_code_range *r, uint32_t id, uint64_t offset);
/* Builds the tables walks asked for (sampler/codemap.h). Returns how many modules
 * changed state (built or given up): the caller then publishes the code map again. */
unsigned lp_uwtables_build_wanted(void);
/* Asks for the table of every module that has none yet, as a walk would (then
 * lp_uwtables_build_wanted() builds them). */
void lp_uwtables_want_all(void);
/* smp_codemap_n_wanted as of the last lp_uwtables_build_wanted(): equal when every
 * request was served. */
uint32_t lp_uwtables_served(void);
/* Memory of the tables built, and how many there are. */
uint64_t lp_uwtables_bytes(void);
unsigned lp_uwtables_count(void);
/* In a fork child: the parent's requests that were being served are asked again. */
void lp_uwtables_fork_child(void);

#endif
