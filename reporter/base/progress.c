/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The progress bar: "prof: reading big.prof" while a file is read, then
 * "prof: big.prof [#######.............]  35% 1200000/3400000 samples" while it is
 * symbolized and aggregated. Reporter thread only.
 */
#include "reporter/base/progress.h"

#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/err.h"

#define PROGRESS_WIDTH 30

int rep_progress_init(struct rep_progress *p, FILE *out, uint64_t input_bytes, bool force)
{
    memset(p, 0, sizeof(*p));
    p->out = out;
    p->is_on = force || (input_bytes > REP_PROGRESS_MIN_BYTES && isatty(fileno(out)));
    return CMN_OK;
}

void rep_progress_update(struct rep_progress *p, const char *what, size_t done, size_t total)
{
    if (p == NULL || !p->is_on)
        return;
    uint64_t t = cmn_clock_ns(CLOCK_MONOTONIC);
    if (p->is_drawn && what == p->what && done != total && t - p->last_ns < 100000000u)
        return;
    p->last_ns = t;
    p->what = what;
    if (total == 0) {
        fprintf(p->out, "\r\033[Kprof: reading %.60s", what);
    } else {
        size_t fill = (size_t)((double)done / (double)total * PROGRESS_WIDTH);
        char bar[PROGRESS_WIDTH + 1];
        for (size_t i = 0; i < PROGRESS_WIDTH; i++)
            bar[i] = i < fill ? '#' : '.';
        bar[PROGRESS_WIDTH] = '\0';
        fprintf(p->out, "\r\033[Kprof: %.40s [%s] %3d%% %zu/%zu samples", what, bar,
                (int)((double)done * 100.0 / (double)total), done, total);
    }
    fflush(p->out);
    p->is_drawn = true;
}

void rep_progress_fini(struct rep_progress *p)
{
    if (p == NULL || !p->is_drawn)
        return;
    fputs("\r\033[K", p->out);
    fflush(p->out);
    p->is_drawn = false;
}

uint64_t rep_progress_input_bytes(char *const *paths, size_t n)
{
    uint64_t sum = 0;
    struct stat st;
    for (size_t i = 0; i < n; i++)
        if (stat(paths[i], &st) == 0 && S_ISREG(st.st_mode))
            sum += (uint64_t)st.st_size;
    return sum;
}
