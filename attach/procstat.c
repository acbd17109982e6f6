/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Reading another process's small /proc files (see procstat.h). The stat line is
 * "PID (COMM) STATE PPID ...", where COMM may itself hold spaces and parentheses, so the
 * fields after it are found from the last ')'.
 */
#include "attach/procstat.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

long att_proc_read(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t n = 0;
    while (n + 1 < cap) {
        ssize_t got = read(fd, buf + n, cap - 1 - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int e = errno;
            close(fd);
            return -e;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    close(fd);
    buf[n] = '\0';
    return (long)n;
}

/* The text after "(COMM) " of a stat file: the state letter first. */
static const char *stat_after_comm(const char *path, char *buf, size_t cap)
{
    if (att_proc_read(path, buf, cap) <= 0)
        return NULL;
    const char *paren = strrchr(buf, ')');
    return paren != NULL && paren[1] == ' ' ? paren + 2 : NULL;
}

char att_proc_task_state(pid_t pid, pid_t tid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
    const char *rest = stat_after_comm(path, buf, sizeof(buf));
    return rest != NULL ? rest[0] : 0;
}

void att_proc_task_name(pid_t pid, pid_t tid, char name[PROF_THREAD_NAME_MAX])
{
    char path[64], buf[64];
    snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
    name[0] = '\0';
    if (att_proc_read(path, buf, sizeof(buf)) <= 0)
        return;
    buf[strcspn(buf, "\n")] = '\0';
    /* The kernel keeps at most 15 bytes; a longer line is cut as it would be. */
    snprintf(name, PROF_THREAD_NAME_MAX, "%.15s", buf);
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
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    const char *rest = stat_after_comm(path, buf, sizeof(buf));
    int ppid;
    return rest != NULL && sscanf(rest, "%*c %d", &ppid) == 1 ? (pid_t)ppid : 0;
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
