/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Encoders for the profile format's records (include/prof_format.h, docs/FORMAT.md).
 * Pure functions over a caller's buffer: no globals, no allocation, no I/O. The writer
 * thread uses them; the tests use them to build profiles. Each returns the bytes written,
 * or 0 when the record does not fit in cap (nothing is written then).
 */
#ifndef PROF_LIBPROF_RECORD_H
#define PROF_LIBPROF_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "include/prof_format.h"

/* Bytes a record with a fixed part of fixed_bytes and a trailing string of str_len
 * characters (NUL not counted) takes once padded. */
size_t lp_record_size_str(size_t fixed_bytes, size_t str_len);

/* Not async-signal-safe (they call strlen/memcpy only, but are not checked for it). */
size_t lp_record_file_header(void *buf, size_t cap);
/* p's hdr is filled in here; exe may be NULL. */
size_t lp_record_process(void *buf, size_t cap, const struct prof_rec_process *p,
                         const char *exe);
/* m's hdr is filled in here; path may be NULL (anonymous). */
size_t lp_record_map(void *buf, size_t cap, const struct prof_rec_map *m, const char *path);
size_t lp_record_thread(void *buf, size_t cap, uint64_t time_ns, uint32_t tid,
                        const char *name);
/* s's hdr is filled in here; frames holds s->n_frames addresses. */
size_t lp_record_sample(void *buf, size_t cap, const struct prof_rec_sample *s,
                        const uint64_t *frames);
/* st's hdr is filled in here; frames holds st->n_frames addresses. */
size_t lp_record_stack(void *buf, size_t cap, const struct prof_rec_stack *st,
                       const uint64_t *frames);
/* A batch: base_time_ns, n_samples entries already encoded in entries (entries_len bytes,
 * see lp_record_samples_entry()). */
size_t lp_record_samples(void *buf, size_t cap, uint64_t base_time_ns, uint32_t n_samples,
                         const void *entries, size_t entries_len);
/* Encodes one batch entry into out (at least LP_RECORD_ENTRY_MAX bytes); returns its
 * length. */
#define LP_RECORD_ENTRY_MAX 40u
size_t lp_record_samples_entry(unsigned char *out, int64_t time_delta_ns, uint32_t tid,
                               uint32_t stack_id, uint32_t weight);
size_t lp_record_stats(void *buf, size_t cap, const uint64_t *counters, uint32_t n_counters);
size_t lp_record_end(void *buf, size_t cap);

#endif
