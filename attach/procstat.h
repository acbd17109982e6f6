/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Small facts about another process, read from its /proc files, for the commands that look
 * at a running process from outside (`prof stacks`): a thread's state letter and name
 * (/proc/PID/task/TID/stat and comm), a field of /proc/PID/status (Uid, TracerPid,
 * SigCgt), its parent and its executable's path. Each call reads one small file whole; a
 * file that cannot be read (the process is gone, or belongs to someone else) is reported
 * as such, never guessed. Reporter thread only.
 */
#ifndef PROF_ATTACH_PROCSTAT_H
#define PROF_ATTACH_PROCSTAT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "include/libprof/prof_format.h"

/* Not async-signal-safe. */
/* The kernel's state letter of thread tid of pid (R, S, D, T, t, Z, X, I, ...), or 0 when
 * its stat file cannot be read (the thread is gone). */
char att_proc_task_state(pid_t pid, pid_t tid);
/* The name of thread tid of pid (its comm) into name, "" when it cannot be read. */
void att_proc_task_name(pid_t pid, pid_t tid, char name[PROF_THREAD_NAME_MAX]);
/* The value of line key ("Uid", "TracerPid", "SigCgt") of /proc/PID/status into out (cap
 * bytes), leading blanks skipped; false when the file or the line cannot be read. */
bool att_proc_status_field(pid_t pid, const char *key, char *out, size_t cap);
/* The parent of pid (field 4 of /proc/PID/stat), 0 when unknown. */
pid_t att_proc_ppid(pid_t pid);
/* The path of pid's executable into out (cap bytes), its comm when that link cannot be
 * read, "" when neither can. */
void att_proc_exe(pid_t pid, char *out, size_t cap);
/* Reads the file at path, at most cap - 1 bytes, into buf, NUL-terminated. Returns the
 * bytes read, or -errno. */
long att_proc_read(const char *path, char *buf, size_t cap);

/* Whether prof itself has capability cap (a CAP_* number) in its effective set. */
bool att_proc_has_cap(int cap);
/* Whether process pid belongs to another user than prof's effective uid (its real,
 * effective or saved uid differs), with its effective uid in *euid; false when it does not
 * or /proc does not say. */
bool att_proc_is_other_user(pid_t pid, unsigned *euid);

#endif
