/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The sample filter: short lists searched linearly (a command line gives a handful of
 * tids), a time window, and two regular expressions whose verdict on each name id is
 * remembered in a byte per id, so that a name is matched once however many stacks hold
 * it. Reporter thread only.
 */
#include "reporter/stacks/filter.h"

#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/grow.h"
#include "reporter/input/profile.h"
#include "reporter/symbols/names.h"

#define FILTER_KNOWN 1u  /* the verdicts of this id are decided */
#define FILTER_FOCUS 2u  /* its name matches --focus */
#define FILTER_IGNORE 4u /* its name matches --ignore */

int rep_filter_init(struct rep_filter *f)
{
    memset(f, 0, sizeof(*f));
    return CMN_OK;
}

void rep_filter_fini(struct rep_filter *f)
{
    if (f == NULL)
        return;
    free(f->tids);
    free(f->thread_names);
    free(f->pids);
    free(f->verdicts);
    free(f->labels);
    free(f->traces);
    if (f->has_focus)
        regfree(&f->focus);
    if (f->has_ignore)
        regfree(&f->ignore);
    memset(f, 0, sizeof(*f));
}

/* Appends one element of elem_bytes at v to *arr of *n elements (*cap allocated). */
static int append(void **arr, size_t *n, size_t *cap, const void *v, size_t elem_bytes)
{
    if (!cmn_grow(arr, cap, *n + 1, elem_bytes, 4))
        return CMN_E_NOMEM;
    memcpy((unsigned char *)*arr + *n * elem_bytes, v, elem_bytes);
    (*n)++;
    return CMN_OK;
}

int rep_filter_add_tid(struct rep_filter *f, uint32_t tid)
{
    return append((void **)&f->tids, &f->n_tids, &f->cap_tids, &tid, sizeof(tid));
}

int rep_filter_add_thread(struct rep_filter *f, const char *name)
{
    return append((void **)&f->thread_names, &f->n_thread_names, &f->cap_thread_names, &name,
                  sizeof(name));
}

int rep_filter_add_pid(struct rep_filter *f, uint32_t pid)
{
    return append((void **)&f->pids, &f->n_pids, &f->cap_pids, &pid, sizeof(pid));
}

int rep_filter_add_label(struct rep_filter *f, const char *arg, struct cmn_err *err)
{
    const char *eq = strchr(arg, '=');
    struct rep_label_cond c = {.key = arg, .key_len = eq ? (size_t)(eq - arg) : strlen(arg),
                               .value = eq ? eq + 1 : NULL};
    if (c.key_len == 0)
        return cmn_err_set(err, CMN_E_INPUT, "--label: '%s' has no key (KEY=VALUE)", arg);
    int rc = append((void **)&f->labels, &f->n_labels, &f->cap_labels, &c, sizeof(c));
    return rc == CMN_OK ? rc : cmn_err_nomem(err);
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

int rep_filter_add_trace(struct rep_filter *f, const char *hex, struct cmn_err *err)
{
    struct rep_trace_cond c = {.n = strlen(hex) / 2};
    bool ok = strlen(hex) % 2 == 0 && c.n > 0 && c.n <= sizeof(c.id);
    for (size_t i = 0; ok && i < c.n; i++) {
        int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
        ok = hi >= 0 && lo >= 0;
        if (ok)
            c.id[i] = (uint8_t)(hi << 4 | lo);
    }
    if (!ok)
        return cmn_err_set(err, CMN_E_INPUT,
                           "--trace: '%s' is not a trace id in hex (32 digits, or its start)", hex);
    int rc = append((void **)&f->traces, &f->n_traces, &f->cap_traces, &c, sizeof(c));
    return rc == CMN_OK ? rc : cmn_err_nomem(err);
}

/* The value of the label named by c's key on s (NULL: none). */
static const char *label_of(const struct rep_profile *p, const struct rep_sample *s,
                            const struct rep_label_cond *c)
{
    char key[256];
    size_t n = c->key_len < sizeof(key) - 1 ? c->key_len : sizeof(key) - 1;
    memcpy(key, c->key, n);
    key[n] = '\0';
    return rep_profile_label(p, s, key);
}

static bool matches(const struct rep_label_cond *c, const char *value)
{
    if (c->value == NULL)
        return value != NULL;
    if (c->value[0] == '\0')
        return value == NULL || value[0] == '\0';
    return value != NULL && strcmp(value, c->value) == 0;
}

/* Every key of the --label conditions has one of its values on s. */
static bool keeps_labels(const struct rep_filter *f, const struct rep_profile *p,
                         const struct rep_sample *s)
{
    for (size_t i = 0; i < f->n_labels; i++) {
        const struct rep_label_cond *c = &f->labels[i];
        bool seen = false, any = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = f->labels[j].key_len == c->key_len &&
                   memcmp(f->labels[j].key, c->key, c->key_len) == 0;
        if (seen)
            continue; /* this key was decided with its first condition */
        const char *value = label_of(p, s, c);
        for (size_t j = i; j < f->n_labels && !any; j++)
            any = f->labels[j].key_len == c->key_len &&
                  memcmp(f->labels[j].key, c->key, c->key_len) == 0 && matches(&f->labels[j], value);
        if (!any)
            return false;
    }
    return true;
}

static bool keeps_trace(const struct rep_filter *f, const struct rep_profile *p,
                        const struct rep_sample *s)
{
    if (f->n_traces == 0)
        return true;
    const struct rep_trace *t = rep_profile_trace(p, s);
    for (size_t i = 0; t != NULL && i < f->n_traces; i++)
        if (memcmp(t->trace_id, f->traces[i].id, f->traces[i].n) == 0)
            return true;
    return false;
}

static int compile(regex_t *re, bool *has, const char *regex, const char *opt,
                   struct cmn_err *err)
{
    if (*has) {
        regfree(re);
        *has = false;
    }
    int rc = regcomp(re, regex, REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
        char msg[128];
        regerror(rc, re, msg, sizeof(msg));
        return cmn_err_set(err, CMN_E_INPUT, "%s: bad regular expression '%s': %s", opt, regex,
                           msg);
    }
    *has = true;
    return CMN_OK;
}

int rep_filter_set_focus(struct rep_filter *f, const char *regex, struct cmn_err *err)
{
    return compile(&f->focus, &f->has_focus, regex, "--focus", err);
}

int rep_filter_set_ignore(struct rep_filter *f, const char *regex, struct cmn_err *err)
{
    return compile(&f->ignore, &f->has_ignore, regex, "--ignore", err);
}

bool rep_filter_has_stack_rules(const struct rep_filter *f)
{
    return f->has_focus || f->has_ignore;
}

bool rep_filter_keeps_profile(const struct rep_filter *f, const struct rep_profile *p)
{
    if (f->n_pids == 0)
        return true;
    for (size_t i = 0; p->has_process && i < f->n_pids; i++)
        if (f->pids[i] == p->process.pid)
            return true;
    return false;
}

/* The time samples of p count from: the start of profiling, else its first sample. */
static uint64_t start_of(const struct rep_profile *p)
{
    if (p->has_process)
        return p->process.start_mono_ns;
    return p->n_samples > 0 ? p->samples[0].time_ns : 0;
}

static bool keeps_thread(const struct rep_filter *f, const struct rep_profile *p, uint32_t tid)
{
    if (f->n_tids == 0 && f->n_thread_names == 0)
        return true;
    for (size_t i = 0; i < f->n_tids; i++)
        if (f->tids[i] == tid)
            return true;
    const char *name = f->n_thread_names > 0 ? rep_profile_thread_name(p, tid) : NULL;
    for (size_t i = 0; name != NULL && i < f->n_thread_names; i++)
        if (strcmp(f->thread_names[i], name) == 0)
            return true;
    return false;
}

bool rep_filter_keeps_sample(const struct rep_filter *f, const struct rep_profile *p,
                             const struct rep_sample *s)
{
    switch (f->unwind_check) {
    case REP_FILTER_CHECK_TABLES:
        if (!(s->flags & PROF_SAMPLE_CHECK_DIFF))
            return false;
        break;
    case REP_FILTER_CHECK_LIBUNWIND:
        if (!(s->flags & PROF_SAMPLE_ORACLE))
            return false;
        break;
    default:
        if (s->flags & PROF_SAMPLE_ORACLE)
            return false;
    }
    if (!keeps_thread(f, p, s->tid) || !rep_state_sel_keeps(&f->states, s->state))
        return false;
    if (!keeps_labels(f, p, s) || !keeps_trace(f, p, s))
        return false;
    if (f->has_from || f->has_to) {
        uint64_t start = start_of(p);
        uint64_t t = s->time_ns > start ? s->time_ns - start : 0;
        if ((f->has_from && t < f->from_ns) || (f->has_to && t >= f->to_ns))
            return false;
    }
    return true;
}

/* The FILTER_* bits of name id, deciding them on first use. */
static int verdict_of(struct rep_filter *f, const struct rep_names *names, uint32_t id,
                      uint8_t *v /* out */)
{
    if (id >= f->cap_verdicts) {
        size_t old = f->cap_verdicts;
        if (!CMN_GROW(f->verdicts, f->cap_verdicts, (size_t)id + 1, 1024))
            return CMN_E_NOMEM;
        memset(f->verdicts + old, 0, f->cap_verdicts - old);
    }
    if (f->verdicts[id] == 0) {
        const char *name = rep_names_get(names, id);
        uint8_t bits = FILTER_KNOWN;
        if (f->has_focus && regexec(&f->focus, name, 0, NULL, 0) == 0)
            bits |= FILTER_FOCUS;
        if (f->has_ignore && regexec(&f->ignore, name, 0, NULL, 0) == 0)
            bits |= FILTER_IGNORE;
        f->verdicts[id] = bits;
    }
    *v = f->verdicts[id];
    return CMN_OK;
}

int rep_filter_keeps_stack(struct rep_filter *f, const struct rep_names *names,
                           const uint32_t *ids, size_t n, bool *keep /* out */)
{
    bool is_focused = !f->has_focus;
    *keep = true;
    for (size_t i = 0; i < n && rep_filter_has_stack_rules(f); i++) {
        uint8_t v;
        if (verdict_of(f, names, ids[i], &v) != CMN_OK)
            return CMN_E_NOMEM;
        if (v & FILTER_IGNORE) {
            *keep = false;
            return CMN_OK;
        }
        is_focused = is_focused || (v & FILTER_FOCUS);
    }
    *keep = is_focused;
    return CMN_OK;
}
