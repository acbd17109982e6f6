/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The public API (include/libprof/prof.h): thin wrappers over the session. */
#include "include/libprof/prof.h"

#include "libprof/labels.h"
#include "libprof/libc.h"
#include "libprof/session.h"

/* Each runs with every signal blocked (libprof/libc.h): the session's calls take locks. */
#define LP_API_CALL(expr)                                                                  \
    do {                                                                                   \
        sigset_t mask_;                                                                    \
        lp_signals_block(&mask_);                                                          \
        int rc_ = (expr);                                                                  \
        lp_signals_restore(&mask_);                                                        \
        return rc_ == 0 ? 0 : -1;                                                          \
    } while (0)

PROF_API int prof_start(void)
{
    LP_API_CALL(lp_session_set_active(1));
}

PROF_API int prof_stop(void)
{
    LP_API_CALL(lp_session_set_active(0));
}

PROF_API int prof_flush(void)
{
    LP_API_CALL(lp_session_flush());
}

PROF_API int prof_snapshot(int fd)
{
    if (fd < 0)
        return -1;
    LP_API_CALL(lp_session_snapshot(fd));
}

/* Thread labels (libprof/labels.h): the calling thread's own state, no lock, no signal
 * blocked (a handler of ours that interrupts a change reads one word, whole). */
PROF_API int prof_label_set(const char *key, const char *value)
{
    return lp_labels_set(key, value) == 0 ? 0 : -1;
}

PROF_API int prof_labels_clear(void)
{
    return lp_labels_clear_all() == 0 ? 0 : -1;
}

PROF_API prof_label_token prof_label_push(const char *key, const char *value)
{
    return lp_labels_push(key, value);
}

PROF_API int prof_label_pop(prof_label_token token)
{
    return lp_labels_pop(token) == 0 ? 0 : -1;
}

PROF_API int prof_trace_set(const unsigned char trace_id[16], const unsigned char span_id[8])
{
    return lp_labels_trace_set(trace_id, span_id) == 0 ? 0 : -1;
}

PROF_API int prof_trace_clear(void)
{
    return lp_labels_trace_clear() == 0 ? 0 : -1;
}
