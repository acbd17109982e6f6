/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * PROF_* environment parsing (see config.h). It walks the environment array itself instead
 * of calling getenv() so that tests can pass their own, and so that it can report PROF_
 * names it does not know (a misspelt PROF_FREQUENCY would otherwise be silently ignored).
 */
#include "libprof/config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/parse.h"
#include "include/libprof/prof_format.h"
#include "libprof/fd.h"
#include "sampler/timer_perf.h"

/* Variables that belong to the `prof` command or to the test suite, not to us. */
static const char *const foreign_vars[] = { "PROF_LIBRARY", NULL };
static const char *const known_vars[] = { "PROF_OUTPUT", "PROF_FREQ",   "PROF_DEPTH",
                                          "PROF_BUFFER_KB", "PROF_LOG", "PROF_START",
                                          "PROF_TIMER", "PROF_SIGNAL", "PROF_FOLLOW",
                                          "PROF_EVENT", "PROF_UNWIND",
                                          "PROF_SNAPSHOT_SIGNAL", "PROF_DURATION", "PROF_MODE",
                                          "PROF_INTERVAL", "PROF_KEEP", "PROF_TOGGLE_SIGNAL",
                                          "PROF_LABELS", "PROF_FILE_MODE", "PROF_OWNER",
                                          NULL };

struct keyword {
    const char *name;
    unsigned value;
};

static const struct keyword timer_names[] = {
    { "auto", LP_TIMER_AUTO },      { "itimer", PROF_TIMER_ITIMER },
    { "thread", PROF_TIMER_THREAD }, { "perf", PROF_TIMER_PERF },
    { "ring", PROF_TIMER_RING },     { NULL, 0 },
};

static const struct keyword unwind_names[] = {
    { "auto", PROF_UNWIND_AUTO }, { "fp", PROF_UNWIND_FP }, { "dwarf", PROF_UNWIND_DWARF },
    { "libunwind", PROF_UNWIND_LIBUNWIND }, { "check", PROF_UNWIND_CHECK }, { NULL, 0 },
};

static const struct keyword mode_names[] = {
    { "cpu", PROF_MODE_CPU }, { "wall", PROF_MODE_WALL }, { NULL, 0 },
};

static const struct keyword owner_names[] = {
    { "effective", 0 }, { "real", 1 }, { NULL, 0 },
};

static const struct keyword event_names[] = {
    { "task-clock", SMP_PERF_TASK_CLOCK }, { "cpu-clock", SMP_PERF_CPU_CLOCK },
    { "cycles", SMP_PERF_CYCLES },         { "instructions", SMP_PERF_INSTRUCTIONS },
    { NULL, 0 },
};

static void add_msg(struct lp_config_msgs *m, const char *fmt, ...)
{
    if (m->n >= LP_MSGS_MAX)
        return;
    va_list ap;
    va_start(ap, fmt);
    m->is_note[m->n] = 0;
    vsnprintf(m->text[m->n++], LP_MSG_MAX, fmt, ap);
    va_end(ap);
}

static const char *env_get(char *const *env, const char *name)
{
    size_t len = strlen(name);
    for (; env && *env; env++)
        if (strncmp(*env, name, len) == 0 && (*env)[len] == '=')
            return *env + len + 1;
    return NULL;
}

static int in_list(const char *name, size_t len, const char *const *list)
{
    for (; *list; list++)
        if (strlen(*list) == len && strncmp(*list, name, len) == 0)
            return 1;
    return 0;
}

static void load_uint(char *const *env, const char *name, unsigned lo, unsigned hi,
                      unsigned dflt, const char *unit, unsigned *out,
                      struct lp_config_msgs *msgs)
{
    const char *v = env_get(env, name);
    unsigned long n;
    *out = dflt;
    if (v && cmn_parse_ulong(v, lo, hi, &n)) {
        *out = (unsigned)n;
    } else if (v) {
        add_msg(msgs, "%s='%.40s' is not a whole number in %u..%u; using %u%s", name, v, lo,
                hi, dflt, unit);
    }
}

/* PROF_DURATION into *out_ns: 0 (no limit) when unset or bad. */
static void load_duration(char *const *env, uint64_t *out_ns, struct lp_config_msgs *msgs)
{
    const char *v = env_get(env, "PROF_DURATION");
    *out_ns = 0;
    if (v && !cmn_parse_duration(v, CMN_DURATION_MAX_NS, out_ns))
        add_msg(msgs, "PROF_DURATION='%.40s' is not a duration (500ms, 10s, 5m, 1h; a bare "
                "number is seconds); profiling until exit", v);
}

/* PROF_INTERVAL into *out_ns: 0 (one file) when unset or bad. */
static void load_interval(char *const *env, uint64_t *out_ns, struct lp_config_msgs *msgs)
{
    const char *v = env_get(env, "PROF_INTERVAL");
    *out_ns = 0;
    if (v && (!cmn_parse_duration(v, CMN_DURATION_MAX_NS, out_ns) ||
              *out_ns < LP_INTERVAL_MIN_NS)) {
        *out_ns = 0;
        add_msg(msgs, "PROF_INTERVAL='%.40s' is not a duration of 100ms or more (500ms, 60s, "
                "5m, 1h; a bare number is seconds); one profile file", v);
    }
}

/* PROF_FILE_MODE: octal permission bits, read and write only (an executable or set-id
 * profile makes no sense); 0600 when unset or bad. */
static void load_file_mode(char *const *env, unsigned *out, struct lp_config_msgs *msgs)
{
    const char *v = env_get(env, "PROF_FILE_MODE");
    *out = LP_DEFAULT_FILE_MODE;
    if (!v)
        return;
    char *end = NULL;
    unsigned long m = v[0] >= '0' && v[0] <= '7' ? strtoul(v, &end, 8) : 0;
    if (end && *end == '\0' && (m & ~0666ul) == 0 && (m & 0600ul) == 0600ul)
        *out = (unsigned)m;
    else
        add_msg(msgs, "PROF_FILE_MODE='%.40s' is not octal read and write bits for the owner "
                "and others (0600, 0640, 0644); using 0600", v);
}

/* A label's key: letters, digits, '_', '.', '-', '/'; what Pyroscope and Parca accept. */
static int is_label_key(const char *k, size_t n)
{
    if (n == 0 || n > 64)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((k[i] >= 'a' && k[i] <= 'z') || (k[i] >= 'A' && k[i] <= 'Z') ||
              (k[i] >= '0' && k[i] <= '9') || strchr("_.-/", k[i]) != NULL))
            return 0;
    return 1;
}

/* PROF_LABELS=key=value,key=value into c->labels; none when unset or bad. A value runs to
 * the next ',' and may hold '='. */
static void load_labels(char *const *env, struct lp_config *c, struct lp_config_msgs *msgs)
{
    const char *v = env_get(env, "PROF_LABELS");
    c->n_labels = 0;
    c->labels_bytes = 0;
    if (!v || !v[0])
        return;
    for (const char *p = v; *p;) {
        size_t item = strcspn(p, ",");
        const char *eq = memchr(p, '=', item);
        size_t klen = eq ? (size_t)(eq - p) : 0, vlen = eq ? item - klen - 1 : 0;
        if (!eq || !is_label_key(p, klen) || vlen == 0 || c->n_labels >= LP_LABELS_MAX ||
            c->labels_bytes + klen + vlen + 2 > sizeof(c->labels)) {
            add_msg(msgs, "PROF_LABELS='%.60s' is not a list of key=value pairs (keys of "
                    "letters, digits, '_', '.', '-', '/'; at most %u pairs, %u bytes); no "
                    "labels", v, LP_LABELS_MAX, LP_LABELS_BYTES);
            c->n_labels = 0;
            c->labels_bytes = 0;
            return;
        }
        memcpy(c->labels + c->labels_bytes, p, klen);
        c->labels[c->labels_bytes + klen] = '\0';
        memcpy(c->labels + c->labels_bytes + klen + 1, eq + 1, vlen);
        c->labels[c->labels_bytes + klen + 1 + vlen] = '\0';
        c->labels_bytes += klen + vlen + 2;
        c->n_labels++;
        p += item;
        if (*p == ',')
            p++;
    }
}

static void load_path(char *const *env, const char *name, const char *dflt, char *out,
                      size_t cap, struct lp_config_msgs *msgs, int *enabled)
{
    const char *v = env_get(env, name);
    if (!v)
        v = dflt;
    if (strlen(v) >= cap) {
        add_msg(msgs, "%s is longer than %zu bytes; profiling disabled", name, cap - 1);
        *enabled = 0;
        out[0] = '\0';
        return;
    }
    strcpy(out, v);
}

static void load_keyword(char *const *env, const char *name, const struct keyword *k,
                         unsigned dflt, unsigned *out, struct lp_config_msgs *msgs)
{
    const char *v = env_get(env, name);
    *out = dflt;
    if (!v)
        return;
    for (const struct keyword *i = k; i->name; i++) {
        if (strcmp(v, i->name) == 0) {
            *out = i->value;
            return;
        }
    }
    char list[128] = "";
    for (const struct keyword *i = k; i->name; i++)
        snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
                 i == k ? "" : ", ", i->name);
    add_msg(msgs, "%s='%.40s' is not one of %s; using %s", name, v, list, k->name);
}

/* A signal variable into *out: 0 when unset or unusable (def_text says what is used then).
 * For PROF_SNAPSHOT_SIGNAL, "0" and "off" turn snapshots off (*out = -1), silently. */
static void load_signal(char *const *env, const char *name, const char *def_text, int *out,
                        struct lp_config_msgs *msgs)
{
    const char *v = env_get(env, name);
    *out = 0;
    if (!v)
        return;
    int is_snap = strcmp(name, "PROF_SNAPSHOT_SIGNAL") == 0 ||
                  strcmp(name, "PROF_TOGGLE_SIGNAL") == 0;
    if (is_snap && (strcmp(v, "0") == 0 || strcmp(v, "off") == 0)) {
        *out = -1;
        return;
    }
    int sig = cmn_parse_signal(v);
    if (cmn_signal_is_refused(sig))
        sig = 0;
    if (sig == 0)
        add_msg(msgs,
                "%s='%.40s' is not a usable signal (a number, PROF, USR1, RTMIN+N, "
                "RTMAX-N%s); using %s",
                name, v, is_snap ? ", 0 for none" : "", def_text);
    *out = sig;
}

static void check_unknown(char *const *env, struct lp_config_msgs *msgs)
{
    for (; env && *env; env++) {
        if (strncmp(*env, "PROF_", 5) != 0)
            continue;
        const char *eq = strchr(*env, '=');
        size_t len = eq ? (size_t)(eq - *env) : strlen(*env);
        /* A variable of someone else's (a build system's, a user's own) is no bad value of
         * ours: a note in the profile, not a line on the program's stderr. */
        if (!in_list(*env, len, known_vars) && !in_list(*env, len, foreign_vars)) {
            add_msg(msgs, "unknown variable %.*s ignored", (int)(len > 64 ? 64 : len), *env);
            if (msgs->n > 0)
                msgs->is_note[msgs->n - 1] = 1;
        }
    }
}

int lp_config_load(struct lp_config *c, char *const *env, struct lp_config_msgs *msgs)
{
    int before = msgs->n;
    memset(c, 0, sizeof(*c));
    c->enabled = 1;

    load_path(env, "PROF_OUTPUT", LP_DEFAULT_OUTPUT, c->output, sizeof(c->output), msgs,
              &c->enabled);
    if (c->enabled && c->output[0] == '\0') {
        add_msg(msgs, "PROF_OUTPUT is empty; profiling disabled");
        c->enabled = 0;
    }
    load_path(env, "PROF_LOG", "", c->log, sizeof(c->log), msgs, &c->enabled);
    load_uint(env, "PROF_FREQ", 1, LP_MAX_HZ, LP_DEFAULT_HZ, " Hz", &c->freq_hz, msgs);
    load_uint(env, "PROF_DEPTH", 1, LP_MAX_DEPTH, LP_DEFAULT_DEPTH, " frames", &c->max_depth,
              msgs);
    load_uint(env, "PROF_BUFFER_KB", LP_MIN_BUFFER_KB, LP_MAX_BUFFER_KB, LP_DEFAULT_BUFFER_KB,
              " KiB", &c->buffer_kb, msgs);
    unsigned start, follow;
    load_uint(env, "PROF_START", 0, 1, 1, "", &start, msgs);
    c->start = (int)start;
    load_uint(env, "PROF_FOLLOW", 0, 1, 1, "", &follow, msgs);
    c->follow = (int)follow;
    load_keyword(env, "PROF_TIMER", timer_names, LP_TIMER_AUTO, &c->timer, msgs);
    load_keyword(env, "PROF_EVENT", event_names, SMP_PERF_TASK_CLOCK, &c->event, msgs);
    load_keyword(env, "PROF_UNWIND", unwind_names, PROF_UNWIND_AUTO, &c->unwinder, msgs);
    load_duration(env, &c->duration_ns, msgs);
    load_keyword(env, "PROF_MODE", mode_names, PROF_MODE_CPU, &c->mode, msgs);
    load_interval(env, &c->interval_ns, msgs);
    load_uint(env, "PROF_KEEP", 0, LP_KEEP_MAX, 0, " (all)", &c->keep, msgs);
    load_labels(env, c, msgs);
    load_signal(env, "PROF_SIGNAL", "the timer's default", &c->signo, msgs);
    load_signal(env, "PROF_SNAPSHOT_SIGNAL", "RTMAX-3", &c->snap_signo, msgs);
    if (c->snap_signo == 0) {
        /* The default, or one below it when PROF_SIGNAL took it. */
        c->snap_signo = SIGRTMAX - LP_DEFAULT_SNAP_RT_OFFSET;
        if (c->snap_signo == c->signo)
            c->snap_signo--;
    } else if (c->snap_signo < 0) {
        c->snap_signo = 0;
    }
    if (c->snap_signo != 0 && c->snap_signo == c->signo) {
        add_msg(msgs, "PROF_SNAPSHOT_SIGNAL is PROF_SIGNAL's signal (%d); snapshots off",
                c->signo);
        c->snap_signo = 0;
    }
    load_file_mode(env, &c->file_mode, msgs);
    unsigned owner;
    load_keyword(env, "PROF_OWNER", owner_names, 0, &owner, msgs);
    c->owner_real = (int)owner;
    load_signal(env, "PROF_TOGGLE_SIGNAL", "none", &c->toggle_signo, msgs);
    if (c->toggle_signo < 0)
        c->toggle_signo = 0;
    if (c->toggle_signo != 0 &&
        (c->toggle_signo == c->snap_signo || c->toggle_signo == c->signo ||
         (c->signo == 0 && c->toggle_signo == SIGRTMAX - 2) ||
         (c->timer == PROF_TIMER_ITIMER && c->toggle_signo == SIGPROF))) {
        add_msg(msgs, "PROF_TOGGLE_SIGNAL is a signal libprof already uses (%d); no toggle "
                "signal", c->toggle_signo);
        c->toggle_signo = 0;
    }
    check_unknown(env, msgs);
    return msgs->n - before;
}

/* 1 when path, a directory, belongs to root and nobody else may write in it. */
static int is_root_only_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == 0 &&
           (st.st_mode & 022) == 0;
}

/* The system configuration file's text (malloc'd, NUL-terminated), or NULL when there is
 * none or it is not to be trusted (see lp_config_load_process()). */
static char *read_sysconf(const char *path, struct lp_config_msgs *msgs)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (!slash || (size_t)(slash - path) >= sizeof(dir))
        return NULL;
    memcpy(dir, path, (size_t)(slash - path));
    dir[slash - path] = '\0';
    struct stat st;
    int fd = lp_fd_open_regular(path, O_RDONLY, 0, &st, NULL);
    if (fd == -ENOENT)
        return NULL;
    if (fd < 0 || st.st_uid != 0 || (st.st_mode & 022) != 0 || st.st_size >= LP_SYSCONF_MAX_BYTES ||
        !is_root_only_dir(dir[0] ? dir : "/")) {
        add_msg(msgs, "%s is not a regular file of root's that only root may change; not read",
                path);
        lp_fd_close(fd);
        return NULL;
    }
    char *text = malloc((size_t)st.st_size + 1);
    ssize_t n = text ? read(fd, text, (size_t)st.st_size) : -1;
    lp_fd_close(fd);
    if (n < 0) {
        free(text);
        return NULL;
    }
    text[n] = '\0';
    return text;
}

/* The file's NAME=value lines into arr (at most cap - 1, then NULL), pointing into text,
 * which they cut into lines: blank lines and '#' comments left out, spaces around a line
 * trimmed. Returns how many. */
static size_t sysconf_entries(char *text, char **arr, size_t cap)
{
    size_t n = 0;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        while (*line == ' ' || *line == '\t')
            line++;
        size_t len = strlen(line);
        while (len > 0 && strchr(" \t\r", line[len - 1]))
            line[--len] = '\0';
        if (len > 0 && line[0] != '#' && strchr(line, '=') && n + 1 < cap)
            arr[n++] = line;
    }
    arr[n] = NULL;
    return n;
}

int lp_config_load_process(struct lp_config *c, char *const *env, int is_secure,
                           const char *sysconf_path, struct lp_config_msgs *msgs)
{
    int before = msgs->n;
    char *text = read_sysconf(sysconf_path, msgs);
    size_t n_env = 0;
    while (!is_secure && env && env[n_env])
        n_env++;
    size_t cap = n_env + (text ? strlen(text) / 2 + 2 : 1);
    char **all = calloc(cap, sizeof(char *));
    if (!all) {
        free(text);
        memset(c, 0, sizeof(*c));
        return msgs->n - before;
    }
    /* The environment first: the first of a name is the one read (env_get()). */
    for (size_t i = 0; i < n_env; i++)
        all[i] = env[i];
    if (text)
        sysconf_entries(text, all + n_env, cap - n_env);
    lp_config_load(c, all, msgs);
    c->is_secure = is_secure;
    if (is_secure && !text) {
        c->enabled = 0;
        msgs->n = before; /* nothing of the user's reaches a privileged program's stderr */
    } else if (is_secure && c->enabled && (c->output[0] != '/' || (c->log[0] && c->log[0] != '/'))) {
        /* A relative path would be taken from a directory the invoking user chose. */
        add_msg(msgs, "%s: PROF_OUTPUT and PROF_LOG must be absolute paths for set-user-ID "
                "and set-group-ID programs; profiling disabled", sysconf_path);
        c->enabled = 0;
    }
    free(all);
    free(text);
    return msgs->n - before;
}

/* Appends s[0..n) to out at *len; -ENAMETOOLONG when it does not fit with a NUL. */
static int append(char *out, size_t cap, size_t *len, const char *s, size_t n)
{
    if (*len + n >= cap)
        return -ENAMETOOLONG;
    memcpy(out + *len, s, n);
    *len += n;
    out[*len] = '\0';
    return 0;
}

int lp_config_has_seq(const char *tmpl)
{
    for (const char *p = tmpl; *p; p++) {
        if (*p != '%')
            continue;
        if (p[1] == 'n' || p[1] == 't')
            return 1;
        if (p[1] != '\0')
            p++;
    }
    return 0;
}

int lp_config_expand_path(const char *tmpl, pid_t pid, const char *cwd, char *out,
                          size_t cap)
{
    struct lp_path_vars v = {.pid = pid, .start_real_ns = cmn_clock_ns(CLOCK_REALTIME)};
    return lp_config_expand_path_vars(tmpl, &v, cwd, out, cap);
}

/* %t: the time in UTC as YYYYmmdd-HHMMSS (sorts as it reads, no characters a shell or a
 * file system minds). */
static int format_time(uint64_t real_ns, char *buf, size_t cap)
{
    time_t t = (time_t)(real_ns / 1000000000ull);
    struct tm tm;
    if (gmtime_r(&t, &tm) == NULL)
        return snprintf(buf, cap, "%llu", (unsigned long long)t);
    return (int)strftime(buf, cap, "%Y%m%d-%H%M%S", &tm);
}

int lp_config_expand_path_vars(const char *tmpl, const struct lp_path_vars *v, const char *cwd,
                               char *out, size_t cap)
{
    size_t len = 0;
    int rc = 0;
    if (!tmpl[0] || cap == 0)
        return -EINVAL;
    out[0] = '\0';
    if (tmpl[0] != '/') {
        rc = append(out, cap, &len, cwd, strlen(cwd));
        if (rc == 0 && (len == 0 || out[len - 1] != '/'))
            rc = append(out, cap, &len, "/", 1);
    }
    for (const char *p = tmpl; rc == 0 && *p; p++) {
        if (*p != '%') {
            rc = append(out, cap, &len, p, 1);
        } else if (p[1] == 'p' || p[1] == 'n' || p[1] == 't') {
            char num[32];
            int n = p[1] == 'p'   ? snprintf(num, sizeof(num), "%ld", (long)v->pid)
                    : p[1] == 'n' ? snprintf(num, sizeof(num), "%u", v->seq)
                                  : format_time(v->start_real_ns, num, sizeof(num));
            rc = append(out, cap, &len, num, (size_t)n);
            p++;
        } else if (p[1] == '%') {
            rc = append(out, cap, &len, "%", 1);
            p++;
        } else {
            return -EINVAL;
        }
    }
    return rc;
}
