/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Bursts of time in the kernel, as a program that allocates and fills large buffers has:
 *
 *   faulter ROUNDS
 *
 * A thread maps 24 MiB ROUNDS times, touches each page (a page fault each: tens of
 * milliseconds in the kernel), then works a while in user space over part of it, and
 * unmaps it. Prints "faulter done" and exits 0.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define BUF_BYTES (24u << 20)

static volatile uint64_t sink;
static int rounds;

static __attribute__((noinline)) void fill(unsigned char *p, size_t page)
{
    for (size_t at = 0; at < BUF_BYTES; at += page)
        p[at] = (unsigned char)at;
}

static __attribute__((noinline)) void work(const unsigned char *p)
{
    uint64_t x = 0;
    for (int k = 0; k < 8; k++)
        for (size_t i = 0; i < (1u << 20); i++)
            x = x * 31 + p[i];
    sink = x;
}

static void *faulter(void *arg)
{
    (void)arg;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    for (int r = 0; r < rounds; r++) {
        unsigned char *p = mmap(NULL, BUF_BYTES, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return (void *)1;
        fill(p, page);
        work(p);
        munmap(p, BUF_BYTES);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2 || (rounds = atoi(argv[1])) <= 0) {
        fprintf(stderr, "usage: faulter ROUNDS\n");
        return 2;
    }
    pthread_t t;
    void *ret;
    if (pthread_create(&t, NULL, faulter, NULL) != 0 || pthread_join(t, &ret) != 0 || ret)
        return 1;
    printf("faulter done\n");
    return 0;
}
