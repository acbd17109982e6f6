/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Reading a profile file (include/libprof/prof_format.h) into a struct rep_profile. Called by
 * main() once per input file and by the fuzz target on memory buffers; reporter thread
 * only.
 *
 * What counts as what:
 *   - missing, unreadable, empty, bad magic, unknown version, bad header: an error;
 *   - a record whose header or fixed part is inconsistent (size not a multiple of 8,
 *     smaller than 8 or than its fixed part, above PROF_REC_MAX_BYTES, frames or counters
 *     that do not fit, a string without its NUL): an error naming the byte offset;
 *   - a record that runs past the end of the file: the file was cut short; what came
 *     before is kept and p->is_torn is set (so are trailing bytes that are all zero, as a
 *     crash can leave a file-system block);
 *   - a record type this reader does not know: skipped and counted.
 * Whether a clean end was seen is p->has_end; main() turns these flags into warnings.
 */
#ifndef PROF_REPORTER_INPUT_READ_H
#define PROF_REPORTER_INPUT_READ_H

#include <stdbool.h>
#include <stddef.h>

struct cmn_err;
struct rep_profile;

/* Not async-signal-safe. */
/* Reads the file at path into p, which this initializes (named path). Returns CMN_OK, or
 * CMN_E_INPUT / CMN_E_NOMEM with the message in err and p empty. The caller frees p with
 * rep_profile_fini() either way. */
int rep_read_file(const char *path, struct rep_profile *p /* out */, struct cmn_err *err);
/* Samples a stream keeps in memory at once. */
#define REP_READ_BATCH 65536u

/* A stream's callback: CMN_OK to go on, or a status that stops the reading and is returned. */
typedef int rep_read_fn(struct rep_profile *p, void *ctx);

/* Reads the file at path into p like rep_read_file, but in bounded memory: the file is
 * mapped, not copied, and walked twice. The first walk reads every record but keeps no
 * sample (it checks them and counts them in p->n_samples_read and p->n_stopped); then
 * ready(p, ctx) runs, with the mappings, threads, stats and flags complete and p->samples
 * empty. The second walk hands the samples, in file order, to batch(p, ctx) about
 * REP_READ_BATCH at a time in p->samples (a PROF_REC_SAMPLES record is never split, so a
 * batch may exceed it by one record's entries), whose frames are valid only during that
 * call.
 * Memory stays about the size of the non-sample records plus one batch, and the pages of
 * the file already walked are given back. A file that cannot be mapped (a pipe) is read
 * whole and given as one batch. Returns what rep_read_file returns, or the first status
 * other than CMN_OK that a callback returned; the caller frees p with rep_profile_fini()
 * either way. */
int rep_read_file_stream(const char *path, struct rep_profile *p /* out */, rep_read_fn *ready,
                         rep_read_fn *batch, void *ctx, struct cmn_err *err);
/* The same over n bytes at buf, which are copied; name is used in messages and kept. */
int rep_read_buffer(const void *buf, size_t n, const char *name, struct rep_profile *p /* out */,
                    struct cmn_err *err);

/* Whether the file at path holds nothing of a profile but, maybe, the start of its header:
 * its process was killed as it started (a profile is created, then its header written). */
bool rep_read_is_stillborn(const char *path);

#endif
