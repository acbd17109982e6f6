/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What a profile says about how its run went, as warnings on stderr: cut short, no end
 * record, samples dropped, failed writes, records of unknown types, and the library's
 * notes (what it adapted to). Every command that reads profiles says the same. Reporter
 * thread only.
 */
#include "reporter/input/warnings.h"

#include <inttypes.h>

#include "include/libprof/prof_format.h"
#include "reporter/base/warn.h"
#include "reporter/input/profile.h"

void rep_profile_warn(const struct rep_profile *p)
{
    if (p->is_torn)
        rep_warnf("%s is cut short: it ends inside a record (the process was probably killed); "
                  "read %zu samples",
                  p->name, p->n_samples_read);
    else if (!p->has_end && p->has_stats)
        rep_warnf("%s has no end record: the process ended without libprof seeing it (killed, "
                  "or by exit_group as Go programs end); its counters are those of its last "
                  "writer period; read %zu samples",
                  p->name, p->n_samples_read);
    else if (!p->has_end)
        rep_warnf("%s has no end record: the run did not finish cleanly; read %zu samples", p->name,
                  p->n_samples_read);
    if (p->has_stats && p->stats[PROF_STAT_DROPPED] > 0)
        rep_warnf("%s: %" PRIu64 " samples were dropped because the sample buffer was full; "
                  "the profile under-counts",
                  p->name, p->stats[PROF_STAT_DROPPED]);
    if (p->has_stats && p->stats[PROF_STAT_UNWRITTEN] > 0)
        rep_warnf("%s: %" PRIu64 " samples never reached the file: the run ended before "
                  "libprof's writer thread could write them; the profile under-counts",
                  p->name, p->stats[PROF_STAT_UNWRITTEN]);
    if (p->has_stats && p->stats[PROF_STAT_POSTS_DROPPED] > 0)
        rep_warnf("%s: %" PRIu64 " records of mappings, thread names or notes were dropped "
                  "(the writer's queue was full); some frames or threads may go unnamed",
                  p->name, p->stats[PROF_STAT_POSTS_DROPPED]);
    if (p->has_stats && p->stats[PROF_STAT_NO_SIGSTACK] > 0)
        rep_warnf("%s: %" PRIu64 " samples were skipped: no stack had room for libprof's "
                  "handler (a thread libprof did not start, on a small alternate stack of the "
                  "program's); the profile under-counts",
                  p->name, p->stats[PROF_STAT_NO_SIGSTACK]);
    if (p->has_stats && p->stats[PROF_STAT_WRITE_ERRORS] > 0)
        rep_warnf("%s: writing the profile failed %" PRIu64 " times; records are missing", p->name,
                  p->stats[PROF_STAT_WRITE_ERRORS]);
    if (p->n_unknown_records > 0)
        rep_warnf("%s: skipped %zu records of unknown types (from a newer libprof?)", p->name,
                  p->n_unknown_records);
    /* What the library adapted to: said here, not on the program's stderr. */
    for (size_t i = 0; i < p->n_notes; i++)
        rep_warnf("%s: libprof: %s", p->name, p->notes[i]);
}

