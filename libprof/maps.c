/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Mapping records (see maps.h). /proc/self/maps lines look like
 *   55d0c8a00000-55d0c8a21000 r-xp 00002000 fe:01 1234   /usr/bin/app
 * Only executable mappings are recorded: only they hold sampled pcs.
 */
#include "libprof/maps.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/maps_line.h"
#include "common/record.h"
#include "libprof/fd.h"
#include "libprof/objects.h"
#include "libprof/writer.h"

/* Parses one maps line into m and *path; 0 when it is an executable mapping. Its
 * build-id is its object's (the vDSO's too: the reporter reads its own copy when the
 * build-ids agree, on the same kernel). */
static int parse_line(const char *line, const struct lp_objects *objects, struct prof_rec_map *m,
                      const char **path)
{
    struct cmn_maps_line l;
    if (cmn_maps_parse_line(line, &l) != 0 || !(l.prot & PROF_MAP_EXEC))
        return -1;
    memset(m, 0, sizeof(*m));
    m->start = l.start;
    m->end = l.end;
    m->file_offset = l.offset;
    m->prot = l.prot;
    *path = l.path;
    const struct lp_object *o = lp_objects_find(objects, (uintptr_t)l.start);
    if (o && o->inode == l.inode && strcmp(o->path, l.path) == 0) {
        m->build_id_len = o->build_id_len;
        memcpy(m->build_id, o->build_id, o->build_id_len);
    }
    return 0;
}

/* Appends a record to a growing buffer; 0 or -ENOMEM. */
static int append_map(unsigned char **buf, size_t *len, size_t *cap,
                      const struct prof_rec_map *m, const char *path)
{
    size_t need = cmn_record_size_str(sizeof(*m), strlen(path));
    if (!cmn_grow((void **)buf, cap, *len + need, 1, 8192))
        return -ENOMEM;
    *len += cmn_record_map(*buf + *len, need, m, path);
    return 0;
}

/* The objects of the last scan: the next one reads only the headers of objects mapped
 * since (a profile's maps at its start and at its end, a fork child's at its start). */
static pthread_mutex_t known_mu = PTHREAD_MUTEX_INITIALIZER;
static struct lp_objects known;

/* The objects in maps text (a copy is cut up), from the headers of the last scan where
 * they are the same. */
static void scan_objects(const char *text, struct lp_objects *out)
{
    char *copy = strdup(text);
    out->v = NULL;
    out->n = 0;
    if (!copy)
        return;
    pthread_mutex_lock(&known_mu);
    /* On failure: empty, and the maps go without build-ids. */
    if (lp_objects_scan_text(copy, &known, out) == 0) {
        struct lp_objects keep;
        if (lp_objects_copy(&keep, out) == 0) {
            lp_objects_free(&known);
            known = keep;
        }
    }
    pthread_mutex_unlock(&known_mu);
    free(copy);
}

void lp_maps_fork_child(void)
{
    /* A thread that held the lock at the fork left the objects half replaced: forget them
     * (their memory is lost, once). */
    if (pthread_mutex_trylock(&known_mu) != 0) {
        known = (struct lp_objects){0};
        pthread_mutex_init(&known_mu, NULL);
        return;
    }
    pthread_mutex_unlock(&known_mu);
}

/* lp_maps_collect() from maps text, which it cuts up. */
static int collect_text(char *text, uint64_t time_ns, unsigned char **out, size_t *out_len)
{
    struct lp_objects objects;
    scan_objects(text, &objects);
    size_t cap = 0;
    int n = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        struct prof_rec_map m;
        const char *path;
        if (parse_line(line, &objects, &m, &path) != 0)
            continue;
        m.time_ns = time_ns;
        if (append_map(out, out_len, &cap, &m, path) == 0)
            n++;
    }
    lp_objects_free(&objects);
    return n;
}

int lp_maps_collect(uint64_t time_ns, unsigned char **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    char maps_path[64];
    char *text = lp_fd_slurp(lp_fd_self_path("maps", maps_path, sizeof(maps_path)), NULL);
    if (!text)
        return errno ? -errno : -EIO;
    int n = collect_text(text, time_ns, out, out_len);
    free(text);
    return n;
}

int lp_maps_write(struct lp_writer *w, uint64_t time_ns, char *maps_text)
{
    unsigned char *recs = NULL;
    size_t len = 0;
    int n = maps_text ? collect_text(maps_text, time_ns, &recs, &len)
                      : lp_maps_collect(time_ns, &recs, &len);
    if (n > 0)
        lp_writer_put_records(w, recs, len);
    free(recs);
    return n;
}
