/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The family of a profile: the files that the processes of one run wrote next to each
 * other. libprof writes one profile per process: a fork child, or a program exec'd over a
 * process that took samples, writes PATH.PID (then PATH.PID.2, ...) beside PATH, and a
 * template with %p gives each pid its own name (README, PROF_OUTPUT). `prof record` lists
 * a run's family when the command ends; `prof report`, given one file of a family, says
 * that the others exist, and reads them all with --family.
 *
 * The candidates are the files in the profile's directory whose names are its name but for
 * runs of digits and trailing ".N" groups (app.prof, app.prof.4243, app.prof.4243.2;
 * prof.4242.prof, prof.4243.prof). Of those, the family is what the process tree links to
 * the seed process, by the files' PROCESS records: a file of the same process (an exec),
 * of its parent, or of a child started no earlier than its parent, and so on from each
 * member. Unrelated runs that left files of the same shape in the directory share no
 * process and stay out. Reporter thread only.
 */
#ifndef PROF_REPORTER_INPUT_FAMILY_H
#define PROF_REPORTER_INPUT_FAMILY_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define REP_FAMILY_EXE_MAX 64 /* bytes of an executable's base name kept, NUL included */

struct rep_family_member {
    char *path;                    /* the file; the caller's directory prefix, then the
                                    * name; owned by the family */
    uint32_t pid;                  /* the process that wrote it (its PROCESS record) */
    uint32_t ppid;                 /* that process's parent */
    uint64_t start_real_ns;        /* when it started profiling, CLOCK_REALTIME */
    char exe[REP_FAMILY_EXE_MAX];  /* the executable's base name, cut to fit */
};

struct rep_family {
    struct rep_family_member *members; /* by start time, then path; owned */
    size_t n;                          /* entries in members */
    size_t cap;                        /* entries allocated */
};

/* Not async-signal-safe. */
/* Makes f empty. */
void rep_family_init(struct rep_family *f);
/* Frees what f owns. Accepts NULL. */
void rep_family_fini(struct rep_family *f);
/* Reads the PROCESS record at the start of the profile at path into *m (path not set).
 * CMN_OK, or CMN_E_NOTFOUND when path is not a profile that has one, or is a snapshot
 * (prof stacks --save, prof_snapshot()), which belongs to no run's family. */
int rep_family_read_head(const char *path, struct rep_family_member *m /* out */);
/* Fills f (empty) with the family of seed_pid among the files next to path, path itself
 * included when it is one (it need not exist); files last changed before since (seconds of
 * CLOCK_REALTIME; 0: any) are left out. CMN_OK or CMN_E_NOMEM; a directory that cannot be
 * read gives an empty family. */
int rep_family_find(struct rep_family *f, const char *path, uint32_t seed_pid, time_t since);

#endif
