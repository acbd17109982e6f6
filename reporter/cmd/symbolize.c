/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * `prof symbolize` (see symbolize_cmd.h). Modules are kept in a small list by path for
 * the command's life; a path that failed to open is remembered too, so it is tried once.
 */
#include "reporter/cmd/symbolize.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "reporter/cmd/cmd.h"
#include "reporter/symbols/demangle.h"
#include "reporter/symbols/module.h"

#define MAX_INLINED 16

const char rep_cmd_symbolize_help[] =
    "usage: prof symbolize [FILE]\n"
    "\n"
    "Names the 'module+0xOFFSET' lines that prof_backtrace_fd() writes, read from\n"
    "FILE or standard input (FILE absent or -), as 'function file:line', with a\n"
    "line more for each function inlined there; other lines are copied as they are,\n"
    "so a whole crash log can go through.\n"
    "\n"
    "  -h, --help           this help\n";

/* A line "? module+0xOFFSET" is a candidate prof_backtrace_fd() wrote for the caller of
 * the interrupted function on the line before: the word at its stack pointer. It is named
 * when that function's unwind information says its return address is there (it had no
 * frame), and dropped otherwise. */
#define CANDIDATE_PREFIX "? "

struct opened {
    char *path;             /* owned */
    struct rep_module *mod; /* NULL when it could not be opened */
    struct opened *next;
};

/* The module for path, opened on first use; *m is NULL when it cannot be read. */
static int module_for(struct opened **list, const char *path, struct rep_module **m)
{
    for (struct opened *o = *list; o != NULL; o = o->next) {
        if (strcmp(o->path, path) == 0) {
            *m = o->mod;
            return CMN_OK;
        }
    }
    struct opened *o = calloc(1, sizeof(*o));
    if (o == NULL || (o->path = strdup(path)) == NULL) {
        free(o);
        return CMN_E_NOMEM;
    }
    struct cmn_err ignored = {0};
    if (rep_module_open(path, &o->mod, &ignored) != CMN_OK)
        o->mod = NULL;
    o->next = *list;
    *list = o;
    *m = o->mod;
    return CMN_OK;
}

static void close_all(struct opened *list)
{
    while (list != NULL) {
        struct opened *next = list->next;
        rep_module_close(list->mod);
        free(list->path);
        free(list);
        list = next;
    }
}

/* Splits "PATH+0xHEX" into path (NUL-terminated in place) and offset; 0 when it is not
 * of that form. */
static int parse_frame(char *line, const char **path, uint64_t *off)
{
    char *plus = NULL;
    for (char *p = strstr(line, "+0x"); p != NULL; p = strstr(p + 1, "+0x"))
        plus = p;
    if (plus == NULL || plus == line)
        return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(plus + 3, &end, 16);
    if (errno != 0 || end == plus + 3 || *end != '\0')
        return 0;
    *plus = '\0';
    *path = line;
    *off = v;
    return 1;
}

/* Writes "function file:line" for one frame, a line per inlined function. */
static int print_frame(FILE *out, struct rep_module *m, uint64_t off, const char *orig)
{
    struct rep_module_frame fr[MAX_INLINED];
    size_t n = 0;
    const char *name = NULL;
    if (m == NULL ||
        (rep_module_lines(m, off, fr, MAX_INLINED, &n) != CMN_OK || n == 0)) {
        if (m != NULL && rep_module_lookup(m, off, &name) == CMN_OK) {
            fr[0] = (struct rep_module_frame){.func = name};
            n = 1;
        } else {
            return fprintf(out, "%s\n", orig) < 0 ? CMN_E_IO : CMN_OK;
        }
    }
    for (size_t i = 0; i < n; i++) {
        char *pretty = NULL;
        const char *raw = fr[i].func;
        if (raw == NULL && i + 1 == n && rep_module_lookup(m, off, &name) == CMN_OK)
            raw = name;
        if (raw != NULL && rep_demangle_name(raw, &pretty) != CMN_OK)
            return CMN_E_NOMEM;
        int w = fprintf(out, "%s %s:%u%s\n", pretty ? pretty : "??",
                        fr[i].file ? fr[i].file : "??", fr[i].line,
                        i + 1 < n ? " (inlined)" : "");
        free(pretty);
        if (w < 0)
            return CMN_E_IO;
    }
    return CMN_OK;
}

/* Whether the candidate line's frame is the caller of the frame before it (prev_m at
 * prev_off, the interrupted instruction): its unwind information must say so. */
static bool candidate_is_caller(struct rep_module *prev_m, uint64_t prev_off)
{
    bool yes = false;
    return prev_m != NULL && rep_module_ra_at_sp(prev_m, prev_off, &yes) == CMN_OK && yes;
}

/* Reads in to the end, writing each line symbolized or as it was. */
static int run(FILE *in, FILE *out, struct cmn_err *err)
{
    struct opened *list = NULL;
    char *line = NULL, *copy = NULL;
    size_t cap = 0;
    ssize_t len;
    int rc = CMN_OK;
    struct rep_module *prev_m = NULL; /* the frame on the line before, if any */
    uint64_t prev_off = 0;
    while (rc == CMN_OK && (len = getline(&line, &cap, in)) >= 0) {
        if (len > 0 && line[len - 1] == '\n')
            line[--len] = '\0';
        free(copy);
        if ((copy = strdup(line)) == NULL) {
            rc = CMN_E_NOMEM;
            break;
        }
        const char *path;
        uint64_t off;
        struct rep_module *m = NULL;
        size_t skip = strncmp(line, CANDIDATE_PREFIX, 2) == 0 ? 2 : 0;
        if (!parse_frame(line + skip, &path, &off)) {
            rc = fprintf(out, "%s\n", copy) < 0 ? CMN_E_IO : CMN_OK;
            prev_m = NULL;
            continue;
        }
        rc = module_for(&list, path, &m);
        if (rc == CMN_OK && skip && !candidate_is_caller(prev_m, prev_off))
            continue; /* not proven: no frame */
        if (rc == CMN_OK)
            rc = print_frame(out, m, off, copy + skip);
        prev_m = m;
        prev_off = off;
    }
    free(line);
    free(copy);
    close_all(list);
    if (rc == CMN_E_NOMEM)
        return cmn_err_nomem(err);
    if (rc == CMN_E_IO || fflush(out) != 0)
        return cmn_err_set(err, CMN_E_IO, "symbolize: cannot write the output");
    return CMN_OK;
}

int rep_cmd_symbolize(int argc, char **argv, int *exit_status, struct cmn_err *err)
{
    FILE *out = stdout;
    *exit_status = 0;
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        *exit_status = REP_CMD_HELP;
        return CMN_OK;
    }
    if (argc > 2)
        return cmn_err_set(err, CMN_E_INPUT,
                           "symbolize: one FILE at most (see prof symbolize --help)");
    if (argc < 2 || strcmp(argv[1], "-") == 0)
        return run(stdin, out, err);
    FILE *in = fopen(argv[1], "r");
    if (in == NULL)
        return cmn_err_set(err, CMN_E_INPUT, "symbolize: cannot read %s: %s", argv[1],
                           strerror(errno));
    int rc = run(in, out, err);
    fclose(in);
    return rc;
}
