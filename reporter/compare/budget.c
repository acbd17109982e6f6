/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Parsing budget files (see budget.h): the text is split in lines, each line in blank-
 * separated fields, and each rule's pattern copied out of the text. Called by the check
 * command before any profile is read, so that a bad budget fails fast. Reporter thread
 * only.
 */
#include "reporter/compare/budget.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/grow.h"
#include "common/parse.h"

#define BUDGET_MAX_BYTES (1u << 20) /* a larger file is not a budget */
#define BUDGET_MAX_FIELDS 4         /* one more than allowed, to tell a line with too many */

int rep_budget_init(struct rep_budget *b)
{
    memset(b, 0, sizeof(*b));
    return CMN_OK;
}

void rep_budget_fini(struct rep_budget *b)
{
    if (b == NULL)
        return;
    for (size_t i = 0; i < b->n_rules; i++)
        free(b->rules[i].pattern);
    free(b->rules);
    memset(b, 0, sizeof(*b));
}

/* Splits the len bytes at line into blank-separated fields; returns how many (at most
 * BUDGET_MAX_FIELDS are stored). */
static size_t split_fields(const char *line, size_t len, const char **at, size_t *lens)
{
    size_t n = 0, i = 0;
    while (i < len) {
        while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
            i++;
        if (i == len)
            break;
        size_t start = i;
        while (i < len && line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
            i++;
        if (n < BUDGET_MAX_FIELDS) {
            at[n] = line + start;
            lens[n] = i - start;
        }
        n++;
    }
    return n;
}

/* Parses a percentage in [0, 100] from the len bytes at s. */
static bool parse_percent(const char *s, size_t len, double *out)
{
    char buf[32];
    if (len == 0 || len >= sizeof(buf))
        return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (buf[len - 1] == '%')
        buf[len - 1] = '\0';
    return cmn_parse_double(buf, 0.0, 100.0, out);
}

static int add_rule(struct rep_budget *b, const struct rep_budget_rule *r)
{
    if (!CMN_GROW(b->rules, b->cap_rules, b->n_rules + 1, 8))
        return CMN_E_NOMEM;
    b->rules[b->n_rules++] = *r;
    return CMN_OK;
}

/* One line, without its newline. */
static int parse_line(struct rep_budget *b, const char *line, size_t len, const char *name,
                      unsigned line_no, struct cmn_err *err)
{
    const char *at[BUDGET_MAX_FIELDS];
    size_t lens[BUDGET_MAX_FIELDS];
    size_t n = split_fields(line, len, at, lens);
    if (n == 0 || at[0][0] == '#')
        return CMN_OK;
    struct rep_budget_rule r = {.line = line_no};
    if (n < 2 || n > 3)
        return cmn_err_set(err, CMN_E_INPUT,
                           "%s:%u: expected 'PATTERN MAX_PERCENT [self|total]', found %zu fields",
                           name, line_no, n);
    if (!parse_percent(at[1], lens[1], &r.max_percent))
        return cmn_err_set(err, CMN_E_INPUT, "%s:%u: '%.*s' is not a percentage in 0..100", name,
                           line_no, (int)lens[1], at[1]);
    if (n == 3) {
        if (lens[2] == 4 && strncmp(at[2], "self", 4) == 0)
            r.is_self = true;
        else if (lens[2] != 5 || strncmp(at[2], "total", 5) != 0)
            return cmn_err_set(err, CMN_E_INPUT, "%s:%u: '%.*s' is neither self nor total", name,
                               line_no, (int)lens[2], at[2]);
    }
    r.pattern = strndup(at[0], lens[0]);
    if (r.pattern == NULL || add_rule(b, &r) != CMN_OK) {
        free(r.pattern);
        return cmn_err_nomem(err);
    }
    return CMN_OK;
}

int rep_budget_parse(struct rep_budget *b, const char *text, const char *name, struct cmn_err *err)
{
    unsigned line_no = 1;
    for (const char *line = text; *line != '\0'; line_no++) {
        size_t len = strcspn(line, "\n");
        int rc = parse_line(b, line, len, name, line_no, err);
        if (rc != CMN_OK)
            return rc;
        line += len + (line[len] == '\n');
    }
    return CMN_OK;
}

int rep_budget_load(struct rep_budget *b, const char *path, struct cmn_err *err)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return cmn_err_set(err, CMN_E_INPUT, "%s: %s", path, strerror(errno));
    char *text = malloc(BUDGET_MAX_BYTES + 1);
    if (text == NULL) {
        fclose(f);
        return cmn_err_nomem(err);
    }
    size_t n = fread(text, 1, BUDGET_MAX_BYTES + 1, f);
    int rc = CMN_OK;
    if (ferror(f))
        rc = cmn_err_set(err, CMN_E_INPUT, "%s: read error: %s", path, strerror(errno));
    else if (n > BUDGET_MAX_BYTES)
        rc = cmn_err_set(err, CMN_E_INPUT, "%s: larger than 1 MiB; not a budget file", path);
    else if (memchr(text, '\0', n) != NULL)
        rc = cmn_err_set(err, CMN_E_INPUT, "%s: holds a NUL byte; not a budget file", path);
    fclose(f);
    if (rc == CMN_OK) {
        text[n] = '\0';
        rc = rep_budget_parse(b, text, path, err);
    }
    free(text);
    return rc;
}

bool rep_budget_matches(const struct rep_budget_rule *r, const char *name)
{
    return fnmatch(r->pattern, name, 0) == 0;
}
