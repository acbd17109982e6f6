/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Thread stack bounds and names (see threads.h). */
#include "libprof/threads.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/proc.h"
#include "common/record.h"
#include "libprof/fd.h"
#include "libprof/sigstacks.h"
#include "libprof/writer.h"
#include "sampler/handler.h"

#define LP_MAIN_STACK_NEAR (1u << 20) /* a frame this close below the start's is on its stack */
#define LP_MAIN_STACK_PROBES 4096u /* pages above the start looked at for the mapping's end */
#define LP_MAIN_STACK_MAX (1ull << 30) /* the lowest a main stack is taken to reach, at most */

extern void *__libc_stack_end; /* the loader's: the stack pointer the process started with */

/* The stack of the thread the process started with, when this is it, as glibc's
 * pthread_getattr_np() gives it but without reading /proc/self/maps (a tenth of a
 * millisecond): a frame of this thread lies just below where the process started
 * (__libc_stack_end; nothing else is mapped within the megabyte below, the stack's guard
 * gap); the stack ends with the page that holds that start (the program's arguments and
 * environment above it are no frame's) and reaches down as far as the kernel lets its
 * mapping grow: the mapping's end (the first page above the start where mincore() says
 * ENOMEM) less the stack's limit (RLIMIT_STACK, 1 GiB at most). 0, or -1 when this is
 * another thread (a fork child of a thread that was not the first). */
static int main_stack(void **addr, size_t *size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    volatile char here = 0;
    uintptr_t start = (uintptr_t)__libc_stack_end;
    if ((uintptr_t)&here >= start || start - (uintptr_t)&here > LP_MAIN_STACK_NEAR)
        return -1;
    uintptr_t end = (start & ~(uintptr_t)(page - 1)) + page, top = end;
    unsigned char vec;
    for (unsigned i = 0; i < LP_MAIN_STACK_PROBES && mincore((void *)top, page, &vec) == 0; i++)
        top += page;
    struct rlimit lim;
    uint64_t span = LP_MAIN_STACK_MAX;
    if (getrlimit(RLIMIT_STACK, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY &&
        lim.rlim_cur < span)
        span = lim.rlim_cur & ~(uint64_t)(page - 1);
    if (span > top - page)
        span = top - page;
    uintptr_t lo = top - span;
    if (lo >= end)
        return -1;
    *addr = (void *)lo;
    *size = end - lo;
    return 0;
}

int lp_thread_enter(void)
{
    pthread_attr_t attr;
    void *addr;
    size_t size;
    smp_self.tid = (uint32_t)syscall(SYS_gettid);
    lp_sigstacks_enter();
    if (main_stack(&addr, &size) != 0) {
        int rc = pthread_getattr_np(pthread_self(), &attr);
        if (rc != 0)
            return -rc;
        rc = pthread_attr_getstack(&attr, &addr, &size);
        pthread_attr_destroy(&attr);
        if (rc != 0)
            return -rc;
    }
    /* hi last: a handler that runs in between sees hi == 0 (unknown), never a torn pair. */
    smp_self.stack_hi = 0;
    atomic_signal_fence(memory_order_seq_cst);
    smp_self.stack_lo = (uintptr_t)addr;
    atomic_signal_fence(memory_order_seq_cst);
    smp_self.stack_hi = (uintptr_t)addr + size;
    return 0;
}

void lp_thread_leave(void)
{
    lp_sigstacks_leave();
}

int lp_threads_write_names(struct lp_writer *w, uint64_t time_ns)
{
    struct cmn_proc_tasks it;
    int rc = cmn_proc_tasks_open(&lp_proc_self, &it);
    if (rc != 0)
        return rc;
    int n = 0;
    for (pid_t tid; (tid = cmn_proc_tasks_next(&it)) != 0;) {
        char name[PROF_THREAD_NAME_MAX];
        cmn_proc_task_name(&lp_proc_self, tid, name);
        if (name[0] == '\0')
            continue; /* gone */
        size_t need = cmn_record_size_str(sizeof(struct prof_rec_thread), strlen(name));
        void *dst = lp_writer_reserve(w, need);
        if (!dst)
            continue;
        lp_writer_commit(w, cmn_record_thread(dst, need, time_ns, (uint32_t)tid, name));
        n++;
    }
    cmn_proc_tasks_close(&it);
    return n;
}
