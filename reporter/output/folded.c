/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Folded output: every stack is spelled out as its finished line, "text weight", into one
 * growing buffer, and the lines are sorted bytewise (as `sort` orders whole lines, the
 * count included) and written. Only when some function name had to be altered (a ';' or a
 * control character in it) can two stacks spell the same text; then the lines are first
 * sorted by text, neighbours with equal text merged and the merged line spelled again at
 * the end of the buffer. Offsets, not pointers, name the lines, as the buffer moves when
 * it grows. Reporter thread only.
 */
#include "reporter/output/folded.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/grow.h"
#include "reporter/stacks/aggregate.h"
#include "reporter/symbols/names.h"

struct folded_line {
    size_t at;       /* offset of the NUL-terminated line in the buffer */
    size_t text_len; /* bytes of its text, the frames, before " weight" */
    uint64_t weight; /* summed over stacks spelled the same; 0: left out */
};

struct text_buf {
    char *data;
    size_t n;
    size_t cap;
};

static int buf_reserve(struct text_buf *b, size_t more)
{
    return CMN_GROW(b->data, b->cap, b->n + more, 65536) ? CMN_OK : CMN_E_NOMEM;
}

static bool is_unsafe(unsigned char c)
{
    return c == ';' || c < 0x20 || c == 0x7f;
}

/* Appends name, made safe for the format: ';' becomes ':', a control character ' '. */
static int put_name(struct text_buf *b, const char *name)
{
    size_t n = strlen(name);
    if (buf_reserve(b, n) != CMN_OK)
        return CMN_E_NOMEM;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        b->data[b->n++] = (char)(!is_unsafe(c) ? c : c == ';' ? ':' : ' ');
    }
    return CMN_OK;
}

static int put_char(struct text_buf *b, char c)
{
    if (buf_reserve(b, 1) != CMN_OK)
        return CMN_E_NOMEM;
    b->data[b->n++] = c;
    return CMN_OK;
}

/* Appends " weight" and the NUL that end a line. */
static int put_weight(struct text_buf *b, uint64_t weight)
{
    if (buf_reserve(b, 32) != CMN_OK)
        return CMN_E_NOMEM;
    b->n += (size_t)snprintf(b->data + b->n, 32, " %" PRIu64, weight) + 1;
    return CMN_OK;
}

static int spell_line(struct text_buf *b, const struct rep_agg *a, size_t i,
                      const struct rep_names *names, struct folded_line *line)
{
    const uint32_t *ids = rep_agg_stack_ids(a, i);
    line->at = b->n;
    line->weight = a->stacks[i].weight;
    for (uint32_t f = 0; f < a->stacks[i].n_ids; f++) {
        if (f > 0 && put_char(b, ';') != CMN_OK)
            return CMN_E_NOMEM;
        if (put_name(b, rep_names_get(names, ids[f])) != CMN_OK)
            return CMN_E_NOMEM;
    }
    line->text_len = b->n - line->at;
    return put_weight(b, line->weight);
}

/* Whether a name changes when made safe, so that two stacks may spell the same text. */
static bool may_collide(const struct rep_names *names)
{
    for (uint32_t id = 0; id < names->n_names; id++)
        for (const char *c = rep_names_get(names, id); *c; c++)
            if (is_unsafe((unsigned char)*c))
                return true;
    return false;
}

/* qsort has no context argument; the buffer being sorted over is this one. */
static const char *sort_text;

static int cmp_text(const void *va, const void *vb)
{
    const struct folded_line *a = va, *b = vb;
    size_t n = a->text_len < b->text_len ? a->text_len : b->text_len;
    int c = memcmp(sort_text + a->at, sort_text + b->at, n);
    if (c != 0 || a->text_len == b->text_len)
        return c;
    return a->text_len < b->text_len ? -1 : 1;
}

static int cmp_line(const void *va, const void *vb)
{
    const struct folded_line *a = va, *b = vb;
    return strcmp(sort_text + a->at, sort_text + b->at);
}

/* Sums the weights of lines with the same text into the first of them, spelling its line
 * again with the sum; the others get weight 0. */
static int merge_same_text(struct text_buf *b, struct folded_line *lines, size_t n)
{
    sort_text = b->data;
    qsort(lines, n, sizeof(*lines), cmp_text);
    size_t first = 0;
    for (size_t i = 1; i <= n; i++) {
        if (i < n && cmp_text(&lines[first], &lines[i]) == 0) {
            lines[first].weight += lines[i].weight;
            lines[i].weight = 0;
            continue;
        }
        if (i - first > 1) {
            /* The text is copied from inside the buffer, which may move: reserve first. */
            size_t len = lines[first].text_len;
            if (buf_reserve(b, len + 32) != CMN_OK)
                return CMN_E_NOMEM;
            memcpy(b->data + b->n, b->data + lines[first].at, len);
            lines[first].at = b->n;
            b->n += len;
            if (put_weight(b, lines[first].weight) != CMN_OK)
                return CMN_E_NOMEM;
            sort_text = b->data;
        }
        first = i;
    }
    return CMN_OK;
}

static int write_lines(FILE *out, const struct text_buf *b, const struct folded_line *lines,
                       size_t n)
{
    for (size_t i = 0; i < n; i++) {
        /* A stack of weight 0 (samples of weight 0, or merged away) draws nothing. */
        if (lines[i].weight == 0)
            continue;
        if (fputs(b->data + lines[i].at, out) == EOF || fputc('\n', out) == EOF)
            return CMN_E_IO;
    }
    return fflush(out) == 0 && !ferror(out) ? CMN_OK : CMN_E_IO;
}

int rep_out_folded(FILE *out, const struct rep_agg *a, const struct rep_names *names)
{
    struct text_buf b = {0};
    size_t n = a->n_stacks;
    int rc = CMN_E_NOMEM;
    struct folded_line *lines = calloc(n ? n : 1, sizeof(*lines));
    if (lines == NULL)
        goto done;
    for (size_t i = 0; i < n; i++)
        if (spell_line(&b, a, i, names, &lines[i]) != CMN_OK)
            goto done;
    if (may_collide(names) && merge_same_text(&b, lines, n) != CMN_OK)
        goto done;
    sort_text = b.data;
    qsort(lines, n, sizeof(*lines), cmp_line);
    rc = write_lines(out, &b, lines, n);
done:
    free(lines);
    free(b.data);
    return rc;
}
