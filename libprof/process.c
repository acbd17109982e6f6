/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The PROCESS record's facts (see process.h).
 */
#include "libprof/process.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/record.h"

size_t lp_process_describe(struct prof_rec_process *p, char exe[PATH_MAX])
{
    p->pid = (uint32_t)getpid();
    p->ppid = (uint32_t)getppid();
    p->start_real_ns = cmn_clock_ns(CLOCK_REALTIME);
    /* Through this thread: a main thread that called pthread_exit() left no exe at
     * /proc/self. */
    ssize_t n = readlink("/proc/thread-self/exe", exe, PATH_MAX - 1);
    if (n <= 0)
        n = readlink("/proc/self/exe", exe, PATH_MAX - 1);
    exe[n > 0 ? n : 0] = '\0';
    return cmn_record_size_str(sizeof(*p), strlen(exe));
}
