/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The floor under a sampling profiler's cost: the kernel's own share of each sample.
 *
 *   floor SECONDS [HZ]
 *
 * Runs an arithmetic loop for SECONDS of the process's CPU time and prints
 *
 *   floor: WORK units per CPU-second, SIGNALS signals
 *
 * With HZ, the loop's thread is sampled as libprof's perf source samples it, with nothing
 * done per sample: a perf_event task-clock counter of the thread that overflows every
 * 1/HZ of its CPU time and signals it (F_SETOWN_EX, a real-time signal), and a handler
 * that only re-arms it (PERF_EVENT_IOC_REFRESH). What the loop loses against a run without
 * HZ is what every sample costs before a profiler does anything: the timer's interrupt,
 * the signal's delivery and return, the re-arming call (in a virtual machine, the
 * hypervisor's share of each). bench/bench.py runs it next to libprof on the same loop.
 * Exit status: 0; 2 on bad usage; 77 when perf_event_open is refused.
 */
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int counter = -1;
static volatile sig_atomic_t n_signals;
static volatile uint64_t sink;

static void on_overflow(int sig, siginfo_t *info, void *uc)
{
    (void)sig;
    (void)info;
    (void)uc;
    n_signals++;
    ioctl(counter, PERF_EVENT_IOC_REFRESH, 1);
}

static int arm(long hz)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_overflow;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGRTMIN + 1, &sa, NULL) != 0)
        return -1;
    struct perf_event_attr a;
    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = (uint64_t)(1000000000 / hz);
    a.disabled = 1;
    a.exclude_hv = 1;
    counter = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (counter < 0)
        return -1;
    struct f_owner_ex owner = {F_OWNER_TID, (pid_t)syscall(SYS_gettid)};
    if (fcntl(counter, F_SETFL, O_ASYNC) != 0 || fcntl(counter, F_SETSIG, SIGRTMIN + 1) != 0 ||
        fcntl(counter, F_SETOWN_EX, &owner) != 0)
        return -1;
    return ioctl(counter, PERF_EVENT_IOC_REFRESH, 1);
}

static double process_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 0;
    long hz = argc > 2 ? atol(argv[2]) : 0;
    if (argc < 2 || argc > 3 || seconds <= 0 || (argc == 3 && (hz <= 0 || hz > 100000))) {
        fprintf(stderr, "usage: floor SECONDS [HZ]\n");
        return 2;
    }
    if (hz > 0 && arm(hz) != 0) {
        perror("floor: perf_event_open");
        return 77;
    }
    double start = process_cpu_s(), used;
    uint64_t x = 1, units = 0;
    do {
        for (int i = 0; i < 1000000; i++)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
        units++;
    } while ((used = process_cpu_s() - start) < seconds);
    sink = x;
    printf("floor: %.1f units per CPU-second, %d signals\n", (double)units / used,
           (int)n_signals);
    return 0;
}
