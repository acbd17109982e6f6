/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The process's executable mappings, as PROF_REC_MAP records: start, end, file offset,
 * path and the GNU build-id of the object, so that the reporter can symbolize later and
 * elsewhere. Read from /proc/self/maps; build-ids come from the loaded objects' PT_NOTE
 * segments in memory (libprof/objects.h, without the loader's lock). Application or
 * writer-owner thread only; never from a signal handler.
 */
#ifndef PROF_LIBPROF_MAPS_H
#define PROF_LIBPROF_MAPS_H

#include <stddef.h>
#include <stdint.h>

struct lp_writer;

/* Not async-signal-safe. One record per executable mapping, in a malloc'd buffer that the
 * caller frees. Returns the number of records, or -errno when /proc/self/maps cannot be
 * read (then *out is NULL). */
int lp_maps_collect(uint64_t time_ns, unsigned char **out, size_t *out_len);
/* Not async-signal-safe; the writer's owner only. lp_maps_collect() into w's buffer; from
 * maps_text (/proc/self/maps as read just before, which it cuts up) when not NULL. */
int lp_maps_write(struct lp_writer *w, uint64_t time_ns, char *maps_text);
/* Not async-signal-safe. In a fork child, from libprof/session.c's handler. */
void lp_maps_fork_child(void);

#endif
