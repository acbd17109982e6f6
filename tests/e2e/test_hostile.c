/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * End-to-end tests that the stack walk never crashes the profiled program
 * (tests/workloads/hostile.c), sampled at PROF_FREQ=1000: garbage in the frame-pointer
 * register (null, small, odd, unmapped, kernel, non-canonical, own-stack addresses, cycles),
 * garbage in the saved frame pointers on its stack, and a recursion 100,000 frames deep.
 * The program must exit 0, the profile must read, and the deep samples must stop at the
 * depth limit (PROF_DEPTH=1024) with the depth stop reason. About 5 s of CPU in all.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <string.h>

#include "include/libprof/prof_format.h"
#include "tests/e2e/support.h"

TestSuite(e2e_hostile, .init = e2e_setup, .fini = e2e_teardown, .timeout = 60);

/* Runs `hostile ARGS...` under the profiler at 1000 Hz with PROF_DEPTH=depth; asserts it
 * exited 0 and that `prof report` reads the profile; returns the samples it has. */
static long run_hostile(const char *const argv[], const char *depth)
{
    struct e2e_proc p;
    const char *env[] = {e2e_env("PROF_OUTPUT", e2e_path("hostile.prof")),
                         e2e_env("PROF_FREQ", "1000"), e2e_env("PROF_DEPTH", depth), NULL};
    struct e2e_opts o = {.preload = 1, .env = env};
    e2e_run(&p, &o, argv);
    cr_assert_eq(p.status, 0, "hostile %s exited %d (a crash is 128 + signal):\n%s", argv[1],
                 p.status, p.err);
    e2e_proc_free(&p);

    struct e2e_scan s;
    e2e_scan_file(&s, e2e_path("hostile.prof"));
    cr_assert(s.header_ok && s.has_end, "the profile is cut short");
    struct e2e_folded f;
    e2e_report_folded(&f, e2e_path("hostile.prof"));
    long total = f.total;
    cr_log_info("hostile %s: %ld samples in the report", argv[1], total);
    cr_assert_gt(total, 0);
    e2e_folded_free(&f);
    return total;
}

Test(e2e_hostile, garbage_in_the_frame_pointer_register_never_crashes)
{
    long n = run_hostile(E2E_ARGV(E2E_WORKLOAD("hostile"), "fp", "2"), "256");
    cr_assert_gt(n, 600, "only %ld samples in 2 s at 1000 Hz", n);
}

Test(e2e_hostile, garbage_in_saved_frame_pointers_never_crashes)
{
    long n = run_hostile(E2E_ARGV(E2E_WORKLOAD("hostile"), "saved", "2"), "256");
    cr_assert_gt(n, 600, "only %ld samples in 2 s at 1000 Hz", n);
}

Test(e2e_hostile, deep_recursion_stops_at_the_depth_limit)
{
    run_hostile(E2E_ARGV(E2E_WORKLOAD("hostile"), "deep", "100000", "1"), "1024");
    size_t len;
    uint8_t *data = (uint8_t *)e2e_read_file(e2e_path("hostile.prof"), &len);
    cr_assert_not_null(data);
    /* Stacks are in SAMPLE records (format 1) or in STACK records that batches of
     * samples name (format 2): check every stack either way. */
    size_t at_limit = 0, over = 0, stacks = 0;
    for (size_t off = sizeof(struct prof_file_header); off + 8 <= len;) {
        struct prof_rec_hdr h;
        memcpy(&h, data + off, sizeof(h));
        if (h.size_bytes < 8 || off + h.size_bytes > len)
            break;
        unsigned n_frames = 0, reason = 0;
        int is_stack = 0;
        if (h.type == PROF_REC_SAMPLE && h.size_bytes >= sizeof(struct prof_rec_sample)) {
            struct prof_rec_sample r;
            memcpy(&r, data + off, sizeof(r));
            n_frames = r.n_frames, reason = r.stop_reason, is_stack = 1;
        } else if (h.type == PROF_REC_STACK && h.size_bytes >= sizeof(struct prof_rec_stack)) {
            struct prof_rec_stack r;
            memcpy(&r, data + off, sizeof(r));
            n_frames = r.n_frames, reason = r.stop_reason, is_stack = 1;
        }
        if (is_stack) {
            stacks++;
            /* The depth limit, or the kernel's (perf_event_max_stack) for a chain it recorded
             * for the time spent in the kernel: fewer frames, the same reason. */
            at_limit += reason == PROF_STOP_DEPTH && (n_frames == 1024 || n_frames <= 512);
            over += n_frames > 1024;
        }
        off += h.size_bytes;
    }
    free(data);
    cr_log_info("%zu of %zu stacks stopped at the depth limit", at_limit, stacks);
    cr_assert_eq(over, 0, "%zu stacks have more frames than PROF_DEPTH", over);
    cr_assert_gt(at_limit, 0, "no stack reached the depth limit");
    /* By samples: with the ring source, the first writer period's samples of the thread
     * stop where the kernel's copy of its stack ends (bounds), each at a depth of its own;
     * then the thread moves to the signal, whose walks reach the limit. */
    struct e2e_scan s;
    e2e_scan_file(&s, e2e_path("hostile.prof"));
    uint64_t deep = s.stats[PROF_STAT_STOP_DEPTH];
    cr_log_info("%lu of %lu samples stopped at the depth limit", (unsigned long)deep,
                (unsigned long)s.stat_samples);
    cr_assert_geq(deep, s.stat_samples * 3 / 4, "only %lu of %lu samples reached the limit",
                  (unsigned long)deep, (unsigned long)s.stat_samples);
}
