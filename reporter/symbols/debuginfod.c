/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The debuginfod client: libdebuginfod loaded with dlopen(), one client for the report,
 * a progress callback that cancels a query at its deadline (libdebuginfod calls it about
 * once a second while it waits, connection included), and the list of build-ids left
 * unnamed. A query that fails for any reason but "the server does not have it" (no
 * answer in time, connection refused, ...) ends the asking: with every server down, each
 * further query would fail the same way, after the same wait. Built without libdebuginfod's
 * header (package libdebuginfod-dev), it asks nothing and says so. Reporter thread only.
 */
#include "reporter/symbols/debuginfod.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/check.h"
#include "common/err.h"

#if __has_include(<elfutils/debuginfod.h>)
#include <elfutils/debuginfod.h>
#define DBGD_HAVE_HEADER 1
#else
#define DBGD_HAVE_HEADER 0
#endif

#define DBGD_SONAME "libdebuginfod.so.1"

#if DBGD_HAVE_HEADER
struct rep_sym_dbgd_fns {
    __typeof__(&debuginfod_begin) begin;
    __typeof__(&debuginfod_find_debuginfo) find_debuginfo;
    __typeof__(&debuginfod_set_progressfn) set_progressfn;
    __typeof__(&debuginfod_set_user_data) set_user_data;
    __typeof__(&debuginfod_get_user_data) get_user_data;
    __typeof__(&debuginfod_end) end;
};
#else
struct rep_sym_dbgd_fns {
    int unused;
};
#endif

#if DBGD_HAVE_HEADER
static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif

int rep_sym_dbgd_init(struct rep_sym_dbgd *d)
{
    memset(d, 0, sizeof(*d));
    d->budget_s = REP_SYM_DBGD_BUDGET_S;
    return CMN_OK;
}

void rep_sym_dbgd_fini(struct rep_sym_dbgd *d)
{
    if (d == NULL)
        return;
#if DBGD_HAVE_HEADER
    if (d->client != NULL)
        d->fns->end(d->client);
#endif
    /* The library stays loaded: libcurl's global state, which it set up, would be
     * unmapped under the blocks it points to (and dlopen() again later would set it up
     * anew anyway). */
    free(d->fns);
    free(d->why_off);
    free(d->unnamed);
    memset(d, 0, sizeof(*d));
}

/* Stops the asking for the reason fmt says (kept for the build-ids met later). */
static int turn_off(struct rep_sym_dbgd *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int turn_off(struct rep_sym_dbgd *d, const char *fmt, ...)
{
    d->is_off = true;
    free(d->why_off);
    va_list ap;
    va_start(ap, fmt);
    int rc = vasprintf(&d->why_off, fmt, ap);
    va_end(ap);
    if (rc < 0) {
        d->why_off = NULL;
        return CMN_E_NOMEM;
    }
    return CMN_OK;
}

#if DBGD_HAVE_HEADER
/* The callback reaches its rep_sym_dbgd through the client's user data, with the library's
 * getter, set when the library is loaded (the reporter has one thread). */
static __typeof__(&debuginfod_get_user_data) progress_user_data;

/* libdebuginfod's progress callback: non-zero cancels the query. */
static int on_progress(debuginfod_client *c, long done, long total)
{
    (void)done;
    (void)total;
    struct rep_sym_dbgd *d = progress_user_data != NULL ? progress_user_data(c) : NULL;
    if (d == NULL || now_ns() < d->deadline_ns)
        return 0;
    d->is_timed_out = true;
    return 1;
}

/* Loads the library and makes the client. CMN_OK also when it cannot (d is off then). */
static int load(struct rep_sym_dbgd *d)
{
    d->lib = dlopen(DBGD_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (d->lib == NULL)
        return turn_off(d, "%s is not installed (package libdebuginfod1)", DBGD_SONAME);
    d->fns = calloc(1, sizeof(*d->fns));
    if (d->fns == NULL)
        return CMN_E_NOMEM;
    struct rep_sym_dbgd_fns *f = d->fns;
    *(void **)&f->begin = dlsym(d->lib, "debuginfod_begin");
    *(void **)&f->find_debuginfo = dlsym(d->lib, "debuginfod_find_debuginfo");
    *(void **)&f->set_progressfn = dlsym(d->lib, "debuginfod_set_progressfn");
    *(void **)&f->set_user_data = dlsym(d->lib, "debuginfod_set_user_data");
    *(void **)&f->get_user_data = dlsym(d->lib, "debuginfod_get_user_data");
    *(void **)&f->end = dlsym(d->lib, "debuginfod_end");
    if (!f->begin || !f->find_debuginfo || !f->set_progressfn || !f->set_user_data ||
        !f->get_user_data || !f->end)
        return turn_off(d, "%s lacks the functions prof needs", DBGD_SONAME);
    d->client = f->begin();
    if (d->client == NULL)
        return turn_off(d, "libdebuginfod could not start a client");
    progress_user_data = f->get_user_data;
    f->set_user_data(d->client, d);
    f->set_progressfn(d->client, on_progress);
    return CMN_OK;
}
#endif

/* Reads the environment and loads the library, once. */
static int start(struct rep_sym_dbgd *d)
{
    d->is_started = true;
    const char *urls = getenv("DEBUGINFOD_URLS");
    if (urls == NULL || strspn(urls, " ") == strlen(urls) || d->budget_s <= 0) {
        d->is_off = true; /* nobody asked for a server: nothing to say */
        return CMN_OK;
    }
#if DBGD_HAVE_HEADER
    return load(d);
#else
    return turn_off(d, "prof was built without libdebuginfod's header (libdebuginfod-dev)");
#endif
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

/* Adds "ID (FILE: REASON)" to the unnamed list. */
static int add_unnamed(struct rep_sym_dbgd *d, const char *module_path, const uint8_t *id, size_t n,
                       const char *reason)
{
    char hex[2 * 64 + 1];
    size_t k = 0;
    for (size_t i = 0; i < n && i < 64; i++)
        k += (size_t)snprintf(hex + k, sizeof(hex) - k, "%02x", id[i]);
    hex[k] = '\0';
    char *line;
    int rc = asprintf(&line, "%s%s%s (%s: %s)", d->unnamed ? d->unnamed : "",
                      d->unnamed ? ", " : "", hex, base_name(module_path), reason);
    if (rc < 0)
        return CMN_E_NOMEM;
    free(d->unnamed);
    d->unnamed = line;
    return CMN_OK;
}

#if DBGD_HAVE_HEADER
/* One query, within what is left of the budget. */
static int query(struct rep_sym_dbgd *d, const char *module_path, const uint8_t *id, size_t n,
                 char **path)
{
    double left_s = d->budget_s - d->spent_s;
    uint64_t start_ns = now_ns();
    d->deadline_ns = start_ns + (uint64_t)(left_s * 1e9);
    d->is_timed_out = false;
    int fd = d->fns->find_debuginfo(d->client, id, (int)n, path);
    d->spent_s += (double)(now_ns() - start_ns) / 1e9;
    if (fd >= 0) {
        close(fd);
        return *path != NULL ? CMN_OK : CMN_E_NOMEM;
    }
    *path = NULL;
    if (fd == -ENOENT && d->spent_s < d->budget_s)
        return add_unnamed(d, module_path, id, n, "not on the server") == CMN_OK ? CMN_E_NOTFOUND
                                                                                 : CMN_E_NOMEM;
    char reason[128];
    if (d->is_timed_out || d->spent_s >= d->budget_s)
        snprintf(reason, sizeof(reason), "no answer within the %.0f s budget", d->budget_s);
    else
        snprintf(reason, sizeof(reason), "%s", strerror(-fd));
    if (add_unnamed(d, module_path, id, n, reason) != CMN_OK ||
        turn_off(d, "not asked: the server failed before (%s)", reason) != CMN_OK)
        return CMN_E_NOMEM;
    return CMN_E_NOTFOUND;
}
#endif

int rep_sym_dbgd_find(struct rep_sym_dbgd *d, const char *module_path, const uint8_t *id, size_t n,
                      char **path)
{
    assert(n > 0);
    *path = NULL;
    if (!d->is_started && start(d) != CMN_OK)
        return CMN_E_NOMEM;
    if (d->is_off) {
        if (d->why_off == NULL)
            return CMN_E_NOTFOUND;
        return add_unnamed(d, module_path, id, n, d->why_off) == CMN_OK ? CMN_E_NOTFOUND
                                                                        : CMN_E_NOMEM;
    }
#if DBGD_HAVE_HEADER
    return query(d, module_path, id, n, path);
#else
    return CMN_E_NOTFOUND;
#endif
}

int rep_sym_dbgd_take(struct rep_sym_dbgd *d, char **line)
{
    *line = NULL;
    if (d->unnamed == NULL)
        return CMN_OK;
    int rc = asprintf(line,
                      "debuginfod: no debug file for these build-ids, whose frames stay "
                      "FILE+0xOFFSET: %s",
                      d->unnamed);
    free(d->unnamed);
    d->unnamed = NULL;
    if (rc < 0) {
        *line = NULL;
        return CMN_E_NOMEM;
    }
    return CMN_OK;
}
