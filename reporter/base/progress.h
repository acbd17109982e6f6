/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A progress bar on standard error while `prof report` reads and symbolizes a large
 * input: shown only when standard error is a terminal and the input is over
 * REP_PROGRESS_MIN_BYTES, so that pipes, logs and tests never see it. One line redrawn in
 * place with '\r' at most ten times a second, erased when done. main() creates it; the
 * aggregate reports how many samples of the current file it has added. Reporter thread.
 */
#ifndef PROF_REPORTER_BASE_PROGRESS_H
#define PROF_REPORTER_BASE_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define REP_PROGRESS_MIN_BYTES (50u * 1024u * 1024u)

struct rep_progress {
    FILE *out;            /* where the bar goes: stderr */
    bool is_on;           /* the bar is shown */
    const char *what;     /* the current file's name; not owned */
    uint64_t last_ns;     /* CLOCK_MONOTONIC of the last redraw */
    bool is_drawn;        /* a bar is on the line and must be erased */
};

/* Not async-signal-safe. */
/* Makes p a bar for input_bytes of input on out, on when out is a terminal and the input
 * is large enough (or force is set, for tests). Returns CMN_OK. */
int rep_progress_init(struct rep_progress *p, FILE *out, uint64_t input_bytes, bool force);
/* Shows that `what` is at done of total samples; total 0 means it is being read. Redraws
 * at most every 100 ms unless done == total. */
void rep_progress_update(struct rep_progress *p, const char *what, size_t done, size_t total);
/* Erases the bar. Accepts NULL. */
void rep_progress_fini(struct rep_progress *p);
/* The total size of the n files named by paths (a file that cannot be stat'ed counts 0). */
uint64_t rep_progress_input_bytes(char *const *paths, size_t n);

#endif
