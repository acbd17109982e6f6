/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A program that sends itself SIGUSR2 (kill(), as `kill -s USR2 PID` would) at given times
 * while it burns CPU, for the tests of PROF_TOGGLE_SIGNAL. With "own" it catches SIGUSR2
 * itself (signal()), counts the signals its handler got and checks that sigaction() shows
 * its handler. At the end it prints
 *
 *   handled N view ok|wrong
 *
 *   toggler own|none SECONDS TIME...     (times in seconds from the start)
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t handled;
static volatile uint64_t sink;

static void on_usr2(int sig)
{
    (void)sig;
    handled++;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    int own = strcmp(argv[1], "own") == 0;
    if (own)
        signal(SIGUSR2, on_usr2);
    double start = now_s(), run = atof(argv[2]);
    int next = 3;
    uint64_t x = 1;
    while (now_s() - start < run) {
        for (int i = 0; i < 100000; i++) {
            x = x * 0x9e3779b97f4a7c15ull + 1;
            __asm__ volatile("" : "+r"(x));
        }
        if (next < argc && now_s() - start >= atof(argv[next])) {
            kill(getpid(), SIGUSR2);
            next++;
        }
    }
    sink = x;
    struct sigaction sa;
    sigaction(SIGUSR2, NULL, &sa);
    int view_ok = own ? sa.sa_handler == on_usr2 : sa.sa_handler == SIG_DFL;
    printf("handled %d view %s\n", (int)handled, view_ok ? "ok" : "wrong");
    return 0;
}
