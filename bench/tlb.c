/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What a second thread costs a program that maps and unmaps memory (sqlite3 with a page
 * cache, allocators that give memory back): once a process has two threads, the kernel
 * must flush the other CPUs' translations of its address space at each munmap() or
 * mprotect() (a TLB shootdown: an interrupt to each CPU that may hold them), where a
 * single-threaded process flushes only its own CPU's.
 *
 *   tlb [-t none|idle|writer|busy] [-s SECONDS]
 *
 * The main thread maps 64 KiB, touches each page, changes its protection and unmaps it,
 * over and over, for SECONDS of its CPU time (default 2). -t adds a second thread: none
 * (default), idle (blocked for the whole run, as a thread that never wakes), writer (wakes
 * every 50 ms and sleeps again, as libprof's writer thread), busy (spins on the other
 * CPU). It prints the rounds per CPU-millisecond of the main thread, and the machine's
 * function-call and TLB-shootdown interrupts per round (/proc/interrupts, every CPU).
 * Exit status: 0; 2 on bad usage.
 */
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define REGION (64u * 1024u)

static volatile int stop;
static int word;

static void *second(void *arg)
{
    const char *kind = arg;
    if (strcmp(kind, "idle") == 0) {
        while (!stop)
            syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
    } else if (strcmp(kind, "writer") == 0) {
        while (!stop) {
            struct timespec ts = {0, 50000000};
            syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
        }
    } else {
        for (volatile uint64_t x = 0; !stop; x++)
            ;
    }
    return NULL;
}

static double thread_cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void count_irqs(double *cal, double *tlb)
{
    FILE *f = fopen("/proc/interrupts", "r");
    char line[1024];
    *cal = *tlb = 0;
    while (f && fgets(line, sizeof(line), f)) {
        char *p = line + strspn(line, " ");
        double *out = strncmp(p, "CAL:", 4) == 0 ? cal : strncmp(p, "TLB:", 4) == 0 ? tlb : NULL;
        if (!out)
            continue;
        char *q = p + 4, *end;
        for (long v; (v = strtol(q, &end, 10)), end != q; q = end)
            *out += (double)v;
    }
    if (f)
        fclose(f);
}

int main(int argc, char **argv)
{
    const char *kind = "none";
    double seconds = 2;
    int c;
    while ((c = getopt(argc, argv, "t:s:")) != -1) {
        if (c == 't')
            kind = optarg;
        else if (c == 's')
            seconds = atof(optarg);
        else
            return 2;
    }
    if (strcmp(kind, "none") != 0 && strcmp(kind, "idle") != 0 && strcmp(kind, "writer") != 0 &&
        strcmp(kind, "busy") != 0) {
        fprintf(stderr, "usage: tlb [-t none|idle|writer|busy] [-s SECONDS]\n");
        return 2;
    }
    pthread_t t;
    if (strcmp(kind, "none") != 0)
        pthread_create(&t, NULL, second, (void *)kind);
    usleep(20000);
    double cal0, tlb0, cal1, tlb1;
    count_irqs(&cal0, &tlb0);
    double start = thread_cpu_ms(), used;
    long rounds = 0;
    do {
        char *p = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        for (unsigned i = 0; i < REGION; i += 4096)
            p[i] = 1;
        mprotect(p, REGION, PROT_READ);
        munmap(p, REGION);
        rounds++;
    } while ((used = thread_cpu_ms() - start) < seconds * 1e3);
    count_irqs(&cal1, &tlb1);
    stop = 1;
    if (strcmp(kind, "none") != 0) {
        word = 1;
        syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
        pthread_join(t, NULL);
    }
    printf("tlb: second thread %s: %.2f rounds per CPU-ms, CAL %.3f TLB %.3f per round\n", kind,
           (double)rounds / used, (cal1 - cal0) / (double)rounds, (tlb1 - tlb0) / (double)rounds);
    return 0;
}
