/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The helpers of tests/e2e/support.h. This file holds no tests; the Makefile links every
 * .c file in tests/e2e into the e2e binary. Everything runs in one Criterion test process
 * at a time: the directory and the path strings are per-process statics, made in
 * e2e_setup and released in e2e_teardown. Set E2E_KEEP=1 in the environment to keep each
 * test's directory for a look afterwards.
 */
#include "tests/e2e/support.h"

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "include/libprof/prof_format.h"

#define MAX_PATHS 512
#define MAX_ENV 1024

extern char **environ;

static char test_dir[64];      /* "" until e2e_setup */
static char *paths[MAX_PATHS]; /* strings handed out by e2e_path and e2e_find_files */
static size_t n_paths;
static unsigned n_runs; /* names the capture files of e2e_run */

static const char *keep_path(char *s)
{
    cr_assert(s != NULL, "out of memory");
    cr_assert(n_paths < MAX_PATHS, "too many paths in one test");
    paths[n_paths++] = s;
    return s;
}

void e2e_setup(void)
{
    snprintf(test_dir, sizeof(test_dir), "/tmp/libprof-e2e.XXXXXX");
    cr_assert(mkdtemp(test_dir) != NULL, "mkdtemp: %s", strerror(errno));
    /* The caches of the library (unwind tables) and of prof (lines) belong to the build
     * under test, not to the user who runs the tests; they last across tests and runs. */
    setenv("LIBPROF_CACHE_DIR", BUILD_DIR "/cache", 0);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

void e2e_teardown(void)
{
    if (test_dir[0]) {
        const char *keep = getenv("E2E_KEEP");
        if (keep && *keep && strcmp(keep, "0") != 0)
            cr_log_info("kept %s", test_dir);
        else
            nftw(test_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
        test_dir[0] = '\0';
    }
    for (size_t i = 0; i < n_paths; i++)
        free(paths[i]);
    n_paths = 0;
}

const char *e2e_dir(void)
{
    cr_assert(test_dir[0], "e2e_setup did not run (missing .init in the TestSuite?)");
    return test_dir;
}

const char *e2e_path(const char *name)
{
    char *s = NULL;
    cr_assert(asprintf(&s, "%s/%s", e2e_dir(), name) >= 0, "out of memory");
    return keep_path(s);
}

const char *e2e_env(const char *name, const char *value)
{
    char *s = NULL;
    cr_assert(asprintf(&s, "%s=%s", name, value) >= 0, "out of memory");
    return keep_path(s);
}

static int skip_env(const char *entry)
{
    return strncmp(entry, "LD_PRELOAD=", 11) == 0 || strncmp(entry, "PROF_", 5) == 0 ||
           strncmp(entry, "CPUPROFILE", 10) == 0;
}

/* The child's environment: ours minus the profiler's variables, plus the extras. */
static size_t build_env(const char **env, const struct e2e_opts *o)
{
    size_t n = 0;
    for (char **e = environ; *e && n < MAX_ENV - 8; e++)
        if (!skip_env(*e))
            env[n++] = *e;
    if (o->preload)
        env[n++] = "LD_PRELOAD=" E2E_LIB;
    for (const char *const *e = o->env; e && *e; e++) {
        cr_assert(n < MAX_ENV - 1, "environment too large");
        env[n++] = *e;
    }
    env[n] = NULL;
    return n;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Waits for pid, killing it once the deadline has passed (then *timed_out is set) or,
 * without complaint, once kill_after_s has passed. Returns the wait status. */
static int wait_deadline(pid_t pid, double timeout_s, double kill_after_s, int *timed_out)
{
    double start = now_s(), deadline = start + timeout_s;
    int killed = 0;
    struct timespec tick = {0, 2 * 1000 * 1000};
    int status = 0;
    *timed_out = 0;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return status;
        cr_assert(r == 0 || errno == EINTR, "waitpid: %s", strerror(errno));
        if (!killed && kill_after_s > 0 && now_s() > start + kill_after_s) {
            kill(pid, SIGKILL);
            killed = 1;
        }
        if (!*timed_out && now_s() > deadline) {
            kill(pid, SIGKILL);
            *timed_out = 1;
        }
        nanosleep(&tick, NULL);
    }
}

void e2e_run(struct e2e_proc *p, const struct e2e_opts *o, const char *const argv[])
{
    static const struct e2e_opts no_opts;
    const char *env[MAX_ENV];
    char name[32];

    if (!o)
        o = &no_opts;
    memset(p, 0, sizeof(*p));
    cr_assert(access(argv[0], X_OK) == 0, "%s: %s (make all e2e)", argv[0], strerror(errno));
    cr_assert(!o->preload || access(E2E_LIB, R_OK) == 0, "%s: %s (make all)", E2E_LIB,
              strerror(errno));
    build_env(env, o);
    unsigned run = n_runs++;
    snprintf(name, sizeof(name), "run-%u.out", run);
    const char *out_path = e2e_path(name);
    snprintf(name, sizeof(name), "run-%u.err", run);
    const char *err_path = e2e_path(name);
    const char *cwd = o->cwd ? o->cwd : e2e_dir();

    /* Opened here with O_CLOEXEC; the child dup2s them onto 0-2, which clears the flag. */
    int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int out_fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int err_fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    cr_assert(null_fd > 2 && out_fd > 2 && err_fd > 2, "open: %s", strerror(errno));

    fflush(NULL);
    pid_t pid = fork();
    cr_assert(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        if (chdir(cwd) != 0)
            _exit(126);
        if (o->close_stdin)
            close(0);
        else if (dup2(null_fd, 0) < 0)
            _exit(126);
        if (dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
            _exit(126);
        close_range(3, ~0u, 0);
        signal(SIGPIPE, SIG_DFL);
        execve(argv[0], (char *const *)argv, (char *const *)env);
        _exit(127);
    }
    close(null_fd);
    close(out_fd);
    close(err_fd);

    int status = wait_deadline(pid, o->timeout_s > 0 ? o->timeout_s : E2E_TIMEOUT_S,
                               o->kill_after_s, &p->timed_out);
    p->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    p->out = e2e_read_file(out_path, &p->out_len);
    p->err = e2e_read_file(err_path, &p->err_len);
    cr_assert(p->out && p->err, "cannot read the output of %s", argv[0]);
    cr_assert(!p->timed_out, "%s ran longer than its time limit and was killed", argv[0]);
}

void e2e_run_profiled(struct e2e_proc *p, const char *profile, const char *const *env,
                      double timeout_s, const char *const argv[])
{
    const char *all[16] = {e2e_env("PROF_OUTPUT", e2e_path(profile))};
    size_t n = 1;
    for (size_t i = 0; env && env[i]; i++) {
        cr_assert_lt(n, 15, "too many settings for e2e_run_profiled");
        all[n++] = env[i];
    }
    all[n] = NULL;
    struct e2e_opts o = {.preload = 1, .env = all, .timeout_s = timeout_s};
    e2e_run(p, &o, argv);
}

void e2e_proc_free(struct e2e_proc *p)
{
    free(p->out);
    free(p->err);
    memset(p, 0, sizeof(*p));
}

char *e2e_read_file(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    for (;;) {
        if (!buf)
            break;
        if (n == cap) {
            char *bigger = realloc(buf, 2 * cap + 1);
            if (!bigger) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            free(buf);
            buf = NULL;
            break;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    if (buf) {
        buf[n] = '\0';
        if (len)
            *len = n;
    }
    return buf;
}

void e2e_write_file(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    cr_assert(fd >= 0, "open %s: %s", path, strerror(errno));
    cr_assert(write(fd, data, len) == (ssize_t)len, "write %s: %s", path, strerror(errno));
    close(fd);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

size_t e2e_find_files(const char *prefix, const char *suffix, const char **found, size_t cap)
{
    DIR *d = opendir(e2e_dir());
    cr_assert(d != NULL, "opendir %s: %s", e2e_dir(), strerror(errno));
    size_t n = 0, lp = strlen(prefix), ls = strlen(suffix);
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < cap) {
        size_t l = strlen(e->d_name);
        if (l >= lp + ls && strncmp(e->d_name, prefix, lp) == 0 &&
            strcmp(e->d_name + l - ls, suffix) == 0)
            found[n++] = e2e_path(e->d_name);
    }
    closedir(d);
    qsort(found, n, sizeof(found[0]), cmp_str);
    return n;
}

void e2e_folded_parse(struct e2e_folded *f, const char *text)
{
    memset(f, 0, sizeof(*f));
    size_t cap = 0;
    const char *line = text;
    while (*line) {
        size_t len = strcspn(line, "\n");
        if (len > 0) {
            const char *sp = line + len;
            while (sp > line && sp[-1] != ' ')
                sp--;
            cr_assert(sp > line + 1, "folded line without a count: %.*s", (int)len, line);
            char *end;
            long count = strtol(sp, &end, 10);
            cr_assert(end == line + len && count > 0, "bad folded count: %.*s", (int)len, line);
            if (f->n_stacks == cap) {
                cap = cap ? 2 * cap : 64;
                f->stacks = realloc(f->stacks, cap * sizeof(f->stacks[0]));
                cr_assert(f->stacks != NULL, "out of memory");
            }
            f->stacks[f->n_stacks].frames = strndup(line, (size_t)(sp - 1 - line));
            f->stacks[f->n_stacks].count = count;
            f->n_stacks++;
            f->total += count;
        }
        line += len + (line[len] == '\n');
    }
}

void e2e_folded_free(struct e2e_folded *f)
{
    for (size_t i = 0; i < f->n_stacks; i++)
        free(f->stacks[i].frames);
    free(f->stacks);
    memset(f, 0, sizeof(*f));
}

static int has_frame(const char *frames, const char *name)
{
    size_t ln = strlen(name);
    for (const char *p = frames; p; p = strchr(p, ';')) {
        if (*p == ';')
            p++;
        if (strncmp(p, name, ln) == 0 && (p[ln] == ';' || p[ln] == '\0'))
            return 1;
    }
    return 0;
}

long e2e_folded_containing(const struct e2e_folded *f, const char *name)
{
    long sum = 0;
    for (size_t i = 0; i < f->n_stacks; i++)
        if (has_frame(f->stacks[i].frames, name))
            sum += f->stacks[i].count;
    return sum;
}

long e2e_folded_containing_from(const struct e2e_folded *f, const char *name, const char *root)
{
    long sum = 0;
    size_t lr = strlen(root);
    for (size_t i = 0; i < f->n_stacks; i++) {
        const char *s = f->stacks[i].frames;
        if (!has_frame(s, name))
            continue;
        if (strncmp(s, root, lr) == 0 && (s[lr] == ';' || s[lr] == '\0'))
            sum += f->stacks[i].count;
        else
            cr_log_info("not from %s: %s %ld", root, s, f->stacks[i].count);
    }
    return sum;
}

long e2e_folded_ending(const struct e2e_folded *f, const char *path)
{
    long sum = 0;
    size_t lp = strlen(path);
    for (size_t i = 0; i < f->n_stacks; i++) {
        const char *s = f->stacks[i].frames;
        size_t ls = strlen(s);
        if (ls >= lp && strcmp(s + ls - lp, path) == 0 && (ls == lp || s[ls - lp - 1] == ';'))
            sum += f->stacks[i].count;
    }
    return sum;
}

long e2e_folded_exactly(const struct e2e_folded *f, const char *stack)
{
    long sum = 0;
    for (size_t i = 0; i < f->n_stacks; i++)
        if (strcmp(f->stacks[i].frames, stack) == 0)
            sum += f->stacks[i].count;
    return sum;
}

void e2e_report_folded(struct e2e_folded *f, const char *profile)
{
    struct e2e_proc p;
    e2e_run(&p, NULL, E2E_ARGV(E2E_PROF, "report", "--format", "folded", profile));
    cr_assert_eq(p.status, 0, "prof report %s exited %d; stderr:\n%s", profile, p.status, p.err);
    e2e_folded_parse(f, p.out);
    e2e_proc_free(&p);
}

/* Whether the token [s, s+n) ends with '%'. */
static int is_percent(const char *s, size_t n)
{
    return n > 1 && s[n - 1] == '%';
}

size_t e2e_top_names(const char *text, char **names, size_t cap)
{
    size_t n = 0;
    const char *line = text;
    while (*line && n < cap) {
        size_t len = strcspn(line, "\n");
        /* A row is "flat flat% sum% cum cum% name": five columns, then the name. */
        const char *p = line, *end = line + len;
        int col = 0, row = 1;
        while (col < 5 && p < end) {
            while (p < end && *p == ' ')
                p++;
            const char *tok = p;
            while (p < end && *p != ' ')
                p++;
            size_t tl = (size_t)(p - tok);
            if (tl == 0 || ((col == 1 || col == 2 || col == 4) && !is_percent(tok, tl)))
                row = 0;
            col++;
        }
        while (p < end && *p == ' ')
            p++;
        if (row && col == 5 && p < end)
            names[n++] = strndup(p, (size_t)(end - p));
        line += len + (line[len] == '\n');
    }
    return n;
}

/* Counts one sample, from a PROF_REC_SAMPLE or a PROF_REC_SAMPLES entry. */
static void scan_sample(struct e2e_scan *s, uint64_t time_ns, uint32_t tid, uint32_t weight,
                        uint8_t stop_reason, uint8_t flags)
{
    if (flags & PROF_SAMPLE_ORACLE) {
        s->n_oracle++; /* libunwind's twin of a PROF_UNWIND=check sample: no sample */
        return;
    }
    s->n_samples++;
    s->weight_sum += weight;
    size_t i = 0;
    while (i < s->n_tids && s->tids[i] != tid)
        i++;
    if (i == s->n_tids && s->n_tids < E2E_MAX_TIDS)
        s->tids[s->n_tids++] = tid;
    if (i < s->n_tids)
        s->tid_weights[i] += weight;
    if (stop_reason != PROF_STOP_END)
        s->n_truncated++;
    if (flags & PROF_SAMPLE_KERNEL) {
        s->n_kernel++;
        s->n_kernel_truncated += stop_reason != PROF_STOP_END;
    }
    if (s->n_samples == 1 || time_ns < s->first_time_ns)
        s->first_time_ns = time_ns;
    if (time_ns > s->last_time_ns)
        s->last_time_ns = time_ns;
}

static int get_uleb(const unsigned char **at, const unsigned char *end, uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned shift = 0; *at < end && shift < 64; shift += 7) {
        unsigned char byte = *(*at)++;
        x |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *v = x;
            return 1;
        }
    }
    return 0;
}

/* The stop reasons (low byte) and flags (high byte) of the PROF_REC_STACKs seen, by id
 * (for the batches that name them). */
static uint16_t *stack_stops;
static size_t n_stack_stops, cap_stack_stops;
static struct prof_rec_map maps_seen[1024]; /* the MAP records of the file being scanned */

static void scan_batch(struct e2e_scan *s, const unsigned char *rec, uint32_t size)
{
    struct prof_rec_samples b;
    memcpy(&b, rec, sizeof(b));
    const unsigned char *at = rec + sizeof(b), *end = rec + size;
    uint64_t time = b.base_time_ns;
    for (uint32_t i = 0; i < b.n_samples; i++) {
        uint64_t step, tid, id, weight;
        cr_assert(get_uleb(&at, end, &step) && get_uleb(&at, end, &tid) &&
                      get_uleb(&at, end, &id) && get_uleb(&at, end, &weight),
                  "a batch's entries run past its record");
        cr_assert(id < n_stack_stops, "a batch names stack %llu before it is defined",
                  (unsigned long long)id);
        time += (uint64_t)((int64_t)(step >> 1) ^ -(int64_t)(step & 1));
        scan_sample(s, time, (uint32_t)tid, (uint32_t)weight + 1, stack_stops[id] & 0xffu,
                    (uint8_t)(stack_stops[id] >> 8));
    }
}

static void scan_record(struct e2e_scan *s, const unsigned char *rec, uint32_t type, uint32_t size)
{
    if (type == PROF_REC_PROCESS && size >= sizeof(struct prof_rec_process)) {
        struct prof_rec_process pr;
        memcpy(&pr, rec, sizeof(pr));
        s->has_process = 1;
        s->pid = pr.pid;
        s->requested_hz = pr.requested_hz;
        s->effective_hz = pr.effective_hz;
        s->timer_source = pr.timer_source;
        s->unwinder = pr.unwinder;
        s->start_mono_ns = pr.start_mono_ns;
    } else if (type == PROF_REC_MAP && size >= sizeof(struct prof_rec_map)) {
        struct prof_rec_map m;
        memcpy(&m, rec, sizeof(m));
        size_t seen = s->n_maps < 1024 ? s->n_maps : 1024, again = 0;
        for (size_t i = 0; i < seen && !again; i++)
            again = maps_seen[i].start == m.start && maps_seen[i].end == m.end &&
                    maps_seen[i].file_offset == m.file_offset;
        if (s->n_maps < 1024)
            maps_seen[s->n_maps] = m;
        s->n_maps++;
        s->n_maps_again += again;
    } else if (type == PROF_REC_SAMPLE && size >= sizeof(struct prof_rec_sample)) {
        struct prof_rec_sample sm;
        memcpy(&sm, rec, sizeof(sm));
        scan_sample(s, sm.time_ns, sm.tid, sm.weight, sm.stop_reason, sm.flags);
    } else if (type == PROF_REC_STACK && size >= sizeof(struct prof_rec_stack)) {
        struct prof_rec_stack st;
        memcpy(&st, rec, sizeof(st));
        cr_assert_eq(st.id, n_stack_stops, "stack ids out of sequence");
        if (n_stack_stops == cap_stack_stops) {
            cap_stack_stops = cap_stack_stops ? 2 * cap_stack_stops : 256;
            stack_stops = realloc(stack_stops, cap_stack_stops * sizeof(*stack_stops));
            cr_assert_not_null(stack_stops);
        }
        stack_stops[n_stack_stops++] = (uint16_t)(st.stop_reason | st.flags << 8);
    } else if (type == PROF_REC_SAMPLES && size >= sizeof(struct prof_rec_samples)) {
        scan_batch(s, rec, size);
    } else if (type == PROF_REC_THREAD && size > sizeof(struct prof_rec_thread)) {
        if (s->n_names < E2E_MAX_NAMES) {
            struct prof_rec_thread th;
            memcpy(&th, rec, sizeof(th));
            s->name_tids[s->n_names] = th.tid;
            size_t max = size - sizeof(struct prof_rec_thread);
            if (max > 16)
                max = 16;
            memcpy(s->names[s->n_names], rec + sizeof(struct prof_rec_thread), max);
            s->names[s->n_names][16] = '\0';
            s->n_names++;
        }
    } else if (type == PROF_REC_STATS && size >= sizeof(struct prof_rec_stats)) {
        struct prof_rec_stats st;
        memcpy(&st, rec, sizeof(st));
        const unsigned char *c = rec + sizeof(st);
        size_t n = (size - sizeof(st)) / 8;
        if (n > st.n_counters)
            n = st.n_counters;
        s->has_stats = 1;
        memcpy(s->stats, c, (n < PROF_STAT_N ? n : PROF_STAT_N) * 8);
        if (n > PROF_STAT_SIGNALS)
            memcpy(&s->stat_signals, c + 8 * PROF_STAT_SIGNALS, 8);
        if (n > PROF_STAT_KERNEL_SAMPLES)
            memcpy(&s->stat_kernel_samples, c + 8 * PROF_STAT_KERNEL_SAMPLES, 8);
        if (n > PROF_STAT_RING_SAMPLES)
            memcpy(&s->stat_ring_samples, c + 8 * PROF_STAT_RING_SAMPLES, 8);
        if (n > PROF_STAT_SAMPLES)
            memcpy(&s->stat_samples, c + 8 * PROF_STAT_SAMPLES, 8);
    }
}

void e2e_scan_file(struct e2e_scan *s, const char *path)
{
    size_t len = 0;
    unsigned char *buf = (unsigned char *)e2e_read_file(path, &len);
    cr_assert(buf != NULL, "cannot read %s: %s", path, strerror(errno));
    memset(s, 0, sizeof(*s));
    n_stack_stops = 0;

    struct prof_file_header h;
    size_t off = len;
    if (len >= sizeof(h)) {
        memcpy(&h, buf, sizeof(h));
        s->header_ok = memcmp(h.magic, PROF_FILE_MAGIC, 8) == 0 && h.version == PROF_FILE_VERSION &&
                       h.header_bytes >= sizeof(h) && h.header_bytes <= len;
        if (s->header_ok)
            off = h.header_bytes;
    }
    size_t *offsets = NULL, cap = 0, n_offsets = 0;
    uint32_t last_type = 0;
    while (off + sizeof(struct prof_rec_hdr) <= len) {
        struct prof_rec_hdr rh;
        memcpy(&rh, buf + off, sizeof(rh));
        if (rh.size_bytes < 8 || rh.size_bytes % 8 || rh.size_bytes > PROF_REC_MAX_BYTES ||
            off + rh.size_bytes > len)
            break;
        if (rh.type == PROF_REC_SAMPLE || rh.type == PROF_REC_SAMPLES) {
            if (n_offsets == cap) {
                cap = cap ? 2 * cap : 1024;
                offsets = realloc(offsets, cap * sizeof(offsets[0]));
                cr_assert(offsets != NULL, "out of memory");
            }
            offsets[n_offsets++] = off;
        }
        scan_record(s, buf + off, rh.type, rh.size_bytes);
        last_type = rh.type;
        s->n_records++;
        off += rh.size_bytes;
    }
    s->has_end = last_type == PROF_REC_END;
    s->trailing_bytes = len - off;
    if (n_offsets) {
        s->sample_offsets[0] = offsets[0];
        s->sample_offsets[1] = offsets[n_offsets / 2];
    }
    free(offsets);
    free(buf);
}

size_t e2e_count_lines(const char *text, const char *prefix, size_t *n_with_prefix)
{
    size_t n = 0, np = 0, lp = strlen(prefix);
    const char *line = text;
    while (*line) {
        size_t len = strcspn(line, "\n");
        n++;
        if (len >= lp && strncmp(line, prefix, lp) == 0)
            np++;
        line += len + (line[len] == '\n');
    }
    if (n_with_prefix)
        *n_with_prefix = np;
    return n;
}

double e2e_truth_value(const char *truth_text, const char *name)
{
    size_t ln = strlen(name);
    const char *line = truth_text;
    while (*line) {
        size_t len = strcspn(line, "\n");
        if (len > ln && strncmp(line, name, ln) == 0 && line[ln] == ' ')
            return strtod(line + ln + 1, NULL);
        line += len + (line[len] == '\n');
    }
    cr_assert(0, "no \"%s\" in the truth file:\n%s", name, truth_text);
    return 0;
}
