/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Thread states' names and their selection (see states.h). The table of system calls holds
 * the ones threads wait in, by this architecture's numbers (<sys/syscall.h>).
 */
#include "reporter/stacks/states.h"

#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>

#include "common/err.h"
#include "include/libprof/prof_format.h"

struct call {
    long nr;
    const char *name;
};

#define CALL(n) {SYS_##n, #n}
static const struct call calls[] = {
    CALL(read), CALL(write), CALL(readv), CALL(writev), CALL(pread64), CALL(pwrite64),
    CALL(openat), CALL(close), CALL(fsync), CALL(fdatasync), CALL(sync_file_range),
    CALL(futex), CALL(nanosleep), CALL(clock_nanosleep), CALL(ppoll), CALL(pselect6),
    CALL(epoll_pwait), CALL(accept4), CALL(recvfrom), CALL(recvmsg), CALL(sendto),
    CALL(sendmsg), CALL(connect), CALL(wait4), CALL(waitid), CALL(rt_sigsuspend),
    CALL(rt_sigtimedwait), CALL(io_getevents), CALL(flock), CALL(fcntl), CALL(semtimedop),
    CALL(msgrcv), CALL(msgsnd), CALL(sched_yield), CALL(madvise), CALL(mmap), CALL(munmap),
    CALL(ioctl), CALL(getrandom), CALL(exit), CALL(exit_group), CALL(io_uring_enter),
#ifdef SYS_poll
    CALL(poll),
#endif
#ifdef SYS_select
    CALL(select),
#endif
#ifdef SYS_epoll_wait
    CALL(epoll_wait),
#endif
#ifdef SYS_epoll_pwait2
    CALL(epoll_pwait2),
#endif
#ifdef SYS_accept
    CALL(accept),
#endif
#ifdef SYS_pause
    CALL(pause),
#endif
#ifdef SYS_open
    CALL(open),
#endif
#ifdef SYS_futex_waitv
    CALL(futex_waitv),
#endif
};
#undef CALL

const char *rep_state_call_name(int nr)
{
    for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
        if (calls[i].nr == nr)
            return calls[i].name;
    return NULL;
}

bool rep_state_is_off_cpu(uint32_t state)
{
    unsigned kind = PROF_STATE_KIND(state);
    return kind != PROF_STATE_NONE && kind != PROF_STATE_RUNNING;
}

size_t rep_state_frame(uint32_t state, char *buf, size_t cap)
{
    static const char *const words[PROF_STATE_N] = {
        [PROF_STATE_RUNNABLE] = "runnable", [PROF_STATE_SLEEPING] = "sleep",
        [PROF_STATE_DISK] = "disk",         [PROF_STATE_STOPPED] = "stopped",
        [PROF_STATE_WAITING] = "wait",
    };
    if (!rep_state_is_off_cpu(state) || cap == 0)
        return 0;
    unsigned kind = PROF_STATE_KIND(state);
    const char *word = kind < PROF_STATE_N ? words[kind] : "off-cpu";
    int nr = PROF_STATE_CALL(state);
    const char *call = nr >= 0 ? rep_state_call_name(nr) : NULL;
    int n;
    if (nr < 0)
        n = snprintf(buf, cap, "[%s]", word);
    else if (call)
        n = snprintf(buf, cap, "[%s: %s]", word, call);
    else
        n = snprintf(buf, cap, "[%s: syscall %d]", word, nr);
    return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

/* The kinds a word names (bits 1 << PROF_STATE_*), 0 for none. */
static uint32_t kinds_of(const char *w, size_t n)
{
    static const struct {
        const char *word;
        uint32_t kinds;
    } words[] = {
        {"running", 1u << PROF_STATE_NONE | 1u << PROF_STATE_RUNNING},
        {"on-cpu", 1u << PROF_STATE_NONE | 1u << PROF_STATE_RUNNING},
        {"runnable", 1u << PROF_STATE_RUNNABLE},
        {"sleeping", 1u << PROF_STATE_SLEEPING},
        {"disk", 1u << PROF_STATE_DISK},
        {"stopped", 1u << PROF_STATE_STOPPED},
        {"wait", 1u << PROF_STATE_WAITING},
        {"waiting", 1u << PROF_STATE_SLEEPING | 1u << PROF_STATE_DISK | 1u << PROF_STATE_WAITING},
        {"off-cpu", ~(1u << PROF_STATE_NONE | 1u << PROF_STATE_RUNNING)},
    };
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (strlen(words[i].word) == n && strncmp(words[i].word, w, n) == 0)
            return words[i].kinds;
    return 0;
}

int rep_state_sel_parse(struct rep_state_sel *sel, const char *list, struct cmn_err *err)
{
    for (const char *w = list;;) {
        size_t n = strcspn(w, ",");
        uint32_t kinds = kinds_of(w, n);
        long nr = -1;
        for (size_t i = 0; kinds == 0 && i < sizeof(calls) / sizeof(calls[0]); i++)
            if (strlen(calls[i].name) == n && strncmp(calls[i].name, w, n) == 0)
                nr = calls[i].nr;
        if (kinds == 0 && (nr < 0 || sel->n_calls >= REP_STATE_CALLS_MAX))
            return cmn_err_set(err, CMN_E_INPUT,
                               "--state: '%.*s' is not a state (running, on-cpu, runnable, "
                               "sleeping, disk, stopped, wait, waiting, off-cpu) nor a system "
                               "call threads wait in (futex, read, poll, nanosleep, ...)",
                               (int)n, w);
        sel->kinds |= kinds;
        if (kinds == 0)
            sel->calls[sel->n_calls++] = (int)nr;
        if (w[n] == '\0')
            return CMN_OK;
        w += n + 1;
    }
}

bool rep_state_sel_keeps(const struct rep_state_sel *sel, uint32_t state)
{
    if (sel->kinds == 0 && sel->n_calls == 0)
        return true;
    unsigned kind = PROF_STATE_KIND(state);
    if (kind < 32 && (sel->kinds & 1u << kind))
        return true;
    int nr = PROF_STATE_CALL(state);
    for (size_t i = 0; nr >= 0 && rep_state_is_off_cpu(state) && i < sel->n_calls; i++)
        if (sel->calls[i] == nr)
            return true;
    return false;
}
