/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Stack interning for the profile file, as the library does it: the table itself is shared
 * with the prof command (common/intern.h); what is the library's own is which word at
 * the stack pointer goes into a stack. It is part of a stack only when it points into
 * executable code, by the code map the steppers use (sampler/codemap.h): then it may be
 * the caller of a frameless leaf; any other value is data the reporter never uses, and
 * keeping it would make every sample distinct.
 *
 * The table is owned by the writer thread's buffer owner (see writer.h).
 */
#ifndef PROF_LIBPROF_INTERN_H
#define PROF_LIBPROF_INTERN_H

#include <stdint.h>

#include "common/intern.h"

/* Not async-signal-safe. */
/* The word at sp as it goes into a stack: itself when it points into executable code
 * (the published code map), else 0. */
uint64_t lp_intern_filter_sp(uint64_t sp_word);

#endif
