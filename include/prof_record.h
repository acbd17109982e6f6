/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Encoders for the profile format's records (include/prof_format.h, docs/FORMAT.md), shared
 * by everything that writes profiles: libprof's writer thread, and the prof command when it
 * writes one itself (`prof record -p`, `prof stacks`). Pure functions over a caller's
 * buffer: no globals, no allocation, no I/O. Each record is a prof_rec_hdr, a fixed part,
 * and a variable tail (a string or an array), zero-padded to PROF_REC_ALIGN so that the
 * next record starts aligned. Each encoder returns the bytes written, or 0 when the record
 * does not fit in cap (nothing is written then). Not async-signal-safe (memcpy/strlen only,
 * but not checked for it). Header-only (static inline): an internal header, not installed.
 */
#ifndef PROF_INCLUDE_PROF_RECORD_H
#define PROF_INCLUDE_PROF_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "include/prof_format.h"

/* Encodes one batch entry into out (at least PROF_RECORD_ENTRY_MAX bytes). */
#define PROF_RECORD_ENTRY_MAX 40u

static inline size_t prof_record_pad(size_t n)
{
    return (n + PROF_REC_ALIGN - 1) & ~(size_t)(PROF_REC_ALIGN - 1);
}

static inline size_t prof_record_size_str(size_t fixed_bytes, size_t str_len)
{
    return prof_record_pad(fixed_bytes + str_len + 1);
}

/* Writes fixed (whose first member is a prof_rec_hdr) then tail, padded. */
static inline size_t prof_record_put(void *buf, size_t cap, uint32_t type, const void *fixed,
                                     size_t fixed_bytes, const void *tail, size_t tail_bytes)
{
    size_t total = prof_record_pad(fixed_bytes + tail_bytes);
    if (total > cap || total > PROF_REC_MAX_BYTES)
        return 0;
    unsigned char *p = buf;
    memcpy(p, fixed, fixed_bytes);
    struct prof_rec_hdr hdr = {.type = type, .size_bytes = (uint32_t)total};
    memcpy(p, &hdr, sizeof(hdr));
    if (tail_bytes)
        memcpy(p + fixed_bytes, tail, tail_bytes);
    memset(p + fixed_bytes + tail_bytes, 0, total - fixed_bytes - tail_bytes);
    return total;
}

static inline size_t prof_record_file_header(void *buf, size_t cap)
{
    struct prof_file_header h = {.version = PROF_FILE_VERSION,
                                 .header_bytes = sizeof(struct prof_file_header)};
    if (cap < sizeof(h))
        return 0;
    memcpy(h.magic, PROF_FILE_MAGIC, sizeof(h.magic));
    memcpy(buf, &h, sizeof(h));
    return sizeof(h);
}

static inline size_t prof_record_process(void *buf, size_t cap, const struct prof_rec_process *p,
                                         const char *exe)
{
    const char *s = exe ? exe : "";
    return prof_record_put(buf, cap, PROF_REC_PROCESS, p, sizeof(*p), s, strlen(s) + 1);
}

static inline size_t prof_record_map(void *buf, size_t cap, const struct prof_rec_map *m,
                                     const char *path)
{
    const char *s = path ? path : "";
    return prof_record_put(buf, cap, PROF_REC_MAP, m, sizeof(*m), s, strlen(s) + 1);
}

static inline size_t prof_record_thread(void *buf, size_t cap, uint64_t time_ns, uint32_t tid,
                                        const char *name)
{
    struct prof_rec_thread t = {.time_ns = time_ns, .tid = tid};
    const char *s = name ? name : "";
    return prof_record_put(buf, cap, PROF_REC_THREAD, &t, sizeof(t), s, strlen(s) + 1);
}

static inline size_t prof_record_sample(void *buf, size_t cap, const struct prof_rec_sample *s,
                                        const uint64_t *frames)
{
    return prof_record_put(buf, cap, PROF_REC_SAMPLE, s, sizeof(*s), frames,
                           (size_t)s->n_frames * sizeof(uint64_t));
}

static inline size_t prof_record_stack(void *buf, size_t cap, const struct prof_rec_stack *st,
                                       const uint64_t *frames)
{
    return prof_record_put(buf, cap, PROF_REC_STACK, st, sizeof(*st), frames,
                           (size_t)st->n_frames * sizeof(uint64_t));
}

static inline size_t prof_record_samples(void *buf, size_t cap, uint64_t base_time_ns,
                                         uint32_t n_samples, const void *entries,
                                         size_t entries_len)
{
    struct prof_rec_samples b = {.base_time_ns = base_time_ns, .n_samples = n_samples};
    return prof_record_put(buf, cap, PROF_REC_SAMPLES, &b, sizeof(b), entries, entries_len);
}

/* Unsigned LEB128: 7 bits a byte, low first, the top bit set on all but the last. */
static inline size_t prof_record_uleb(unsigned char *out, uint64_t v)
{
    size_t n = 0;
    do {
        unsigned char byte = v & 0x7f;
        v >>= 7;
        out[n++] = byte | (v ? 0x80 : 0);
    } while (v);
    return n;
}

static inline size_t prof_record_samples_entry(unsigned char *out, int64_t time_delta_ns,
                                               uint32_t tid, uint32_t stack_id, uint32_t weight)
{
    /* Zigzag: 0, -1, 1, -2, ... as 0, 1, 2, 3, ... so small steps of either sign are short. */
    uint64_t zz = ((uint64_t)time_delta_ns << 1) ^ (uint64_t)(time_delta_ns >> 63);
    size_t n = prof_record_uleb(out, zz);
    n += prof_record_uleb(out + n, tid);
    n += prof_record_uleb(out + n, stack_id);
    n += prof_record_uleb(out + n, weight ? weight - 1 : 0);
    return n;
}

static inline size_t prof_record_stats(void *buf, size_t cap, const uint64_t *counters,
                                       uint32_t n_counters)
{
    struct prof_rec_stats st = {.n_counters = n_counters};
    return prof_record_put(buf, cap, PROF_REC_STATS, &st, sizeof(st), counters,
                           (size_t)n_counters * sizeof(uint64_t));
}

static inline size_t prof_record_end(void *buf, size_t cap)
{
    struct prof_rec_hdr h = {0};
    return prof_record_put(buf, cap, PROF_REC_END, &h, sizeof(h), NULL, 0);
}

static inline size_t prof_record_note(void *buf, size_t cap, uint64_t time_ns, const char *text)
{
    struct prof_rec_note n = {.time_ns = time_ns};
    const char *s = text ? text : "";
    return prof_record_put(buf, cap, PROF_REC_NOTE, &n, sizeof(n), s, strlen(s) + 1);
}

static inline size_t prof_record_snapshot(void *buf, size_t cap, uint64_t time_ns, uint32_t tid,
                                          uint8_t status, char run_state, uint16_t syscall)
{
    struct prof_rec_snapshot r = {.time_ns = time_ns,
                                  .tid = tid,
                                  .status = status,
                                  .run_state = run_state,
                                  .syscall = syscall};
    return prof_record_put(buf, cap, PROF_REC_SNAPSHOT, &r, sizeof(r), NULL, 0);
}

/* The system calls that return EINTR after a signal handler ran, SA_RESTART or not
 * (signal(7)): a snapshot does not ask a thread asleep in one (PROF_SNAP_NOT_ASKED, whose
 * SNAPSHOT record names the call by number), and `prof stacks` prints the name. The
 * numbers are this architecture's. */
struct prof_snap_call {
    long nr;
    const char *name;
};

static const struct prof_snap_call prof_snap_cut_short[] = {
#ifdef SYS_pause
    {SYS_pause, "pause"},
#endif
#ifdef SYS_poll
    {SYS_poll, "poll"},
#endif
#ifdef SYS_select
    {SYS_select, "select"},
#endif
#ifdef SYS_epoll_wait
    {SYS_epoll_wait, "epoll_wait"},
#endif
#ifdef SYS_epoll_pwait2
    {SYS_epoll_pwait2, "epoll_pwait2"},
#endif
    {SYS_nanosleep, "nanosleep"},
    {SYS_clock_nanosleep, "clock_nanosleep"},
    {SYS_rt_sigsuspend, "sigsuspend"},
    {SYS_ppoll, "ppoll"},
    {SYS_pselect6, "pselect"},
    {SYS_epoll_pwait, "epoll_pwait"},
    {SYS_rt_sigtimedwait, "sigtimedwait"},
    {SYS_io_getevents, "io_getevents"},
    {SYS_semtimedop, "semtimedop"},
    {SYS_msgrcv, "msgrcv"},
    {SYS_msgsnd, "msgsnd"},
};

/* The name of system call nr when a snapshot leaves a thread asleep in it alone, else
 * NULL. */
static inline const char *prof_snap_cut_short_name(long nr)
{
    for (size_t i = 0; i < sizeof(prof_snap_cut_short) / sizeof(prof_snap_cut_short[0]); i++)
        if (prof_snap_cut_short[i].nr == nr)
            return prof_snap_cut_short[i].name;
    return NULL;
}

/* One line of /proc/PID/maps, the source of MAP records:
 *   55d0c8a00000-55d0c8a21000 r-xp 00002000 fe:01 1234   /usr/bin/app */
struct prof_maps_line {
    uint64_t start, end; /* [start, end) */
    uint64_t offset;     /* file offset of start */
    uint64_t inode;      /* the file's inode, 0 for anonymous and special mappings */
    uint32_t prot;       /* PROF_MAP_* */
    const char *path;    /* into the line: the file, "[vdso]" and the like, "" anonymous */
};

/* Parses line (without its newline) into *m; 0, or -1 when it is not a maps line. */
static inline int prof_maps_parse_line(const char *line, struct prof_maps_line *m)
{
    char *end;
    m->start = strtoull(line, &end, 16);
    if (*end != '-')
        return -1;
    m->end = strtoull(end + 1, &end, 16);
    if (*end != ' ' || strlen(end) < 6 || end[5] != ' ' || m->end <= m->start)
        return -1;
    const char *perms = end + 1; /* "r-xp" */
    m->prot = (perms[0] == 'r' ? PROF_MAP_READ : 0u) | (perms[1] == 'w' ? PROF_MAP_WRITE : 0u) |
              (perms[2] == 'x' ? PROF_MAP_EXEC : 0u);
    m->offset = strtoull(perms + 5, &end, 16);
    m->path = "";
    m->inode = 0;
    end = strchr(end + 1, ' '); /* past the device */
    if (end != NULL) {
        m->inode = strtoull(end + 1, &end, 10);
        if (*end != ' ')
            end = NULL; /* nothing after the inode: no path */
    }
    if (end != NULL) {
        while (*end == ' ')
            end++;
        m->path = end;
    }
    return 0;
}

/* The GNU build-id (NT_GNU_BUILD_ID) in an ELF note segment's bytes, as a MAP record
 * carries it: copies it into out (PROF_BUILD_ID_MAX bytes) and returns its length, or 0
 * when the notes hold none. Reads only inside [notes, notes + size). */
static inline uint8_t prof_record_build_id_note(const unsigned char *notes, size_t size,
                                                uint8_t *out)
{
    struct note {
        uint32_t namesz, descsz, type;
    } nh;
    size_t off = 0;
    while (off + sizeof(nh) <= size) {
        memcpy(&nh, notes + off, sizeof(nh));
        size_t name_sz = ((size_t)nh.namesz + 3u) & ~(size_t)3u;
        size_t desc_sz = ((size_t)nh.descsz + 3u) & ~(size_t)3u;
        const unsigned char *name = notes + off + sizeof(nh);
        if (name_sz > size || desc_sz > size || off + sizeof(nh) + name_sz + desc_sz > size)
            break;
        if (nh.type == 3 /* NT_GNU_BUILD_ID */ && nh.namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
            nh.descsz > 0 && nh.descsz <= PROF_BUILD_ID_MAX) {
            memcpy(out, name + name_sz, nh.descsz);
            return (uint8_t)nh.descsz;
        }
        off += sizeof(nh) + name_sz + desc_sz;
    }
    return 0;
}

#endif
