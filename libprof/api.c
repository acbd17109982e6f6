/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The public API (include/prof.h): thin wrappers over the session. */
#include "include/prof.h"

#include "libprof/lifecycle.h"

PROF_API int prof_start(void)
{
    return lp_session_set_active(1) == 0 ? 0 : -1;
}

PROF_API int prof_stop(void)
{
    return lp_session_set_active(0) == 0 ? 0 : -1;
}

PROF_API int prof_flush(void)
{
    return lp_session_flush() == 0 ? 0 : -1;
}

PROF_API int prof_snapshot(int fd)
{
    if (fd < 0)
        return -1;
    return lp_session_snapshot(fd) == 0 ? 0 : -1;
}
