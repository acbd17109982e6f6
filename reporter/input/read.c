/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The profile reader: loads the whole file into memory, checks the file header, then walks
 * the records one by one. Each record is checked before any of its fields is used (size,
 * fixed part, variable tail, NUL-terminated strings), so a corrupt or hostile file can
 * cause an error but never a read out of bounds; the fuzz target (tests/fuzz/fuzz_read.c)
 * holds it to that. Strings and frame arrays are not copied: the profile keeps the file's
 * bytes and points into them. A stream maps the file instead and walks it twice: once for
 * everything but the samples, once for the samples, handed over in batches. Reporter
 * thread only.
 *
 *   offset 0                header_bytes
 *   | prof_file_header ... | type size | fixed | tail | pad | type size | ... (EOF)
 *                           `------- size_bytes -----------'
 */
#include "reporter/input/read.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/check.h"
#include "common/err.h"
#include "common/grow.h"
#include "include/libprof/prof_format.h"
#include "reporter/input/profile.h"

#define READ_CHUNK_BYTES (1u << 20)
/* A stream gives the kernel back the pages of the file it has walked past every so many
 * bytes, so that its resident size stays bounded whatever the file's size. */
#define READ_DROP_BYTES (2u << 20)

/* What a walk over the records does. */
enum walk_mode {
    WALK_ALL,     /* read every record, keep every sample (rep_read_file) */
    WALK_META,    /* read every record but keep no sample: check and count them */
    WALK_SAMPLES, /* read only the samples, a batch at a time */
};

/* A walk's state: its mode and, for WALK_SAMPLES, whom to give each batch. */
struct walk {
    enum walk_mode mode;
    rep_read_fn *batch; /* called with up to REP_READ_BATCH samples in p */
    void *ctx;
    size_t dropped_to;        /* the mapping's bytes below this were given back */
    struct stack_def *stacks; /* PROF_REC_STACKs read so far, by id; freed by walk() */
    size_t n_stacks;
    size_t cap_stacks;
    const unsigned char *traces; /* a PROF_REC_SAMPLE_TRACES's numbers, for the next
                                  * PROF_REC_SAMPLES; NULL none */
    const unsigned char *traces_end;
    uint32_t n_traces;           /* entries they are for */
};

/* A PROF_REC_STACK: what the compact samples of PROF_REC_SAMPLES name by id. */
struct stack_def {
    const unsigned char *frames; /* in the file's bytes */
    uint64_t sp_word;
    uint32_t state; /* after the frames in wall profiles, else 0 */
    uint32_t label_set; /* after the frames, when the thread had labels; else 0 */
    uint16_t n_frames;
    uint8_t stop_reason;
    uint8_t flags;
};

/* One record being decoded: where it starts and how long it says it is. */
struct record {
    const unsigned char *at; /* the record's first byte */
    uint64_t offset;         /* its offset in the file, for messages */
    uint32_t type;
    uint32_t size_bytes;
    const char *str; /* the NUL-terminated string after the fixed part, for the types that
                      * have one (set by read_record() once it is checked) */
};

/* The fixed part of each type of record read here, and whether a NUL-terminated string
 * follows it: read_record() checks both before the type's reader runs. */
static const struct record_shape {
    uint32_t type;
    uint32_t fixed_bytes;
    bool has_string;
} shapes[] = {
    {PROF_REC_PROCESS, sizeof(struct prof_rec_process), true},
    {PROF_REC_MAP, sizeof(struct prof_rec_map), true},
    {PROF_REC_THREAD, sizeof(struct prof_rec_thread), true},
    {PROF_REC_SAMPLE, sizeof(struct prof_rec_sample), false},
    {PROF_REC_STACK, sizeof(struct prof_rec_stack), false},
    {PROF_REC_SAMPLES, sizeof(struct prof_rec_samples), false},
    {PROF_REC_SNAPSHOT, sizeof(struct prof_rec_snapshot), false},
    {PROF_REC_STATS, sizeof(struct prof_rec_stats), false},
    {PROF_REC_NOTE, sizeof(struct prof_rec_note), true},
    {PROF_REC_LABELS, sizeof(struct prof_rec_labels), false},
    {PROF_REC_LABEL_SET, sizeof(struct prof_rec_label_set), false},
    {PROF_REC_TRACE, sizeof(struct prof_rec_trace), false},
    {PROF_REC_SAMPLE_TRACES, sizeof(struct prof_rec_sample_traces), false},
};

static int corrupt(const struct rep_profile *p, const struct record *r, struct cmn_err *err,
                   const char *what)
{
    return cmn_err_set(err, CMN_E_INPUT, "%s: corrupt record at byte %" PRIu64 " (type %u): %s",
                       p->name, r->offset, r->type, what);
}

/* Checks that the record holds the fixed part of its type and, for a type with a string,
 * that the bytes after it contain a NUL; r->str is set to those bytes. A type without a
 * shape passes. */
static int check_shape(const struct rep_profile *p, struct record *r, struct cmn_err *err)
{
    const struct record_shape *sh = NULL;
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]) && sh == NULL; i++)
        sh = shapes[i].type == r->type ? &shapes[i] : NULL;
    if (sh == NULL)
        return CMN_OK;
    if (r->size_bytes < sh->fixed_bytes)
        return corrupt(p, r, err, "smaller than its fixed fields");
    if (!sh->has_string)
        return CMN_OK;
    const unsigned char *tail = r->at + sh->fixed_bytes;
    if (memchr(tail, '\0', r->size_bytes - sh->fixed_bytes) == NULL)
        return corrupt(p, r, err, "string without its terminating NUL");
    r->str = (const char *)tail;
    return CMN_OK;
}

/* Copies the fixed part of r (n bytes, which check_shape() proved there) into rec. */
static void take_fixed(const struct record *r, void *rec, size_t n)
{
    assert(r->size_bytes >= n);
    memcpy(rec, r->at, n);
}

static void read_process(struct rep_profile *p, const struct record *r)
{
    struct prof_rec_process rec;
    take_fixed(r, &rec, sizeof(rec));
    p->has_process = true;
    p->process = (struct rep_process){
        .pid = rec.pid,
        .ppid = rec.ppid,
        .start_mono_ns = rec.start_mono_ns,
        .start_real_ns = rec.start_real_ns,
        .requested_hz = rec.requested_hz,
        .effective_hz = rec.effective_hz,
        .timer_source = rec.timer_source,
        .unwinder = rec.unwinder,
        .max_depth = rec.max_depth,
        .mode = rec.mode,
        .exe = r->str,
    };
}

static int read_map(struct rep_profile *p, const struct record *r, struct cmn_err *err)
{
    struct prof_rec_map rec;
    take_fixed(r, &rec, sizeof(rec));
    if (rec.build_id_len > PROF_BUILD_ID_MAX)
        return corrupt(p, r, err, "build-id longer than PROF_BUILD_ID_MAX");
    if (rec.end < rec.start)
        return corrupt(p, r, err, "mapping ends before it starts");
    struct rep_map m = {
        .time_ns = rec.time_ns,
        .start = rec.start,
        .end = rec.end,
        .file_offset = rec.file_offset,
        .prot = rec.prot,
        .build_id_len = rec.build_id_len,
        .path = r->str,
    };
    memcpy(m.build_id, rec.build_id, rec.build_id_len);
    return rep_profile_add_map(p, &m) == CMN_OK ? CMN_OK : cmn_err_nomem(err);
}

static int read_thread(struct rep_profile *p, const struct record *r, struct cmn_err *err)
{
    struct prof_rec_thread rec;
    take_fixed(r, &rec, sizeof(rec));
    struct rep_thread t = {.time_ns = rec.time_ns, .tid = rec.tid, .name = r->str};
    return rep_profile_add_thread(p, &t) == CMN_OK ? CMN_OK : cmn_err_nomem(err);
}

/* One decoded sample, from a PROF_REC_SAMPLE or a PROF_REC_SAMPLES entry: counted by the
 * walks that check the file, kept by those that keep samples. */
static int take_sample(struct rep_profile *p, const struct rep_sample *s, const struct walk *w,
                       struct cmn_err *err)
{
    /* libunwind's twins of PROF_UNWIND=check are kept but not counted: they are no
     * samples of the program's. */
    if (w->mode != WALK_SAMPLES && !(s->flags & PROF_SAMPLE_ORACLE)) {
        p->n_samples_read++;
        p->n_stopped[s->stop_reason < PROF_STOP_N ? s->stop_reason : PROF_STOP_N]++;
    }
    if (w->mode == WALK_META)
        return CMN_OK;
    return rep_profile_add_sample(p, s) == CMN_OK ? CMN_OK : cmn_err_nomem(err);
}

/* Whether a sample may name label set id and trace: defined before it (a stream's second
 * walk knows every definition of the file from the first, which checked the order). */
static bool names_known(const struct rep_profile *p, const struct walk *w, uint32_t label_set,
                        uint64_t trace)
{
    if (w->mode == WALK_SAMPLES)
        return true;
    return (label_set == 0 || rep_profile_label_set(p, label_set) != NULL) &&
           trace <= p->n_traces;
}

static int read_sample(struct rep_profile *p, const struct record *r, const struct walk *w,
                       struct cmn_err *err)
{
    struct prof_rec_sample rec;
    take_fixed(r, &rec, sizeof(rec));
    if ((size_t)rec.n_frames * sizeof(uint64_t) > r->size_bytes - sizeof(rec))
        return corrupt(p, r, err, "more frames than the record holds");
    /* The thread's labels and trace follow the frames, when it had them. */
    size_t after = sizeof(rec) + (size_t)rec.n_frames * sizeof(uint64_t);
    struct prof_sample_ctx ctx = {0};
    if (r->size_bytes - after >= sizeof(ctx))
        memcpy(&ctx, r->at + after, sizeof(ctx));
    if (!names_known(p, w, ctx.label_set, ctx.trace))
        return corrupt(p, r, err, "a sample names a label set or a trace not defined before it");
    struct rep_sample s = {
        .label_set = ctx.label_set,
        .trace = ctx.trace,
        .time_ns = rec.time_ns,
        .tid = rec.tid,
        .weight = rec.weight,
        .n_frames = rec.n_frames,
        .stop_reason = rec.stop_reason,
        .flags = rec.flags,
        .state = rec.state,
        .sp_word = rec.sp_word,
        .frames = r->at + sizeof(rec),
    };
    return take_sample(p, &s, w, err);
}

static int read_stack(struct rep_profile *p, const struct record *r, struct walk *w,
                      struct cmn_err *err)
{
    struct prof_rec_stack rec;
    take_fixed(r, &rec, sizeof(rec));
    if ((size_t)rec.n_frames * sizeof(uint64_t) > r->size_bytes - sizeof(rec))
        return corrupt(p, r, err, "more frames than the record holds");
    if (rec.id != w->n_stacks)
        return corrupt(p, r, err, "stack ids out of sequence");
    if (!CMN_GROW(w->stacks, w->cap_stacks, w->n_stacks + 1, 256))
        return cmn_err_nomem(err);
    /* A wall profile's stack carries the thread's state after its frames. */
    size_t after = sizeof(rec) + (size_t)rec.n_frames * sizeof(uint64_t);
    struct prof_stack_state tail = {0};
    if (r->size_bytes - after >= sizeof(tail))
        memcpy(&tail, r->at + after, sizeof(tail));
    if (!names_known(p, w, tail.label_set, 0))
        return corrupt(p, r, err, "a stack names a label set not defined before it");
    w->stacks[w->n_stacks++] = (struct stack_def){.frames = r->at + sizeof(rec),
                                                  .state = tail.state,
                                                  .label_set = tail.label_set,
                                                  .sp_word = rec.sp_word,
                                                  .n_frames = rec.n_frames,
                                                  .stop_reason = rec.stop_reason,
                                                  .flags = rec.flags};
    return CMN_OK;
}

/* One unsigned LEB128 number from [*at, end); false when it runs past end or 64 bits. */
static bool get_uleb(const unsigned char **at, const unsigned char *end, uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned shift = 0; *at < end && shift < 64; shift += 7) {
        unsigned char byte = *(*at)++;
        x |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *v = x;
            return true;
        }
    }
    return false;
}

static int read_samples(struct rep_profile *p, const struct record *r, struct walk *w,
                        struct cmn_err *err)
{
    struct prof_rec_samples rec;
    take_fixed(r, &rec, sizeof(rec));
    const unsigned char *at = r->at + sizeof(rec), *end = r->at + r->size_bytes;
    /* The traces a PROF_REC_SAMPLE_TRACES right before gave these entries. */
    const unsigned char *tr = w->traces, *tr_end = w->traces_end;
    bool has_traces = tr != NULL;
    w->traces = w->traces_end = NULL;
    if (has_traces && w->n_traces != rec.n_samples)
        return corrupt(p, r, err, "its traces are for another number of samples");
    uint64_t time = rec.base_time_ns;
    for (uint32_t i = 0; i < rec.n_samples; i++) {
        uint64_t step, tid, id, weight, trace = 0;
        if (!get_uleb(&at, end, &step) || !get_uleb(&at, end, &tid) || !get_uleb(&at, end, &id) ||
            !get_uleb(&at, end, &weight))
            return corrupt(p, r, err, "sample entries run past the record");
        if (has_traces && !get_uleb(&tr, tr_end, &trace))
            return corrupt(p, r, err, "its traces run past their record");
        if (!names_known(p, w, 0, trace) || trace > UINT32_MAX)
            return corrupt(p, r, err, "a sample names a trace not defined before it");
        if (id >= w->n_stacks)
            return corrupt(p, r, err, "a sample names a stack not defined before it");
        if (tid > UINT32_MAX || weight >= UINT32_MAX)
            return corrupt(p, r, err, "a sample's tid or weight is out of range");
        time += (uint64_t)((int64_t)(step >> 1) ^ -(int64_t)(step & 1)); /* zigzag */
        assert(at <= end && id < w->n_stacks);
        const struct stack_def *st = &w->stacks[id];
        struct rep_sample s = {
            .time_ns = time,
            .tid = (uint32_t)tid,
            .weight = (uint32_t)weight + 1,
            .n_frames = st->n_frames,
            .stop_reason = st->stop_reason,
            .flags = st->flags,
            .state = st->state,
            .label_set = st->label_set,
            .trace = (uint32_t)trace,
            .sp_word = st->sp_word,
            .frames = st->frames,
        };
        int rc = take_sample(p, &s, w, err);
        if (rc != CMN_OK)
            return rc;
    }
    assert(at <= end);
    return CMN_OK;
}

static int read_snapshot(struct rep_profile *p, const struct record *r, struct cmn_err *err)
{
    struct prof_rec_snapshot rec;
    take_fixed(r, &rec, sizeof(rec));
    struct rep_snap_thread t = {.time_ns = rec.time_ns,
                                .tid = rec.tid,
                                .status = rec.status,
                                .run_state = rec.run_state,
                                .syscall = rec.syscall};
    return rep_profile_add_snap_thread(p, &t) == CMN_OK ? CMN_OK : cmn_err_nomem(err);
}

static int read_stats(struct rep_profile *p, const struct record *r, struct cmn_err *err)
{
    struct prof_rec_stats rec;
    take_fixed(r, &rec, sizeof(rec));
    if ((uint64_t)rec.n_counters * sizeof(uint64_t) > r->size_bytes - sizeof(rec))
        return corrupt(p, r, err, "more counters than the record holds");
    /* Counters this reader does not know are ignored; ones the writer did not know are 0. */
    size_t n = rec.n_counters < PROF_STAT_N ? rec.n_counters : PROF_STAT_N;
    assert(n * sizeof(uint64_t) <= r->size_bytes - sizeof(rec));
    memset(p->stats, 0, sizeof(p->stats));
    memcpy(p->stats, r->at + sizeof(rec), n * sizeof(uint64_t));
    p->has_stats = true;
    return CMN_OK;
}

static int read_note(struct rep_profile *p, const struct record *r, struct cmn_err *err)
{
    return rep_profile_add_note(p, r->str) == CMN_OK ? CMN_OK : cmn_err_nomem(err);
}

/* PROF_REC_LABELS: n pairs of strings after the fixed part, each NUL-terminated inside the
 * record. The last such record wins. */
static int read_labels(struct rep_profile *p, const struct record *r, struct cmn_err *err)
{
    struct prof_rec_labels rec;
    take_fixed(r, &rec, sizeof(rec));
    const char *at = (const char *)r->at + sizeof(rec), *end = (const char *)r->at + r->size_bytes;
    if (rec.n_labels > (size_t)(end - at) / 2)
        return corrupt(p, r, err, "more labels than the record holds");
    struct rep_label *labels = calloc(rec.n_labels ? rec.n_labels : 1, sizeof(*labels));
    if (labels == NULL)
        return cmn_err_nomem(err);
    for (uint32_t i = 0; i < rec.n_labels; i++) {
        const char *k = at, *kend = memchr(k, '\0', (size_t)(end - k));
        const char *v = kend ? kend + 1 : end;
        const char *vend = v < end ? memchr(v, '\0', (size_t)(end - v)) : NULL;
        if (vend == NULL) {
            free(labels);
            return corrupt(p, r, err, "a label without its terminating NUL");
        }
        assert(k < v && v <= vend && vend < end);
        labels[i] = (struct rep_label){.key = k, .value = v};
        at = vend + 1;
    }
    free(p->labels);
    p->labels = labels;
    p->n_labels = rec.n_labels;
    return CMN_OK;
}

/* PROF_REC_LABEL_SET: n pairs of strings, as in PROF_REC_LABELS. Each id once a file. */
static int read_label_set(struct rep_profile *p, const struct record *r, struct cmn_err *err)
{
    struct prof_rec_label_set rec;
    take_fixed(r, &rec, sizeof(rec));
    const char *at = (const char *)r->at + sizeof(rec), *end = (const char *)r->at + r->size_bytes;
    if (rec.n_labels == 0 || rec.n_labels > (size_t)(end - at) / 2)
        return corrupt(p, r, err, "a label set of no labels, or more than the record holds");
    struct rep_label *pairs = calloc(rec.n_labels, sizeof(*pairs));
    if (pairs == NULL)
        return cmn_err_nomem(err);
    for (uint32_t i = 0; i < rec.n_labels; i++) {
        const char *k = at, *kend = memchr(k, '\0', (size_t)(end - k));
        const char *v = kend ? kend + 1 : end;
        const char *vend = v < end ? memchr(v, '\0', (size_t)(end - v)) : NULL;
        if (vend == NULL) {
            free(pairs);
            return corrupt(p, r, err, "a label without its terminating NUL");
        }
        pairs[i] = (struct rep_label){.key = k, .value = v};
        at = vend + 1;
    }
    int rc = rep_profile_add_label_set(p, rec.id, pairs, rec.n_labels);
    if (rc == CMN_E_NOMEM)
        return cmn_err_nomem(err);
    return rc == CMN_OK ? CMN_OK : corrupt(p, r, err, "a label set id of 0, or defined twice");
}

static int read_trace(struct rep_profile *p, const struct record *r, struct cmn_err *err)
{
    struct prof_rec_trace rec;
    take_fixed(r, &rec, sizeof(rec));
    if (rec.id != p->n_traces + 1)
        return corrupt(p, r, err, "trace ids out of sequence");
    struct rep_trace t = {.flags = rec.trace_flags};
    memcpy(t.trace_id, rec.trace_id, sizeof(t.trace_id));
    memcpy(t.span_id, rec.span_id, sizeof(t.span_id));
    return rep_profile_add_trace(p, &t) == CMN_OK ? CMN_OK : cmn_err_nomem(err);
}

/* PROF_REC_SAMPLE_TRACES: kept for the PROF_REC_SAMPLES that follows it. */
static int read_sample_traces(struct rep_profile *p, const struct record *r, struct walk *w,
                              struct cmn_err *err)
{
    struct prof_rec_sample_traces rec;
    take_fixed(r, &rec, sizeof(rec));
    if (rec.n_samples > r->size_bytes - sizeof(rec))
        return corrupt(p, r, err, "more traces than the record holds");
    w->traces = r->at + sizeof(rec);
    w->traces_end = r->at + r->size_bytes;
    w->n_traces = rec.n_samples;
    return CMN_OK;
}

static int read_record(struct rep_profile *p, struct record *r, struct walk *w, struct cmn_err *err)
{
    /* walk_records() hands over whole records, in the file. */
    assert(r->size_bytes >= sizeof(struct prof_rec_hdr) && r->at >= p->bytes &&
           (size_t)(r->at - p->bytes) <= p->n_bytes - r->size_bytes);
    bool is_sample = r->type == PROF_REC_STACK || r->type == PROF_REC_SAMPLES ||
                     r->type == PROF_REC_SAMPLE || r->type == PROF_REC_SAMPLE_TRACES;
    if (w->mode == WALK_SAMPLES && !is_sample)
        return CMN_OK; /* a stream's second walk reads the samples only */
    if (w->mode != WALK_SAMPLES && r->type != PROF_REC_STACK && r->type != PROF_REC_SAMPLES)
        p->has_end = false; /* set again by an END record that comes last */
    int rc = check_shape(p, r, err);
    if (rc != CMN_OK)
        return rc;
    /* A batch's traces apply to the record right after them, which must be the batch. */
    if (w->traces != NULL && r->type != PROF_REC_SAMPLES)
        return corrupt(p, r, err, "sample traces not followed by their samples");
    switch (r->type) {
    case PROF_REC_SAMPLE_TRACES:
        return read_sample_traces(p, r, w, err);
    case PROF_REC_LABEL_SET:
        return read_label_set(p, r, err);
    case PROF_REC_TRACE:
        return read_trace(p, r, err);
    case PROF_REC_STACK:
        return read_stack(p, r, w, err);
    case PROF_REC_SAMPLES:
        return read_samples(p, r, w, err);
    case PROF_REC_SAMPLE:
        return read_sample(p, r, w, err);
    case PROF_REC_PROCESS:
        read_process(p, r);
        return CMN_OK;
    case PROF_REC_MAP:
        return read_map(p, r, err);
    case PROF_REC_THREAD:
        return read_thread(p, r, err);
    case PROF_REC_STATS:
        return read_stats(p, r, err);
    case PROF_REC_SNAPSHOT:
        return read_snapshot(p, r, err);
    case PROF_REC_NOTE:
        return read_note(p, r, err);
    case PROF_REC_LABELS:
        return read_labels(p, r, err);
    case PROF_REC_END:
        p->has_end = true;
        return CMN_OK;
    default:
        p->n_unknown_records++;
        return CMN_OK;
    }
}

static bool all_zero(const unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != 0)
            return false;
    return true;
}

static int check_header(const struct rep_profile *p, uint32_t *header_bytes /* out */,
                        struct cmn_err *err)
{
    struct prof_file_header h;
    const size_t magic_bytes = sizeof(h.magic);
    if (p->n_bytes == 0)
        return cmn_err_set(err, CMN_E_INPUT, "%s: empty file, not a libprof profile", p->name);
    size_t n = p->n_bytes < magic_bytes ? p->n_bytes : magic_bytes;
    if (memcmp(p->bytes, PROF_FILE_MAGIC, n) != 0)
        return cmn_err_set(err, CMN_E_INPUT, "%s: not a libprof profile (bad magic)", p->name);
    if (p->n_bytes < sizeof(h))
        return cmn_err_set(err, CMN_E_INPUT, "%s: file header cut short (%zu of %zu bytes)",
                           p->name, p->n_bytes, sizeof(h));
    memcpy(&h, p->bytes, sizeof(h));
    if (h.version == 0)
        return cmn_err_set(err, CMN_E_INPUT, "%s: bad format version 0", p->name);
    if (h.version > PROF_FILE_VERSION)
        return cmn_err_set(err, CMN_E_INPUT,
                           "%s: format version %u is newer than this prof reads (%u); "
                           "use a newer prof",
                           p->name, h.version, PROF_FILE_VERSION);
    if (h.header_bytes < sizeof(h) || h.header_bytes > p->n_bytes)
        return cmn_err_set(err, CMN_E_INPUT, "%s: corrupt file header (header_bytes %u)", p->name,
                           h.header_bytes);
    *header_bytes = h.header_bytes;
    return CMN_OK;
}

/* Gives the kernel back the pages of a mapped file walked past, below off (a private
 * read-only file mapping reads them again from the file if they are touched later, as the
 * strings of the records kept may be). */
static void drop_behind(struct rep_profile *p, struct walk *w, size_t off)
{
    if (!p->is_mapped || off < w->dropped_to + READ_DROP_BYTES)
        return;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t to = off / page * page;
    if (to > w->dropped_to) {
        madvise(p->bytes + w->dropped_to, to - w->dropped_to, MADV_DONTNEED);
        w->dropped_to = to;
    }
}

/* Hands a full batch of samples (or the last one) to the stream's callback and empties
 * p->samples. */
static int flush_batch(struct rep_profile *p, struct walk *w, size_t off, bool is_last)
{
    if (p->n_samples < REP_READ_BATCH && !is_last)
        return CMN_OK;
    int rc = p->n_samples > 0 ? w->batch(p, w->ctx) : CMN_OK;
    p->n_samples = 0;
    drop_behind(p, w, off);
    return rc;
}

/* Walks the records of p->bytes. A record header cut short (or a tail of zeros) and a
 * record body cut short both mean that the file was cut: is_torn, and the records before
 * it stand. */
static int walk_records(struct rep_profile *p, struct walk *w, struct cmn_err *err)
{
    uint32_t header_bytes = 0;
    int rc = check_header(p, &header_bytes, err);
    if (rc != CMN_OK)
        return rc;
    size_t off = header_bytes;
    while (off < p->n_bytes) {
        size_t left = p->n_bytes - off;
        struct prof_rec_hdr hdr;
        if (left < sizeof(hdr) || all_zero(p->bytes + off, left)) {
            p->is_torn = true;
            p->torn_offset = off;
            break;
        }
        memcpy(&hdr, p->bytes + off, sizeof(hdr));
        struct record r = {
            .at = p->bytes + off, .offset = off, .type = hdr.type, .size_bytes = hdr.size_bytes};
        if (hdr.size_bytes < sizeof(hdr))
            return corrupt(p, &r, err, "size_bytes smaller than a record header");
        if (hdr.size_bytes % PROF_REC_ALIGN != 0)
            return corrupt(p, &r, err, "size_bytes not a multiple of 8");
        if (hdr.size_bytes > PROF_REC_MAX_BYTES)
            return corrupt(p, &r, err, "size_bytes above PROF_REC_MAX_BYTES");
        if (hdr.size_bytes > left) {
            p->is_torn = true;
            p->torn_offset = off;
            break;
        }
        rc = read_record(p, &r, w, err);
        if (rc == CMN_OK && w->mode == WALK_SAMPLES)
            rc = flush_batch(p, w, off, false);
        else if (w->mode == WALK_META)
            drop_behind(p, w, off);
        if (rc != CMN_OK)
            return rc;
        off += hdr.size_bytes;
    }
    assert(off <= p->n_bytes);
    if (w->mode == WALK_SAMPLES)
        return flush_batch(p, w, off, true);
    rep_profile_finish(p);
    return CMN_OK;
}

static int walk(struct rep_profile *p, struct walk *w, struct cmn_err *err)
{
    int rc = walk_records(p, w, err);
    free(w->stacks);
    w->stacks = NULL;
    w->n_stacks = w->cap_stacks = 0;
    return rc;
}

static int parse(struct rep_profile *p, struct cmn_err *err)
{
    struct walk w = {.mode = WALK_ALL};
    return walk(p, &w, err);
}

/* Reads all of fd into a malloc'd buffer; the size is a hint (0 for pipes). */
static int slurp(int fd, size_t size_hint, unsigned char **buf /* out */, size_t *n /* out */)
{
    /* The size said, exactly; then twice as much each time it is not enough. */
    unsigned char *b = NULL;
    size_t cap = 0, len = 0;
    if (!CMN_GROW(b, cap, size_hint + 1, size_hint + 1))
        return CMN_E_NOMEM;
    for (;;) {
        if (len == cap && !CMN_GROW(b, cap, len + 1, READ_CHUNK_BYTES)) {
            free(b);
            return CMN_E_NOMEM;
        }
        ssize_t got = read(fd, b + len, cap - len);
        if (got == 0)
            break;
        if (got < 0) {
            if (errno == EINTR)
                continue;
            int saved_errno = errno;
            free(b);
            errno = saved_errno;
            return CMN_E_INPUT;
        }
        len += (size_t)got;
    }
    *buf = b;
    *n = len;
    return CMN_OK;
}

int rep_read_file(const char *path, struct rep_profile *p /* out */, struct cmn_err *err)
{
    rep_profile_init(p, path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return cmn_err_set(err, CMN_E_INPUT, "%s: %s", path, strerror(errno));
    struct stat st;
    int rc;
    if (fstat(fd, &st) != 0) {
        rc = cmn_err_set(err, CMN_E_INPUT, "%s: %s", path, strerror(errno));
    } else if (S_ISDIR(st.st_mode)) {
        rc = cmn_err_set(err, CMN_E_INPUT, "%s: is a directory, not a libprof profile", path);
    } else {
        p->owner_uid = (uint32_t)st.st_uid;
        size_t hint = S_ISREG(st.st_mode) ? (size_t)st.st_size : 0;
        rc = slurp(fd, hint, &p->bytes, &p->n_bytes);
        if (rc == CMN_E_NOMEM)
            cmn_err_nomem(err);
        else if (rc != CMN_OK)
            cmn_err_set(err, rc, "%s: %s", path, strerror(errno));
    }
    close(fd);
    if (rc == CMN_OK)
        rc = parse(p, err);
    if (rc != CMN_OK)
        rep_profile_fini(p);
    return rc;
}

int rep_read_buffer(const void *buf, size_t n, const char *name, struct rep_profile *p /* out */,
                    struct cmn_err *err)
{
    rep_profile_init(p, name);
    p->bytes = malloc(n ? n : 1);
    if (p->bytes == NULL)
        return cmn_err_nomem(err);
    if (n)
        memcpy(p->bytes, buf, n);
    p->n_bytes = n;
    int rc = parse(p, err);
    if (rc != CMN_OK)
        rep_profile_fini(p);
    return rc;
}

int rep_read_file_stream(const char *path, struct rep_profile *p /* out */, rep_read_fn *ready,
                         rep_read_fn *batch, void *ctx, struct cmn_err *err)
{
    rep_profile_init(p, path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    /* Mapped only when no other user can cut it short under us (SIGBUS): the reader's own
     * file or root's; another's is read into memory. */
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (st.st_uid == getuid() || st.st_uid == 0)) {
        p->owner_uid = (uint32_t)st.st_uid;
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m != MAP_FAILED) {
            p->bytes = m;
            p->n_bytes = (size_t)st.st_size;
            p->is_mapped = true;
        }
    }
    if (fd >= 0)
        close(fd);
    int rc;
    if (!p->is_mapped) {
        /* A pipe, an empty file or one that cannot be mapped: read it whole, then hand all
         * its samples over as one batch. The errors are rep_read_file's. */
        rep_profile_fini(p);
        rc = rep_read_file(path, p, err);
        if (rc == CMN_OK)
            rc = ready(p, ctx);
        if (rc == CMN_OK && p->n_samples > 0)
            rc = batch(p, ctx);
        return rc;
    }
    madvise(p->bytes, p->n_bytes, MADV_SEQUENTIAL);
    struct walk meta = {.mode = WALK_META};
    rc = walk(p, &meta, err);
    if (rc == CMN_OK)
        rc = ready(p, ctx);
    if (rc == CMN_OK) {
        /* The first walk checked every record: this one meets no error of its own. */
        struct walk samples = {.mode = WALK_SAMPLES, .batch = batch, .ctx = ctx};
        bool is_torn = p->is_torn;
        rc = walk(p, &samples, err);
        p->is_torn = is_torn;
    }
    return rc;
}

/* 1 when path holds nothing of a profile but, maybe, the start of its header: its
 * process was killed as it started (a profile is created, then its header written). */
bool rep_read_is_stillborn(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
        st.st_size >= (off_t)sizeof(struct prof_file_header))
        return false;
    char head[sizeof(struct prof_file_header)];
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(head, 1, sizeof(head), f) : 0;
    if (f)
        fclose(f);
    return (off_t)n == st.st_size && memcmp(head, PROF_FILE_MAGIC, n) == 0;
}
