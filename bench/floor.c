/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Where each microsecond of a sample goes: the kernel's own price for every piece of a
 * sampling profiler's path, and a profiler's price above it, measured on one thread in one
 * process so that the machine's drift cancels.
 *
 *   floor [-m MODE] [-F HZ] [-s SECONDS] [-w MS] [-k KB]
 *
 * The thread runs an arithmetic loop that reads the time stamp counter every few
 * nanoseconds of work; a jump in it is a gap, time the loop lost to something else (an
 * interrupt, a signal and its handler, the kernel's work for either). The run alternates
 * windows of MS milliseconds (default 100) with the source off and on, SECONDS of wall
 * time in all (default 4); a window's first 5 ms, where the source is switched, are left
 * out. Gaps above 300 us are the scheduler running another task (the machine is shared):
 * their time is left out of both the window's time and its losses. Per state it prints
 * the loop's work per microsecond, the time lost in gaps, the gaps that held a signal
 * (its frame overwrote a word below the loop's stack pointer, or near the top of the
 * thread's alternate signal stack), the thread's and the process's CPU time (the
 * difference is other threads': a profiler's writer), the thread's system calls and page
 * faults (perf_event counters, where permitted) and the machine's local timer, IRQ-work,
 * function-call and TLB-shootdown interrupts (/proc/interrupts, all CPUs: other work on the
 * machine adds to both states alike). Then, per sample: what the on state cost above the
 * off state.
 *
 * MODE is what samples the thread, each doing nothing per sample:
 *   none     nothing: both states alike (the measurement's own noise)
 *   tick     a POSIX CPU-time timer of the thread (timer_create), an empty handler: the
 *            thread source's floor (it fires on scheduler ticks)
 *   refresh  a perf_event task-clock counter of the thread, user time only, signalling it
 *            (F_SETOWN_EX, a real-time signal); the handler re-arms it with
 *            PERF_EVENT_IOC_REFRESH: the perf source's floor
 *   cont     the same counter left enabled (no re-arming call): the signal alone
 *   period   cont, and the handler sets a random next period (PERF_EVENT_IOC_PERIOD)
 *   irq      a task-clock sampling counter that neither signals nor records: the timer
 *            interrupt alone
 *   ring     a task-clock counter, user and kernel time, that records each sample's user
 *            registers and KB KiB of user stack (default 8) into a ring a second thread
 *            drains every 50 ms, with no signal: a source without a handler
 *   kclock   a kernel-time-only counter recording as libprof's did (call chain, registers,
 *            32 KiB of stack), drained likewise: its interrupts while the thread is in user
 *            code, where it records nothing
 *   prof     nothing of floor's own: the library preloaded (LD_PRELOAD) is switched with
 *            prof_start() and prof_stop()
 * HZ is the rate asked (default 1000).
 * Exit status: 0; 2 on bad usage; 77 when the mode cannot run here.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#define SIGNO (SIGRTMIN + 1)
#define SETTLE_NS 5000000ull    /* a window's first part, left out */
#define GAP_MIN_NS 300u         /* shorter jumps are the loop's own variation */
#define GAP_MAX_NS 300000u      /* longer ones are another task on the CPU */
#define MARK_BELOW_SP 2048      /* a signal frame with its FPU state covers this word */
#define MARK 0x5a5a5a5a5a5a5a5aull
#define N_IRQS 4

enum mode { NONE, TICK, REFRESH, CONT, PERIOD, IRQ, RING, KCLOCK, PROF };
static const char *const mode_names[] = {"none", "tick", "refresh", "cont", "period",
                                         "irq", "ring", "kclock", "prof"};
static const char *const irq_names[N_IRQS] = {"LOC", "IWI", "CAL", "TLB"};

static enum mode mode;
static long hz = 1000;
static int counter = -1;     /* the perf modes' counter */
static timer_t tick_timer;   /* tick */
static volatile sig_atomic_t n_signals;
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static void *ring;           /* ring, kclock: the counter's mapping */
static size_t ring_bytes;
static volatile int draining = 1;
static int (*prof_on)(void), (*prof_off)(void);
static volatile uint64_t sink;
static double tsc_per_ns;

/* What a state (off, on) accumulated over its windows. */
struct totals {
    double ns;           /* loop time, gaps above GAP_MAX_NS left out */
    double work;         /* loop iterations */
    double gap_ns;       /* time in gaps */
    double n_gaps;
    double sig_gaps;     /* gaps that held a signal frame */
    double sig_gap_ns;
    double thread_cpu_ns, process_cpu_ns;
    double syscalls, faults;
    double irqs[N_IRQS];
    double hist[GAP_MAX_NS / 1000 + 1]; /* gaps by whole microseconds */
};

static void on_signal(int sig, siginfo_t *info, void *uc)
{
    (void)sig;
    (void)info;
    (void)uc;
    n_signals++;
    if (mode == REFRESH) {
        ioctl(counter, PERF_EVENT_IOC_REFRESH, 1);
    } else if (mode == PERIOD) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        uint64_t mean = 1000000000ull / (uint64_t)hz, next = mean / 2 + rng % mean;
        ioctl(counter, PERF_EVENT_IOC_PERIOD, &next);
    }
}

static uint64_t clock_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *drain(void *arg)
{
    (void)arg;
    struct perf_event_mmap_page *m = ring;
    while (draining) {
        struct timespec ts = {0, 50000000};
        nanosleep(&ts, NULL);
        uint64_t head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE);
        __atomic_store_n(&m->data_tail, head, __ATOMIC_RELEASE);
    }
    return NULL;
}

static int open_counter(void)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = 1000000000ull / (uint64_t)hz;
    a.disabled = 1;
    a.exclude_hv = 1;
    a.exclude_kernel = mode != RING && mode != KCLOCK;
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static int open_ring(unsigned stack_kb)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = 1000000000ull / (uint64_t)hz;
    a.disabled = 1;
    a.exclude_hv = 1;
    a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD |
                    PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
    a.sample_regs_user = 0xff0fffull; /* x86_64's general registers and ip */
    a.sample_stack_user = stack_kb * 1024u;
    a.wakeup_events = 1u << 30; /* never woken: the drainer polls */
    if (mode == KCLOCK) {
        a.exclude_user = 1;
        a.sample_type |= PERF_SAMPLE_CALLCHAIN;
        a.exclude_callchain_kernel = 1;
    }
    counter = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (counter < 0)
        return -1;
    size_t pages = stack_kb >= 32 ? 256 : 64;
    ring_bytes = (pages + 1) * 4096;
    ring = mmap(NULL, ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, counter, 0);
    pthread_t t;
    return ring == MAP_FAILED || pthread_create(&t, NULL, drain, NULL) != 0 ? -1 : 0;
}

static int route_signal(void)
{
    struct f_owner_ex owner = {F_OWNER_TID, (pid_t)syscall(SYS_gettid)};
    return fcntl(counter, F_SETFL, O_ASYNC) != 0 || fcntl(counter, F_SETSIG, SIGNO) != 0 ||
                   fcntl(counter, F_SETOWN_EX, &owner) != 0
               ? -1
               : 0;
}

static int set_up(unsigned stack_kb)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGNO, &sa, NULL) != 0)
        return -1;
    switch (mode) {
    case NONE:
        return 0;
    case TICK: {
        struct sigevent sev;
        memset(&sev, 0, sizeof(sev));
        sev.sigev_notify = SIGEV_THREAD_ID;
        sev.sigev_signo = SIGNO;
        sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
        return timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &tick_timer);
    }
    case RING:
        return open_ring(stack_kb);
    case KCLOCK:
        return open_ring(32);
    case PROF:
        prof_on = (int (*)(void))dlsym(RTLD_DEFAULT, "prof_start");
        prof_off = (int (*)(void))dlsym(RTLD_DEFAULT, "prof_stop");
        return prof_on && prof_off ? 0 : -1;
    default:
        counter = open_counter();
        return counter < 0 || (mode != IRQ && route_signal() != 0) ? -1 : 0;
    }
}

static void switch_source(int on)
{
    if (mode == NONE)
        return;
    if (mode == TICK) {
        long ns = on ? 1000000000L / hz : 0;
        struct itimerspec its = {{0, ns}, {0, ns}};
        timer_settime(tick_timer, 0, &its, NULL);
    } else if (mode == PROF) {
        (on ? prof_on : prof_off)();
    } else if (!on) {
        ioctl(counter, PERF_EVENT_IOC_DISABLE, 0);
    } else {
        ioctl(counter, PERF_EVENT_IOC_RESET, 0);
        ioctl(counter, mode == REFRESH ? PERF_EVENT_IOC_REFRESH : PERF_EVENT_IOC_ENABLE, 1);
    }
}

/* A counting perf_event of this process's every thread, summed; -1 each when refused. */
static int count_fds[64], n_count_fds;

static void open_counts(uint32_t type, uint64_t config)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL && n_count_fds < 64) {
        if (de->d_name[0] == '.')
            continue;
        struct perf_event_attr a;
        memset(&a, 0, sizeof(a));
        a.size = sizeof(a);
        a.type = type;
        a.config = config;
        int fd = (int)syscall(SYS_perf_event_open, &a, atoi(de->d_name), -1, -1,
                              PERF_FLAG_FD_CLOEXEC);
        if (fd >= 0)
            count_fds[n_count_fds++] = fd;
    }
    if (d)
        closedir(d);
}

static double read_counts(int first, int n)
{
    double sum = 0;
    for (int i = first; i < first + n; i++) {
        uint64_t v = 0;
        if (read(count_fds[i], &v, sizeof(v)) == sizeof(v))
            sum += (double)v;
    }
    return sum;
}

static int syscall_first, syscall_n = -1, fault_first, fault_n;

static int tracepoint_id(const char *name)
{
    char path[128];
    snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%s/id", name);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(path, sizeof(path), "/sys/kernel/debug/tracing/events/%s/id", name);
        f = fopen(path, "r");
    }
    int id = -1;
    if (f) {
        if (fscanf(f, "%d", &id) != 1)
            id = -1;
        fclose(f);
    }
    return id;
}

static void set_up_counts(void)
{
    int id = tracepoint_id("raw_syscalls/sys_enter");
    if (id >= 0) {
        syscall_first = n_count_fds;
        open_counts(PERF_TYPE_TRACEPOINT, (uint64_t)id);
        syscall_n = n_count_fds - syscall_first;
    }
    fault_first = n_count_fds;
    open_counts(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);
    fault_n = n_count_fds - fault_first;
}

static void read_irqs(double *out)
{
    FILE *f = fopen("/proc/interrupts", "r");
    char line[1024];
    memset(out, 0, N_IRQS * sizeof(*out));
    while (f && fgets(line, sizeof(line), f)) {
        char *p = line + strspn(line, " ");
        for (int i = 0; i < N_IRQS; i++) {
            size_t len = strlen(irq_names[i]);
            if (strncmp(p, irq_names[i], len) != 0 || p[len] != ':')
                continue;
            char *q = p + len + 1, *end;
            for (long v; (v = strtol(q, &end, 10)), end != q; q = end)
                out[i] += (double)v;
        }
    }
    if (f)
        fclose(f);
}

/* 1 when a signal frame overwrote the marks (and sets them again). */
static uintptr_t alt_mark; /* a word near the top of the alternate stack, 0 none */

static int signalled(void)
{
    uint64_t below;
    int hit = 0;
    __asm__ volatile("mov %c1(%%rsp), %0" : "=r"(below) : "i"(-MARK_BELOW_SP));
    hit = below != MARK;
    if (alt_mark) {
        hit |= *(volatile uint64_t *)alt_mark != MARK;
        *(volatile uint64_t *)alt_mark = MARK;
    }
    __asm__ volatile("mov %0, %c1(%%rsp)" ::"r"(MARK), "i"(-MARK_BELOW_SP) : "memory");
    return hit;
}

/* One window: the loop for `ns` of TSC time, its gaps into t. */
static void run_window(uint64_t ns, struct totals *t)
{
    uint64_t min = (uint64_t)(GAP_MIN_NS * tsc_per_ns), max = (uint64_t)(GAP_MAX_NS * tsc_per_ns);
    uint64_t start = __rdtsc(), end = start + (uint64_t)((double)ns * tsc_per_ns);
    uint64_t prev = start, x = rng | 1, work = 0, big = 0;
    double irq0[N_IRQS], irq1[N_IRQS];
    double cpu0 = (double)clock_ns(CLOCK_THREAD_CPUTIME_ID);
    double pcpu0 = (double)clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    double sc0 = syscall_n > 0 ? read_counts(syscall_first, syscall_n) : 0;
    double pf0 = read_counts(fault_first, fault_n);
    read_irqs(irq0);
    signalled();
    uint64_t t0 = __rdtsc();
    prev = t0;
    for (;;) {
        for (int i = 0; i < 16; i++)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
        work++;
        uint64_t now = __rdtsc(), d = now - prev;
        prev = now;
        if (d > min) {
            if (d > max) {
                big += d;
            } else {
                t->gap_ns += (double)d / tsc_per_ns;
                t->n_gaps++;
                t->hist[(unsigned)((double)d / tsc_per_ns / 1000)]++;
                if (signalled()) {
                    t->sig_gaps++;
                    t->sig_gap_ns += (double)d / tsc_per_ns;
                }
            }
            prev = __rdtsc();
            big += prev - now; /* the bookkeeping is not the loop's */
            if (now > end)
                break;
        }
    }
    sink = x;
    t->ns += (double)(prev - t0 - big) / tsc_per_ns;
    t->work += (double)work;
    read_irqs(irq1);
    for (int i = 0; i < N_IRQS; i++)
        t->irqs[i] += irq1[i] - irq0[i];
    t->thread_cpu_ns += (double)clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
    t->process_cpu_ns += (double)clock_ns(CLOCK_PROCESS_CPUTIME_ID) - pcpu0;
    if (syscall_n > 0)
        t->syscalls += read_counts(syscall_first, syscall_n) - sc0;
    t->faults += read_counts(fault_first, fault_n) - pf0;
}

static void calibrate(void)
{
    uint64_t n0 = clock_ns(CLOCK_MONOTONIC), c0 = __rdtsc(), n1;
    while ((n1 = clock_ns(CLOCK_MONOTONIC)) - n0 < 50000000ull)
        ;
    tsc_per_ns = (double)(__rdtsc() - c0) / (double)(n1 - n0);
}

static void print_state(const char *name, const struct totals *t)
{
    double s = t->ns / 1e9;
    printf("%-4s %8.1f work/us %8.1f us lost/s %7.0f gaps/s %6.0f signals/s %6.1f us/signal"
           " %7.1f syscalls/s %5.1f faults/s  cpu: thread %5.3f, others %5.3f per s;"
           " irq/s LOC %.0f IWI %.0f CAL %.0f TLB %.0f\n",
           name, t->work / (t->ns / 1e3), t->gap_ns / 1e3 / s, t->n_gaps / s, t->sig_gaps / s,
           t->sig_gaps ? t->sig_gap_ns / 1e3 / t->sig_gaps : 0.0,
           syscall_n > 0 ? t->syscalls / s : -1.0, t->faults / s, t->thread_cpu_ns / t->ns,
           (t->process_cpu_ns - t->thread_cpu_ns) / t->ns, t->irqs[0] / s, t->irqs[1] / s,
           t->irqs[2] / s, t->irqs[3] / s);
}

static void print_per_sample(const struct totals *off, const struct totals *on)
{
    double s_on = on->ns / 1e9, s_off = off->ns / 1e9;
    /* Samples: the signals seen, or for the sources without one the rate asked. */
    double samples = on->sig_gaps / s_on > 1 ? on->sig_gaps / s_on : (double)hz;
    double loss = 1 - (on->work / on->ns) / (off->work / off->ns);
    double others = ((on->process_cpu_ns - on->thread_cpu_ns) / on->ns -
                     (off->process_cpu_ns - off->thread_cpu_ns) / off->ns) * 1e6 / samples;
    double per[N_IRQS];
    for (int i = 0; i < N_IRQS; i++)
        per[i] = (on->irqs[i] / s_on - off->irqs[i] / s_off) / samples;
    double calls = syscall_n > 0 ? (on->syscalls / s_on - off->syscalls / s_off) / samples : -1;
    double faults = (on->faults / s_on - off->faults / s_off) / samples;
    printf("per sample (%.0f a second): work lost %.2f us (%.2f %%), gap time %+.2f us,"
           " the other threads' CPU %+.2f us, syscalls %+.2f, faults %+.3f,"
           " interrupts LOC %+.2f IWI %+.2f CAL %+.2f TLB %+.3f\n",
           samples, loss * 1e6 / samples, 100 * loss,
           (on->gap_ns / s_on - off->gap_ns / s_off) / 1e3 / samples, others, calls, faults,
           per[0], per[1], per[2], per[3]);
    /* The same for scripts (bench/decompose.py). */
    printf("result: samples=%.1f lost_us=%.3f gap_us=%.3f others_us=%.3f syscalls=%.3f"
           " faults=%.4f loc=%.3f iwi=%.3f cal=%.3f tlb=%.4f work_off=%.3f work_on=%.3f\n",
           samples, loss * 1e6 / samples,
           (on->gap_ns / s_on - off->gap_ns / s_off) / 1e3 / samples, others, calls, faults,
           per[0], per[1], per[2], per[3], off->work / (off->ns / 1e3),
           on->work / (on->ns / 1e3));
}

/* The gaps the on state has beyond the off state's, bin by bin (each state's count a
 * second): their rate and median length, the cost of one sample's interruption whatever
 * else interrupts the loop meanwhile. */
static void print_excess(const struct totals *off, const struct totals *on)
{
    enum { N = GAP_MAX_NS / 1000 + 1 };
    double excess[N], total = 0, s_on = on->ns / 1e9, s_off = off->ns / 1e9;
    for (int i = 0; i < N; i++) {
        excess[i] = on->hist[i] / s_on - off->hist[i] / s_off;
        if (excess[i] < 0)
            excess[i] = 0;
        total += excess[i];
    }
    double seen = 0;
    int median = 0;
    for (; median < N - 1 && (seen += excess[median]) < total / 2; median++)
        ;
    printf("excess gaps: %.0f a second, median %d-%d us\n", total, median, median + 1);
}

static int parse_args(int argc, char **argv, double *seconds, long *window_ms, unsigned *kb)
{
    int c;
    while ((c = getopt(argc, argv, "m:F:s:w:k:")) != -1) {
        switch (c) {
        case 'm':
            mode = (enum mode)-1;
            for (unsigned i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++)
                if (strcmp(optarg, mode_names[i]) == 0)
                    mode = (enum mode)i;
            if ((int)mode < 0)
                return -1;
            break;
        case 'F':
            hz = atol(optarg);
            break;
        case 's':
            *seconds = atof(optarg);
            break;
        case 'w':
            *window_ms = atol(optarg);
            break;
        case 'k':
            *kb = (unsigned)atoi(optarg);
            break;
        default:
            return -1;
        }
    }
    return optind == argc && hz > 0 && hz <= 100000 && *seconds > 0 && *window_ms >= 20 &&
                   *kb >= 1 && *kb <= 63
               ? 0
               : -1;
}

int main(int argc, char **argv)
{
    double seconds = 4;
    long window_ms = 100;
    unsigned kb = 8;
    if (parse_args(argc, argv, &seconds, &window_ms, &kb) != 0) {
        fprintf(stderr, "usage: floor [-m none|tick|refresh|cont|period|irq|ring|kclock|prof]"
                        " [-F HZ] [-s SECONDS] [-w MS] [-k KB]\n");
        return 2;
    }
    if (set_up(kb) != 0) {
        perror("floor: the mode cannot run here");
        return 77;
    }
    stack_t ss;
    if (sigaltstack(NULL, &ss) == 0 && !(ss.ss_flags & SS_DISABLE) && ss.ss_size > 8192)
        alt_mark = ((uintptr_t)ss.ss_sp + ss.ss_size - MARK_BELOW_SP) & ~(uintptr_t)7;
    set_up_counts();
    calibrate();
    struct totals off = {0}, on = {0}, scratch = {0};
    if (mode == PROF)
        prof_off();
    long n = (long)(seconds * 1000 / (double)window_ms);
    for (long i = 0; i < n; i++) {
        int is_on = i & 1;
        switch_source(is_on);
        run_window(SETTLE_NS, &scratch);
        run_window((uint64_t)window_ms * 1000000ull - SETTLE_NS, is_on ? &on : &off);
    }
    switch_source(0);
    draining = 0;
    printf("floor: mode %s, %ld Hz, %ld windows of %ld ms\n", mode_names[mode], hz, n,
           window_ms);
    print_state("off", &off);
    print_state("on", &on);
    print_per_sample(&off, &on);
    print_excess(&off, &on);
    return 0;
}
