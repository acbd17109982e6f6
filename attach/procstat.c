/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Reading another process's small /proc files (see procstat.h): the threads' files and
 * the stat line through common/proc.h, the status file's lines here.
 */
#include "attach/procstat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/proc.h"

long att_proc_read(const char *path, char *buf, size_t cap)
{
    return cmn_proc_read(NULL, path, buf, cap);
}

char att_proc_task_state(pid_t pid, pid_t tid)
{
    return cmn_proc_task_state(&(struct cmn_proc){.pid = pid}, tid);
}

void att_proc_task_name(pid_t pid, pid_t tid, char name[PROF_THREAD_NAME_MAX])
{
    cmn_proc_task_name(&(struct cmn_proc){.pid = pid}, tid, name);
}

bool att_proc_status_field(pid_t pid, const char *key, char *out, size_t cap)
{
    char path[64], buf[8192];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    if (att_proc_read(path, buf, sizeof(buf)) <= 0)
        return false;
    size_t key_len = strlen(key);
    for (const char *line = buf; *line != '\0';) {
        size_t len = strcspn(line, "\n");
        if (len > key_len && strncmp(line, key, key_len) == 0 && line[key_len] == ':') {
            const char *v = line + key_len + 1;
            while (*v == ' ' || *v == '\t')
                v++;
            snprintf(out, cap, "%.*s", (int)(line + len - v), v);
            return true;
        }
        line += len + (line[len] == '\n');
    }
    return false;
}

pid_t att_proc_ppid(pid_t pid)
{
    char buf[CMN_PROC_STAT_BYTES];
    const struct cmn_proc proc = {.pid = pid};
    const char *ppid = cmn_proc_read_file(&proc, 0, "stat", buf, sizeof(buf)) > 0
                           ? cmn_proc_stat_field(buf, 4)
                           : NULL;
    return ppid != NULL ? (pid_t)strtol(ppid, NULL, 10) : 0;
}

void att_proc_exe(pid_t pid, char *out, size_t cap)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
    ssize_t n = readlink(path, out, cap - 1);
    if (n > 0) {
        out[n] = '\0';
        return;
    }
    char name[PROF_THREAD_NAME_MAX];
    att_proc_task_name(pid, pid, name);
    snprintf(out, cap, "%s", name);
}

bool att_proc_has_cap(int cap)
{
    char v[32];
    return att_proc_status_field(getpid(), "CapEff", v, sizeof(v)) &&
           (strtoull(v, NULL, 16) >> cap & 1) != 0;
}

bool att_proc_is_other_user(pid_t pid, unsigned *euid)
{
    char v[128];
    unsigned ruid, suid, me = (unsigned)geteuid();
    if (!att_proc_status_field(pid, "Uid", v, sizeof(v)) ||
        sscanf(v, "%u %u %u", &ruid, euid, &suid) != 3)
        return false;
    return ruid != me || *euid != me || suid != me;
}
