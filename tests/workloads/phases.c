/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A benchmark in three phases, each run under the thread label phase=NAME (parse, compute,
 * render), each spending SECONDS/3 of CPU in a function of its own. With a second argument
 * naming a phase, that phase also spends as much again in regression_in_PHASE: the one
 * phase `prof check --by-label phase` must find regressed (tests/e2e/test_labels.c).
 *
 *   phases SECONDS [PHASE]
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libprof/prof_weak.h>

static volatile uint64_t sink;

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void spin(double s)
{
    double end = cpu_s() + s;
    uint64_t x = sink | 1;
    while (cpu_s() < end)
        for (int i = 0; i < 20000; i++)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
    sink = x;
}

__attribute__((noinline)) static void parse_input(double s) { spin(s); }
__attribute__((noinline)) static void compute_result(double s) { spin(s); }
__attribute__((noinline)) static void render_output(double s) { spin(s); }
__attribute__((noinline)) static void regression_in_parse(double s) { spin(s); }
__attribute__((noinline)) static void regression_in_compute(double s) { spin(s); }
__attribute__((noinline)) static void regression_in_render(double s) { spin(s); }

int main(int argc, char **argv)
{
    double third = (argc > 1 ? atof(argv[1]) : 0.9) / 3;
    const char *slow = argc > 2 ? argv[2] : "";
    static const char *const names[] = {"parse", "compute", "render"};
    static void (*const work[])(double) = {parse_input, compute_result, render_output};
    static void (*const extra[])(double) = {regression_in_parse, regression_in_compute,
                                            regression_in_render};
    for (int i = 0; i < 3; i++) {
        prof_label_token t = prof_label_push("phase", names[i]);
        work[i](third);
        if (strcmp(slow, names[i]) == 0)
            extra[i](third);
        prof_label_pop(t);
    }
    return 0;
}
