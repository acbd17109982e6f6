/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Finding a profile's family (see family.h): the directory is listed once, every file of
 * the right name shape has its first record read (a few KiB: the file header, the PROCESS
 * record and the executable's path), and the process links are followed from the seed
 * until nothing more joins. Reporter thread only.
 */
#include "reporter/input/family.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/err.h"
#include "common/grow.h"
#include "include/libprof/prof_format.h"
#include "reporter/input/profile.h"
#include "reporter/input/read.h"

#define HEAD_BYTES 8192 /* the file header, the PROCESS record and a long path */
#define SHAPE_MAX 512   /* a file name's shape: NAME_MAX and its NUL, with room */
#define DIGITS '\1'     /* a run of digits in a shape: no file name holds this byte */

void rep_family_init(struct rep_family *f)
{
    memset(f, 0, sizeof(*f));
}

void rep_family_fini(struct rep_family *f)
{
    if (f == NULL)
        return;
    for (size_t i = 0; i < f->n; i++)
        free(f->members[i].path);
    free(f->members);
    memset(f, 0, sizeof(*f));
}

/* name with every run of digits as one DIGITS byte, then without its trailing ".N" groups:
 * the part of a profile's name that its family shares. */
static void shape_of(const char *name, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = name; *p != '\0' && n + 1 < cap; p++) {
        bool is_digit = *p >= '0' && *p <= '9';
        if (!is_digit)
            out[n++] = *p;
        else if (n == 0 || out[n - 1] != DIGITS)
            out[n++] = DIGITS;
    }
    while (n >= 2 && out[n - 1] == DIGITS && out[n - 2] == '.')
        n -= 2;
    out[n] = '\0';
}

int rep_family_read_head(const char *path, struct rep_family_member *m)
{
    unsigned char head[HEAD_BYTES];
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return CMN_E_NOTFOUND;
    size_t n = fread(head, 1, sizeof(head), f);
    fclose(f);
    struct rep_profile p;
    struct cmn_err ignored = {0};
    int rc = rep_read_buffer(head, n, path, &p, &ignored);
    /* A snapshot (no timer) is one moment of a process, not a member of its run. */
    bool ok = rc == CMN_OK && p.has_process && p.process.timer_source != PROF_TIMER_NONE;
    if (ok) {
        m->pid = p.process.pid;
        m->ppid = p.process.ppid;
        m->start_real_ns = p.process.start_real_ns;
        const char *exe = p.process.exe != NULL ? p.process.exe : "";
        const char *slash = strrchr(exe, '/');
        snprintf(m->exe, sizeof(m->exe), "%s", slash != NULL ? slash + 1 : exe);
    }
    rep_profile_fini(&p);
    return ok ? CMN_OK : CMN_E_NOTFOUND;
}

/* Adds prefix/name to c when it is a profile changed at or after since. */
static int add_candidate(struct rep_family *c, const char *prefix, const char *name, time_t since)
{
    struct rep_family_member m = {0};
    struct stat st;
    if (asprintf(&m.path, "%s%s", prefix, name) < 0)
        return CMN_E_NOMEM;
    if (stat(m.path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_mtime < since ||
        rep_family_read_head(m.path, &m) != CMN_OK) {
        free(m.path);
        return CMN_OK;
    }
    if (!CMN_GROW(c->members, c->cap, c->n + 1, 16)) {
        free(m.path);
        return CMN_E_NOMEM;
    }
    c->members[c->n++] = m;
    return CMN_OK;
}

/* Every profile of the given shape in the directory prefix names ("" for "."). */
static int add_candidates(struct rep_family *c, const char *prefix, const char *shape,
                          time_t since)
{
    DIR *d = opendir(prefix[0] != '\0' ? prefix : ".");
    if (d == NULL)
        return CMN_OK;
    int rc = CMN_OK;
    struct dirent *e;
    while (rc == CMN_OK && (e = readdir(d)) != NULL) {
        char s[SHAPE_MAX];
        shape_of(e->d_name, s, sizeof(s));
        if (strcmp(s, shape) == 0)
            rc = add_candidate(c, prefix, e->d_name, since);
    }
    closedir(d);
    return rc;
}

/* Whether the processes of a and b are linked: one process (an exec), or parent and
 * child. */
static bool is_linked(const struct rep_family_member *a, const struct rep_family_member *b)
{
    return a->pid == b->pid || a->ppid == b->pid || a->pid == b->ppid;
}

/* Marks in is_in[] the candidates linked to the seed, directly or through members. */
static void follow_links(const struct rep_family *c, uint32_t seed_pid, bool *is_in)
{
    const struct rep_family_member seed = {.pid = seed_pid};
    bool is_changed = true;
    while (is_changed) {
        is_changed = false;
        for (size_t i = 0; i < c->n; i++) {
            bool is_joining = !is_in[i] && is_linked(&c->members[i], &seed);
            for (size_t j = 0; !is_in[i] && !is_joining && j < c->n; j++)
                is_joining = is_in[j] && is_linked(&c->members[i], &c->members[j]);
            if (is_joining)
                is_in[i] = is_changed = true;
        }
    }
}

static int by_start(const void *a, const void *b)
{
    const struct rep_family_member *x = a, *y = b;
    if (x->start_real_ns != y->start_real_ns)
        return x->start_real_ns < y->start_real_ns ? -1 : 1;
    return strcmp(x->path, y->path);
}

/* Keeps the members of c (is_in), freeing the others, in start order. */
static void keep_members(struct rep_family *c, const bool *is_in)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (is_in[i])
            c->members[n++] = c->members[i];
        else
            free(c->members[i].path);
    }
    c->n = n;
    if (n > 1)
        qsort(c->members, n, sizeof(c->members[0]), by_start);
}

int rep_family_find(struct rep_family *f, const char *path, uint32_t seed_pid, time_t since)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash != NULL ? slash + 1 : path;
    char *prefix = strndup(path, (size_t)(name - path));
    if (prefix == NULL)
        return CMN_E_NOMEM;
    char shape[SHAPE_MAX];
    shape_of(name, shape, sizeof(shape));
    int rc = add_candidates(f, prefix, shape, since);
    free(prefix);
    bool *is_in = rc == CMN_OK && f->n > 0 ? calloc(f->n, sizeof(bool)) : NULL;
    if (rc == CMN_OK && f->n > 0 && is_in == NULL)
        rc = CMN_E_NOMEM;
    if (rc == CMN_OK) {
        if (f->n > 0)
            follow_links(f, seed_pid, is_in);
        keep_members(f, is_in);
    }
    free(is_in);
    if (rc != CMN_OK)
        rep_family_fini(f);
    return rc;
}
