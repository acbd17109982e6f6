/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The OpenTelemetry thread context (OTEP 4947, "Thread Context: Sharing Thread-Level
 * Information with external readers", merged 2026) read as a profiler in the process.
 * An SDK that implements it exports an ELF TLS variable, otel_thread_ctx_v1, in the
 * dynamic symbol table: each thread's copy points to its current context record
 *
 *   trace-id[16] span-id[8] valid:u8 trace-flags:u8 attrs-data-size:u16 attrs-data[]
 *   attrs-data: (key-index:u8 length:u8 value[length])*
 *
 * (native byte order, packed, 2-byte aligned; NULL or valid != 1: none), and publishes the
 * names of the key indexes in its process context (OTEP 4719): a mapping named OTEL_CTX
 * whose header ("OTEL_CTX", version, payload size, publication time, payload pointer)
 * points to a protobuf ProcessContext whose attribute "threadlocal.attribute_key_map" is
 * an array of strings, index i naming key i.
 *
 * libprof's handler reads the record where the thread is interrupted (sampler/handler.c,
 * from the TLS offset found here), as the specification asks of readers; the writer
 * thread turns it into a trace and labels (merged into the thread's own, the record's
 * winning on a common key). The ring source takes its samples in the kernel, where no
 * handler runs: a process with the variable is sampled by the signal source instead
 * (libprof/timers.c); wall profiles' waits carry no OpenTelemetry context.
 *
 * Only a variable in static TLS is read (the executable's, or a library's loaded with the
 * program): one offset from the thread pointer serves every thread. Context: the session
 * start, then the writer buffer's owner.
 */
#ifndef PROF_LIBPROF_OTEL_H
#define PROF_LIBPROF_OTEL_H

#include <stdint.h>

struct smp_sample_ctx;
struct lp_label_ctx;

#define LP_OTEL_KEYS_MAX 256u /* key indexes are one byte */

/* Not async-signal-safe; the session's start, on the thread that starts it (before any
 * handler of ours). Looks for otel_thread_ctx_v1 and sets smp_sampler.otel_tls_off: 1 when
 * the process has it in static TLS, 0 when not. */
int lp_otel_init(void);

/* Not async-signal-safe; the writer buffer's owner. The labels and trace of a sample taken
 * by a handler (c): the thread's own (libprof/labels.h), with the OpenTelemetry record's
 * trace and attributes when it had one. */
void lp_otel_ctx(const struct smp_sample_ctx *c, struct lp_label_ctx *out);

/* Not async-signal-safe. The key names of a process context payload (a protobuf
 * ProcessContext, n bytes) into names[LP_OTEL_KEYS_MAX] (strings of len[i] bytes into
 * payload), exposed for the tests; returns the number of keys, 0 when it has none. */
unsigned lp_otel_parse_keys(const uint8_t *payload, uint64_t n, const char **names,
                            uint32_t *len);

#endif
