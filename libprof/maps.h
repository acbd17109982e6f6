/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The process's executable mappings, as PROF_REC_MAP records: start, end, file offset,
 * path and the GNU build-id of the object, so that the reporter can symbolize later and
 * elsewhere. Read from /proc/self/maps; build-ids come from the loaded objects' PT_NOTE
 * segments in memory (dl_iterate_phdr), so no file is opened for them. Application or
 * writer-owner thread only; never from a signal handler.
 */
#ifndef PROF_LIBPROF_MAPS_H
#define PROF_LIBPROF_MAPS_H

#include <stdint.h>

struct lp_writer;

/* Not async-signal-safe. Appends one record per executable mapping. Returns the number of
 * records written, or -errno when /proc/self/maps cannot be read. */
int lp_maps_write(struct lp_writer *w, uint64_t time_ns);

#endif
