/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * perf_event counters as a timer source (see timer_perf.h). Opened by libprof/ on
 * application threads. glibc has no wrapper for perf_event_open, hence syscall().
 */
#include "sampler/timer_perf.h"

#include "arch/arch.h"
#include "sampler/fd_high.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void fill_attr(struct perf_event_attr *a, unsigned hz, unsigned event)
{
    memset(a, 0, sizeof(*a));
    a->size = sizeof(*a);
    a->disabled = 1;
    a->exclude_kernel = 1; /* never signal a thread inside a system call (file comment) */
    a->exclude_hv = 1;
    switch (event) {
    case SMP_PERF_CYCLES:
    case SMP_PERF_INSTRUCTIONS:
        a->type = PERF_TYPE_HARDWARE;
        a->config = event == SMP_PERF_CYCLES ? PERF_COUNT_HW_CPU_CYCLES
                                             : PERF_COUNT_HW_INSTRUCTIONS;
        a->freq = 1; /* the kernel adapts the period to reach about hz samples a second */
        a->sample_freq = hz;
        break;
    default:
        a->type = PERF_TYPE_SOFTWARE;
        a->config = event == SMP_PERF_CPU_CLOCK ? PERF_COUNT_SW_CPU_CLOCK
                                                : PERF_COUNT_SW_TASK_CLOCK;
        a->sample_period = 1000000000ull / hz; /* the clocks count nanoseconds */
        break;
    }
}

/* Opens counter a on thread tid, close-on-exec and high in the descriptor table
 * (sampler/fd_high.h). The descriptor or -errno. */
static long open_counter(struct perf_event_attr *a, pid_t tid)
{
    long fd = syscall(SYS_perf_event_open, a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    return fd < 0 ? -errno : smp_fd_move_high((int)fd);
}

/* Routes the counter's overflows to tid as signo and enables it for one overflow. */
static int route_and_enable(int fd, pid_t tid, int signo)
{
    struct f_owner_ex owner = {.type = F_OWNER_TID, .pid = tid};
    if (fcntl(fd, F_SETFL, O_ASYNC) != 0 || fcntl(fd, F_SETSIG, signo) != 0 ||
        fcntl(fd, F_SETOWN_EX, &owner) != 0 || ioctl(fd, PERF_EVENT_IOC_RESET, 0) != 0 ||
        ioctl(fd, PERF_EVENT_IOC_REFRESH, 1) != 0)
        return -errno;
    return 0;
}

int smp_timer_perf_open(pid_t tid, int signo, unsigned hz, unsigned event, uint32_t owner_flags,
                        uint64_t *id_out)
{
    if (hz == 0 || hz > 1000000)
        return -EINVAL;
    struct perf_event_attr attr;
    fill_attr(&attr, hz, event);
    long fd = open_counter(&attr, tid);
    if (fd < 0)
        return (int)fd;
    uint64_t id = 0;
    if (fd >= (long)SMP_PERF_FD_MAX || ioctl((int)fd, PERF_EVENT_IOC_ID, &id) != 0) {
        close((int)fd);
        return -EMFILE;
    }
    /* Known to the handler before the counter can overflow. */
    atomic_store(&smp_perf_fds[fd], (uint32_t)tid | owner_flags);
    int rc = route_and_enable((int)fd, tid, signo);
    if (rc != 0) {
        smp_timer_perf_close((int)fd, id);
        return rc;
    }
    *id_out = id;
    return (int)fd;
}

int smp_timer_perf_is(int fd, uint64_t id)
{
    int saved = errno;
    uint64_t now = 0;
    int yes = fd >= 0 && ioctl(fd, PERF_EVENT_IOC_ID, &now) == 0 && now == id;
    errno = saved;
    return yes;
}

void smp_timer_perf_forget(int fd)
{
    if (fd >= 0 && (unsigned)fd < SMP_PERF_FD_MAX && atomic_load(&smp_perf_fds[fd]) != 0)
        atomic_store(&smp_perf_fds[fd], SMP_PERF_FD_LATE);
}

void smp_timer_perf_close(int fd, uint64_t id)
{
    int saved = errno;
    smp_timer_perf_forget(fd);
    if (smp_timer_perf_is(fd, id)) {
        ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
        close(fd);
    }
    errno = saved;
}

void smp_timer_perf_pause(int fd, uint64_t id)
{
    int saved = errno;
    if (smp_timer_perf_is(fd, id))
        ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    errno = saved;
}

int smp_timer_perf_rearm(int fd, uint64_t id, pid_t tid, uint32_t owner_flags)
{
    if (fd < 0 || (unsigned)fd >= SMP_PERF_FD_MAX || !smp_timer_perf_is(fd, id))
        return -EBADF;
    atomic_store(&smp_perf_fds[fd], (uint32_t)tid | owner_flags);
    if (ioctl(fd, PERF_EVENT_IOC_RESET, 0) != 0 || ioctl(fd, PERF_EVENT_IOC_REFRESH, 1) != 0)
        return -errno;
    return 0;
}

void smp_timer_perf_unmark_ksampled(int fd, pid_t tid)
{
    if (fd >= 0 && (unsigned)fd < SMP_PERF_FD_MAX)
        atomic_store(&smp_perf_fds[fd], (uint32_t)tid);
}

static void fill_ring_attr(struct perf_event_attr *a, const struct smp_perf_ring_spec *spec)
{
    fill_attr(a, spec->hz, spec->event);
    a->exclude_user = !spec->user;
    a->exclude_kernel = !spec->kernel;
    a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER |
                     PERF_SAMPLE_STACK_USER;
    if (spec->read)
        a->sample_type |= PERF_SAMPLE_READ;
    if (spec->max_stack > 0) {
        a->sample_type |= PERF_SAMPLE_CALLCHAIN;
        a->sample_max_stack = (uint16_t)spec->max_stack;
        a->exclude_callchain_kernel = 1;
    }
    a->sample_regs_user = ARCH_PERF_REGS_MASK;
    a->sample_stack_user = spec->stack_bytes;
    a->use_clockid = 1;
    a->clockid = CLOCK_MONOTONIC;
    /* No wakeups: the writer thread reads the ring on its own period (an interrupt to wake
     * a reader costs as much as a sample here). */
    a->watermark = 1;
    a->wakeup_watermark = 0xffffffffu;
}

int smp_timer_perf_try_ring(const struct smp_perf_ring_spec *spec)
{
    if (spec->hz == 0 || spec->hz > 1000000)
        return -EINVAL;
    struct perf_event_attr a;
    fill_ring_attr(&a, spec);
    long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0)
        return -errno;
    close((int)fd);
    return 0;
}

/* Maps the ring of counter fd (data_pages data pages) and enables it into k; the counter
 * is closed on failure. */
static int map_and_enable(long fd, size_t data_pages, struct smp_perf_kring *k)
{
    size_t bytes = (data_pages + 1) * (size_t)sysconf(_SC_PAGESIZE);
    void *map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
    if (map == MAP_FAILED || ioctl((int)fd, PERF_EVENT_IOC_ID, &k->id) != 0 ||
        ioctl((int)fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
        int err = map == MAP_FAILED ? errno : EIO;
        if (map != MAP_FAILED)
            munmap(map, bytes);
        close((int)fd);
        return -err;
    }
    k->fd = (int)fd;
    k->map = map;
    k->map_bytes = bytes;
    return 0;
}

static void clear_ring(struct smp_perf_kring *k)
{
    *k = (struct smp_perf_kring){.fd = -1};
}

int smp_timer_perf_open_ring(pid_t tid, const struct smp_perf_ring_spec *spec,
                             struct smp_perf_kring *k)
{
    clear_ring(k);
    if (spec->hz == 0 || spec->hz > 1000000 || spec->stack_bytes > 65528u ||
        spec->data_pages == 0 || (spec->data_pages & (spec->data_pages - 1)) != 0)
        return -EINVAL;
    struct perf_event_attr a;
    fill_ring_attr(&a, spec);
    long fd = open_counter(&a, tid);
    if (fd < 0)
        return (int)fd;
    k->stack_bytes = spec->stack_bytes;
    k->has_read = spec->read != 0;
    k->has_callchain = spec->max_stack > 0;
    k->counts_user = spec->user != 0;
    k->counts_kernel = spec->kernel != 0;
    int rc = map_and_enable(fd, spec->data_pages, k);
    if (rc != 0)
        clear_ring(k);
    return rc;
}

int smp_timer_perf_set_period(struct smp_perf_kring *k, uint64_t period_ns)
{
    if (k->fd < 0 || period_ns == 0)
        return -EBADF;
    return ioctl(k->fd, PERF_EVENT_IOC_PERIOD, &period_ns) == 0 ? 0 : -errno;
}

int smp_timer_perf_ring_ended(const struct smp_perf_kring *k)
{
    /* A counter whose task has exited reports POLLHUP. */
    struct pollfd p = {.fd = k->fd, .events = POLLIN};
    return k->fd >= 0 && poll(&p, 1, 0) == 1 && (p.revents & POLLHUP) != 0;
}

int smp_timer_perf_open_kernel(pid_t tid, unsigned hz, unsigned max_stack,
                               struct smp_perf_kring *k)
{
    struct smp_perf_ring_spec spec = {.event = SMP_PERF_TASK_CLOCK, .hz = hz, .kernel = 1,
                                      .stack_bytes = SMP_PERF_KSTACK_BYTES,
                                      .max_stack = max_stack, .data_pages = SMP_PERF_KRING_PAGES};
    return smp_timer_perf_open_ring(tid, &spec, k);
}

void smp_timer_perf_pause_kernel(struct smp_perf_kring *k)
{
    int saved = errno;
    if (k->fd >= 0 && smp_timer_perf_is(k->fd, k->id))
        ioctl(k->fd, PERF_EVENT_IOC_DISABLE, 0);
    errno = saved;
}

int smp_timer_perf_resume_kernel(struct smp_perf_kring *k)
{
    if (k->fd < 0 || !smp_timer_perf_is(k->fd, k->id))
        return -EBADF;
    return ioctl(k->fd, PERF_EVENT_IOC_ENABLE, 0) == 0 ? 0 : -errno;
}

void smp_timer_perf_close_kernel(struct smp_perf_kring *k)
{
    int saved = errno;
    if (k->map)
        munmap(k->map, k->map_bytes);
    if (k->fd >= 0 && smp_timer_perf_is(k->fd, k->id))
        close(k->fd);
    clear_ring(k);
    errno = saved;
}
