/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests of the profile writer (libprof/writer.c) and the records it is fed
 * (libprof/maps.c, libprof/threads.c): the bytes that reach the file, draining the ring,
 * descriptors kept away from 0-2, and never writing into a file that took our descriptor's
 * number after the application closed it. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/record.h"
#include "libprof/fd.h"
#include "libprof/log.h"
#include "libprof/maps.h"
#include "libprof/threads.h"
#include "libprof/writer.h"
#include "sampler/ring.h"

static char dir[64];

static void make_dir(void)
{
    strcpy(dir, "/tmp/libprof-test-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static char *path_in_dir(const char *name)
{
    static char p[128];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    return p;
}

static size_t file_size(const char *p)
{
    struct stat st;
    cr_assert_eq(stat(p, &st), 0);
    return (size_t)st.st_size;
}

/* Walks the records of a file; returns the number of records of type `type`, counting
 * for PROF_REC_SAMPLE the samples of PROF_REC_SAMPLES batches too. */
static int count_records(const char *p, uint32_t type)
{
    int fd = open(p, O_RDONLY);
    static unsigned char buf[1 << 20];
    ssize_t n = read(fd, buf, sizeof(buf));
    close(fd);
    cr_assert_geq(n, (ssize_t)sizeof(struct prof_file_header));
    cr_assert_eq(memcmp(buf, PROF_FILE_MAGIC, 8), 0);
    int count = 0;
    for (size_t off = sizeof(struct prof_file_header); off + 8 <= (size_t)n;) {
        struct prof_rec_hdr h;
        memcpy(&h, buf + off, sizeof(h));
        cr_assert(h.size_bytes >= 8 && h.size_bytes % 8 == 0 && off + h.size_bytes <= (size_t)n);
        count += h.type == type;
        if (type == PROF_REC_SAMPLE && h.type == PROF_REC_SAMPLES) {
            struct prof_rec_samples b;
            memcpy(&b, buf + off, sizeof(b));
            count += (int)b.n_samples;
        }
        off += h.size_bytes;
    }
    return count;
}

Test(writer, writes_header_and_records_on_flush, .init = make_dir)
{
    struct lp_writer w;
    char *p = path_in_dir("a.prof");
    cr_assert_eq(lp_writer_open(&w, p, 0), 0);
    cr_assert_geq(w.fd, 3);
    cr_assert(fcntl(w.fd, F_GETFD) & FD_CLOEXEC);
    cr_assert_eq(file_size(p), sizeof(struct prof_file_header),
                 "the header is written at once, the rest waits for a flush");
    void *dst = lp_writer_reserve(&w, 64);
    lp_writer_commit(&w, cmn_record_thread(dst, 64, 1, 2, "name"));
    cr_assert_eq(lp_writer_flush(&w), 0);
    cr_assert_eq(file_size(p), sizeof(struct prof_file_header) + 32);
    cr_assert_eq(count_records(p, PROF_REC_THREAD), 1);
    lp_writer_close(&w);
}

/* A profile already at the path (a finished process's, or one left empty) is the new
 * profile's wholly: nothing of the old bytes remains past what is written. */
Test(writer, replaces_an_old_profile_at_the_path, .init = make_dir)
{
    char *p = path_in_dir("old.prof");
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    static char old[100000];
    memset(old, 'x', sizeof(old));
    memcpy(old, PROF_FILE_MAGIC, 8);
    cr_assert_eq(write(fd, old, sizeof(old)), (ssize_t)sizeof(old));
    close(fd);
    struct lp_writer w;
    cr_assert_eq(lp_writer_open(&w, p, 0), 0);
    cr_assert_eq(file_size(p), sizeof(struct prof_file_header), "the old bytes are gone");
    lp_writer_close(&w);
    cr_assert_eq(count_records(p, PROF_REC_THREAD), 0);

    char *q = path_in_dir("empty.prof");
    close(open(q, O_WRONLY | O_CREAT | O_TRUNC, 0644));
    cr_assert_eq(lp_writer_open(&w, q, 0), 0);
    void *dst = lp_writer_reserve(&w, 64);
    lp_writer_commit(&w, cmn_record_thread(dst, 64, 1, 2, "name"));
    cr_assert_eq(lp_writer_flush(&w), 0);
    lp_writer_close(&w);
    cr_assert_eq(file_size(q), sizeof(struct prof_file_header) + 32);
    cr_assert_eq(count_records(q, PROF_REC_THREAD), 1);
}

/* What is not a libprof profile of this user's is never written: a file of other bytes
 * (a mistyped PROF_OUTPUT), a link (to anything), a FIFO (never waited on), a device;
 * another user's profile is taken (the next name). A new profile is its user's alone. */
Test(writer, writes_only_a_regular_file_of_its_own, .init = make_dir, .timeout = 10)
{
    struct lp_writer w;
    char *p = path_in_dir("notes.txt");
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    cr_assert_eq(write(fd, "my notes\n", 9), 9);
    close(fd);
    cr_assert_eq(lp_writer_open(&w, p, 0), -EEXIST);
    cr_assert_eq(file_size(p), 9, "the file is untouched");

    char link[128];
    snprintf(link, sizeof(link), "%s", path_in_dir("app.prof"));
    cr_assert_eq(symlink(path_in_dir("notes.txt"), link), 0);
    cr_assert_eq(lp_writer_open(&w, link, 0), -ELOOP);
    cr_assert_eq(file_size(path_in_dir("notes.txt")), 9, "the link's target is untouched");
    char nowhere[128];
    snprintf(nowhere, sizeof(nowhere), "%s", path_in_dir("nowhere"));
    cr_assert_eq(symlink(nowhere, path_in_dir("dangling.prof")), 0);
    cr_assert_eq(lp_writer_open(&w, path_in_dir("dangling.prof"), 0), -ELOOP);
    cr_assert_eq(access(path_in_dir("nowhere"), F_OK), -1, "nothing created through the link");

    cr_assert_eq(mkfifo(path_in_dir("fifo.prof"), 0600), 0);
    cr_assert_eq(lp_writer_open(&w, path_in_dir("fifo.prof"), 0), -EINVAL);
    cr_assert_eq(lp_writer_open(&w, "/dev/full", 0), -EINVAL);

    if (geteuid() == 0) {
        char *o = path_in_dir("theirs.prof");
        fd = open(o, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        cr_assert_eq(write(fd, PROF_FILE_MAGIC, 8), 8);
        close(fd);
        cr_assert_eq(chown(o, 4321, 4321), 0);
        cr_assert_eq(lp_writer_open(&w, o, 0), -EBUSY);
        cr_assert_eq(file_size(o), 8);
    }

    cr_assert_eq(lp_writer_open(&w, path_in_dir("new.prof"), 0), 0);
    struct stat st;
    cr_assert_eq(stat(path_in_dir("new.prof"), &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0600, "mode %o", st.st_mode & 0777);
    lp_writer_close(&w);
}

Test(writer, takes_no_standard_descriptor_even_when_they_are_closed, .init = make_dir)
{
    close(0);
    close(1);
    struct lp_writer w;
    cr_assert_eq(lp_writer_open(&w, path_in_dir("b.prof"), 0), 0);
    cr_assert_geq(w.fd, 3);
    cr_assert_eq(fcntl(0, F_GETFD), -1, "fd 0 stays closed");
    lp_writer_close(&w);
}

Test(writer, drains_the_ring_into_sample_records, .init = make_dir)
{
    static uint64_t mem[4096];
    struct smp_ring r;
    cr_assert_eq(smp_ring_init(&r, mem, sizeof(mem), 8), 0);
    for (int i = 0; i < 10; i++) {
        struct smp_slot *s = smp_ring_reserve(&r);
        memset(&s->rec, 0, sizeof(s->rec));
        s->rec.n_frames = (uint16_t)(1 + i % 8);
        for (int f = 0; f < s->rec.n_frames; f++)
            s->frames[f] = 0x1000u + (unsigned)f;
        smp_ring_publish(&r, s);
    }
    struct lp_writer w;
    char *p = path_in_dir("c.prof");
    cr_assert_eq(lp_writer_open(&w, p, 0), 0);
    cr_assert_eq(lp_writer_drain(&w, &r), 10);
    cr_assert_null(smp_ring_peek(&r));
    lp_writer_close(&w);
    cr_assert_eq(count_records(p, PROF_REC_SAMPLE), 10);
    cr_assert_eq(count_records(p, PROF_REC_STACK), 8, "10 samples of 8 distinct stacks");
}

Test(writer, never_writes_into_a_file_that_took_its_descriptor, .init = make_dir)
{
    struct lp_writer w;
    char prof[128], other[128];
    strcpy(prof, path_in_dir("d.prof"));
    strcpy(other, path_in_dir("app.txt"));
    cr_assert_eq(lp_writer_open(&w, prof, 0), 0);
    cr_assert_eq(lp_writer_flush(&w), 0);
    /* The application closes every descriptor and opens its own file, which gets ours. */
    int ours = w.fd;
    close(ours);
    int fd = open(other, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    cr_assert_eq(dup2(fd, ours), ours);
    void *dst = lp_writer_reserve(&w, 64);
    lp_writer_commit(&w, cmn_record_thread(dst, 64, 1, 2, "after"));
    cr_assert_eq(lp_writer_flush(&w), 0);
    cr_assert_eq(file_size(other), 0, "the application's file is untouched");
    cr_assert_eq(count_records(prof, PROF_REC_THREAD), 1, "the record went to the profile");
    cr_assert_neq(w.fd, ours);
    lp_writer_close(&w);
    cr_assert_neq(fcntl(ours, F_GETFD), -1, "the application's descriptor is left open");
}

Test(writer, stops_output_when_the_profile_was_replaced, .init = make_dir)
{
    struct lp_writer w;
    char prof[128];
    strcpy(prof, path_in_dir("e.prof"));
    lp_log_open("/dev/null"); /* the one line it reports is expected here */
    cr_assert_eq(lp_writer_open(&w, prof, 0), 0);
    close(w.fd);
    unlink(prof);
    void *dst = lp_writer_reserve(&w, 64);
    lp_writer_commit(&w, cmn_record_thread(dst, 64, 1, 2, "name"));
    cr_assert_neq(lp_writer_flush(&w), 0);
    cr_assert_eq(w.failed, 1);
    cr_assert_eq(access(prof, F_OK), -1, "no new file is created in its place");
    lp_writer_close(&w);
}

Test(writer, thread_sync_and_stop, .init = make_dir)
{
    static uint64_t mem[4096];
    struct smp_ring r;
    cr_assert_eq(smp_ring_init(&r, mem, sizeof(mem), 8), 0);
    struct lp_writer w;
    char *p = path_in_dir("f.prof");
    cr_assert_eq(lp_writer_open(&w, p, 0), 0);
    cr_assert_eq(lp_writer_start(&w, &r), 0);
    struct smp_slot *s = smp_ring_reserve(&r);
    memset(&s->rec, 0, sizeof(s->rec));
    s->rec.n_frames = 1;
    smp_ring_publish(&r, s);
    cr_assert_eq(lp_writer_sync(&w, 2000), 0);
    cr_assert_eq(count_records(p, PROF_REC_SAMPLE), 1, "sync writes what was sampled");
    cr_assert_eq(lp_writer_stop(&w, 2000), 0);
    lp_writer_close(&w);
}

Test(maps, records_from_text_read_before_are_those_read_then, .init = make_dir)
{
    char *text = lp_fd_slurp("/proc/self/maps", NULL);
    cr_assert_not_null(text);
    unsigned char *now;
    size_t now_len;
    int n = lp_maps_collect(1, &now, &now_len);
    cr_assert_gt(n, 2);
    struct lp_writer w;
    cr_assert_eq(lp_writer_open(&w, path_in_dir("t.prof"), 0), 0);
    size_t before = w.len;
    cr_assert_eq(lp_maps_write(&w, 1, text), n, "one record per executable mapping");
    cr_assert_eq(w.len - before, now_len);
    cr_assert_eq(memcmp(w.buf + before, now, now_len), 0, "the same records, build-ids too");
    free(now);
    free(text);
    lp_writer_close(&w);
}

Test(maps, records_this_executable_with_its_build_id, .init = make_dir)
{
    struct lp_writer w;
    char *p = path_in_dir("g.prof");
    cr_assert_eq(lp_writer_open(&w, p, 0), 0);
    cr_assert_gt(lp_maps_write(&w, 1, NULL), 0);
    cr_assert_gt(lp_threads_write_names(&w, 1), 0);
    char exe[256] = { 0 };
    cr_assert_gt(readlink("/proc/self/exe", exe, sizeof(exe) - 1), 0);
    /* Find our own executable's map record in the buffer and check its build-id. */
    int found = 0;
    for (size_t off = 0; off < w.len;) { /* the header went out when the file was made */
        struct prof_rec_map m;
        memcpy(&m, w.buf + off, sizeof(m.hdr));
        if (m.hdr.type == PROF_REC_MAP) {
            memcpy(&m, w.buf + off, sizeof(m));
            const char *path = (const char *)w.buf + off + sizeof(m);
            if (strcmp(path, exe) == 0 && m.build_id_len == 20)
                found = 1;
            cr_assert(m.prot & PROF_MAP_EXEC);
        }
        off += m.hdr.size_bytes;
    }
    cr_assert(found, "the test binary's executable mapping carries its build-id");
    lp_writer_close(&w);
}

/* The provisional tail: the writer thread writes it after a period's records and cuts it
 * off before it writes more, so that the file always ends with the last one set, and holds
 * no other; the file's own last records replace it. */
static uint64_t tail_samples;
static int tail_frozen; /* no tail set any more */
static struct lp_writer *tail_writer;

static int set_tail_each_period(void)
{
    if (tail_frozen)
        return 0;
    uint64_t c[PROF_STAT_N] = {[PROF_STAT_SAMPLES] = tail_samples};
    unsigned char rec[sizeof(struct prof_rec_stats) + sizeof(c)];
    lp_writer_set_tail(tail_writer, rec, cmn_record_stats(rec, sizeof(rec), c, PROF_STAT_N));
    return 0;
}

/* The type of the file's last record, and the SAMPLES counter of its last STATS. */
static uint32_t last_record(const char *p, uint64_t *stats_samples)
{
    int fd = open(p, O_RDONLY);
    static unsigned char buf[1 << 16];
    ssize_t n = read(fd, buf, sizeof(buf));
    close(fd);
    uint32_t last = 0;
    for (size_t off = sizeof(struct prof_file_header); off + 8 <= (size_t)n;) {
        struct prof_rec_hdr h;
        memcpy(&h, buf + off, sizeof(h));
        cr_assert(h.size_bytes >= 8 && off + h.size_bytes <= (size_t)n);
        if (h.type == PROF_REC_STATS)
            memcpy(stats_samples, buf + off + 16 + 8 * PROF_STAT_SAMPLES, 8);
        last = h.type;
        off += h.size_bytes;
    }
    return last;
}

Test(writer, a_provisional_tail_ends_the_file_until_more_is_written, .init = make_dir)
{
    static uint64_t mem[4096];
    struct smp_ring r;
    cr_assert_eq(smp_ring_init(&r, mem, sizeof(mem), 8), 0);
    struct lp_writer w;
    char *p = path_in_dir("t.prof");
    cr_assert_eq(lp_writer_open(&w, p, 0), 0);
    tail_writer = &w;
    w.on_period = set_tail_each_period;
    cr_assert_eq(lp_writer_start(&w, &r), 0);
    uint64_t said = 0;
    for (uint64_t k = 1; k <= 3; k++) {
        tail_samples = k;
        struct smp_slot *s = smp_ring_reserve(&r);
        memset(&s->rec, 0, sizeof(s->rec));
        s->rec.n_frames = 1;
        smp_ring_publish(&r, s);
        cr_assert_eq(lp_writer_sync(&w, 2000), 0);
        cr_assert_eq(count_records(p, PROF_REC_SAMPLE), (int)k);
        cr_assert_eq(count_records(p, PROF_REC_STATS), 1, "one provisional tail, the last");
        cr_assert_eq(last_record(p, &said), PROF_REC_STATS);
        cr_assert_eq(said, k);
    }
    /* Records written without a fresh tail: the last one ends the file again. */
    tail_frozen = 1;
    struct smp_slot *s = smp_ring_reserve(&r);
    memset(&s->rec, 0, sizeof(s->rec));
    s->rec.n_frames = 1;
    smp_ring_publish(&r, s);
    cr_assert_eq(lp_writer_sync(&w, 2000), 0);
    cr_assert_eq(count_records(p, PROF_REC_SAMPLE), 4);
    cr_assert_eq(count_records(p, PROF_REC_STATS), 1);
    cr_assert_eq(last_record(p, &said), PROF_REC_STATS, "the tail was cut and not written");
    cr_assert_eq(said, 3);
    cr_assert_eq(lp_writer_stop(&w, 2000), 0);
    void *dst = lp_writer_reserve(&w, 8);
    lp_writer_commit(&w, cmn_record_end(dst, 8));
    cr_assert_eq(lp_writer_flush(&w), 0);
    cr_assert_eq(count_records(p, PROF_REC_STATS), 0, "the file's own end replaced it");
    cr_assert_eq(last_record(p, &said), PROF_REC_END);
    lp_writer_close(&w);
}
