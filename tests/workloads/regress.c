/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The workload of the CI regression checks (tests/e2e/test_ci.c, bench/ci_false_alarms.sh,
 * the example of docs/CI.md): a fixed amount of work, so that its CPU time says how fast
 * its code is, with a knob that makes one function slower. One thread, three leaf
 * functions:
 *
 *   main -> run_batch -> parse_input    (~50 % of the work)
 *   main -> run_batch -> build_index    (~30 %)
 *   main -> run_batch -> write_output   (~20 %)
 *
 *   regress [-s PERCENT] [MILLIONS]
 *
 * MILLIONS (default 200, about half a CPU-second here) is the number of loop iterations
 * of the whole run; -s PERCENT makes parse_input do PERCENT % more iterations for the same
 * work, i.e. makes it PERCENT % slower (-s 10: the run takes about 5 % more CPU time and
 * parse_input's share grows from 50 % to about 52.4 %, the largest change in share that a
 * 10 % slowdown of one function can make). The work is done in interleaved
 * chunks of pseudo-random length (a fixed seed, so every run does exactly the same), each
 * going to the function furthest below its design share, so that every function spreads
 * over the whole run. Every function on the paths is noipa, so that it keeps its frame.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEEP __attribute__((noipa))

enum { PARSE, INDEX, OUTPUT, N_FN };

#define CHUNK_MIN 1000000u /* iterations of a chunk, about 2.5 ms here */
#define CHUNK_SPAN 2000000u

static const double design_share[N_FN] = {0.50, 0.30, 0.20};
static uint64_t done[N_FN];    /* design iterations done by each function */
static volatile uint64_t sink; /* every result ends here so no work is dead */

uint64_t parse_input(uint64_t n_iters, uint64_t seed);
uint64_t build_index(uint64_t n_iters, uint64_t seed);
uint64_t write_output(uint64_t n_iters, uint64_t seed);
uint64_t run_batch(int which, uint64_t n_iters, uint64_t seed);

/* Three dependent integer mixing chains; the empty asm keeps each loop a loop. */
KEEP uint64_t parse_input(uint64_t n_iters, uint64_t seed)
{
    uint64_t x = seed;
    for (uint64_t i = 0; i < n_iters; i++) {
        x ^= x >> 31;
        x *= 0x9e3779b97f4a7c15ull;
        x += i;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

KEEP uint64_t build_index(uint64_t n_iters, uint64_t seed)
{
    uint64_t x = seed;
    for (uint64_t i = 0; i < n_iters; i++) {
        x ^= x >> 29;
        x *= 0xbf58476d1ce4e5b9ull;
        x += i;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

KEEP uint64_t write_output(uint64_t n_iters, uint64_t seed)
{
    uint64_t x = seed;
    for (uint64_t i = 0; i < n_iters; i++) {
        x ^= x >> 27;
        x *= 0x94d049bb133111ebull;
        x += i;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

KEEP uint64_t run_batch(int which, uint64_t n_iters, uint64_t seed)
{
    switch (which) {
    case PARSE:
        return parse_input(n_iters, seed) ^ 1;
    case INDEX:
        return build_index(n_iters, seed) ^ 2;
    default:
        return write_output(n_iters, seed) ^ 3;
    }
}

/* xorshift64*: a fixed seed makes every run the same. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1dull;
}

static int pick(uint64_t next)
{
    uint64_t total = done[PARSE] + done[INDEX] + done[OUTPUT] + next;
    int best = 0;
    double best_deficit = -1e300;
    for (int k = 0; k < N_FN; k++) {
        double deficit = design_share[k] * (double)total - (double)done[k];
        if (deficit > best_deficit) {
            best_deficit = deficit;
            best = k;
        }
    }
    return best;
}

static void usage(void)
{
    fprintf(stderr, "usage: regress [-s PERCENT] [MILLIONS]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    double slowdown = 0.0;
    double millions = 200.0;
    int argi = 1;
    char *end;
    if (argi + 1 < argc && strcmp(argv[argi], "-s") == 0) {
        slowdown = strtod(argv[argi + 1], &end);
        if (*end || !(slowdown >= 0.0 && slowdown <= 1000.0))
            usage();
        argi += 2;
    }
    if (argi < argc) {
        millions = strtod(argv[argi++], &end);
        if (*end || !(millions > 0.0 && millions <= 1e6))
            usage();
    }
    if (argi < argc)
        usage();

    uint64_t total = (uint64_t)(millions * 1e6);
    uint64_t rng = 0x853c49e6748fea9bull;
    for (;;) {
        uint64_t sum = done[PARSE] + done[INDEX] + done[OUTPUT];
        if (sum >= total)
            break;
        uint64_t n = CHUNK_MIN + next_random(&rng) % CHUNK_SPAN;
        if (n > total - sum)
            n = total - sum;
        int which = pick(n);
        /* The knob: the same work, PERCENT % more iterations. */
        uint64_t iters = which == PARSE ? (uint64_t)((double)n * (1.0 + slowdown / 100.0)) : n;
        sink ^= run_batch(which, iters, next_random(&rng));
        done[which] += n;
    }
    return 0;
}
