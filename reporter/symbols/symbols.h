/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The symbolizer: names the frames of a profile's samples. For a frame address it finds
 * the mapping holding it (when mappings overlap because a library was unloaded and
 * another loaded in its place, the one seen last before the sample), turns it into a file
 * offset, and asks that file's module (reporter/symbols/module.c) for the function. Callers'
 * frames are return addresses, so they are looked up one byte earlier, inside the call
 * instruction. An address it cannot name still gets a name, never dropped:
 * "libfoo.so+0x1a2b" (the file offset, in hex) inside a mapped file, "[vdso]+0x1a2b" in a
 * vDSO that is not the reporter's own (the reporter's own vDSO names its functions when
 * the build-ids match), "[anon]" for every address in anonymous memory (JIT code: one
 * frame, so that it sums up instead of scattering), "0x7f12..." outside any mapping; but
 * code in anonymous memory or outside every mapping is first looked up in the perf map
 * that its process's JIT compiler wrote (/tmp/perf-PID.map, reporter/symbols/perfmap.h). A
 * frame address stands for the chain of functions inlined at it, innermost first, each a
 * frame of its own marked " [inlined]", then the function holding them (from the DWARF
 * inline information of the file or its debug file), unless is_no_inline folds them into
 * that function; with is_lines each gets its file and line.
 *
 * It also tells, from the module's call frame information, whether a leaf had pushed
 * nothing yet, so that the word at its stack pointer is its caller's return address.
 *
 * Each distinct (address, mapping, leaf or caller) is resolved once per profile and cached
 * as a names id; each module file is opened once for the symbolizer's life and shared by
 * every profile it is given. A stripped file without a debug file here gets one from a
 * debuginfod server (reporter/symbols/debuginfod.h) or its MiniDebugInfo. What a module's
 * DWARF says about an address is also kept
 * across runs, by build-id (reporter/symbols/linecache.h), and written back by
 * rep_sym_fini(). A file that cannot be read, or whose build-id differs from
 * the one recorded, produces one warning, which main() prints. Reporter thread only.
 */
#ifndef PROF_REPORTER_SYMBOLS_SYMBOLS_H
#define PROF_REPORTER_SYMBOLS_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/hashtab.h"
#include "reporter/symbols/debuginfod.h"

struct rep_map;
struct rep_names;
struct rep_profile;
struct rep_sample;
struct rep_sym_module;
struct rep_sym_perfmap;
struct rep_sym_cached;

struct rep_sym {
    struct rep_names *names; /* where names are interned; not owned */
    bool is_offline;         /* set by the caller: open no file, name every frame by
                              * module+0xoffset (the fuzz target, `report --no-symbols`) */

    struct rep_sym_module *modules; /* one per distinct path, for the symbolizer's life */
    size_t n_modules;
    size_t cap_modules;

    const struct rep_profile *prof; /* the profile whose frames are named; not owned */
    uint64_t *max_end;              /* per mapping i of prof: the greatest end of 0..i */
    int32_t *map_module;            /* per mapping: index in modules, -1 none, -2 unknown yet */

    struct rep_sym_cached *cache; /* what each (address, mapping, is_caller) resolved to
                                   * in this profile, in order of resolution */
    size_t n_cached;
    size_t cap_cache;
    struct cmn_hashtab cache_table; /* the cache by (address, mapping, is_caller)
                                     * (common/hashtab.h) */

    char **warnings; /* one line each, without "prof: warning: "; owned */
    size_t n_warnings;
    size_t cap_warnings;

    bool is_lines;      /* set by the caller before the first frame: name frames
                         * "func (file.c:123)" (`report --lines`) */
    bool is_no_inline;  /* set by the caller before the first frame: no frames of their
                         * own for inlined functions (`report --no-inline`) */
    uint32_t *chains;   /* unless is_no_inline without is_lines: per resolved address, a
                         * count then that many ids, innermost first; the address cache
                         * holds offsets here */
    size_t n_chains;    /* entries in use */
    size_t cap_chains;  /* entries allocated */
    uint32_t single_id; /* what rep_sym_frames points to without chains */

    struct rep_sym_dbgd dbgd; /* debug files from debuginfod servers; the caller may set
                               * dbgd.budget_s before the first frame */
    const char *perf_map_dir; /* set by the caller: where perf-PID.map files are, NULL for
                               * /tmp (`report --perf-map-dir`); not owned */
    struct rep_sym_perfmap *perfmaps; /* the perf maps loaded, one per pid; owned */
    size_t n_perfmaps;
    size_t cap_perfmaps;
    long perfmap_index; /* the current profile's in perfmaps, -1 not looked up yet */
    bool is_cache_dir_read; /* cache_dir was taken from the environment */
    char *cache_dir;        /* where line caches live (reporter/symbols/linecache.h), or
                             * NULL for none; owned */
};

/* Not async-signal-safe. */
/* Makes s a symbolizer interning into names (which must outlive s). Returns CMN_OK. */
int rep_sym_init(struct rep_sym *s, struct rep_names *names);
/* Closes every module (writing its line cache back) and frees what s owns. Accepts NULL. */
void rep_sym_fini(struct rep_sym *s);
/* Switches s to profile p (which must stay alive while its frames are named) and drops
 * the address cache of the previous one. CMN_OK or CMN_E_NOMEM. */
int rep_sym_use_profile(struct rep_sym *s, const struct rep_profile *p);
/* The name id of frame address addr of a sample taken at time_ns (the innermost of its
 * frames, see rep_sym_frames); is_caller for every frame but the leaf. CMN_OK or
 * CMN_E_NOMEM. May open a module and add a warning. */
int rep_sym_frame(struct rep_sym *s, uint64_t addr, bool is_caller, uint64_t time_ns,
                  uint32_t *id /* out */);

/* The frames that address addr stands for, innermost first, in *ids (valid until the
 * next call): the functions inlined at addr and the function holding them, or one name id
 * with is_no_inline. CMN_OK or CMN_E_NOMEM. */
int rep_sym_frames(struct rep_sym *s, uint64_t addr, bool is_caller, uint64_t time_ns,
                   const uint32_t **ids /* out */, size_t *n /* out */);
/* The mapping of the current profile that holds frame address addr of a sample taken at
 * time_ns, or NULL. */
const struct rep_map *rep_sym_map_at(const struct rep_sym *s, uint64_t addr, bool is_caller,
                                     uint64_t time_ns);

/* Prints the warnings sym gathered since *n_printed (updated) on stderr, one line each,
 * the build-ids that debuginfod could not name since the last call among them (one line). */
void rep_sym_warn(struct rep_sym *sym, size_t *n_printed);

#endif
