/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Checks of invariants outside the signal handler (the reporter, attach/, libprof/'s
 * set-up code). assert() states what must hold and stays on in every build of prof (it
 * is never built with NDEBUG): a reporter that goes on past a broken invariant writes a
 * wrong profile. For a branch that "cannot happen" but would be survivable, PROF_ALWAYS(x)
 * and PROF_NEVER(x) assert in debug builds (PROF_DEBUG: `make DEBUG=1`, `make asan`) and
 * are the plain test in release builds, so the code handles the case either way:
 *     if (PROF_NEVER(n > cap)) return CMN_E_INPUT;
 * The handler path has its own check (sampler/check.h). Header-only, never installed.
 *
 * Signal handler's path: not allowed (assert() prints through stdio); the handler has SMP_RAW_CHECK
 * (sampler/check.h).
 */
#ifndef PROF_COMMON_CHECK_H
#define PROF_COMMON_CHECK_H

#include <assert.h>

#ifdef NDEBUG
#error "prof and libprof keep their asserts: build without NDEBUG (common/check.h)"
#endif

#ifdef PROF_DEBUG
#define PROF_ALWAYS(x) ((x) ? 1 : (assert(!"PROF_ALWAYS: " #x), 0))
#define PROF_NEVER(x) ((x) ? (assert(!"PROF_NEVER: " #x), 1) : 0)
#else
#define PROF_ALWAYS(x) (!!(x))
#define PROF_NEVER(x) (!!(x))
#endif

#endif
