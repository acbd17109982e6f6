/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The system calls a signal handler cuts short, by number (common to the library, which
 * leaves a thread asleep in one alone when it takes a snapshot, and to `prof stacks`, which
 * prints the name). Header-only, never installed.
 *
 * Signal handler's path: not allowed (nothing there needs it).
 */
#ifndef PROF_COMMON_SNAP_CALLS_H
#define PROF_COMMON_SNAP_CALLS_H

#include <stddef.h>
#include <sys/syscall.h>

/* The system calls that return EINTR after a signal handler ran, SA_RESTART or not
 * (signal(7)): a snapshot does not ask a thread asleep in one (PROF_SNAP_NOT_ASKED, whose
 * SNAPSHOT record names the call by number), and `prof stacks` prints the name. The
 * numbers are this architecture's. */
struct cmn_snap_call {
    long nr;
    const char *name;
};

static const struct cmn_snap_call cmn_snap_calls[] = {
#ifdef SYS_pause
    {SYS_pause, "pause"},
#endif
#ifdef SYS_poll
    {SYS_poll, "poll"},
#endif
#ifdef SYS_select
    {SYS_select, "select"},
#endif
#ifdef SYS_epoll_wait
    {SYS_epoll_wait, "epoll_wait"},
#endif
#ifdef SYS_epoll_pwait2
    {SYS_epoll_pwait2, "epoll_pwait2"},
#endif
    {SYS_nanosleep, "nanosleep"},
    {SYS_clock_nanosleep, "clock_nanosleep"},
    {SYS_rt_sigsuspend, "sigsuspend"},
    {SYS_ppoll, "ppoll"},
    {SYS_pselect6, "pselect"},
    {SYS_epoll_pwait, "epoll_pwait"},
    {SYS_rt_sigtimedwait, "sigtimedwait"},
    {SYS_io_getevents, "io_getevents"},
    {SYS_semtimedop, "semtimedop"},
    {SYS_msgrcv, "msgrcv"},
    {SYS_msgsnd, "msgsnd"},
};

/* The name of system call nr when a snapshot leaves a thread asleep in it alone, else
 * NULL. */
static inline const char *cmn_snap_call_name(long nr)
{
    for (size_t i = 0; i < sizeof(cmn_snap_calls) / sizeof(cmn_snap_calls[0]); i++)
        if (cmn_snap_calls[i].nr == nr)
            return cmn_snap_calls[i].name;
    return NULL;
}

#endif
