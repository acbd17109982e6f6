/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Thread labels (see labels.h). The tables:
 *
 *   strings: open addressing by hash -> struct lstr (hash, len, bytes), never freed
 *   sets:    open addressing by hash -> struct lset (id, n, pairs of lstr pointers sorted
 *            by key), never freed; and by id, in chunks of LP_SET_CHUNK pointers
 *
 * A table is replaced by one twice its size when half full; readers that hold the old one
 * still find every entry it had, and miss only what was added since, which sends them to
 * the locked path. Replaced tables are kept (their memory is a geometric series).
 *
 * A thread's state (struct lthread), made on its first call and registered for the writer
 * thread: the transition cache, and the history ring of its changes:
 *
 *   hist[i & (LP_LABELS_HIST - 1)] for tail <= i < head:
 *   | seq | label_set | ticks | trace (struct smp_trace) |
 *
 * The thread alone writes head and the entries; the writer alone writes tail. An entry is
 * written under its own sequence number (odd while it changes), since a full ring has its
 * newest entry rewritten in place (marked lost), which the writer may be reading.
 */
#include "libprof/labels.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "arch/arch.h"
#include "common/clock.h"
#include "common/hash.h"
#include "sampler/handler.h"

#define LP_CACHE_N 64u               /* a thread's transitions cached, a power of two */
#define LP_SET_CHUNK 1024u           /* set pointers per chunk of the by-id array */
#define LP_TABLE_MIN 256u            /* slots of a table at first */
#define LP_TOKEN_TAG 0x504c000000000000ull /* "PL": a push token, the set id below */
#define LP_TOKEN_MASK 0x00000000ffffffffull
#define LP_HIST_MASK (LP_LABELS_HIST - 1u)
#define LP_HIST_LOST 1u              /* lhist.flags: changes were lost in this span */
#define LP_HIST_NS 2u                /* lhist.flags: ticks holds CLOCK_MONOTONIC (a thread
                                      * that turned the TSC off) */
#define LP_CAL_MIN_SPAN_NS 2000000ull /* ticks are measured over 2 ms at least */
#define LP_CAL_TRIES 4u                 /* reads of ticks and time, the tightest kept */

_Static_assert((LP_LABELS_HIST & (LP_LABELS_HIST - 1u)) == 0, "history: a power of two");
_Static_assert(LP_LABELS_MAX_SETS % LP_SET_CHUNK == 0, "sets: whole chunks");

struct lstr {
    uint64_t hash;
    uint32_t len;
    char s[]; /* len bytes, then a NUL */
};

struct lset {
    uint64_t hash;
    uint32_t id;
    uint32_t n;
    const struct lstr *kv[][2]; /* key, value; sorted by key bytes */
};

/* An open-addressing table of immutable entries (strings or sets). */
struct table {
    size_t mask;
    _Atomic(const void *) slot[];
};

/* One cached transition: from set `from`, the key and the value at these addresses (with
 * these contents) lead to set `to`. */
struct ltrans {
    const char *key;
    const char *value;
    const struct lstr *k;
    const struct lstr *v; /* NULL: the change clears the key */
    uint32_t from;
    uint32_t to;
};

struct lhist {
    _Atomic uint32_t seq; /* odd while the thread writes the entry */
    uint32_t label_set;
    uint64_t ticks;        /* arch_ticks() when the context took effect */
    uint32_t flags;        /* LP_HIST_LOST */
    uint32_t pad;
    struct smp_trace trace;
};

struct lthread {
    struct lthread *next;    /* the registry's list; reg.mu */
    uint32_t tid;
    int is_tsc_off;          /* the thread turned the TSC off (PR_SET_TSC): its entries are
                              * stamped by the clock, a system call */
    _Atomic int is_gone;     /* the thread exited (its key's destructor) */
    uint64_t gone_ns;        /* CLOCK_MONOTONIC then */
    struct lhist pre;        /* the set and trace made the thread's while no session read
                              * histories (an idle start's, a fork child's): in effect before
                              * its first entry; written as an entry is (seq) */
    _Atomic uint64_t head;   /* entries appended; the thread */
    _Atomic uint64_t tail;   /* entries the writer let go of; the writer */
    struct ltrans cache[LP_CACHE_N]; /* the thread */
    struct lhist hist[LP_LABELS_HIST];
};

static struct {
    pthread_mutex_t mu;                     /* insertions into the tables below */
    _Atomic(struct table *) strs;           /* struct lstr by hash */
    _Atomic(struct table *) sets;           /* struct lset by hash */
    _Atomic(const struct lset *) *by_id[LP_LABELS_MAX_SETS / LP_SET_CHUNK]; /* id - 1 */
    _Atomic uint32_t n_sets;                /* ids given out: 1..n_sets */
    uint32_t n_strs;
} tab = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* The threads that ever set labels. */
static struct {
    pthread_mutex_t mu;       /* the lists, gen */
    struct lthread *list;     /* live threads, and exited ones not yet freed */
    struct lthread *free;     /* freed states, for new threads */
    _Atomic unsigned gen;     /* bumped when the list changes */
    pthread_key_t key;        /* its destructor marks a thread gone */
    pthread_once_t once;
} reg = {.mu = PTHREAD_MUTEX_INITIALIZER, .once = PTHREAD_ONCE_INIT};

/* The writer's view: a tid map of the registry, ticks to time. The writer buffer's owner. */
static struct {
    struct lthread **map;  /* open addressing by tid, a power of two, half full at most */
    size_t cap;
    unsigned gen;          /* reg.gen the map was made at */
    uint64_t t0, m0;       /* the first reading: ticks and CLOCK_MONOTONIC */
    uint64_t tp, mp;       /* the one before the latest */
    uint64_t t1, m1;       /* the latest */
    double ns_per_tick;    /* 0 until two readings are far enough apart */
} wr;

static _Atomic int history_on; /* a session reads the histories */
static const struct smp_trace no_trace;
static void pre_write(struct lthread *t, uint32_t set, const struct smp_trace *trace);
static void read_pair(uint64_t *t, uint64_t *m);
static __thread struct lthread *lt_self __attribute__((tls_model("initial-exec")));

/* ---- the tables ------------------------------------------------------------------ */

static struct table *table_new(size_t n)
{
    struct table *t = calloc(1, sizeof(*t) + n * sizeof(t->slot[0]));
    if (t != NULL)
        t->mask = n - 1;
    return t;
}

static const struct lstr *str_find(const struct table *t, const char *s, size_t len, uint64_t h)
{
    for (size_t i = h & t->mask;; i = (i + 1) & t->mask) {
        const struct lstr *e = atomic_load_explicit(&t->slot[i], memory_order_acquire);
        if (e == NULL)
            return NULL;
        if (e->hash == h && e->len == len && memcmp(e->s, s, len) == 0)
            return e;
    }
}

static const struct lset *set_find(const struct table *t, const struct lstr *const (*kv)[2],
                                   uint32_t n, uint64_t h)
{
    for (size_t i = h & t->mask;; i = (i + 1) & t->mask) {
        const struct lset *e = atomic_load_explicit(&t->slot[i], memory_order_acquire);
        if (e == NULL)
            return NULL;
        if (e->hash == h && e->n == n && memcmp(e->kv, kv, n * sizeof(kv[0])) == 0)
            return e;
    }
}

/* Puts entry e (hash h) into the table at *tp, replacing it by one twice its size when
 * half full; tab.mu held. 0 or -ENOMEM. */
static int table_put(_Atomic(struct table *) *tp, size_t n_before, const void *e, uint64_t h,
                     uint64_t (*hash_of)(const void *))
{
    struct table *t = atomic_load_explicit(tp, memory_order_relaxed);
    if (t == NULL || (n_before + 1) * 2 > t->mask + 1) {
        struct table *bigger = table_new(t ? (t->mask + 1) * 2 : LP_TABLE_MIN);
        if (bigger == NULL)
            return -ENOMEM;
        for (size_t i = 0; t && i <= t->mask; i++) {
            const void *old = atomic_load_explicit(&t->slot[i], memory_order_relaxed);
            if (old == NULL)
                continue;
            size_t j = hash_of(old) & bigger->mask;
            while (atomic_load_explicit(&bigger->slot[j], memory_order_relaxed) != NULL)
                j = (j + 1) & bigger->mask;
            atomic_store_explicit(&bigger->slot[j], old, memory_order_relaxed);
        }
        atomic_store_explicit(tp, bigger, memory_order_release); /* the old one is kept */
        t = bigger;
    }
    size_t i = h & t->mask;
    while (atomic_load_explicit(&t->slot[i], memory_order_relaxed) != NULL)
        i = (i + 1) & t->mask;
    atomic_store_explicit(&t->slot[i], e, memory_order_release);
    return 0;
}

static uint64_t str_hash_of(const void *e)
{
    return ((const struct lstr *)e)->hash;
}

static uint64_t set_hash_of(const void *e)
{
    return ((const struct lset *)e)->hash;
}

/* The interned copy of s (len bytes), added when new; NULL when it cannot be. */
static const struct lstr *str_intern(const char *s, size_t len)
{
    uint64_t h = cmn_hash_bytes(s, len);
    struct table *t = atomic_load_explicit(&tab.strs, memory_order_acquire);
    const struct lstr *e = t ? str_find(t, s, len, h) : NULL;
    if (e != NULL)
        return e;
    pthread_mutex_lock(&tab.mu);
    t = atomic_load_explicit(&tab.strs, memory_order_relaxed);
    e = t ? str_find(t, s, len, h) : NULL;
    if (e == NULL && tab.n_strs < LP_LABELS_MAX_STRS) {
        struct lstr *n = malloc(sizeof(*n) + len + 1);
        if (n != NULL) {
            n->hash = h;
            n->len = (uint32_t)len;
            memcpy(n->s, s, len);
            n->s[len] = '\0';
            if (table_put(&tab.strs, tab.n_strs, n, h, str_hash_of) == 0) {
                tab.n_strs++;
                e = n;
            } else {
                free(n);
            }
        }
    }
    pthread_mutex_unlock(&tab.mu);
    return e;
}

static uint64_t pairs_hash(const struct lstr *const (*kv)[2], uint32_t n)
{
    uint64_t h = n;
    for (uint32_t i = 0; i < n; i++)
        h = cmn_hash_word(h ^ (kv[i][0]->hash + 3 * kv[i][1]->hash));
    return h;
}

static const struct lset *set_by_id(uint32_t id)
{
    if (id == 0 || id > atomic_load_explicit(&tab.n_sets, memory_order_acquire))
        return NULL;
    _Atomic(const struct lset *) *chunk = tab.by_id[(id - 1) / LP_SET_CHUNK];
    return chunk ? atomic_load_explicit(&chunk[(id - 1) % LP_SET_CHUNK], memory_order_acquire)
                 : NULL;
}

/* The id of the set of n pairs kv (sorted), added when new; 0 for the empty set. 0 or
 * -errno. */
static int set_intern(const struct lstr *const (*kv)[2], uint32_t n, uint32_t *id)
{
    *id = 0;
    if (n == 0)
        return 0;
    uint64_t h = pairs_hash(kv, n);
    struct table *t = atomic_load_explicit(&tab.sets, memory_order_acquire);
    const struct lset *e = t ? set_find(t, kv, n, h) : NULL;
    if (e != NULL) {
        *id = e->id;
        return 0;
    }
    int rc = 0;
    pthread_mutex_lock(&tab.mu);
    t = atomic_load_explicit(&tab.sets, memory_order_relaxed);
    e = t ? set_find(t, kv, n, h) : NULL;
    uint32_t n_sets = atomic_load_explicit(&tab.n_sets, memory_order_relaxed);
    if (e == NULL && n_sets >= LP_LABELS_MAX_SETS)
        rc = -ENOSPC;
    if (e == NULL && rc == 0) {
        size_t c = n_sets / LP_SET_CHUNK;
        if (tab.by_id[c] == NULL)
            tab.by_id[c] = calloc(LP_SET_CHUNK, sizeof(*tab.by_id[c]));
        struct lset *s = malloc(sizeof(*s) + n * sizeof(s->kv[0]));
        if (tab.by_id[c] == NULL || s == NULL) {
            free(s);
            rc = -ENOMEM;
        } else {
            s->hash = h;
            s->n = n;
            s->id = n_sets + 1;
            memcpy(s->kv, kv, n * sizeof(kv[0]));
            if (table_put(&tab.sets, n_sets, s, h, set_hash_of) != 0) {
                free(s);
                rc = -ENOMEM;
            } else {
                atomic_store_explicit(&tab.by_id[c][n_sets % LP_SET_CHUNK], s,
                                      memory_order_release);
                atomic_store_explicit(&tab.n_sets, n_sets + 1, memory_order_release);
                e = s;
            }
        }
    }
    pthread_mutex_unlock(&tab.mu);
    if (e != NULL)
        *id = e->id;
    return rc;
}

/* The pairs of set `from` with key k set to v (NULL: removed) into kv (room for
 * LP_LABELS_MAX_PAIRS); their number, or -E2BIG. */
static int set_with(uint32_t from, const struct lstr *k, const struct lstr *v,
                    const struct lstr *(*kv)[2])
{
    const struct lset *s = set_by_id(from);
    uint32_t n = 0, had = s ? s->n : 0;
    int placed = v == NULL;
    for (uint32_t i = 0; i < had; i++) {
        int c = strcmp(s->kv[i][0]->s, k->s);
        if (c > 0 && !placed) {
            kv[n][0] = k;
            kv[n++][1] = v;
            placed = 1;
        }
        if (c == 0)
            continue; /* replaced (or removed) */
        if (n >= LP_LABELS_MAX_PAIRS)
            return -E2BIG;
        kv[n][0] = s->kv[i][0];
        kv[n++][1] = s->kv[i][1];
    }
    if (!placed) {
        if (n >= LP_LABELS_MAX_PAIRS)
            return -E2BIG;
        kv[n][0] = k;
        kv[n++][1] = v;
    }
    return (int)n;
}

/* ---- a thread's state ------------------------------------------------------------ */

static void thread_gone(void *p)
{
    struct lthread *t = p;
    t->gone_ns = cmn_clock_ns(CLOCK_MONOTONIC);
    atomic_store_explicit(&t->is_gone, 1, memory_order_release);
    smp_self.label_set = 0;
    lt_self = NULL;
}

static void make_key(void)
{
    pthread_key_create(&reg.key, thread_gone);
}

/* The calling thread's state, made and registered on its first call; NULL when memory is
 * short. */
static struct lthread *self_state(void)
{
    struct lthread *t = lt_self;
    if (t != NULL)
        return t;
    pthread_once(&reg.once, make_key);
    pthread_mutex_lock(&reg.mu);
    t = reg.free;
    if (t != NULL)
        reg.free = t->next;
    pthread_mutex_unlock(&reg.mu);
    if (t == NULL) {
        void *m = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                       -1, 0);
        if (m == MAP_FAILED)
            return NULL;
        t = m;
    }
    memset(t->cache, 0, sizeof(t->cache));
    atomic_store_explicit(&t->head, 0, memory_order_relaxed);
    atomic_store_explicit(&t->tail, 0, memory_order_relaxed);
    atomic_store_explicit(&t->is_gone, 0, memory_order_relaxed);
    t->gone_ns = 0;
    pre_write(t, 0, &no_trace);
    t->tid = (uint32_t)syscall(SYS_gettid);
    int tsc = 0;
    t->is_tsc_off = 0;
#ifdef PR_GET_TSC
    t->is_tsc_off = prctl(PR_GET_TSC, &tsc, 0, 0, 0) == 0 && tsc == PR_TSC_SIGSEGV;
#endif
    (void)tsc;
    pthread_setspecific(reg.key, t);
    pthread_mutex_lock(&reg.mu);
    t->next = reg.list;
    reg.list = t;
    atomic_fetch_add_explicit(&reg.gen, 1, memory_order_release);
    pthread_mutex_unlock(&reg.mu);
    lt_self = t;
    return t;
}

/* The thread's trace now (is_set 0: none). */
static const struct smp_trace *cur_trace(void)
{
    unsigned cur = smp_self.trace_cur;
    return cur == 1 || cur == 2 ? &smp_self.trace[cur - 1] : &no_trace;
}

/* Makes set and trace t's context before its first entry (t->pre), as an entry is
 * written: the writer may read it meanwhile (read_entry()). The thread. */
static void pre_write(struct lthread *t, uint32_t set, const struct smp_trace *trace)
{
    uint32_t q = atomic_load_explicit(&t->pre.seq, memory_order_relaxed);
    atomic_store_explicit(&t->pre.seq, q + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    t->pre.label_set = set;
    t->pre.ticks = 0;
    t->pre.flags = 0;
    t->pre.trace = *trace;
    atomic_store_explicit(&t->pre.seq, q + 2, memory_order_release);
}

/* Appends the thread's context now to its history; a full ring has its newest entry
 * rewritten, marked lost (see the file comment). */
static void hist_append(struct lthread *t, uint32_t set, const struct smp_trace *trace)
{
    uint64_t h = atomic_load_explicit(&t->head, memory_order_relaxed);
    uint64_t tl = atomic_load_explicit(&t->tail, memory_order_acquire);
    int is_full = h - tl >= LP_LABELS_HIST;
    struct lhist *e = &t->hist[(is_full ? h - 1 : h) & LP_HIST_MASK];
    uint32_t q = atomic_load_explicit(&e->seq, memory_order_relaxed);
    atomic_store_explicit(&e->seq, q + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    if (!is_full && !t->is_tsc_off) {
        e->ticks = arch_ticks();
        e->flags = 0;
    } else if (!is_full) {
        struct timespec ts = {0, 0};
        syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
        e->ticks = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
        e->flags = LP_HIST_NS;
    } else {
        e->flags |= LP_HIST_LOST;
    }
    e->label_set = set;
    e->trace = *trace;
    atomic_store_explicit(&e->seq, q + 2, memory_order_release);
    if (!is_full)
        atomic_store_explicit(&t->head, h + 1, memory_order_release);
}

/* Makes set `to` the thread's: one store for its handler, an entry for the writer. */
static void publish(struct lthread *t, uint32_t to)
{
    atomic_signal_fence(memory_order_seq_cst);
    smp_self.label_set = to;
    atomic_signal_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&history_on, memory_order_relaxed))
        hist_append(t, to, cur_trace());
    else
        pre_write(t, to, cur_trace());
}

static int is_empty(const char *s)
{
    return s == NULL || s[0] == '\0';
}

/* Whether cache entry c is this very transition: same set, same addresses, same bytes. */
static int cache_hit(const struct ltrans *c, uint32_t from, const char *key, const char *value)
{
    if (c->from != from || c->key != key || c->value != value || c->k == NULL ||
        strcmp(key, c->k->s) != 0)
        return 0;
    return c->v == NULL ? is_empty(value) : value != NULL && strcmp(value, c->v->s) == 0;
}

static size_t cache_slot(uint32_t from, const char *key, const char *value)
{
    uint64_t h = (uint64_t)(uintptr_t)key * 0x9e3779b97f4a7c15ull ^
                 (uint64_t)(uintptr_t)value * 0xc2b2ae3d27d4eb4full ^ from;
    return (size_t)(h >> 40) & (LP_CACHE_N - 1);
}

/* The transition not in the cache: interned, computed, cached. 0 or -errno. */
static int transit_slow(struct ltrans *c, uint32_t from, const char *key, const char *value,
                        uint32_t *to)
{
    size_t kl = key ? strnlen(key, LP_LABELS_MAX_STR + 1) : 0;
    size_t vl = value ? strnlen(value, LP_LABELS_MAX_STR + 1) : 0;
    if (kl == 0 || kl > LP_LABELS_MAX_STR || vl > LP_LABELS_MAX_STR)
        return -EINVAL;
    const struct lstr *k = str_intern(key, kl);
    const struct lstr *v = vl > 0 ? str_intern(value, vl) : NULL;
    if (k == NULL || (vl > 0 && v == NULL))
        return -ENOSPC;
    const struct lstr *kv[LP_LABELS_MAX_PAIRS][2];
    int n = set_with(from, k, v, kv);
    if (n < 0)
        return n;
    int rc = set_intern((const struct lstr *const (*)[2])kv, (uint32_t)n, to);
    if (rc != 0)
        return rc;
    *c = (struct ltrans){.key = key, .value = value, .k = k, .v = v, .from = from, .to = *to};
    return 0;
}

int lp_labels_set(const char *key, const char *value)
{
    struct lthread *t = lt_self;
    if (__builtin_expect(t == NULL, 0) && (t = self_state()) == NULL)
        return -ENOMEM;
    uint32_t from = smp_self.label_set, to;
    struct ltrans *c = &t->cache[cache_slot(from, key, value)];
    if (__builtin_expect(cache_hit(c, from, key, value), 1)) {
        to = c->to;
    } else {
        int rc = transit_slow(c, from, key, value, &to);
        if (rc != 0)
            return rc;
    }
    if (to != from)
        publish(t, to);
    return 0;
}

int lp_labels_clear_all(void)
{
    struct lthread *t = lt_self;
    if (t != NULL && smp_self.label_set != 0)
        publish(t, 0);
    return 0;
}

uint64_t lp_labels_push(const char *key, const char *value)
{
    uint32_t from = smp_self.label_set;
    lp_labels_set(key, value); /* failed, it changes nothing: the pop restores the same */
    return LP_TOKEN_TAG | from;
}

int lp_labels_pop(uint64_t token)
{
    uint32_t id = (uint32_t)(token & LP_TOKEN_MASK);
    if ((token & ~LP_TOKEN_MASK) != LP_TOKEN_TAG ||
        (id != 0 && id > atomic_load_explicit(&tab.n_sets, memory_order_acquire)))
        return -EINVAL;
    if (id == smp_self.label_set)
        return 0;
    struct lthread *t = lt_self;
    if (t == NULL && (t = self_state()) == NULL)
        return -ENOMEM;
    publish(t, id);
    return 0;
}

int lp_labels_trace_set(const uint8_t trace_id[16], const uint8_t span_id[8])
{
    static const uint8_t zero[16];
    if (trace_id == NULL || memcmp(trace_id, zero, 16) == 0)
        return lp_labels_trace_clear(); /* the W3C invalid id: none */
    unsigned next = smp_self.trace_cur == 1 ? 2 : 1;
    struct smp_trace *b = &smp_self.trace[next - 1];
    memcpy(b->trace_id, trace_id, sizeof(b->trace_id));
    if (span_id != NULL)
        memcpy(b->span_id, span_id, sizeof(b->span_id));
    else
        memset(b->span_id, 0, sizeof(b->span_id));
    b->flags = 0;
    b->is_set = 1;
    /* Filled before it is named: the handler reads only the buffer the index names. */
    atomic_signal_fence(memory_order_seq_cst);
    smp_self.trace_cur = (uint8_t)next;
    atomic_signal_fence(memory_order_seq_cst);
    struct lthread *t = lt_self;
    if (t == NULL && (t = self_state()) == NULL)
        return -ENOMEM;
    if (atomic_load_explicit(&history_on, memory_order_relaxed))
        hist_append(t, smp_self.label_set, b);
    else
        pre_write(t, smp_self.label_set, b);
    return 0;
}

int lp_labels_trace_clear(void)
{
    if (smp_self.trace_cur == 0)
        return 0;
    atomic_signal_fence(memory_order_seq_cst);
    smp_self.trace_cur = 0;
    atomic_signal_fence(memory_order_seq_cst);
    struct lthread *t = lt_self;
    if (t != NULL && atomic_load_explicit(&history_on, memory_order_relaxed))
        hist_append(t, smp_self.label_set, cur_trace());
    else if (t != NULL)
        pre_write(t, smp_self.label_set, cur_trace());
    return 0;
}

void lp_labels_thread_begin(uint32_t label_set)
{
    if (label_set == 0 || set_by_id(label_set) == NULL)
        return;
    struct lthread *t = self_state();
    if (t != NULL)
        publish(t, label_set);
}

void lp_labels_session_start(void)
{
    read_pair(&wr.t0, &wr.m0);
    wr.tp = wr.t1 = wr.t0;
    wr.mp = wr.m1 = wr.m0;
    wr.ns_per_tick = 0;
    atomic_store(&history_on, 1);
    /* A thread that set labels before (a fork child's, an idle start's) has them written
     * down from now. */
    struct lthread *t = lt_self;
    if (t != NULL && (smp_self.label_set != 0 || smp_self.trace_cur != 0))
        hist_append(t, smp_self.label_set, cur_trace());
}

/* ---- the writer's side ----------------------------------------------------------- */

/* Ticks and time read together: the clock read between two tick reads, the pair of the
 * tightest of LP_CAL_TRIES such reads, its ticks halfway between. A virtual CPU stopped
 * between the two reads (tens of microseconds here) would shift every sample the pair
 * places, until the next reading, by as much against the labels' changes. */
static void read_pair(uint64_t *t, uint64_t *m)
{
    uint64_t best = UINT64_MAX;
    for (unsigned i = 0; i < LP_CAL_TRIES; i++) {
        uint64_t a = arch_ticks(), mm = cmn_clock_ns(CLOCK_MONOTONIC), b = arch_ticks();
        if (b >= a && b - a < best) {
            best = b - a;
            *t = a + (b - a) / 2;
            *m = mm;
        }
    }
    if (best == UINT64_MAX) { /* ticks that went back: the last reading as it is */
        *t = arch_ticks();
        *m = cmn_clock_ns(CLOCK_MONOTONIC);
    }
}

/* A reading of ticks and time; the rate from the first reading to this one. */
static void calibrate(void)
{
    uint64_t t = 0, m = 0;
    read_pair(&t, &m);
    if (wr.m0 == 0) {
        wr.t0 = wr.tp = wr.t1 = t;
        wr.m0 = wr.mp = wr.m1 = m;
        return;
    }
    wr.tp = wr.t1;
    wr.mp = wr.m1;
    wr.t1 = t;
    wr.m1 = m;
    if (m > wr.m0 + LP_CAL_MIN_SPAN_NS && t > wr.t0)
        wr.ns_per_tick = (double)(m - wr.m0) / (double)(t - wr.t0);
}

/* The ticks of time m (CLOCK_MONOTONIC): between the last two readings, on the line
 * through them (the samples a drain reads, taken since the reading before it: no error of
 * the rate grows with the time since a reading); elsewhere from the nearest reading at the
 * rate since the first one. */
static uint64_t ticks_at(uint64_t m)
{
    if (wr.ns_per_tick == 0)
        calibrate();
    if (wr.ns_per_tick == 0)
        return wr.t1; /* within 2 ms of the session's start: no rate yet */
    if (m >= wr.mp && m <= wr.m1 && wr.m1 - wr.mp >= LP_CAL_MIN_SPAN_NS && wr.t1 > wr.tp) {
        double f = (double)(m - wr.mp) / (double)(wr.m1 - wr.mp);
        return wr.tp + (uint64_t)(f * (double)(wr.t1 - wr.tp));
    }
    uint64_t t = m < wr.mp ? wr.tp : wr.t1, at = m < wr.mp ? wr.mp : wr.m1;
    double d = ((double)(int64_t)(m - at)) / wr.ns_per_tick;
    return (uint64_t)((int64_t)t + (int64_t)d);
}

void lp_labels_calibrate(void)
{
    if (atomic_load_explicit(&history_on, memory_order_relaxed))
        calibrate();
}

static size_t tid_slot(uint32_t tid, size_t cap)
{
    return (size_t)(cmn_hash_word(tid) & (cap - 1));
}

/* The tid map of the registry, made again when it changed: the live state of each tid, or
 * the one that exited last. */
static void remap(void)
{
    unsigned gen = atomic_load_explicit(&reg.gen, memory_order_acquire);
    if (wr.map != NULL && gen == wr.gen)
        return;
    pthread_mutex_lock(&reg.mu);
    size_t n = 0;
    for (struct lthread *t = reg.list; t; t = t->next)
        n++;
    size_t cap = 16;
    while (cap < n * 2 + 2)
        cap *= 2;
    struct lthread **map = calloc(cap, sizeof(*map));
    if (map != NULL) {
        for (struct lthread *t = reg.list; t; t = t->next) {
            size_t i = tid_slot(t->tid, cap);
            while (map[i] != NULL && map[i]->tid != t->tid)
                i = (i + 1) & (cap - 1);
            /* A tid's live state wins; among exited ones the newest (the list's first). */
            if (map[i] == NULL || (atomic_load(&map[i]->is_gone) && !atomic_load(&t->is_gone)))
                map[i] = t;
        }
        free(wr.map);
        wr.map = map;
        wr.cap = cap;
        wr.gen = gen;
    }
    pthread_mutex_unlock(&reg.mu);
}

static struct lthread *find_thread(uint32_t tid)
{
    remap();
    if (wr.map == NULL)
        return NULL;
    for (size_t i = tid_slot(tid, wr.cap); wr.map[i] != NULL; i = (i + 1) & (wr.cap - 1))
        if (wr.map[i]->tid == tid)
            return wr.map[i];
    return NULL;
}

/* Entry e, read whole (it may be rewritten meanwhile: read again then). */
static void read_entry(struct lhist *e, struct lhist *out)
{
    for (int tries = 0; tries < 1000; tries++) {
        uint32_t q = atomic_load_explicit(&e->seq, memory_order_acquire);
        if (q & 1u)
            continue;
        out->label_set = e->label_set;
        out->ticks = e->ticks;
        out->flags = e->flags;
        out->trace = e->trace;
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&e->seq, memory_order_relaxed) == q)
            return;
    }
    out->flags = LP_HIST_LOST; /* rewritten all along: not known */
    out->label_set = 0;
    out->trace.is_set = 0;
}

/* The context entry e says into *out. */
static void ctx_of(const struct lhist *e, struct lp_label_ctx *out)
{
    if (e->flags & LP_HIST_LOST) {
        out->is_lost = 1;
        return;
    }
    out->label_set = e->label_set;
    if (e->trace.is_set) {
        out->has_trace = 1;
        out->trace_flags = e->trace.flags;
        memcpy(out->trace_id, e->trace.trace_id, sizeof(out->trace_id));
        memcpy(out->span_id, e->trace.span_id, sizeof(out->span_id));
    }
}

void lp_labels_ctx_at(uint32_t tid, uint64_t time_ns, struct lp_label_ctx *out)
{
    memset(out, 0, sizeof(*out));
    struct lthread *t = find_thread(tid);
    if (t == NULL)
        return;
    uint64_t head = atomic_load_explicit(&t->head, memory_order_acquire);
    uint64_t tail = atomic_load_explicit(&t->tail, memory_order_relaxed);
    /* Before the thread's first change since the session began: the set and trace it had
     * made its own before (a thread of a process that started idle, a fork child). */
    struct lhist pre;
    read_entry(&t->pre, &pre);
    if (head == tail) {
        ctx_of(&pre, out);
        return;
    }
    uint64_t at = ticks_at(time_ns);
    struct lhist e = {0};
    /* The last change made before the sample; older than every entry kept (a sample
     * later than the writer ever expected), the oldest one kept. */
    for (uint64_t i = head; i-- > tail;) {
        read_entry(&t->hist[i & LP_HIST_MASK], &e);
        if ((int64_t)(e.ticks - (e.flags & LP_HIST_NS ? time_ns : at)) <= 0)
            break;
        if (i == tail && tail == 0) {
            ctx_of(&pre, out); /* before the thread's first change */
            return;
        }
    }
    ctx_of(&e, out);
}

/* Lets go of t's entries older than ticks `before` (before_ns for those stamped by the
 * clock), but the last of them (in effect then). Returns the entries kept. */
static uint64_t release(struct lthread *t, uint64_t before, uint64_t before_ns)
{
    uint64_t head = atomic_load_explicit(&t->head, memory_order_acquire);
    uint64_t tail = atomic_load_explicit(&t->tail, memory_order_relaxed);
    struct lhist e;
    while (tail + 1 < head) {
        read_entry(&t->hist[(tail + 1) & LP_HIST_MASK], &e);
        if ((int64_t)(e.ticks - (e.flags & LP_HIST_NS ? before_ns : before)) > 0)
            break;
        tail++;
    }
    atomic_store_explicit(&t->tail, tail, memory_order_release);
    return head - tail;
}

int lp_labels_tend(uint64_t now_ns)
{
    remap();
    uint64_t before_ns = now_ns > LP_LABELS_KEEP_NS ? now_ns - LP_LABELS_KEEP_NS : 0;
    uint64_t before = ticks_at(before_ns);
    int busy = 0;
    int freed = 0;
    pthread_mutex_lock(&reg.mu);
    for (struct lthread **p = &reg.list; *p;) {
        struct lthread *t = *p;
        if (atomic_load_explicit(&t->is_gone, memory_order_acquire) &&
            now_ns > t->gone_ns + LP_LABELS_FREE_NS) {
            *p = t->next;
            t->next = reg.free;
            reg.free = t;
            freed = 1;
            continue;
        }
        if (release(t, before, before_ns) * 4 > LP_LABELS_HIST)
            busy = 1;
        p = &t->next;
    }
    if (freed)
        atomic_fetch_add_explicit(&reg.gen, 1, memory_order_release);
    pthread_mutex_unlock(&reg.mu);
    if (freed)
        remap();
    return busy;
}

uint32_t lp_labels_pack(uint32_t id, char *buf, size_t cap, size_t *len)
{
    const struct lset *s = set_by_id(id);
    *len = 0;
    if (s == NULL)
        return 0;
    size_t at = 0;
    for (uint32_t i = 0; i < s->n; i++) {
        for (int j = 0; j < 2; j++) {
            const struct lstr *x = s->kv[i][j];
            if (at + x->len + 1 > cap)
                return 0;
            memcpy(buf + at, x->s, x->len + 1);
            at += x->len + 1;
        }
    }
    *len = at;
    return s->n;
}

uint32_t lp_labels_merge(uint32_t base, const char *const *keys, const size_t *key_lens,
                         const char *const *values, const size_t *value_lens, size_t n)
{
    uint32_t id = base;
    for (size_t i = 0; i < n; i++) {
        if (key_lens[i] == 0 || key_lens[i] > LP_LABELS_MAX_STR ||
            value_lens[i] > LP_LABELS_MAX_STR)
            continue;
        const struct lstr *k = str_intern(keys[i], key_lens[i]);
        const struct lstr *v = value_lens[i] ? str_intern(values[i], value_lens[i]) : NULL;
        if (k == NULL || (value_lens[i] && v == NULL))
            continue;
        const struct lstr *kv[LP_LABELS_MAX_PAIRS][2];
        int m = set_with(id, k, v, kv);
        uint32_t next;
        if (m >= 0 && set_intern((const struct lstr *const (*)[2])kv, (uint32_t)m, &next) == 0)
            id = next;
    }
    return id;
}

/* ---- fork ------------------------------------------------------------------------ */

void lp_labels_fork_prepare(void)
{
    pthread_mutex_lock(&tab.mu);
    pthread_mutex_lock(&reg.mu);
}

void lp_labels_fork_parent(void)
{
    pthread_mutex_unlock(&reg.mu);
    pthread_mutex_unlock(&tab.mu);
}

void lp_labels_fork_child(void)
{
    /* One thread now: this one keeps its state and labels (a copy of its parent thread's),
     * its history restarted; the others' states are free. */
    struct lthread *self = lt_self, *t = reg.list;
    reg.list = NULL;
    while (t != NULL) {
        struct lthread *next = t->next;
        if (t != self) {
            t->next = reg.free;
            reg.free = t;
        }
        t = next;
    }
    if (self != NULL) {
        self->next = NULL;
        self->tid = (uint32_t)syscall(SYS_gettid);
        atomic_store_explicit(&self->head, 0, memory_order_relaxed);
        atomic_store_explicit(&self->tail, 0, memory_order_relaxed);
        pre_write(self, smp_self.label_set, cur_trace());
        reg.list = self;
    }
    atomic_fetch_add_explicit(&reg.gen, 1, memory_order_relaxed);
    /* The writer's view was the parent writer thread's, which may have been changing it. */
    wr.map = NULL;
    wr.cap = 0;
    wr.m0 = 0;
    wr.ns_per_tick = 0;
    atomic_store(&history_on, 0);
    pthread_mutex_unlock(&reg.mu);
    pthread_mutex_unlock(&tab.mu);
}
