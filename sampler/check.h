/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The handler path's check of an invariant: SMP_RAW_CHECK(cond, "what broke"). In a debug
 * build (PROF_DEBUG: `make DEBUG=1`, `make asan`) a false cond writes "libprof: check
 * failed: what broke" to stderr with write(2) (the only call it makes, async-signal-safe)
 * and aborts, so tests stop at the first broken invariant; in a release build it compiles
 * to nothing: the handler never reports and never aborts in the program it profiles, it
 * drops and counts (docs/ARCHITECTURE.md, "The handler's contract"). Header-only.
 */
#ifndef PROF_SAMPLER_CHECK_H
#define PROF_SAMPLER_CHECK_H

#ifdef PROF_DEBUG
#include <stdlib.h>
#include <unistd.h>

#define SMP_RAW_CHECK(cond, msg)                                                           \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            static const char smp_check_msg_[] = "libprof: check failed: " msg "\n";       \
            (void)!write(2, smp_check_msg_, sizeof(smp_check_msg_) - 1);                   \
            abort();                                                                       \
        }                                                                                  \
    } while (0)
#else
#define SMP_RAW_CHECK(cond, msg)                                                           \
    do {                                                                                   \
        (void)sizeof(cond);                                                                \
    } while (0)
#endif

#endif
