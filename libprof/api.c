/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The public API (include/libprof/prof.h): thin wrappers over the session. */
#include "include/libprof/prof.h"

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
