/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The known-truth workload of the end-to-end tests and the benchmark. One thread burns CPU
 * in three leaf functions reached by call paths of different depths:
 *
 *   main -> stage_one -> hot_a                                            (~50 % by design)
 *   main -> stage_two -> middle -> hot_b                                  (~30 %)
 *   main -> stage_three -> deep1 -> deep2 -> deep3 -> deep4 -> deep5 -> hot_c   (~20 %)
 *
 * The work is done as interleaved chunks of 4 to 12 ms of random length, so that every
 * function is spread over the whole run and no chunk pattern can beat in step with a
 * periodic profiling timer. Each hot function times its own loop with
 * CLOCK_THREAD_CPUTIME_ID; at the end the measured shares of the process's CPU time go to
 * TRUTH_FILE, which a profile's sample shares are compared against:
 *
 *   hot_a 0.5012          seconds in hot_a's loop / process CPU seconds
 *   hot_b 0.2987
 *   hot_c 0.1994
 *   total_cpu_s 2.0031    CLOCK_PROCESS_CPUTIME_ID at the end
 *   thread_cpu_s 2.0027   CLOCK_THREAD_CPUTIME_ID of this (the only) thread at the end
 *   hot_cpu_s 1.9986      the three loops together
 *   iterations 1234567    loop iterations done, all three together
 *   chunks 251
 *
 *   shares [SECONDS] [TRUTH_FILE]        run until the process used SECONDS of CPU (2)
 *   shares -i ITERATIONS [TRUTH_FILE]    do a fixed amount of work instead (benchmarks)
 *
 * TRUTH_FILE "-" is stdout; without it nothing is printed. Every function on the paths is
 * noipa (never inlined, cloned or merged) and does some work after its call, so that each
 * keeps its own frame under -O2 and no call becomes a tail call.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define KEEP __attribute__((noipa))

enum { HOT_A, HOT_B, HOT_C, N_HOT };

#define CHUNK_MIN_MS 4
#define CHUNK_MAX_MS 12
#define NOMINAL_ITERS_PER_MS 400000.0 /* chunk sizing in fixed-work mode */
#define CALIBRATION_ITERS 200000u

static const char *const hot_names[N_HOT] = {"hot_a", "hot_b", "hot_c"};
static const double design_share[N_HOT] = {0.50, 0.30, 0.20};

static uint64_t hot_ns[N_HOT];    /* CPU time inside each hot loop; written by the hot fns */
static uint64_t hot_iters[N_HOT]; /* iterations each hot loop did */
static volatile uint64_t sink;    /* every result ends here so no work is dead */

uint64_t hot_a(uint64_t n_iters, uint64_t seed);
uint64_t hot_b(uint64_t n_iters, uint64_t seed);
uint64_t hot_c(uint64_t n_iters, uint64_t seed);
uint64_t stage_one(uint64_t n_iters, uint64_t seed);
uint64_t stage_two(uint64_t n_iters, uint64_t seed);
uint64_t middle(uint64_t n_iters, uint64_t seed);
uint64_t stage_three(uint64_t n_iters, uint64_t seed);
uint64_t deep1(uint64_t n_iters, uint64_t seed);
uint64_t deep2(uint64_t n_iters, uint64_t seed);
uint64_t deep3(uint64_t n_iters, uint64_t seed);
uint64_t deep4(uint64_t n_iters, uint64_t seed);
uint64_t deep5(uint64_t n_iters, uint64_t seed);

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The three hot loops. Each is an integer mixing chain whose every step depends on the
 * previous one; the empty asm makes x opaque to the optimizer so that the loop can be
 * neither vectorized nor replaced by a closed form. The constants differ so that the
 * three bodies are not identical (identical code could be folded into one symbol).
 */
KEEP uint64_t hot_a(uint64_t n_iters, uint64_t seed)
{
    uint64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    uint64_t x = seed;
    for (uint64_t i = 0; i < n_iters; i++) {
        x ^= x >> 31;
        x *= 0x9e3779b97f4a7c15ull;
        x += i;
        __asm__ volatile("" : "+r"(x));
    }
    hot_ns[HOT_A] += clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
    hot_iters[HOT_A] += n_iters;
    return x;
}

KEEP uint64_t hot_b(uint64_t n_iters, uint64_t seed)
{
    uint64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    uint64_t x = seed;
    for (uint64_t i = 0; i < n_iters; i++) {
        x ^= x >> 29;
        x *= 0xbf58476d1ce4e5b9ull;
        x += i;
        __asm__ volatile("" : "+r"(x));
    }
    hot_ns[HOT_B] += clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
    hot_iters[HOT_B] += n_iters;
    return x;
}

KEEP uint64_t hot_c(uint64_t n_iters, uint64_t seed)
{
    uint64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    uint64_t x = seed;
    for (uint64_t i = 0; i < n_iters; i++) {
        x ^= x >> 27;
        x *= 0x94d049bb133111ebull;
        x += i;
        __asm__ volatile("" : "+r"(x));
    }
    hot_ns[HOT_C] += clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
    hot_iters[HOT_C] += n_iters;
    return x;
}

/* The paths down to the hot functions. Each does a little work after its call. */
KEEP uint64_t stage_one(uint64_t n_iters, uint64_t seed)
{
    return hot_a(n_iters, seed) ^ 0x1111;
}

KEEP uint64_t middle(uint64_t n_iters, uint64_t seed)
{
    return hot_b(n_iters, seed) + 0x2222;
}

KEEP uint64_t stage_two(uint64_t n_iters, uint64_t seed)
{
    return middle(n_iters, seed) ^ 0x3333;
}

KEEP uint64_t deep5(uint64_t n_iters, uint64_t seed)
{
    return hot_c(n_iters, seed) + 5;
}

KEEP uint64_t deep4(uint64_t n_iters, uint64_t seed)
{
    return deep5(n_iters, seed) ^ 4;
}

KEEP uint64_t deep3(uint64_t n_iters, uint64_t seed)
{
    return deep4(n_iters, seed) + 3;
}

KEEP uint64_t deep2(uint64_t n_iters, uint64_t seed)
{
    return deep3(n_iters, seed) ^ 2;
}

KEEP uint64_t deep1(uint64_t n_iters, uint64_t seed)
{
    return deep2(n_iters, seed) + 1;
}

KEEP uint64_t stage_three(uint64_t n_iters, uint64_t seed)
{
    return deep1(n_iters, seed) ^ 0x4444;
}

/* xorshift64*: a fixed seed makes fixed-work runs identical. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1dull;
}

/* The hot function furthest below its design share of the work done so far. */
static int pick_hot(uint64_t next_iters)
{
    uint64_t total = hot_iters[HOT_A] + hot_iters[HOT_B] + hot_iters[HOT_C] + next_iters;
    int best = 0;
    double best_deficit = -1e300;
    for (int k = 0; k < N_HOT; k++) {
        double deficit = design_share[k] * (double)total - (double)hot_iters[k];
        if (deficit > best_deficit) {
            best_deficit = deficit;
            best = k;
        }
    }
    return best;
}

static int write_truth(const char *path, unsigned chunks)
{
    uint64_t process_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    uint64_t thread_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    if (!f) {
        fprintf(stderr, "shares: %s: %s\n", path, strerror(errno));
        return -1;
    }
    uint64_t hot_total = 0;
    for (int k = 0; k < N_HOT; k++) {
        fprintf(f, "%s %.4f\n", hot_names[k], (double)hot_ns[k] / (double)process_ns);
        hot_total += hot_ns[k];
    }
    fprintf(f, "total_cpu_s %.4f\n", (double)process_ns / 1e9);
    fprintf(f, "thread_cpu_s %.4f\n", (double)thread_ns / 1e9);
    fprintf(f, "hot_cpu_s %.4f\n", (double)hot_total / 1e9);
    fprintf(f, "iterations %" PRIu64 "\n", hot_iters[HOT_A] + hot_iters[HOT_B] + hot_iters[HOT_C]);
    fprintf(f, "chunks %u\n", chunks);
    if (f == stdout)
        return fflush(f) == 0 ? 0 : -1;
    return fclose(f) == 0 ? 0 : -1;
}

static void usage(void)
{
    fprintf(stderr, "usage: shares [SECONDS] [TRUTH_FILE]\n"
                    "       shares -i ITERATIONS [TRUTH_FILE]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    double seconds = 2.0;
    uint64_t fixed_iters = 0; /* 0: run for `seconds` of process CPU time */
    const char *truth = NULL;
    int argi = 1;

    if (argi + 1 < argc && strcmp(argv[argi], "-i") == 0) {
        char *end;
        fixed_iters = strtoull(argv[argi + 1], &end, 10);
        if (*end || fixed_iters == 0)
            usage();
        argi += 2;
    } else if (argi < argc) {
        char *end;
        seconds = strtod(argv[argi], &end);
        if (*end || !(seconds > 0.0 && seconds < 3600.0))
            usage();
        argi++;
    }
    if (argi < argc)
        truth = argv[argi++];
    if (argi < argc)
        usage();

    /* A first short chunk of hot_a measures the loop's speed, to size chunks in time. */
    double iters_per_ms = NOMINAL_ITERS_PER_MS;
    if (!fixed_iters) {
        sink ^= stage_one(CALIBRATION_ITERS, 1);
        if (hot_ns[HOT_A] > 0)
            iters_per_ms = (double)hot_iters[HOT_A] * 1e6 / (double)hot_ns[HOT_A];
    }

    uint64_t seconds_ns = (uint64_t)(seconds * 1e9);
    uint64_t rng = 0x853c49e6748fea9bull;
    unsigned chunks = 0;
    for (;;) {
        uint64_t done = hot_iters[HOT_A] + hot_iters[HOT_B] + hot_iters[HOT_C];
        if (fixed_iters ? done >= fixed_iters : clock_ns(CLOCK_PROCESS_CPUTIME_ID) >= seconds_ns)
            break;
        double ms = CHUNK_MIN_MS +
                    (double)(next_random(&rng) % 1000) / 1000.0 * (CHUNK_MAX_MS - CHUNK_MIN_MS);
        uint64_t n = (uint64_t)(ms * iters_per_ms) + 1;
        if (fixed_iters && n > fixed_iters - done)
            n = fixed_iters - done;
        uint64_t seed = next_random(&rng);
        switch (pick_hot(n)) {
        case HOT_A:
            sink ^= stage_one(n, seed);
            break;
        case HOT_B:
            sink ^= stage_two(n, seed);
            break;
        default:
            sink ^= stage_three(n, seed);
            break;
        }
        chunks++;
    }
    if (truth && write_truth(truth, chunks) != 0)
        return 1;
    return 0;
}
